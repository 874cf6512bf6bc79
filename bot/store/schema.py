"""The schema: numbered migrations and the runner that applies the missing ones, each in one transaction."""
from __future__ import annotations

import logging
import sqlite3

from bot.store.database import Database

log = logging.getLogger(__name__)

# Append only: a released version's script is never edited, because databases in the field already ran it.
# Each script runs inside one exclusive transaction together with the version bump: on SQLite BEGIN IMMEDIATE and
# `PRAGMA user_version`, on PostgreSQL an advisory lock and the schema_version table (bot/store/database.py).
# Write portable DDL: SQLite's types (INTEGER, REAL, INTEGER PRIMARY KEY) are mapped for PostgreSQL there.
# Migration 13: how many alerts of an announcement are in each state, kept by triggers in the same
# statement as every insert, state change and delete on alerts, so the admin's progress reads one row instead of
# counting 100,000 (the counts equal that count whatever writes the alerts: a replica, a crash's settling, a
# cascade). A later migration that rebuilds alerts (as 8 did) drops these triggers and must create them again.
_ALERT_COUNTS = """
        CREATE TABLE alert_counts (
            announcement_id INTEGER NOT NULL PRIMARY KEY REFERENCES announcements (id) ON DELETE CASCADE,
            queued          INTEGER NOT NULL DEFAULT 0,
            sending         INTEGER NOT NULL DEFAULT 0,
            sent            INTEGER NOT NULL DEFAULT 0,
            failed          INTEGER NOT NULL DEFAULT 0,
            blocked         INTEGER NOT NULL DEFAULT 0,
            unknown         INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO alert_counts (announcement_id, queued, sending, sent, failed, blocked, unknown)
        SELECT announcement_id,
               sum(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), sum(CASE WHEN status = 'sending' THEN 1 ELSE 0 END),
               sum(CASE WHEN status = 'sent' THEN 1 ELSE 0 END), sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END),
               sum(CASE WHEN status = 'blocked' THEN 1 ELSE 0 END), sum(CASE WHEN status = 'unknown' THEN 1 ELSE 0 END)
        FROM alerts GROUP BY announcement_id;
        -- Claimed alerts by state and holder: releasing a stopping or dead sender's claims on queued alerts
        -- (a few batches, however long the queue) looks them up here instead of reading every queued alert.
        CREATE INDEX alerts_claimed ON alerts (status, claimed_by) WHERE claimed_by IS NOT NULL;
"""
# SQLite has row triggers only; each touches one alert_counts row, in the writing statement's transaction.
_ALERT_COUNTS_SQLITE_TRIGGERS = """
        CREATE TRIGGER alert_counts_on_insert AFTER INSERT ON alerts BEGIN
            INSERT OR IGNORE INTO alert_counts (announcement_id) VALUES (NEW.announcement_id);
            UPDATE alert_counts
            SET queued = queued + (NEW.status = 'queued'), sending = sending + (NEW.status = 'sending'),
                sent = sent + (NEW.status = 'sent'), failed = failed + (NEW.status = 'failed'),
                blocked = blocked + (NEW.status = 'blocked'), unknown = unknown + (NEW.status = 'unknown')
            WHERE announcement_id = NEW.announcement_id;
        END;
        CREATE TRIGGER alert_counts_on_update AFTER UPDATE OF status, announcement_id ON alerts
        WHEN OLD.status IS NOT NEW.status OR OLD.announcement_id IS NOT NEW.announcement_id BEGIN
            UPDATE alert_counts
            SET queued = queued - (OLD.status = 'queued'), sending = sending - (OLD.status = 'sending'),
                sent = sent - (OLD.status = 'sent'), failed = failed - (OLD.status = 'failed'),
                blocked = blocked - (OLD.status = 'blocked'), unknown = unknown - (OLD.status = 'unknown')
            WHERE announcement_id = OLD.announcement_id;
            INSERT OR IGNORE INTO alert_counts (announcement_id) VALUES (NEW.announcement_id);
            UPDATE alert_counts
            SET queued = queued + (NEW.status = 'queued'), sending = sending + (NEW.status = 'sending'),
                sent = sent + (NEW.status = 'sent'), failed = failed + (NEW.status = 'failed'),
                blocked = blocked + (NEW.status = 'blocked'), unknown = unknown + (NEW.status = 'unknown')
            WHERE announcement_id = NEW.announcement_id;
        END;
        CREATE TRIGGER alert_counts_on_delete AFTER DELETE ON alerts BEGIN
            UPDATE alert_counts
            SET queued = queued - (OLD.status = 'queued'), sending = sending - (OLD.status = 'sending'),
                sent = sent - (OLD.status = 'sent'), failed = failed - (OLD.status = 'failed'),
                blocked = blocked - (OLD.status = 'blocked'), unknown = unknown - (OLD.status = 'unknown')
            WHERE announcement_id = OLD.announcement_id;
        END;
"""
# PostgreSQL: an insert or delete of many alerts (a chunk of the fan-out, an announcement's cascade) adds its counts
# once per statement from the transition table, since a row trigger would rewrite one counts row per alert; a state
# change (one alert per statement) is a row trigger that fires only when the state changes. The triggers are made
# inside a DO block because split_sql_script reads a CREATE TRIGGER without BEGIN ... END as unfinished.
_ALERT_COUNTS_POSTGRES_TRIGGERS = """
        CREATE FUNCTION alert_counts_rows() RETURNS trigger LANGUAGE plpgsql AS '
        BEGIN
            IF TG_OP = ''INSERT'' THEN
                INSERT INTO alert_counts AS c (announcement_id, queued, sending, sent, failed, blocked, unknown)
                SELECT announcement_id, count(*) FILTER (WHERE status = ''queued''),
                       count(*) FILTER (WHERE status = ''sending''), count(*) FILTER (WHERE status = ''sent''),
                       count(*) FILTER (WHERE status = ''failed''), count(*) FILTER (WHERE status = ''blocked''),
                       count(*) FILTER (WHERE status = ''unknown'')
                FROM new_rows GROUP BY announcement_id ORDER BY announcement_id
                ON CONFLICT (announcement_id) DO UPDATE
                SET queued = c.queued + excluded.queued, sending = c.sending + excluded.sending,
                    sent = c.sent + excluded.sent, failed = c.failed + excluded.failed,
                    blocked = c.blocked + excluded.blocked, unknown = c.unknown + excluded.unknown;
            ELSE
                UPDATE alert_counts AS c
                SET queued = c.queued - d.queued, sending = c.sending - d.sending, sent = c.sent - d.sent,
                    failed = c.failed - d.failed, blocked = c.blocked - d.blocked, unknown = c.unknown - d.unknown
                FROM (SELECT announcement_id, count(*) FILTER (WHERE status = ''queued'') AS queued,
                             count(*) FILTER (WHERE status = ''sending'') AS sending,
                             count(*) FILTER (WHERE status = ''sent'') AS sent,
                             count(*) FILTER (WHERE status = ''failed'') AS failed,
                             count(*) FILTER (WHERE status = ''blocked'') AS blocked,
                             count(*) FILTER (WHERE status = ''unknown'') AS unknown
                      FROM old_rows GROUP BY announcement_id) AS d
                WHERE c.announcement_id = d.announcement_id;
            END IF;
            RETURN NULL;
        END';
        CREATE FUNCTION alert_counts_move() RETURNS trigger LANGUAGE plpgsql AS '
        BEGIN
            UPDATE alert_counts
            SET queued = queued - (OLD.status = ''queued'')::int, sending = sending - (OLD.status = ''sending'')::int,
                sent = sent - (OLD.status = ''sent'')::int, failed = failed - (OLD.status = ''failed'')::int,
                blocked = blocked - (OLD.status = ''blocked'')::int, unknown = unknown - (OLD.status = ''unknown'')::int
            WHERE announcement_id = OLD.announcement_id;
            INSERT INTO alert_counts (announcement_id) VALUES (NEW.announcement_id) ON CONFLICT DO NOTHING;
            UPDATE alert_counts
            SET queued = queued + (NEW.status = ''queued'')::int, sending = sending + (NEW.status = ''sending'')::int,
                sent = sent + (NEW.status = ''sent'')::int, failed = failed + (NEW.status = ''failed'')::int,
                blocked = blocked + (NEW.status = ''blocked'')::int, unknown = unknown + (NEW.status = ''unknown'')::int
            WHERE announcement_id = NEW.announcement_id;
            RETURN NULL;
        END';
        DO '
        BEGIN
            CREATE TRIGGER alert_counts_on_insert AFTER INSERT ON alerts REFERENCING NEW TABLE AS new_rows
                FOR EACH STATEMENT EXECUTE FUNCTION alert_counts_rows();
            CREATE TRIGGER alert_counts_on_delete AFTER DELETE ON alerts REFERENCING OLD TABLE AS old_rows
                FOR EACH STATEMENT EXECUTE FUNCTION alert_counts_rows();
            CREATE TRIGGER alert_counts_on_update AFTER UPDATE OF status, announcement_id ON alerts FOR EACH ROW
                WHEN (OLD.status IS DISTINCT FROM NEW.status
                      OR OLD.announcement_id IS DISTINCT FROM NEW.announcement_id)
                EXECUTE FUNCTION alert_counts_move();
        END';
"""

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
        # Follow-ups: the last question's request per chat (a private chat's id is its user's), so
        # "and in fp8?" changes it after a restart and on another replica; bot/store/contexts.py forgets a day-old
        # one. payload: engine.sizing.payload's encoding when it fits 64 characters; request_json: always.
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
        # Delivery intents: a send's fate is recorded before the send, so a restart can tell "never
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
        # The serving check's engine (/set engine): vllm | llama.cpp, NULL = chosen by the format.
        """
        ALTER TABLE users ADD COLUMN engine TEXT;
        """,
    ),
    (
        10,
        # Any Hugging Face model: what the Hub said about a repository the registry does not know,
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
    (
        11,
        # Claims for several replicas on one database: who sends a queued alert (AlertRepository.claim_alerts) and
        # who posts a pending announcement (AnnouncementRepository.claim_announcement), each until when. Added to
        # the tables as migration 8 rebuilt them; a claim is a lease, so a dead replica's work is resumed after it.
        """
        ALTER TABLE alerts ADD COLUMN claimed_by TEXT;
        ALTER TABLE alerts ADD COLUMN claimed_until REAL;
        ALTER TABLE announcements ADD COLUMN posting_by TEXT;
        ALTER TABLE announcements ADD COLUMN posting_until REAL;
        """,
    ),
    (
        12,
        # The durable inbox: every update from Telegram is stored here before it is
        # confirmed (polling: the next getUpdates offset; webhook: the 200), handled from here and marked.
        # state: received (stored, no reply has started) -> sending (the first non-repeatable request of its
        # handling is about to go out) -> done; a 'sending' row whose handler died becomes 'unknown' (its reply
        # may have arrived: never handled again). claimed_by/claimed_until: the replica handling it, until when
        # (a lease, as migration 11's). update_id is Telegram's; NOT NULL keeps it out of PostgreSQL identities.
        """
        CREATE TABLE inbox (
            update_id     INTEGER NOT NULL PRIMARY KEY,
            payload       TEXT NOT NULL,
            state         TEXT NOT NULL DEFAULT 'received'
                          CHECK (state IN ('received', 'sending', 'done', 'unknown')),
            received_at   REAL NOT NULL,
            claimed_by    TEXT,
            claimed_until REAL
        );
        CREATE INDEX inbox_open ON inbox (update_id) WHERE state IN ('received', 'sending');
        CREATE INDEX inbox_received_at ON inbox (received_at);
        """,
    ),
    # 13: alert_counts, see _ALERT_COUNTS below.
    (13, _ALERT_COUNTS + _ALERT_COUNTS_SQLITE_TRIGGERS),
    (
        14,
        # The admin's progress message is claimed before it is sent (else two replicas starting one fan-out
        # would send one each): a row with message_id 0 (Telegram's ids start at 1) is its sender's claim, until
        # claimed_until; the sender writes the id and clears the claim, the others edit that message.
        """
        ALTER TABLE alert_progress_messages ADD COLUMN claimed_by TEXT;
        ALTER TABLE alert_progress_messages ADD COLUMN claimed_until REAL;
        """,
    ),
    (
        15,
        # What customers ask for (bot/store/demand.py): one anonymous row per answered question, no user or chat
        # id and no text; the day without its time. Rows older than the retention are deleted by a daily job.
        """
        CREATE TABLE demand (
            id                INTEGER PRIMARY KEY,
            day               TEXT NOT NULL,
            catalog_id        TEXT NOT NULL,
            language          TEXT NOT NULL,
            intent            TEXT NOT NULL,
            model             TEXT,
            size_class        TEXT,
            format            TEXT,
            context_class     TEXT,
            concurrency_class TEXT,
            workload          TEXT,
            card              TEXT,
            card_count        INTEGER,
            monthly_usd       REAL,
            hourly_usd        REAL,
            rule_card         TEXT,
            rule_count        INTEGER,
            unmet             TEXT CHECK (unmet IN ('memory', 'fp8', 'stock', 'region', 'budget', 'speed', 'other')),
            unmet_card        TEXT
        );
        CREATE INDEX demand_by_day ON demand (day);
        """,
    ),
    (
        16,
        # A reply or an alert cut off by a crash while it was going out is sent again once, labeled as a repeat:
        # inbox.resent and alerts.resent say that this row's second attempt has begun (a second crash then leaves
        # it 'unknown'). users.settings_order: the update id of the last setting written, so that an older update
        # handled again never writes its setting over a newer acknowledged one.
        """
        ALTER TABLE inbox ADD COLUMN resent INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE alerts ADD COLUMN resent INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE users ADD COLUMN settings_order INTEGER;
        """,
    ),
    (
        17,
        # users.vllm: the vLLM release whose memory accounting the serving check follows (/set vllm 0.11; NULL:
        # the newest). users.<field>_order: the update id of the last write of that one setting, so that an older
        # update handled again is compared with the last write of its own field only: a newer /set of another
        # field no longer makes it skip its write (and say "saved" for a value it did not store). One column per
        # field rather than a JSON map in one column: the compare stays one portable WHERE of the upsert that
        # writes the value (no JSON functions, which differ between SQLite and PostgreSQL), and two fields written
        # at once by two updates touch different columns. Seeded from settings_order (now unused), which is not
        # older than any field's last write: a row migrated keeps today's rule until its field is set again.
        """
        ALTER TABLE users ADD COLUMN vllm TEXT;
        ALTER TABLE users ADD COLUMN language_order INTEGER;
        ALTER TABLE users ADD COLUMN precision_order INTEGER;
        ALTER TABLE users ADD COLUMN kv_precision_order INTEGER;
        ALTER TABLE users ADD COLUMN context_tokens_order INTEGER;
        ALTER TABLE users ADD COLUMN batch_order INTEGER;
        ALTER TABLE users ADD COLUMN coin_order INTEGER;
        ALTER TABLE users ADD COLUMN billing_order INTEGER;
        ALTER TABLE users ADD COLUMN region_order INTEGER;
        ALTER TABLE users ADD COLUMN engine_order INTEGER;
        ALTER TABLE users ADD COLUMN vllm_order INTEGER;
        UPDATE users SET
            language_order = settings_order,
            precision_order = settings_order,
            kv_precision_order = settings_order,
            context_tokens_order = settings_order,
            batch_order = settings_order,
            coin_order = settings_order,
            billing_order = settings_order,
            region_order = settings_order,
            engine_order = settings_order
        WHERE settings_order IS NOT NULL;
        """,
    ),
]

