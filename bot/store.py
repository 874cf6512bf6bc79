"""Persistent bot state in SQLite: preferences, catalog announcements, price-alert subscriptions, alert delivery."""
from __future__ import annotations

import asyncio
import json
import logging
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiosqlite

log = logging.getLogger(__name__)

PREFERENCE_FIELDS = (
    "language",
    "precision",
    "kv_precision",
    "context_tokens",
    "batch",
    "coin",
    "billing",
    "region",
)
_INTEGER_PREFERENCES = frozenset({"context_tokens", "batch"})

ALERT_OUTCOMES = ("sent", "failed", "blocked")
BUSY_TIMEOUT_MS = 5000

# Append only: a released version's script is never edited, because databases in the field already ran it.
# Each script runs inside one BEGIN IMMEDIATE transaction together with `PRAGMA user_version = <version>`.
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE users (
            user_id           INTEGER PRIMARY KEY,
            language          TEXT,
            precision         TEXT,
            kv_precision      TEXT,
            context_tokens    INTEGER,
            batch             INTEGER,
            coin              TEXT,
            billing           TEXT,
            region            TEXT,
            last_question     TEXT,
            last_payload      TEXT,
            telegram_language TEXT,
            blocked           INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
            created_at        REAL NOT NULL,
            updated_at        REAL NOT NULL
        );
        """,
    ),
    (
        2,
        """
        CREATE TABLE subscriptions (
            user_id    INTEGER NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
            card_id    TEXT NOT NULL,
            below_usd  REAL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, card_id)
        );
        CREATE INDEX subscriptions_by_card ON subscriptions (card_id, user_id);
        """,
    ),
    (
        3,
        """
        CREATE TABLE announcements (
            id           INTEGER PRIMARY KEY,
            catalog_id   TEXT NOT NULL,
            sha256       TEXT NOT NULL,
            catalog_text TEXT NOT NULL,
            message      TEXT NOT NULL,
            status       TEXT NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'posted', 'discarded')),
            message_ids  TEXT,  -- JSON list of the channel message ids, once posted
            created_at   REAL NOT NULL,
            posted_at    REAL,
            UNIQUE (catalog_id, sha256)
        );
        """,
    ),
    (
        4,
        """
        CREATE TABLE alerts (
            id              INTEGER PRIMARY KEY,
            announcement_id INTEGER NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
            user_id         INTEGER NOT NULL,
            text            TEXT NOT NULL CHECK (length(text) > 0),
            status          TEXT NOT NULL DEFAULT 'queued'
                            CHECK (status IN ('queued', 'sent', 'failed', 'blocked')),
            error           TEXT,
            created_at      REAL NOT NULL,
            sent_at         REAL,
            UNIQUE (announcement_id, user_id)
        );
        CREATE INDEX alerts_by_status ON alerts (status, id);
        """,
    ),
    (
        5,
        """
        CREATE TABLE announcement_parts (
            announcement_id INTEGER NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
            part            INTEGER NOT NULL CHECK (part >= 0),
            message_id      INTEGER NOT NULL,
            sent_at         REAL NOT NULL,
            PRIMARY KEY (announcement_id, part)
        );
        """,
    ),
]


@dataclass(frozen=True)
class Preferences:
    user_id: int
    language: str | None = None  # "en" | "de"; None = not chosen, the bot falls back to Telegram's language_code
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch: int | None = None
    coin: str | None = None
    billing: str | None = None  # "hour" | "week" | "month" | "day"
    region: str | None = None
    last_question: str | None = None
    last_payload: str | None = None
    telegram_language: str | None = None
    blocked: bool = False  # the user blocked the bot (403); cleared when they write again
    updated_at: float = 0.0


_PREFERENCE_COLUMNS = (
    "user_id",
    *PREFERENCE_FIELDS,
    "last_question",
    "last_payload",
    "telegram_language",
    "blocked",
    "updated_at",
)
_SELECT_PREFERENCES = f"SELECT {', '.join(_PREFERENCE_COLUMNS)} FROM users WHERE user_id = ?"


def _preferences_from_row(row: sqlite3.Row) -> Preferences:
    values = {column: row[column] for column in _PREFERENCE_COLUMNS}
    values["blocked"] = bool(values["blocked"])
    values["updated_at"] = float(values["updated_at"])
    return Preferences(**values)


def _checked_preference(field: str, value: object) -> object:
    if field not in PREFERENCE_FIELDS:
        raise ValueError(f"unknown preference {field!r}; expected one of {', '.join(PREFERENCE_FIELDS)}")
    if value is None:
        return None
    if field in _INTEGER_PREFERENCES:
        # bool is an int subclass; True as a batch size is a bug upstream, not a value.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"preference {field!r} must be a positive whole number, got {value!r}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"preference {field!r} must be text, got {value!r}")
    return value


def split_sql_script(script: str) -> list[str]:
    """Split a migration script into single statements (sqlite3 `execute` runs one at a time).

    `executescript` is not usable here: it commits any open transaction first, and a migration must
    run inside the same transaction as its `user_version` bump.
    """
    statements: list[str] = []
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        # A ';' inside a string literal or a trigger body does not end the statement.
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if _has_sql(statement):
                statements.append(statement)
            buffer = ""
    if _has_sql(buffer.strip()):
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]!r}")
    return statements


def _has_sql(text: str) -> bool:
    lines = (line.split("--", 1)[0] for line in text.splitlines())
    return bool("".join(lines).strip(" \t\r\n;"))


class Store:
    """One aiosqlite connection; every write is one BEGIN IMMEDIATE transaction, serialized by an asyncio.Lock."""

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self._path = path
        # One connection is shared by all coroutines; without the lock two of them would interleave statements
        # inside one transaction, and a reader could see another coroutine's uncommitted rows.
        self._lock = asyncio.Lock()
        self._schema_version = 0
        self._closed = False

    @classmethod
    async def open(cls, path: str | Path) -> Store:
        path_text = str(path)
        if path_text != ":memory:":
            Path(path_text).parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path_text, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            # busy_timeout first: switching to WAL needs a lock another process may hold for a moment.
            await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            rows = await db.execute_fetchall("PRAGMA journal_mode = WAL")
            journal_mode = str(rows[0][0]).lower() if rows else ""
            if path_text != ":memory:" and journal_mode != "wal":
                log.warning("SQLite at %s runs in journal_mode=%s, not WAL", path_text, journal_mode)
            # NORMAL is durable across application crashes in WAL mode; only a power cut can lose the last commits.
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            store = cls(db, path_text)
            await store._migrate()
        except BaseException:
            # aiosqlite's worker thread is not a daemon: an unclosed connection would keep the process alive.
            await db.close()
            raise
        return store

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        async with self._lock:
            await self._db.close()

    @property
    def schema_version(self) -> int:
        return self._schema_version

    @property
    def path(self) -> str:
        return self._path

    # -- transactions -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
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

    async def _write_one(self, sql: str, parameters: tuple) -> None:
        """A single-statement write: in autocommit mode SQLite runs it as its own transaction, atomically,
        in one round trip to aiosqlite's thread instead of three (BEGIN, statement, COMMIT)."""
        async with self._lock:
            await self._db.execute(sql, parameters)

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            yield self._db

    async def _rollback_quietly(self) -> None:
        try:
            await self._db.execute("ROLLBACK")
        except sqlite3.Error:
            # Nothing to roll back: BEGIN itself failed, or SQLite already rolled back after the error.
            pass

    async def _migrate(self) -> None:
        self._schema_version = await self._user_version()
        latest = MIGRATIONS[-1][0] if MIGRATIONS else 0
        if self._schema_version > latest:
            raise RuntimeError(
                f"database {self._path} has schema version {self._schema_version}, newer than this code's {latest}"
            )
        for version, script in MIGRATIONS:
            if version <= self._schema_version:
                continue
            async with self._transaction() as db:
                # Re-read under the write lock: another process may have migrated since we looked.
                rows = await db.execute_fetchall("PRAGMA user_version")
                if rows[0][0] >= version:
                    continue
                for statement in split_sql_script(script):
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {int(version)}")
            log.info("SQLite %s migrated to schema version %d", self._path, version)
        self._schema_version = await self._user_version()

    async def _user_version(self) -> int:
        async with self._reading() as db:
            rows = await db.execute_fetchall("PRAGMA user_version")
        return int(rows[0][0])

    # -- users and preferences ------------------------------------------------------------------------------------

    async def get_preferences(self, user_id: int) -> Preferences:
        async with self._reading() as db:
            rows = await db.execute_fetchall(_SELECT_PREFERENCES, (user_id,))
        return _preferences_from_row(rows[0]) if rows else Preferences(user_id=user_id)

    async def set_preference(self, user_id: int, field: str, value: object) -> Preferences:
        """Set (or with None, clear) one preference; only that column is written, so concurrent updates of
        other fields are never lost."""
        value = _checked_preference(field, value)
        now = time.time()
        # `field` is one of PREFERENCE_FIELDS (checked above), so formatting it into the SQL is safe.
        sql = f"""
            INSERT INTO users (user_id, {field}, created_at, updated_at)
            VALUES (?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET
                {field} = excluded.{field},
                updated_at = excluded.updated_at
        """
        async with self._transaction() as db:
            await db.execute(sql, (user_id, value, now, now))
            rows = await db.execute_fetchall(_SELECT_PREFERENCES, (user_id,))
        return _preferences_from_row(rows[0])

    async def touch_user(self, user_id: int, telegram_language: str | None) -> None:
        """Record that the user wrote to the bot: they are reachable again, and their Telegram language."""
        now = time.time()
        await self._write_one(
            """
            INSERT INTO users (user_id, telegram_language, blocked, created_at, updated_at)
            VALUES (?, ?, 0, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET
                -- Some updates carry no language_code; keep the last one seen rather than forget it.
                telegram_language = coalesce(excluded.telegram_language, users.telegram_language),
                blocked = 0,
                updated_at = excluded.updated_at
            """,
            (user_id, telegram_language, now, now),
        )

    async def remember_question(self, user_id: int, text: str, payload: str | None,
                                telegram_language: str | None = None) -> None:
        """The user's last question; writing to the bot also means they are reachable again (as touch_user)."""
        now = time.time()
        await self._write_one(
            """
            INSERT INTO users (user_id, last_question, last_payload, telegram_language, blocked, created_at,
                               updated_at)
            VALUES (?, ?, ?, ?, 0, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET
                last_question = excluded.last_question,
                last_payload = excluded.last_payload,
                telegram_language = coalesce(excluded.telegram_language, users.telegram_language),
                blocked = 0,
                updated_at = excluded.updated_at
            """,
            (user_id, text, payload, telegram_language, now, now),
        )

    async def mark_blocked(self, user_id: int, blocked: bool = True) -> None:
        now = time.time()
        async with self._transaction() as db:
            await self._set_blocked(db, user_id, blocked, now)

    @staticmethod
    async def _set_blocked(db: aiosqlite.Connection, user_id: int, blocked: bool, now: float) -> None:
        await db.execute(
            """
            INSERT INTO users (user_id, blocked, created_at, updated_at)
            VALUES (?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET
                blocked = excluded.blocked,
                updated_at = excluded.updated_at
            """,
            (user_id, int(bool(blocked)), now, now),
        )

    async def count_users(self) -> int:
        """All known users, blocked ones included."""
        async with self._reading() as db:
            rows = await db.execute_fetchall("SELECT count(*) FROM users")
        return int(rows[0][0])

    # -- catalog announcements ------------------------------------------------------------------------------------

    async def announced_versions(self) -> list[tuple[str, str, float]]:
        """Posted announcements as (catalog_id, sha256, announced_at), oldest first; discarded ones are not listed."""
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT catalog_id, sha256, posted_at
                FROM announcements
                WHERE status = 'posted'
                ORDER BY posted_at, id
                """
            )
        return [(row["catalog_id"], row["sha256"], float(row["posted_at"])) for row in rows]

    async def last_announced(self, catalog_id: str) -> str | None:
        row = await self._last_posted(catalog_id)
        return row["sha256"] if row else None

    async def last_announced_text(self, catalog_id: str) -> str | None:
        row = await self._last_posted(catalog_id)
        return row["catalog_text"] if row else None

    async def _last_posted(self, catalog_id: str) -> sqlite3.Row | None:
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT sha256, catalog_text
                FROM announcements
                WHERE catalog_id = ? AND status = 'posted'
                ORDER BY posted_at DESC, id DESC
                LIMIT 1
                """,
                (catalog_id,),
            )
        return rows[0] if rows else None

    async def begin_announcement(self, catalog_id: str, sha256: str, catalog_text: str, message: str) -> int | None:
        """Record a pending announcement of one catalog version; None if that version was ever begun before
        (pending, posted or discarded), so each version is announced at most once."""
        async with self._transaction() as db:
            cursor = await db.execute(
                """
                INSERT INTO announcements (catalog_id, sha256, catalog_text, message, status, created_at)
                VALUES (?, ?, ?, ?, 'pending', ?)
                ON CONFLICT (catalog_id, sha256) DO NOTHING
                """,
                (catalog_id, sha256, catalog_text, message, time.time()),
            )
            inserted = cursor.rowcount == 1
            announcement_id = cursor.lastrowid
            await cursor.close()
        return announcement_id if inserted else None

    async def pending_announcements(self) -> list[dict]:
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT id, catalog_id, sha256, message, status, created_at
                FROM announcements
                WHERE status = 'pending'
                ORDER BY id
                """
            )
        return [dict(row) for row in rows]

    async def mark_announcement_posted(self, announcement_id: int, message_ids: list[int]) -> None:
        """pending -> posted. Posting twice keeps the first record; a discarded or unknown id is a ValueError."""
        ids_json = json.dumps([int(message_id) for message_id in message_ids])
        async with self._transaction() as db:
            status = await self._announcement_status(db, announcement_id)
            if status == "discarded":
                raise ValueError(f"announcement {announcement_id} was discarded and cannot be posted")
            await db.execute(
                """
                UPDATE announcements
                SET status = 'posted', message_ids = ?, posted_at = ?
                WHERE id = ? AND status = 'pending'
                """,
                (ids_json, time.time(), announcement_id),
            )

    async def discard_announcement(self, announcement_id: int) -> None:
        """pending -> discarded: the version counts as handled and is never posted. A posted one cannot be discarded."""
        async with self._transaction() as db:
            status = await self._announcement_status(db, announcement_id)
            if status == "posted":
                raise ValueError(f"announcement {announcement_id} was already posted and cannot be discarded")
            await db.execute(
                "UPDATE announcements SET status = 'discarded' WHERE id = ? AND status = 'pending'",
                (announcement_id,),
            )

    async def get_announcement(self, announcement_id: int) -> dict | None:
        """One announcement with its status and catalog text, or None."""
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT id, catalog_id, sha256, catalog_text, message, status, message_ids, created_at, posted_at
                FROM announcements WHERE id = ?
                """,
                (announcement_id,),
            )
        return dict(rows[0]) if rows else None

    async def record_announcement_part(self, announcement_id: int, part: int, message_id: int) -> None:
        """One part of a (possibly split) channel post went out: a resumed post skips it."""
        async with self._transaction() as db:
            await db.execute(
                """
                INSERT INTO announcement_parts (announcement_id, part, message_id, sent_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (announcement_id, part) DO NOTHING
                """,
                (announcement_id, part, message_id, time.time()),
            )

    async def announcement_parts(self, announcement_id: int) -> dict[int, int]:
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                "SELECT part, message_id FROM announcement_parts WHERE announcement_id = ? ORDER BY part",
                (announcement_id,),
            )
        return {int(row["part"]): int(row["message_id"]) for row in rows}

    @staticmethod
    async def _announcement_status(db: aiosqlite.Connection, announcement_id: int) -> str:
        rows = await db.execute_fetchall("SELECT status FROM announcements WHERE id = ?", (announcement_id,))
        if not rows:
            raise ValueError(f"no announcement with id {announcement_id}")
        return rows[0]["status"]

    # -- price-alert subscriptions --------------------------------------------------------------------------------

    async def subscribe(self, user_id: int, card_id: str, below_usd: float | None) -> None:
        """Create or replace the user's alert for one card; below_usd None means any price change."""
        if below_usd is not None:
            below_usd = float(below_usd)
            if not math.isfinite(below_usd) or below_usd < 0:
                raise ValueError(f"below_usd must be a non-negative price, got {below_usd!r}")
        now = time.time()
        async with self._transaction() as db:
            await db.execute(
                """
                INSERT INTO users (user_id, created_at, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (user_id) DO NOTHING
                """,
                (user_id, now, now),
            )
            await db.execute(
                """
                INSERT INTO subscriptions (user_id, card_id, below_usd, created_at)
                VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id, card_id) DO UPDATE SET below_usd = excluded.below_usd
                """,
                (user_id, card_id, below_usd, now),
            )

    async def unsubscribe(self, user_id: int, card_id: str | None = None) -> int:
        """Remove one subscription, or with card_id None all of the user's; returns how many were removed."""
        async with self._transaction() as db:
            if card_id is None:
                cursor = await db.execute("DELETE FROM subscriptions WHERE user_id = ?", (user_id,))
            else:
                cursor = await db.execute(
                    "DELETE FROM subscriptions WHERE user_id = ? AND card_id = ?", (user_id, card_id)
                )
            removed = cursor.rowcount
            await cursor.close()
        return removed

    async def subscriptions(self, user_id: int) -> list[tuple[str, float | None]]:
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                "SELECT card_id, below_usd FROM subscriptions WHERE user_id = ? ORDER BY card_id",
                (user_id,),
            )
        return [(row["card_id"], row["below_usd"]) for row in rows]

    async def subscribers_for(self, card_id: str) -> list[tuple[int, float | None]]:
        """Subscribers of one card who have not blocked the bot, by user_id."""
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT s.user_id, s.below_usd
                FROM subscriptions AS s
                JOIN users AS u ON u.user_id = s.user_id
                WHERE s.card_id = ? AND u.blocked = 0
                ORDER BY s.user_id
                """,
                (card_id,),
            )
        return [(row["user_id"], row["below_usd"]) for row in rows]

    # -- alert delivery -------------------------------------------------------------------------------------------

    async def enqueue_alerts(self, announcement_id: int, rows: Iterable[tuple[int, str]]) -> int:
        """Queue one alert per (user_id, text); a user already queued for this announcement is skipped.
        All rows or none: a bad row rolls back the whole batch. Returns how many were newly queued."""
        now = time.time()
        added = 0
        async with self._transaction() as db:
            for user_id, text in rows:
                cursor = await db.execute(
                    """
                    INSERT INTO alerts (announcement_id, user_id, text, status, created_at)
                    VALUES (?, ?, ?, 'queued', ?)
                    ON CONFLICT (announcement_id, user_id) DO NOTHING
                    """,
                    (announcement_id, user_id, text, now),
                )
                added += cursor.rowcount
                await cursor.close()
        return added

    async def next_alerts(self, limit: int = 100) -> list[tuple[int, int, int, str]]:
        """Queued alerts as (alert_id, announcement_id, user_id, text), oldest first."""
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                """
                SELECT id, announcement_id, user_id, text
                FROM alerts
                WHERE status = 'queued'
                ORDER BY id
                LIMIT ?
                """,
                (limit,),
            )
        return [(row["id"], row["announcement_id"], row["user_id"], row["text"]) for row in rows]

    async def mark_alert(self, alert_id: int, status: str, error: str | None = None) -> None:
        """Record the outcome of one send. The first outcome wins (a repeat call changes nothing), so a
        restarted broadcaster cannot turn a sent alert back into a failed one. 'blocked' also marks the user
        blocked, in the same transaction."""
        if status not in ALERT_OUTCOMES:
            raise ValueError(f"alert status must be one of {', '.join(ALERT_OUTCOMES)}, got {status!r}")
        now = time.time()
        async with self._transaction() as db:
            found = await db.execute_fetchall("SELECT user_id FROM alerts WHERE id = ?", (alert_id,))
            if not found:
                raise ValueError(f"no alert with id {alert_id}")
            cursor = await db.execute(
                """
                UPDATE alerts
                SET status = ?, error = ?, sent_at = ?
                WHERE id = ? AND status = 'queued'
                """,
                (status, error, now if status == "sent" else None, alert_id),
            )
            changed = cursor.rowcount == 1
            await cursor.close()
            if changed and status == "blocked":
                await self._set_blocked(db, found[0]["user_id"], True, now)

    async def alert_progress(self, announcement_id: int) -> dict:
        async with self._reading() as db:
            rows = await db.execute_fetchall(
                "SELECT status, count(*) AS n FROM alerts WHERE announcement_id = ? GROUP BY status",
                (announcement_id,),
            )
        progress = {"total": 0, "sent": 0, "failed": 0, "blocked": 0, "queued": 0}
        for row in rows:
            progress[row["status"]] = int(row["n"])
            progress["total"] += int(row["n"])
        return progress
