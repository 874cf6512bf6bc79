"""The database the repositories share, on SQLite (aiosqlite) or PostgreSQL (asyncpg): one SQL text for both.

The repositories write SQLite-style SQL (`?` placeholders, `INSERT ... ON CONFLICT ... DO UPDATE`, `RETURNING`),
which PostgreSQL also runs once the placeholders are numbered: `pg_placeholders` does that, in this one place.
Migration DDL is written once too: `pg_ddl` maps SQLite's column types to PostgreSQL's (see its docstring).
What differs between the engines beyond that (transactions, the schema version, locking for migrations) lives
in the two `Database` classes (SQLite's below, PostgreSQL's in bot/store/postgres.py), never in a repository.
"""
from __future__ import annotations

import asyncio
import logging
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import aiosqlite
import asyncpg

from bot.store.dialect import _WITH_WRITE, is_postgres_url, pg_ddl, pg_placeholders, redacted
from bot.store.wal import WalCheckpointer

__all__ = ["is_postgres_url", "pg_ddl", "pg_placeholders", "redacted"]  # the store's callers name them here

log = logging.getLogger(__name__)

Parameters = tuple[Any, ...]
# A bad row (NOT NULL, CHECK, FOREIGN KEY, UNIQUE) on either engine: `except INTEGRITY_ERRORS`.
INTEGRITY_ERRORS: tuple[type[Exception], ...] = (sqlite3.IntegrityError, asyncpg.IntegrityConstraintViolationError)
# Any failure of the database itself (unreachable, broken SQL, ...), for health checks and retries.
# asyncpg's InternalClientError: a pooled connection the server cut off mid-protocol ("cannot switch to state").
DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, asyncpg.PostgresError, asyncpg.InterfaceError,
                                                asyncpg.InternalClientError, OSError)


class Row(Protocol):
    """A result row: sqlite3.Row and asyncpg.Record both index by column name and by position."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def keys(self) -> Any: ...


class Result:
    """What `Connection.execute` returns on both engines: the rows (if the statement returned any), the number of
    rows it changed, and SQLite's lastrowid (the identity of the last inserted row on PostgreSQL). Shaped like a
    DB-API cursor so repository code reads the same on both: `cursor.rowcount`, `await cursor.close()`."""

    def __init__(self, rows: list[Any], rowcount: int, lastrowid: int | None) -> None:
        self.rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    async def fetchall(self) -> list[Any]:
        return self.rows

    async def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    async def close(self) -> None:
        return None


class Connection(ABC):
    """The connection inside one transaction (or a single read/write): what a repository's SQL runs on."""

    engine: str
    # Appended to a SELECT that claims rows: PostgreSQL locks them and lets a concurrent claimer skip past; on
    # SQLite the transaction's BEGIN IMMEDIATE already excludes every other writer.
    skip_locked: str = ""

    @abstractmethod
    async def execute(self, sql: str, parameters: Iterable[Any] = ()) -> Result: ...

    async def execute_fetchall(self, sql: str, parameters: Iterable[Any] = ()) -> list[Any]:
        return (await self.execute(sql, parameters)).rows

    # The migration runner's hooks: the engines keep the schema version in different places.
    @abstractmethod
    async def schema_version(self) -> int: ...

    @abstractmethod
    async def set_schema_version(self, version: int) -> None: ...

    @abstractmethod
    async def after_migration(self, number: int) -> None:
        """Checks and fix-ups that must hold before a migration commits."""

    @abstractmethod
    def ddl(self, statement: str) -> str: ...


async def fetch_rows(db: Connection, sql: str, parameters: Iterable[Any] = ()) -> list[Any]:
    """All rows of one query on a connection the caller already holds (inside a transaction or a read)."""
    return await db.execute_fetchall(sql, parameters)


class Database(ABC):
    """What the repositories share: SqliteDatabase below, PostgresDatabase in bot/store/postgres.py (`open_database`
    in bot/store/__init__.py picks one for its target)."""

    engine: str
    path: str  # for messages and logs: the file, or the URL without its password
    skip_locked: str = ""  # Connection.skip_locked, for a claim that is one statement of its own

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Connection]:
        """`async with database.transaction() as db:` one transaction; committed at the end, rolled back on error."""

    @abstractmethod
    def migrating(self) -> AbstractAsyncContextManager[None]:
        """`async with database.migrating():` around a migration run (SQLite turns foreign keys off for it)."""

    @abstractmethod
    def migration(self) -> AbstractAsyncContextManager[Connection]:
        """`async with database.migration() as db:` one migration's transaction, exclusive across processes."""

    @abstractmethod
    async def fetch(self, sql: str, parameters: Parameters = ()) -> list[Any]: ...

    @abstractmethod
    async def write_one(self, sql: str, parameters: Parameters) -> None:
        """One statement, atomically."""

    @abstractmethod
    async def write_returning(self, sql: str, parameters: Parameters) -> list[Any]:
        """A single-statement write with a RETURNING clause: the rows as written."""

    @abstractmethod
    async def write_many(self, statements: Sequence[tuple[str, Parameters]]) -> None:
        """Several writes as one transaction, all or none."""

    @abstractmethod
    async def schema_version(self) -> int: ...

    @abstractmethod
    async def refresh_statistics(self, table: str) -> None:
        """After a bulk write changed much of `table`: what the engine's planner knows of it."""


# -- SQLite --------------------------------------------------------------------------------------------------------