# The PostgreSQL form of a migration whose SQLite script has no portable form: 6 and 13. 6: SQLite changes a UNIQUE
# constraint by rebuilding the table, and a rebuild on PostgreSQL would drop the foreign keys that reference the
# old table (they follow the table, not its name); ALTER TABLE does the same change in place there. A number not
# listed here runs MIGRATIONS' script on both engines, its column types mapped by database.pg_ddl. Migration 8's
# rebuilds of alerts and announcement_parts run as written: no foreign key references either table, and the
# runner moves the copied tables' identities past their ids (postgres.PostgresConnection.after_migration).
POSTGRES_MIGRATIONS: dict[int, str] = {
    6: """
        ALTER TABLE announcements ADD COLUMN base_sha256 TEXT NOT NULL DEFAULT '';
        UPDATE announcements
        SET base_sha256 = split_part(sha256, '@', 2), sha256 = split_part(sha256, '@', 1)
        WHERE strpos(sha256, '@') > 0;
        ALTER TABLE announcements DROP CONSTRAINT announcements_catalog_id_sha256_key;
        ALTER TABLE announcements ADD CONSTRAINT announcements_catalog_id_sha256_base_sha256_key
            UNIQUE (catalog_id, sha256, base_sha256);
    """,
    # 13: PostgreSQL's triggers are functions, and count a many-row statement once (see above).
    13: _ALERT_COUNTS + _ALERT_COUNTS_POSTGRES_TRIGGERS,
}


