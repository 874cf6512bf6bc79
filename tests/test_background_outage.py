"""Background jobs during a PostgreSQL outage under a real `cardfit bot` process: asyncpg's pool retrying its
connections and the catalog watch announcing a new version each log one handled line, no traceback; the
announcement the store could not take is made once it is back (before: the version was in service, every later
tick found it "unchanged", and what changed was never announced until a restart)."""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.botapi_emulator import BotApiEmulator
from tests.test_store_outage import TOKEN, Bot


@pytest.fixture
async def emulator():
    async with BotApiEmulator(token=TOKEN) as emu:
        yield emu


@contextmanager
def unreachable(server, url: str) -> Iterator[None]:
    """The bot's database refuses connections and its open ones are cut, as when PostgreSQL goes down (the
    server itself, which other tests share, stays up)."""
    name = url.rsplit("/", 1)[1]
    server.psql(server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
    server.psql(server.url(), f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
    try:
        yield
    finally:
        server.psql(server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


async def test_an_outage_logs_one_line_per_problem_and_the_announcement_follows_once_the_store_is_back(
        emulator, tmp_path, request):
    server = request.getfixturevalue("postgres_server")
    bot = Bot(emulator, tmp_path, server.create_database())
    bot.watch_s = 1  # the catalog watch and the alert sweep every second
    await bot.start()
    await asyncio.sleep(1.5)
    with unreachable(server, bot.target):
        bot.catalog.write_text(bot.catalog.read_text().replace("price_monthly_usd: 1590", "price_monthly_usd: 1490",
                                                               1))
        await asyncio.sleep(8)  # several watch ticks and pool retries
    deadline = asyncio.get_running_loop().time() + 30
    while not await bot.sql("SELECT id FROM announcements WHERE catalog_text LIKE '%1490%' AND base_sha256 <> ''"):
        assert asyncio.get_running_loop().time() < deadline, bot.tail()
        await asyncio.sleep(0.5)
    await bot.stop()
    log = bot.log.read_text()
    assert "Traceback" not in log, log[-6000:]
    assert log.count("its announcement waits for the store") == 1, log[-6000:]
    assert "the store is back, its announcement made (previewed)" in log
    assert "failed while handling None" not in log, log[-6000:]
    sweep_lines = [line for line in log.splitlines() if "alert sweep: the store failed: " in line]
    assert sweep_lines, log[-6000:]  # a background job's failure names the job, one line per tick
    pool_lines = [line for line in log.splitlines() if "PostgreSQL unreachable, the pool retries" in line]
    assert 1 <= len(pool_lines) <= 2, log[-6000:]  # one per distinct error (a refused connection, a cut one)
