"""A catalog path that cannot be read as a file (a FIFO, /dev/zero, a hung volume, a directory, a missing file)
is refused in one line by every catalog read, and reported to the admins once per distinct problem."""
from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path

import pytest

import catalog.loader as loader
from bot.config import load_settings
from catalog.loader import CatalogError, load_catalog
from tests.support.botharness import TOKEN, Harness

ADMIN = 42
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"


@pytest.fixture
async def bot(tmp_path, catalog_file):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                             catalog=str(catalog_file), catalog_settle_s=0)
    async with Harness(settings) as harness:
        yield harness


def rejections(bot: Harness) -> list[str]:
    return [c.params["text"] for c in bot.request.sent("sendMessage")
            if c.params["chat_id"] == ADMIN and "rejected" in c.params["text"]]


def _release_fifo(path: Path) -> None:
    """A reader blocked in open() on the FIFO gets its writer (so a failing run does not hang at exit)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_the_start_refuses_a_fifo_and_dev_zero_in_one_line(tmp_path):
    fifo = tmp_path / "catalog.fifo"
    os.mkfifo(fifo)
    errors: list[str] = []
    loading = threading.Thread(target=lambda: _load_error(str(fifo), errors), daemon=True)
    loading.start()
    loading.join(5)
    _release_fifo(fifo)
    assert errors == [f"{fifo}: not a regular file (a catalog is a YAML file)"]
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    assert _load_error(str(zero), []) == f"{zero}: not a regular file (a catalog is a YAML file)"


def _load_error(path: str, errors: list[str]) -> str:
    try:
        load_catalog(path)
    except CatalogError as exc:
        errors.append(str(exc))
    return errors[-1] if errors else ""


async def test_reload_and_the_watch_job_refuse_a_fifo_and_dev_zero(bot, catalog_file):
    announcer = bot.app.bot_data["services"].announcer
    catalog_file.unlink()
    os.mkfifo(catalog_file)
    try:
        outcome = await asyncio.wait_for(announcer.check(), 5)
    finally:
        _release_fifo(catalog_file)
    assert outcome.status == "invalid" and "not a regular file" in outcome.text
    catalog_file.unlink()
    catalog_file.symlink_to("/dev/zero")
    await asyncio.wait_for(bot.send(ADMIN, "/reload"), 5)
    assert "not a regular file" in bot.last_text(ADMIN)
    assert bot.app.bot_data["catalog"].catalog.provider == "GPU Rent Hub"  # the old version stays in service
    catalog_file.unlink()
    shutil.copy(BUNDLED, catalog_file)
    catalog_file.write_text(catalog_file.read_text().replace("GPU Rent Hub\n", "GPU Rent Hub Two\n", 1))
    assert (await announcer.check()).status != "invalid"  # a later valid version is taken
    assert bot.app.bot_data["catalog"].catalog.provider == "GPU Rent Hub Two"


async def test_a_hung_volume_times_out_and_leaves_one_thread_behind(bot, catalog_file, monkeypatch):
    released = threading.Event()
    real = loader._read_regular

    def hung(path):
        released.wait(30)
        return real(path)

    monkeypatch.setattr(loader, "_read_regular", hung)
    monkeypatch.setattr(loader, "READ_TIMEOUT_S", 0.2)
    announcer = bot.app.bot_data["services"].announcer
    try:
        first = await asyncio.wait_for(announcer.check(), 5)
        assert first.status == "invalid" and "no answer within 0.2 s" in first.text
        again = await asyncio.wait_for(announcer.check(force=True), 5)
        assert again.status == "invalid" and "no answer within 0.2 s" in again.text
        stuck = [thread for thread in threading.enumerate() if thread.name == "catalog-read"]
        assert len(stuck) == 1 and stuck[0].daemon  # no second thread stuck beside the first; none holds the exit
    finally:
        released.set()
    await asyncio.sleep(0.1)
    assert (await announcer.check()).status == "unchanged"  # the volume answers again: read as before


async def test_an_unreadable_path_is_reported_once_per_problem_not_at_every_tick(bot, catalog_file):
    announcer = bot.app.bot_data["services"].announcer
    original = catalog_file.read_bytes()
    catalog_file.unlink()
    for _ in range(5):  # watch ticks over a missing file
        assert (await announcer.check()).status == "invalid"
    assert len(rejections(bot)) == 1 and "no such catalog file" in rejections(bot)[0]
    catalog_file.mkdir()  # another problem: told once more
    for _ in range(5):
        assert (await announcer.check()).status == "invalid"
    assert len(rejections(bot)) == 2 and "not a regular file" in rejections(bot)[1]
    catalog_file.rmdir()
    catalog_file.write_bytes(original)
    assert (await announcer.check()).status == "unchanged"
    catalog_file.unlink()  # gone again after it was back: a new occurrence, told again
    await announcer.check()
    assert len(rejections(bot)) == 3


def test_reads_of_one_file_at_the_same_time_are_all_answered(catalog_file, monkeypatch):
    """Two replicas in one process (or the watch job beside a start) read the same file at once: only a read that
    timed out makes the next one wait for it."""
    real = loader._read_regular
    together = threading.Barrier(4)

    def slow(path):
        together.wait(5)  # all four reads are under way at once
        return real(path)

    monkeypatch.setattr(loader, "_read_regular", slow)
    results: list[bytes] = []
    readers = [threading.Thread(target=lambda: results.append(loader.read_catalog_file(catalog_file)))
               for _ in range(4)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(10)
    assert results == [BUNDLED.read_bytes()] * 4