BUSY_TIMEOUT_MS = 5000  # how long a call waits for another process's write lock (a second bot on the same file)


class SqliteConnection(Connection):
    engine = "sqlite"

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def execute(self, sql: str, parameters: Iterable[Any] = ()) -> Result:
        async with self._db.execute(sql, tuple(parameters)) as cursor:
            rows = list(await cursor.fetchall()) if cursor.description else []
            rowcount = cursor.rowcount
            if rowcount == -1 and _WITH_WRITE.match(sql):
                # Python's sqlite3 counts only statements that start with INSERT/UPDATE/DELETE; ask SQLite.
                changes = list(await self._db.execute_fetchall("SELECT changes()"))
                rowcount = int(changes[0][0])
            return Result(rows, rowcount, cursor.lastrowid)

    async def schema_version(self) -> int:
        rows = await self.execute_fetchall("PRAGMA user_version")
        return int(rows[0][0])

    async def set_schema_version(self, version: int) -> None:
        await self.execute(f"PRAGMA user_version = {int(version)}")

    async def after_migration(self, number: int) -> None:
        # Foreign keys are off during migrations (SQLite's table-rebuild procedure); check them before commit.
        broken = await self.execute_fetchall("PRAGMA foreign_key_check")
        if broken:
            raise sqlite3.IntegrityError(f"migration {number} breaks {len(broken)} foreign key(s)")

    def ddl(self, statement: str) -> str:
        return statement


class SqliteDatabase(Database):
    """One connection (aiosqlite runs its calls on a thread of its own); every write is one BEGIN IMMEDIATE
    transaction or one autocommitted statement, serialized by an asyncio.Lock."""

    engine = "sqlite"

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self._connection = SqliteConnection(db)
        self.path = path
        # One connection is shared by all coroutines; without the lock two of them would interleave statements
        # inside one transaction, and a reader could see another coroutine's uncommitted rows.
        self._lock = asyncio.Lock()
        self._closed = False
        self._checkpointer: WalCheckpointer | None = None

    @classmethod
    async def connect(cls, path: str | Path) -> SqliteDatabase:
        path_text = str(path)
        if path_text != ":memory:":
            Path(path_text).parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path_text, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            # busy_timeout first: switching to WAL needs a lock another process may hold for a moment.
            await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            rows = list(await db.execute_fetchall("PRAGMA journal_mode = WAL"))
            journal_mode = str(rows[0][0]).lower() if rows else ""
            if path_text != ":memory:" and journal_mode != "wal":
                log.warning("SQLite at %s runs in journal_mode=%s, not WAL", path_text, journal_mode)
            # NORMAL is durable across application crashes in WAL mode; only a power cut can lose the last commits.
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            if journal_mode == "wal":
                # No commit of this connection copies the WAL into the database: WalCheckpointer does, between
                # them, from its own connection (the default copies it inside whichever commit fills 1,000 pages).
                await db.execute("PRAGMA wal_autocheckpoint = 0")
        except BaseException:
            # aiosqlite's worker thread is not a daemon: an unclosed connection would keep the process alive.
            await db.close()
            raise
        database = cls(db, path_text)
        if journal_mode == "wal":
            database._checkpointer = await WalCheckpointer.start(path_text)
        return database

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._checkpointer is not None:
            await self._checkpointer.close()
        async with self._lock:
            await self._db.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self._lock:
            try:
                # IMMEDIATE takes the write lock up front, so a second process waits (busy_timeout) at BEGIN
                # instead of failing halfway through with SQLITE_BUSY on its first write.
                await self._db.execute("BEGIN IMMEDIATE")
                yield self._connection
                await self._db.execute("COMMIT")
            except BaseException:
                await self._rollback_quietly()
                raise

    def migration(self) -> AbstractAsyncContextManager[Connection]:
        # BEGIN IMMEDIATE already excludes every other writer, in this process and in others.
        return self.transaction()

    @asynccontextmanager
    async def migrating(self) -> AsyncIterator[None]:
        # Off for the whole run, as SQLite's table-rebuild procedure asks (a no-op inside a transaction); each
        # migration checks the keys before it commits instead (after_migration).
        await self._pragma("PRAGMA foreign_keys = OFF")
        try:
            yield
        finally:
            await self._pragma("PRAGMA foreign_keys = ON")

    async def write_one(self, sql: str, parameters: Parameters) -> None:
        # In autocommit mode SQLite runs a single statement as its own transaction, atomically.
        async with self._lock, self._db.execute(sql, parameters):
            pass

    async def write_returning(self, sql: str, parameters: Parameters) -> list[Any]:
        async with self._lock:
            return list(await self._db.execute_fetchall(sql, parameters))

    async def fetch(self, sql: str, parameters: Parameters = ()) -> list[Any]:
        async with self._lock:
            return list(await self._db.execute_fetchall(sql, parameters))

    async def write_many(self, statements: Sequence[tuple[str, Parameters]]) -> None:
        # BEGIN IMMEDIATE, the statements, COMMIT, rolled back whole when one fails.
        async with self.transaction() as db:
            for sql, parameters in statements:
                await db.execute(sql, parameters)

    async def schema_version(self) -> int:
        rows = await self.fetch("PRAGMA user_version")
        return int(rows[0][0])

    async def refresh_statistics(self, table: str) -> None:
        return  # SQLite's planner uses no statistics here (the store never runs ANALYZE)

    async def _pragma(self, statement: str) -> None:
        async with self._lock, self._db.execute(statement):
            pass

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
