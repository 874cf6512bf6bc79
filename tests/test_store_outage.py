"""A store that refuses writes (a full disk) under a real `cardfit bot` process, on SQLite and PostgreSQL: the bot
answers meanwhile, keeps the inbox marks the store refused in memory and writes them once it takes writes again, so
no answered update is handled again after a restart and no acknowledged setting reverts; a crash during the outage
repeats a reply at most, and never writes an older setting over a newer one (the update order).

How the store is made to refuse writes: the inbox's marks alone, by a trigger that raises SQLite's "database or disk
is full" / PostgreSQL's disk_full (53100) on every change of an inbox row; every write, by a file-size limit of 0 on
the bot process (SQLite: every write(2) to its files fails, as on a full disk; the process's output is a pipe) or
by PostgreSQL's default_transaction_read_only set for the whole server (reads go on, as on a full disk)."""
from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import pytest

from tests.support.botapi_emulator import BotApiEmulator

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "catalog" / "data" / "gpurenthub.yaml"
TOKEN = "123456:TEST-TOKEN-not-real"
USERS = range(31_000, 31_020)

SQLITE_FULL = """
CREATE TRIGGER inbox_full BEFORE UPDATE ON inbox WHEN OLD.update_id > {low} AND OLD.update_id <= {top}
BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
"""
POSTGRES_FULL = """
CREATE FUNCTION inbox_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
CREATE TRIGGER inbox_full BEFORE UPDATE ON inbox FOR EACH ROW
WHEN (OLD.update_id > {low} AND OLD.update_id <= {top})
EXECUTE FUNCTION inbox_full();
"""
ALL_ROWS = 2 ** 62


class Bot:
    """One `cardfit bot` process at a time over the same store and emulator; its output goes through a pipe into
    bot.log (a file-size limit on the process would stop its writes to a file)."""

    def __init__(self, emulator: BotApiEmulator, tmp_path: Path, target: str):
        self.emulator = emulator
        self.target = target
        self.catalog = tmp_path / "catalog.yaml"
        shutil.copy(BUNDLED, self.catalog)
        self.log = tmp_path / "bot.log"
        self.watch_s = 3600.0  # the catalog watch's and the alert sweep's interval (CARDFIT_CATALOG_WATCH_S)
        self.process: asyncio.subprocess.Process | None = None
        self._copy: asyncio.Task[None] | None = None

    @property
    def postgres(self) -> bool:
        return self.target.startswith("postgresql://")

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=self.emulator.token, CARDFIT_BOT_API_URL=self.emulator.base_url,
                   CARDFIT_DB=self.target, CARDFIT_CATALOG=str(self.catalog),
                   CARDFIT_CATALOG_WATCH_S=f"{self.watch_s:g}", CARDFIT_SEND_RATE_PER_S="600",
                   CARDFIT_LOG_LEVEL="INFO", PTB_TIMEDELTA="1")
        polls = self.emulator.polls_begun
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        self._copy = asyncio.get_running_loop().create_task(self._copy_output(self.process))
        await self.emulator.wait_polling(after=polls, timeout=90)

    async def _copy_output(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        with self.log.open("ab") as handle:
            while line := await process.stdout.readline():
                handle.write(line)
                handle.flush()

    async def _ended(self) -> int:
        assert self.process is not None
        code = await asyncio.wait_for(self.process.wait(), 60)
        if self._copy is not None:
            await self._copy
        return code

    async def stop(self) -> None:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        assert await self._ended() == 0, self.tail()

    async def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self._ended()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    async def sql(self, sql: str) -> list[tuple]:
        if self.postgres:
            conn = await asyncpg.connect(self.target)
            try:
                return [tuple(row) for row in await conn.fetch(sql)] if sql.lstrip().upper().startswith(
                    "SELECT") else [(await conn.execute(sql),)]
            finally:
                await conn.close()
        with sqlite3.connect(self.target, timeout=30) as conn:
            if sql.lstrip().upper().startswith("SELECT"):
                return conn.execute(sql).fetchall()
            conn.executescript(sql)
            return []

    async def refuse_marks(self, low: int = -1, top: int = ALL_ROWS) -> None:
        """From now on the store refuses every change of an inbox row whose update id is above `low`, up to
        `top`."""
        await self.sql((POSTGRES_FULL if self.postgres else SQLITE_FULL).format(low=low, top=top))

    async def take_marks(self) -> None:
        await self.sql("DROP TRIGGER inbox_full ON inbox; DROP FUNCTION inbox_full();" if self.postgres
                       else "DROP TRIGGER inbox_full;")

    async def states(self) -> dict[int, str]:
        return {int(update_id): str(state) for update_id, state in await self.sql(
            "SELECT update_id, state FROM inbox ORDER BY update_id")}

    async def batch(self, user: int) -> int | None:
        rows = await self.sql(f"SELECT batch FROM users WHERE user_id = {int(user)}")
        return rows[0][0] if rows else None


@pytest.fixture
async def emulator():
    async with BotApiEmulator(token=TOKEN) as emu:
        yield emu


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "outage.sqlite3")
    return request.getfixturevalue("postgres_server").create_database()


