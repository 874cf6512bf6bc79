"""The PostgreSQL side of the store (asyncpg): what bot/store/database.py's Database is on a postgresql:// URL."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from bot.store.database import Connection, Database, Parameters, Result
from bot.store.dialect import _INSERT_INTO, _STATUS_COUNT, _returns_rows, pg_ddl, pg_placeholders, redacted

# The advisory lock key every replica takes before it migrates a PostgreSQL database ("cardfit" as digits).
MIGRATION_LOCK_KEY = 0x63617264666974

_SCHEMA_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"


class _PoolReconnectLines(logging.Filter):
    """asyncpg's pool logs each failed try to restore its connection floor (about every second while PostgreSQL
    is down) as a WARNING with the connection's whole traceback. Kept as one line naming the error, and the same
    error at most once a minute: an outage is one line, not a traceback a second."""

    EVERY_S = 60.0

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is None or record.exc_info[1] is None:
            return True
        exc = record.exc_info[1]
        error = f"{exc.__class__.__name__}: {exc}".splitlines()[0][:200]
        now = time.monotonic()
        if now - self._last.get(error, -self.EVERY_S) < self.EVERY_S:
            return False
        self._last[error] = now
        record.msg, record.args = "store: PostgreSQL unreachable, the pool retries (%s)", (error,)
        record.exc_info, record.exc_text = None, None
        return True


_POOL_LINES = _PoolReconnectLines()


def _status_count(status: str) -> int:
    """asyncpg returns the command tag ('INSERT 0 1', 'UPDATE 3', 'DELETE 0'): its last number is the row count."""
    match = _STATUS_COUNT.search(status)
    return int(match.group(1)) if match else 0


class PostgresConnection(Connection):
    engine = "postgresql"
    skip_locked = "FOR UPDATE SKIP LOCKED"

    def __init__(self, conn: asyncpg.Connection, identities: dict[str, str | None]) -> None:
        self._conn = conn
        self._identities = identities  # table -> its identity column (None: it has none), shared by the pool

    async def execute(self, sql: str, parameters: Iterable[Any] = ()) -> Result:
        arguments = tuple(parameters)
        text = pg_placeholders(sql)
        if _returns_rows(sql):
            rows = list(await self._conn.fetch(text, *arguments))
            return Result(rows, len(rows), None)
        insert = _INSERT_INTO.match(sql)
        identity = await self._identity(insert.group(1)) if insert else None
        if identity is None:
            return Result([], _status_count(await self._conn.execute(text, *arguments)), None)
        # PostgreSQL has no lastrowid: ask the statement for its identity column, as SQLite's cursor would know it.
        rows = list(await self._conn.fetch(f"{text.rstrip().rstrip(';')} RETURNING {identity}", *arguments))
        return Result([], len(rows), int(rows[-1][0]) if rows else None)

    async def _identity(self, table: str) -> str | None:
        key = table.lower()
        if key not in self._identities:
            self._identities[key] = await self._conn.fetchval(
                """
                SELECT attname FROM pg_attribute
                WHERE attrelid = to_regclass($1) AND attidentity <> '' AND NOT attisdropped
                """,
                key,
            )
        return self._identities[key]

    async def schema_version(self) -> int:
        exists = await self._conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
        if not exists:
            return 0
        version = await self._conn.fetchval("SELECT max(version) FROM schema_version")
        return int(version or 0)

    async def set_schema_version(self, version: int) -> None:
        await self._conn.execute(_SCHEMA_VERSION_TABLE)
        await self._conn.execute("DELETE FROM schema_version")
        await self._conn.execute("INSERT INTO schema_version (version) VALUES ($1)", int(version))

    async def after_migration(self, number: int) -> None:
        # A table rebuilt by copying rows with their ids leaves its identity behind the copied ids; move each
        # identity past the largest id, as SQLite's rowid would continue. The table's columns may have changed.
        self._identities.clear()
        columns = await self._conn.fetch(
            """
            SELECT c.relname AS table_name, a.attname AS column_name
            FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
            JOIN pg_namespace AS n ON n.oid = c.relnamespace
            WHERE a.attidentity <> '' AND NOT a.attisdropped AND n.nspname = current_schema()
            """
        )
        for column in columns:
            table, name = column["table_name"], column["column_name"]
            await self._conn.execute(
                f'SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max("{name}"), 0) + 1, false) '
                f'FROM "{table}"',
                table, name,
            )

    def ddl(self, statement: str) -> str:
        return pg_ddl(statement)


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset of a returned connection: none beyond asyncpg's own (an open transaction is rolled back,
    listeners dropped). Its default sends a reset query (UNLISTEN, CLOSE ALL, RESET ALL, advisory unlocks): one more
    round trip inside every write's hold of the write lock (bench_alerts), to undo session state the store
    never sets (the migration's advisory lock is released in `migration`)."""


