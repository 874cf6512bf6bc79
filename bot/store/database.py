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
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
import asyncpg

from bot.store.dialect import (  # re-exported: the store's callers name them here
    is_postgres_url,
    pg_ddl,
    pg_placeholders,
    redacted,
)

__all__ = ["is_postgres_url", "pg_ddl", "pg_placeholders", "redacted"]
from bot.store.sqlite_calls import (
    BUSY_TIMEOUT_MS,
    begin,
    end,
    execute_closed,
    execute_rows,
    is_busy,
    run_batch,
    run_in_transaction,
    statement,
)
from bot.store.wal import WalCheckpointer

log = logging.getLogger(__name__)

T = TypeVar("T")
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

    # `short=True`: the statement reads or writes a few rows found by key (a user, an update, a chat); SQLite may
    # then run it on the event loop instead of its thread (SqliteDatabase._call). Leave it off for anything that
    # scans or pages through a table.

    @abstractmethod
    async def fetch(self, sql: str, parameters: Parameters = (), *, short: bool = False) -> list[Any]: ...

    @abstractmethod
    async def write_one(self, sql: str, parameters: Parameters, *, short: bool = False) -> None:
        """One statement, atomically."""

    @abstractmethod
    async def write_returning(self, sql: str, parameters: Parameters, *, short: bool = False) -> list[Any]:
        """A single-statement write with a RETURNING clause: the rows as written."""

    @abstractmethod
    async def write_many(self, statements: Sequence[tuple[str, Parameters]], *, short: bool = False) -> None:
        """Several writes as one transaction, all or none, in one round trip where the engine allows it."""

    @abstractmethod
    async def schema_version(self) -> int: ...

    @abstractmethod
    async def refresh_statistics(self, table: str) -> None:
        """After a bulk write changed much of `table`: what the engine's planner knows of it."""


# -- SQLite --------------------------------------------------------------------------------------------------------