def replies(emulator: BotApiEmulator, users=USERS, since: int = 0) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {user: [] for user in users}
    for call in emulator.sent("sendMessage"):
        if call.seq >= since and call.chat_id in found:
            found[call.chat_id].append(call.text or "")
    return found


async def say_to_all(emulator: BotApiEmulator, text: str, users=USERS, timeout: float = 60) -> None:
    mark = emulator.mark()
    for user in users:
        emulator.push_message(user, text)
    wanted = set(users)
    await emulator.wait_for("sendMessage", lambda c: c.chat_id in wanted, count=len(wanted), since=mark,
                            timeout=timeout)


async def settled(bot: Bot, timeout: float = 30) -> dict[int, str]:
    """The inbox once no row is open (the kept marks written), or as it is when the time is up."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        states = await bot.states()
        if not {"received", "sending"} & set(states.values()) or asyncio.get_running_loop().time() > deadline:
            return states
        await asyncio.sleep(0.3)


async def test_marks_refused_then_taken_again_nothing_is_handled_twice_no_setting_reverts(emulator, tmp_path,
                                                                                          target):
    """While the store refuses the inbox's marks, 20 `/set batch 8` are answered; once it takes writes again the
    kept marks are written; then 20 `/set batch 50`, a restart: nobody gets a third reply, every batch stays 50.
    (Before: the rows stayed 'received' and the restart handled them again: a third reply and batch 8.)"""
    bot = Bot(emulator, tmp_path, target)
    await bot.start()
    await bot.refuse_marks()
    await say_to_all(emulator, "/set batch 8")
    await asyncio.sleep(1.0)  # a retry or two of the kept marks fails meanwhile
    assert {"received", "sending"} & set((await bot.states()).values())
    await bot.take_marks()
    states = await settled(bot)
    assert set(states.values()) == {"done"}, states
    await say_to_all(emulator, "/set batch 50")
    await bot.stop()

    await bot.start()
    await asyncio.sleep(2.0)
    await bot.stop()
    got = replies(emulator)
    assert all(len(texts) == 2 for texts in got.values()), {u: len(t) for u, t in got.items() if len(t) != 2}
    assert [await bot.batch(user) for user in USERS] == [50] * len(USERS)
    assert "kept in memory and written again" in bot.tail()
    assert "stored update(s) a stopped or dead process" not in bot.log.read_text()  # nothing handled again


async def test_a_crash_while_marks_are_refused_repeats_a_reply_at_most_and_never_reverts_a_setting(emulator,
                                                                                                   tmp_path, target):
    """The store refuses the marks of the `/set batch 8` updates (and only theirs); `/set batch 50` comes after
    and is acknowledged and marked; then SIGKILL before the store took the kept marks. The restart handles the
    batch 8 updates again (their reply went out, but the store never learned it): each user gets that reply once
    more, and batch stays 50, as acknowledged last (the setting of an older update is not written over it)."""
    bot = Bot(emulator, tmp_path, target)
    await bot.start()
    for user in USERS:
        emulator.push_message(user, "/start")  # the users exist, and the first update ids are used
    await say_to_all(emulator, "/set coin BTC")
    top = max(await settled(bot))
    await bot.refuse_marks(low=top, top=top + len(USERS))  # the next 20 updates: the /set batch 8 ones
    await say_to_all(emulator, "/set batch 8")
    # Their done marks are refused before the next updates come: one group write of marks then holds no row of
    # both kinds (a refused row fails the whole statement, as one transaction).
    await asyncio.sleep(2.0)
    await say_to_all(emulator, "/set batch 50")
    later = range(top + len(USERS) + 1, top + 2 * len(USERS) + 1)
    deadline = asyncio.get_running_loop().time() + 30
    while {(await bot.states())[update_id] for update_id in later} != {"done"}:
        assert asyncio.get_running_loop().time() < deadline, await bot.states()
        await asyncio.sleep(0.3)
    states = await bot.states()
    assert [states[update_id] for update_id in range(top + 1, top + len(USERS) + 1)] == ["received"] * len(USERS)
    await bot.kill()
    await bot.take_marks()

    mark = emulator.mark()
    await bot.start()
    again = await emulator.wait_for("sendMessage", lambda c: c.chat_id in USERS, count=len(USERS), since=mark,
                                    timeout=60)
    await asyncio.sleep(1.0)
    await bot.stop()
    assert sorted(call.chat_id for call in again) == list(USERS)  # the batch 8 reply, once more each
    assert len([c for c in emulator.sent("sendMessage") if c.seq >= mark and c.chat_id in USERS]) == len(USERS)
    assert [await bot.batch(user) for user in USERS] == [50] * len(USERS)
    assert "has a newer setting" in bot.tail()
    assert set((await settled(bot)).values()) == {"done"}


@contextmanager
def no_file_writes(pid: int) -> Iterator[None]:
    """Every write(2) of process `pid` to a regular file fails from here on (EFBIG: its file-size limit is 0;
    Python ignores SIGXFSZ), as on a full disk; reads go on."""
    soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))


@contextmanager
def read_only_server(server) -> Iterator[None]:
    """Every new transaction on the whole server is read-only (its sessions take the setting at the reload)."""
    server.psql(server.url(), "ALTER SYSTEM SET default_transaction_read_only = on")
    server.psql(server.url(), "SELECT pg_reload_conf()")
    try:
        yield
    finally:
        server.psql(server.url(), "ALTER SYSTEM RESET default_transaction_read_only")
        server.psql(server.url(), "SELECT pg_reload_conf()")


QUESTION_USERS = range(32_000, 32_060)


async def test_a_full_store_mid_burst_answers_and_nothing_is_handled_again_after_a_restart(emulator, tmp_path,
                                                                                         request, target):
    """A burst of 60 questions; the store refuses every write from the 10th answer on, for 4 s: the bot goes on
    answering (the answer's own writes are skipped, logged), its marks kept; once the store takes writes again
    they are written, and a restart handles nothing again: every user has exactly one answer."""
    bot = Bot(emulator, tmp_path, target)
    await bot.start()
    await say_to_all(emulator, "/start", QUESTION_USERS)  # the users exist: their rows are not written meanwhile
    mark = emulator.mark()
    for user in QUESTION_USERS:
        emulator.push_message(user, "llama 3 70b int4 8k context")
    wanted = set(QUESTION_USERS)
    await emulator.wait_for("sendMessage", lambda c: c.chat_id in wanted, count=10, since=mark, timeout=60)
    assert bot.process is not None
    outage = (read_only_server(request.getfixturevalue("postgres_server")) if bot.postgres
              else no_file_writes(bot.process.pid))
    with outage:
        await asyncio.sleep(4.0)
    await emulator.wait_for("sendMessage", lambda c: c.chat_id in wanted, count=len(wanted), since=mark,
                            timeout=90)
    states = await settled(bot, timeout=60)
    assert set(states.values()) == {"done"}, states
    await bot.stop()

    await bot.start()
    await asyncio.sleep(2.0)
    await bot.stop()
    got = replies(emulator, QUESTION_USERS, since=mark)
    assert all(len(texts) == 1 for texts in got.values()), {u: len(t) for u, t in got.items() if len(t) != 1}
    assert "kept in memory and written again" in bot.tail()
