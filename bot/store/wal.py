"""Checkpoints of SQLite's write-ahead log outside the store's commits."""
from __future__ import annotations

import asyncio
import logging
import sqlite3

import aiosqlite

log = logging.getLogger(__name__)


class WalCheckpointer:
    """Copies SQLite's WAL into the database from a second connection with its own thread, while the store's
    connection goes on (PASSIVE neither waits for a writer nor makes one wait; sqlite3 releases the GIL while
    it copies), so no store call holds the store's lock through a checkpoint (bench_alerts: 30-110 ms commits
    at 100,000 subscribers before). The WAL stays bounded: a checkpoint every BUSY_S while pages are written,
    and SQLite rewinds a fully copied WAL at the next write."""

    BUSY_S = 0.1  # the next checkpoint after one that found new pages
    IDLE_S = 1.0  # after one that found nothing new

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, path: str) -> WalCheckpointer:
        checkpointer = cls(await aiosqlite.connect(path, isolation_level=None))
        checkpointer._task = asyncio.get_running_loop().create_task(checkpointer._run(), name="cardfit-wal")
        return checkpointer

    async def checkpoint(self) -> tuple[int, int, int]:
        """One PASSIVE checkpoint: (busy, frames in the WAL, frames copied), as SQLite answers it."""
        rows = list(await self._db.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)"))
        return int(rows[0][0]), int(rows[0][1]), int(rows[0][2])

    async def _run(self) -> None:
        last: tuple[int, int, int] | None = None
        while True:
            try:
                result: tuple[int, int, int] | None = await self.checkpoint()
            except sqlite3.Error as exc:  # e.g. a disk error; the next commit would fail loudly anyway
                log.warning("WAL checkpoint failed: %s", exc)
                result = None
            await asyncio.sleep(self.BUSY_S if result is not None and result != last else self.IDLE_S)
            last = result

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._db.close()