class PostgresDatabase(Database):
    """A connection pool. Reads run at once on pooled connections; this process's writes run one after another
    (an asyncio.Lock, as on SQLite), so two writes issued in order take effect in that order, here as there.
    Between replicas PostgreSQL's row locks and UNIQUE constraints decide."""

    engine = "postgresql"
    skip_locked = PostgresConnection.skip_locked

    def __init__(self, pool: asyncpg.Pool, url: str) -> None:
        self._pool = pool
        self.path = redacted(url)
        self._identities: dict[str, str | None] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def connect(cls, url: str, *, min_size: int = 1, max_size: int = 10,
                      timeout: float = 10.0) -> PostgresDatabase:
        pool_log = logging.getLogger("asyncpg.pool")
        if _POOL_LINES not in pool_log.filters:
            pool_log.addFilter(_POOL_LINES)
        pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, timeout=timeout,
                                         command_timeout=30, reset=_keep_session)
        return cls(pool, url)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._pool.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self._write_lock, self._pool.acquire() as conn, conn.transaction():
            yield PostgresConnection(conn, self._identities)

    @asynccontextmanager
    async def migration(self) -> AsyncIterator[Connection]:
        async with self._write_lock, self._pool.acquire() as conn:
            # A second replica starting at the same moment waits here, then re-reads the version and finds the
            # migration done. Taken before the transaction, not in it: a transaction that waited for the lock
            # keeps the catalog it saw before (an advisory lock does not make PostgreSQL take in other sessions'
            # DDL), so it would not see the tables the first one created; one begun after it does.
            await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
            try:
                async with conn.transaction():
                    yield PostgresConnection(conn, self._identities)
            finally:
                if not conn.is_closed():  # a lost connection has lost its lock too
                    try:
                        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
                    except BaseException:
                        # The pool's reset sends no advisory unlock (`_keep_session`): a connection that may still
                        # hold the lock never goes back to the pool; closing it ends its session and the lock.
                        conn.terminate()
                        raise

    @asynccontextmanager
    async def migrating(self) -> AsyncIterator[None]:
        yield  # PostgreSQL checks foreign keys as each DDL statement runs; nothing to switch

    async def fetch(self, sql: str, parameters: Parameters = ()) -> list[Any]:
        return list(await self._pool.fetch(pg_placeholders(sql), *parameters))

    async def write_one(self, sql: str, parameters: Parameters) -> None:
        async with self._write_lock:
            await self._pool.execute(pg_placeholders(sql), *parameters)

    async def write_returning(self, sql: str, parameters: Parameters) -> list[Any]:
        async with self._write_lock:
            return list(await self._pool.fetch(pg_placeholders(sql), *parameters))

    async def write_many(self, statements: Sequence[tuple[str, Parameters]]) -> None:
        async with self._write_lock, self._pool.acquire() as conn, conn.transaction():
            for sql, parameters in statements:
                await conn.execute(pg_placeholders(sql), *parameters)

    async def schema_version(self) -> int:
        async with self._pool.acquire() as conn:
            return await PostgresConnection(conn, self._identities).schema_version()

    async def refresh_statistics(self, table: str) -> None:
        # Not under the write lock: ANALYZE writes no rows and blocks no reads or writes (a SHARE UPDATE EXCLUSIVE
        # lock: https://www.postgresql.org/docs/current/sql-analyze.html). Stale statistics make the planner read a
        # just-queued fan-out whole (100,000 queued alerts estimated as 275, every claim 110-125 ms).
        await self._pool.execute(f'ANALYZE "{table}"')
