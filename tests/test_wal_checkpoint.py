"""SQLite's WAL is copied into the database by bot/store/wal.WalCheckpointer, never inside one of the store's
commits (wal_autocheckpoint=0), and stays bounded after many writes."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from bot.store import Store
from bot.store.wal import WalCheckpointer

PAGE = 4096


def database_of(store: Store) -> Any:
    return store._database  # noqa: SLF001 - the connection's own settings are what is tested


async def write_rows(store: Store, count: int, size: int = 2000) -> None:
    database = database_of(store)
    for number in range(count):
        await database.write_one("INSERT INTO filler (body) VALUES (?)", ("x" * size + str(number),))


async def test_no_commit_of_the_store_runs_a_checkpoint(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "cardfit.sqlite3")
    try:
        rows = await database_of(store).fetch("PRAGMA wal_autocheckpoint")
        assert rows[0][0] == 0  # SQLite checkpoints inside a commit only through this auto-checkpoint
        assert isinstance(database_of(store)._checkpointer, WalCheckpointer)  # noqa: SLF001
    finally:
        await store.close()


async def test_the_wal_stays_bounded_after_many_writes(tmp_path: Path) -> None:
    path = tmp_path / "cardfit.sqlite3"
    store = await Store.open(path)
    wal = Path(f"{path}-wal")
    try:
        async with database_of(store).transaction() as db:
            await db.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        checkpointer = database_of(store)._checkpointer  # noqa: SLF001
        largest = 0
        for _ in range(20):  # 20 x 200 rows of 2 KB: ~8 MB written, two thousand pages and more
            await write_rows(store, 200)
            # What the background loop does every 0.1 s while pages are written, called here without a timer.
            busy, frames, copied = await checkpointer.checkpoint()
            assert busy == 0 and copied == frames  # PASSIVE copied everything: nothing was holding it up
            largest = max(largest, wal.stat().st_size)
        # Rewound after every full copy: the WAL holds one round of writes (~200 rows), not all 4,000.
        assert largest < 1200 * PAGE
        count = await database_of(store).fetch("SELECT count(*) FROM filler")
        assert count[0][0] == 4000
    finally:
        await store.close()


async def test_without_checkpoints_the_wal_would_grow(tmp_path: Path) -> None:
    """The reference for the bound above: the same writes with no checkpoint at all."""
    path = tmp_path / "cardfit.sqlite3"
    store = await Store.open(path)
    try:
        checkpointer = database_of(store)._checkpointer  # noqa: SLF001
        await checkpointer.close()  # the background loop stopped: nothing copies the WAL any more
        database_of(store)._checkpointer = None  # noqa: SLF001
        async with database_of(store).transaction() as db:
            await db.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        await write_rows(store, 4000)
        assert Path(f"{path}-wal").stat().st_size > 2000 * PAGE
    finally:
        await store.close()


async def test_the_data_is_all_there_after_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "cardfit.sqlite3"
    store = await Store.open(path)
    try:
        async with database_of(store).transaction() as db:
            await db.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        await write_rows(store, 500)
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM filler").fetchone()[0] == 500
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_an_in_memory_store_has_no_checkpointer() -> None:
    store = await Store.open(":memory:")
    try:
        assert database_of(store)._checkpointer is None  # noqa: SLF001
    finally:
        await store.close()
