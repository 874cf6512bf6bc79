"""The schema: numbered migrations and the runner that applies the missing ones, each in one transaction."""
from __future__ import annotations

import logging
import sqlite3

from bot.store.database import Database, fetch_rows

log = logging.getLogger(__name__)

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
    (
        6,
        # The announcement key in its own column: until 5 the key was packed as "<sha256>@<base sha256>" into
        # sha256. The UNIQUE constraint changes, and SQLite changes constraints only by rebuilding the table
        # (https://www.sqlite.org/lang_altertable.html#otheralter); the runner turns foreign keys off around
        # every migration, so dropping the old table does not cascade into alerts and announcement_parts.
        """
        CREATE TABLE announcements_v6 (
            id           INTEGER PRIMARY KEY,
            catalog_id   TEXT NOT NULL,
            sha256       TEXT NOT NULL,  -- the catalog file's hash
            base_sha256  TEXT NOT NULL DEFAULT '',  -- the last posted version it was diffed against, '' for none
            catalog_text TEXT NOT NULL,
            message      TEXT NOT NULL,
            status       TEXT NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'posted', 'discarded')),
            message_ids  TEXT,  -- JSON list of the channel message ids, once posted
            created_at   REAL NOT NULL,
            posted_at    REAL,
            UNIQUE (catalog_id, sha256, base_sha256)
        );
        INSERT INTO announcements_v6 (id, catalog_id, sha256, base_sha256, catalog_text, message, status,
                                      message_ids, created_at, posted_at)
        SELECT id, catalog_id,
               CASE WHEN instr(sha256, '@') > 0 THEN substr(sha256, 1, instr(sha256, '@') - 1) ELSE sha256 END,
               CASE WHEN instr(sha256, '@') > 0 THEN substr(sha256, instr(sha256, '@') + 1) ELSE '' END,
               catalog_text, message, status, message_ids, created_at, posted_at
        FROM announcements;
        DROP TABLE announcements;
        ALTER TABLE announcements_v6 RENAME TO announcements;
        """,
    ),
    (
        7,
        # Follow-ups (issue #12): the last question's request per chat (a private chat's id is its user's), so
        # "and in fp8?" changes it after a restart and on another replica; bot/store/contexts.py forgets a day-old
        # one. payload: engine.payload's encoding when it fits 64 characters; request_json: always.
        """
        CREATE TABLE chat_context (
            chat_id      INTEGER PRIMARY KEY,
            payload      TEXT,
            request_json TEXT NOT NULL,
            updated_at   REAL NOT NULL
        );
        CREATE INDEX chat_context_by_age ON chat_context (updated_at);
        """,
    ),
    (
        8,
        # Delivery intents (issue #15): a send's fate is recorded before the send, so a restart can tell "never
        # sent" from "sent, not recorded" and never repeats the second kind silently. alerts gains the 'sending'
        # and 'unknown' states; a channel part can be an 'intent' without a message id; the admin's alert
        # progress message is remembered; a pending announcement records whether its preview went out. The
        # CHECK constraints change, so both tables are rebuilt (see migration 6); plain SQL that PostgreSQL also
        # runs: no SQLite-only function, BIGINT for Telegram's 52-bit chat ids.
        """
        CREATE TABLE alerts_v8 (
            id              INTEGER PRIMARY KEY,
            announcement_id INTEGER NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
            user_id         INTEGER NOT NULL,
            text            TEXT NOT NULL CHECK (length(text) > 0),
            status          TEXT NOT NULL DEFAULT 'queued'
                            CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'blocked', 'unknown')),
            error           TEXT,
            created_at      REAL NOT NULL,
            sent_at         REAL,
            UNIQUE (announcement_id, user_id)
        );
        INSERT INTO alerts_v8 (id, announcement_id, user_id, text, status, error, created_at, sent_at)
        SELECT id, announcement_id, user_id, text, status, error, created_at, sent_at FROM alerts;
        DROP TABLE alerts;
        ALTER TABLE alerts_v8 RENAME TO alerts;
        CREATE INDEX alerts_by_status ON alerts (status, id);
        CREATE TABLE announcement_parts_v8 (
            announcement_id INTEGER NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
            part            INTEGER NOT NULL CHECK (part >= 0),
            state           TEXT NOT NULL DEFAULT 'sent' CHECK (state IN ('intent', 'sent', 'confirmed')),
            message_id      BIGINT,  -- NULL while an intent, and for a part an admin confirmed by hand
            asked_at        REAL,  -- when an admin was asked about an intent whose fate is unknown
            sent_at         REAL,
            PRIMARY KEY (announcement_id, part)
        );
        INSERT INTO announcement_parts_v8 (announcement_id, part, state, message_id, sent_at)
        SELECT announcement_id, part, 'sent', message_id, sent_at FROM announcement_parts;
        DROP TABLE announcement_parts;
        ALTER TABLE announcement_parts_v8 RENAME TO announcement_parts;
        CREATE TABLE alert_progress_messages (
            announcement_id INTEGER PRIMARY KEY REFERENCES announcements (id) ON DELETE CASCADE,
            chat_id         BIGINT NOT NULL,
            message_id      BIGINT NOT NULL
        );
        ALTER TABLE announcements ADD COLUMN preview_sent_at REAL;
        ALTER TABLE announcements ADD COLUMN needs_confirmation INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE announcements ADD COLUMN admin_note TEXT;
        UPDATE announcements SET preview_sent_at = created_at;  -- the code before 8 previewed at once
        """,
    ),
    (
        9,
        # The serving check's engine (issue #11, /set engine): vllm | llama.cpp, NULL = chosen by the format.
        """
        ALTER TABLE users ADD COLUMN engine TEXT;
        """,
    ),
    (
        10,
        # Any Hugging Face model (issue #10): what the Hub said about a repository the registry does not know,
        # shared by replicas; bot/store/hub_models.py reads a row until it expires (found: days; errors: an hour).
        # status: found | gated | missing | unreadable; config_json and counts_json (parameters per safetensors
        # dtype) only when found, so a newer engine re-reads the shape from them.
        """
        CREATE TABLE hub_models (
            repo_id     TEXT PRIMARY KEY,
            status      TEXT NOT NULL CHECK (status IN ('found', 'gated', 'missing', 'unreadable')),
            config_json TEXT,
            counts_json TEXT,
            fetched_at  REAL NOT NULL,
            expires_at  REAL NOT NULL
        );
        """,
    ),
]