def script_for(engine: str, number: int, script: str) -> str:
    if engine == "postgresql":
        return POSTGRES_MIGRATIONS.get(number, script)
    return script


async def migrate(database: Database) -> int:
    """Apply the migrations this database lacks; return its schema version."""
    version = await database.schema_version()
    latest = MIGRATIONS[-1][0] if MIGRATIONS else 0
    if version > latest:
        raise RuntimeError(f"database {database.path} has schema version {version}, newer than this code's {latest}")
    if version == latest:
        return version
    async with database.migrating():
        for number, script in MIGRATIONS:
            if number <= version:
                continue
            async with database.migration() as db:
                # Re-read inside the exclusive transaction: another process may have migrated since we looked.
                if await db.schema_version() >= number:
                    continue
                for statement in split_sql_script(script_for(database.engine, number, script)):
                    await db.execute(db.ddl(statement))
                await db.after_migration(number)
                await db.set_schema_version(number)
            log.info("%s %s migrated to schema version %d", database.engine, database.path, number)
    return await database.schema_version()


def split_sql_script(script: str) -> list[str]:
    """Split a migration script into single statements (sqlite3 `execute` runs one at a time).

    `executescript` is not usable here: it commits any open transaction first, and a migration must
    run inside the same transaction as its schema version bump.
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