class SqliteConnection(Connection):
    engine = "sqlite"

    def __init__(self, database: SqliteDatabase) -> None:
        self._database = database

    async def execute(self, sql: str, parameters: Iterable[Any] = ()) -> Result:
        # One hop to the thread per statement (aiosqlite's cursor would take three: execute, fetchall, close).
        rows, rowcount, lastrowid = await self._database._on_thread(
            partial(statement, sql=sql, parameters=tuple(parameters)))
        return Result(rows, rowcount, lastrowid)

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
    """One connection; every write is one BEGIN IMMEDIATE transaction, serialized by an asyncio.Lock.

    In WAL mode a short call (`short=True`) that finds the connection free runs at once on the event loop: no
    thread hop (a queue put, a thread wake-up, call_soon_threadsafe and the loop's self-pipe: ~0.13 ms
    of process CPU each, bench_bot's pieces). That is safe there because WAL readers never wait for a writer, a
    commit with synchronous=NORMAL does not fsync (https://www.sqlite.org/pragma.html#pragma_synchronous: in WAL
    mode only checkpoints sync, and those run on WalCheckpointer's own connection), and the connection waits for
    no lock at all (busy_timeout 0): when another process holds the write lock the call fails with SQLITE_BUSY
    before it did anything, and goes to the thread, which waits up to BUSY_TIMEOUT_MS as every call did before.
    "Free" means no transaction holds or waits for the lock, no call waits for a batch, and no call is on the
    thread (a cancelled caller's included), so the calls still take effect in the order they were made."""

    engine = "sqlite"

    def __init__(self, db: aiosqlite.Connection, path: str, *, on_loop: bool = False) -> None:
        self._db = db
        self._connection = SqliteConnection(self)
        self.path = path
        # One connection is shared by all coroutines; without the lock two of them would interleave statements
        # inside one transaction, and a reader could see another coroutine's uncommitted rows.
        self._lock = asyncio.Lock()
        self._closed = False
        self._waiting: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._runner: asyncio.Task[None] | None = None
        self._checkpointer: WalCheckpointer | None = None
        self._on_loop = on_loop  # short calls may run on the event loop (WAL mode; busy_timeout 0 between calls)
        self._holders = 0  # coroutines holding or waiting for the lock
        # Calls handed to the thread, and those it finished: each counter written by one thread only.
        self._submitted = 0
        self._finished = 0

    @classmethod
    async def connect(cls, path: str | Path) -> SqliteDatabase:
        path_text = str(path)
        if path_text != ":memory:":
            Path(path_text).parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False: short calls use the connection from the event loop's thread as well, never at
        # the same time as aiosqlite's (SqliteDatabase._free).
        db = await aiosqlite.connect(path_text, isolation_level=None, check_same_thread=False)
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
                # Between calls the connection waits for no lock: a call on the event loop must not block it.
                # The thread sets BUSY_TIMEOUT_MS around each of its calls (_patiently).
                await db.execute("PRAGMA busy_timeout = 0")
        except BaseException:
            # aiosqlite's worker thread is not a daemon: an unclosed connection would keep the process alive.
            await db.close()
            raise
        database = cls(db, path_text, on_loop=journal_mode == "wal")
        if journal_mode == "wal":
            database._checkpointer = await WalCheckpointer.start(path_text)
        return database

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._checkpointer is not None:
            await self._checkpointer.close()
        async with self._exclusive():
            await self._db.close()

    @asynccontextmanager
    async def _exclusive(self) -> AsyncIterator[None]:
        """The lock, counted while held or waited for (an asyncio.Lock just released is unlocked before its next
        holder runs: a short call must not slip in ahead of it)."""
        self._holders += 1
        try:
            async with self._lock:
                yield
        finally:
            self._holders -= 1

    def _free(self) -> bool:
        return (self._on_loop and not self._closed and self._holders == 0 and not self._waiting
                and self._submitted == self._finished)

    async def _on_thread(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """Run `function` on aiosqlite's thread (its `_execute`, as its own public methods do), with the busy
        timeout when short calls may run on the loop."""
        self._submitted += 1
        result: T = await self._db._execute(_counted, self, function)  # type: ignore[no-untyped-call]
        return result

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self._exclusive():
            try:
                # IMMEDIATE takes the write lock up front, so a second process waits (busy_timeout) at BEGIN
                # instead of failing halfway through with SQLITE_BUSY on its first write.
                await self._on_thread(partial(begin, patient=self._on_loop))
                yield self._connection
                await self._on_thread(partial(end, statement="COMMIT", patient=self._on_loop))
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

    async def write_one(self, sql: str, parameters: Parameters, *, short: bool = False) -> None:
        # In autocommit mode SQLite runs a single statement as its own transaction, atomically.
        await self._call(partial(execute_closed, sql=sql, parameters=parameters), short)

    async def write_returning(self, sql: str, parameters: Parameters, *, short: bool = False) -> list[Any]:
        rows: list[Any] = await self._call(partial(execute_rows, sql=sql, parameters=parameters), short)
        return rows

    async def fetch(self, sql: str, parameters: Parameters = (), *, short: bool = False) -> list[Any]:
        rows: list[Any] = await self._call(partial(execute_rows, sql=sql, parameters=parameters), short)
        return rows

    async def write_many(self, statements: Sequence[tuple[str, Parameters]], *, short: bool = False) -> None:
        # BEGIN IMMEDIATE, the statements, COMMIT, rolled back whole when one fails.
        await self._call(partial(run_in_transaction, statements=statements), short)

    async def _call(self, function: Callable[[sqlite3.Connection], Any], short: bool = False) -> Any:
        """A short call on a free connection: at once, on the event loop (see the class's docstring). Otherwise
        on aiosqlite's thread together with every other call waiting for the connection, in one hop (with
        64 updates in flight, hops one after another behind the lock bounded throughput). Each call keeps
        its own outcome (a failed write is its own transaction), in the order the calls came."""
        if short and self._free():
            try:
                return function(self._db._conn)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                # Another process holds the write lock; nothing was done: wait for it on the thread.
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((function, future))
        if self._runner is None:
            self._runner = asyncio.create_task(self._run_waiting())
        return await future

    async def _run_waiting(self) -> None:
        async with self._exclusive():
            batch, self._waiting, self._runner = self._waiting, [], None  # later calls start the next batch
            try:
                outcomes = await self._on_thread(partial(run_batch, functions=[f for f, _ in batch],
                                                         patient=self._on_loop))
            except asyncio.CancelledError:
                for _, future in batch:
                    future.cancel()
                raise
            except Exception as exc:  # the connection is gone (closed): every call fails with it
                outcomes = [(False, exc)] * len(batch)
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    async def schema_version(self) -> int:
        rows = await self.fetch("PRAGMA user_version")
        return int(rows[0][0])

    async def refresh_statistics(self, table: str) -> None:
        return  # SQLite's planner uses no statistics here (the store never runs ANALYZE)

    async def _pragma(self, statement: str) -> None:
        async with self._exclusive():
            await self._on_thread(partial(execute_closed, sql=statement, parameters=()))

    async def _rollback_quietly(self) -> None:
        # Nothing to roll back when BEGIN itself failed, or SQLite already rolled back after the error.
        await self._on_thread(partial(end, statement="ROLLBACK", patient=self._on_loop, quiet=True))


def _counted(database: SqliteDatabase, function: Callable[[sqlite3.Connection], T]) -> T:
    """On aiosqlite's thread: the call, then counted as finished (the connection is free from here on)."""
    try:
        return function(database._db._conn)
    finally:
        database._finished += 1


class Repository:
    """The SQL of one table group over the shared Database."""

    def __init__(self, database: Database) -> None:
        self._database = database
