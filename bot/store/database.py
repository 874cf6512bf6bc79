"""The one aiosqlite connection the repositories share: pragmas, the lock, transactions and reads."""
from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
Parameters = tuple[Any, ...]


async def fetch_rows(db: aiosqlite.Connection, sql: str, parameters: Iterable[Any] = ()) -> list[sqlite3.Row]:
    """All rows of one query on a connection the caller already holds (inside a transaction or a read)."""
    return list(await db.execute_fetchall(sql, tuple(parameters)))


class Database:
    """One connection; every write is one BEGIN IMMEDIATE transaction, serialized by an asyncio.Lock."""

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self.path = path
        # One connection is shared by all coroutines; without the lock two of them would interleave statements
        # inside one transaction, and a reader could see another coroutine's uncommitted rows.
        self._lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(cls, path: str | Path) -> Database:
        path_text = str(path)
        if path_text != ":memory:":
            Path(path_text).parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path_text, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            # busy_timeout first: switching to WAL needs a lock another process may hold for a moment.
            await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            rows = await fetch_rows(db, "PRAGMA journal_mode = WAL")
            journal_mode = str(rows[0][0]).lower() if rows else ""
            if path_text != ":memory:" and journal_mode != "wal":
                log.warning("SQLite at %s runs in journal_mode=%s, not WAL", path_text, journal_mode)
            # NORMAL is durable across application crashes in WAL mode; only a power cut can lose the last commits.
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            # aiosqlite's worker thread is not a daemon: an unclosed connection would keep the process alive.
            await db.close()
            raise
        return cls(db, path_text)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        async with self._lock:
            await self._db.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            try:
                # IMMEDIATE takes the write lock up front, so a second process waits (busy_timeout) at BEGIN
                # instead of failing halfway through with SQLITE_BUSY on its first write.
                await self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                await self._db.execute("COMMIT")
            except BaseException:
                await self._rollback_quietly()
                raise

    async def write_one(self, sql: str, parameters: Parameters) -> None:
        """A single-statement write: in autocommit mode SQLite runs it as its own transaction, atomically,
        in one round trip to aiosqlite's thread instead of three (BEGIN, statement, COMMIT)."""
        async with self._lock:
            await self._db.execute(sql, parameters)

    async def write_returning(self, sql: str, parameters: Parameters) -> list[sqlite3.Row]:
        """A single-statement write with a RETURNING clause: the rows as written, in the same one round trip."""
        async with self._lock:
            return await fetch_rows(self._db, sql, parameters)

    async def fetch(self, sql: str, parameters: Parameters = ()) -> list[sqlite3.Row]:
        async with self._lock:
            return await fetch_rows(self._db, sql, parameters)

    async def pragma(self, statement: str) -> None:
        """A PRAGMA that must run outside any transaction (foreign_keys is a no-op inside one)."""
        async with self._lock:
            await self._db.execute(statement)

    async def _rollback_quietly(self) -> None:
        try:
            await self._db.execute("ROLLBACK")
        except sqlite3.Error:
            # Nothing to roll back: BEGIN itself failed, or SQLite already rolled back after the error.
            pass


class Repository:
    """The SQL of one table group over the shared Database."""

    def __init__(self, database: Database) -> None:
        self._database = database