async def migrate(database: Database) -> int:
    """Apply the migrations this database lacks; return its schema version."""
    version = await user_version(database)
    latest = MIGRATIONS[-1][0] if MIGRATIONS else 0
    if version > latest:
        raise RuntimeError(f"database {database.path} has schema version {version}, newer than this code's {latest}")
    if version == latest:
        return version
    # Off for the whole run, as SQLite's table-rebuild procedure asks; each migration checks the keys before
    # it commits instead, so a migration that breaks a reference rolls back.
    await database.pragma("PRAGMA foreign_keys = OFF")
    try:
        for number, script in MIGRATIONS:
            if number <= version:
                continue
            async with database.transaction() as db:
                # Re-read under the write lock: another process may have migrated since we looked.
                rows = await fetch_rows(db, "PRAGMA user_version")
                if rows[0][0] >= number:
                    continue
                for statement in split_sql_script(script):
                    await db.execute(statement)
                broken = await fetch_rows(db, "PRAGMA foreign_key_check")
                if broken:
                    raise sqlite3.IntegrityError(f"migration {number} breaks {len(broken)} foreign key(s)")
                await db.execute(f"PRAGMA user_version = {int(number)}")
            log.info("SQLite %s migrated to schema version %d", database.path, number)
    finally:
        await database.pragma("PRAGMA foreign_keys = ON")
    return await user_version(database)


async def user_version(database: Database) -> int:
    rows = await database.fetch("PRAGMA user_version")
    return int(rows[0][0])


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
