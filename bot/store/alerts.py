"""The alert queue: queued idempotently per announcement and user, in short chunks; a batch is claimed by one sender
at a time (a lease, for several replicas), each alert is marked 'sending' in its own committed statement right
before its send, the first outcome wins; an interrupted send is queued once more as a labeled repeat (migration 16's
`resent`), and one interrupted again becomes 'unknown'. How many are in each state is read from alert_counts, which
migration 13's triggers keep equal to counting the alerts."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import NamedTuple, TypedDict

from bot.store.database import Repository, Row, fetch_rows
from bot.store.users import set_blocked

ALERT_OUTCOMES = ("sent", "failed", "blocked", "unknown")
# Written on an alert whose send was interrupted twice (the process died between the send and its record, then
# again while its labeled repeat went out).
INTERRUPTED = "interrupted between send and record, twice; not resent again"
# How long a claim keeps other replicas off an alert. Longer than one claimed batch takes to send (BATCH alerts at
# the send rate, with Telegram's 429 back-offs); a replica that dies holding a claim delays those alerts this long,
# and its 'sending' alerts become 'unknown' once it has run out.
ALERT_LEASE_S = 300.0
# Every state an alert can be in: the columns of alert_counts (migration 13).
ALERT_STATES = ("queued", "sending", "sent", "failed", "blocked", "unknown")
# Rows per enqueue statement (one multi-row INSERT, committed on its own). Its time under the lock grows with the
# rows: PostgreSQL checks the announcement's foreign key once a row and SQLite runs migration 13's row triggers. On
# this loaded 2-core machine a 50,000-alert fan-out took (per chunk median, longest; the whole) with 250 rows 21 ms,
# 49 ms; 4.4 s on PostgreSQL and 8 ms, 36 ms; 2.0 s on SQLite; with 100 rows 12, 36; 6.1 s and 1.2, 31; 1.4 s; with
# 50 rows 5, 28; 6.2 s and 0.8, 19; 1.5 s: below 100 rows each statement's round trip costs more than
# its rows. The text stays far under asyncpg's max_cacheable_statement_size (1024 * 15 characters by default,
# asyncpg 0.32.0, asyncpg/connection.py: connect() and the `len(query) <=` test in _get_statement; 40 characters a
# row once numbered for PostgreSQL): a longer statement would be prepared again for every chunk.
ENQUEUE_CHUNK = 100
# Newly queued alerts after which the planner's statistics are refreshed: with those of a table of sent alerts,
# PostgreSQL's planner takes 100,000 just-queued alerts for a few hundred and claims each batch by reading them all
# and sorting them (EXPLAIN ANALYZE: 110-125 ms a claim, held under the write lock) instead of reading the first
# `limit` along alerts_by_status; fewer than this cost a few milliseconds that way.
ANALYZE_AFTER = 10_000
# The admin's progress message: message_id of a claimed row whose message is not sent yet (Telegram's ids start at
# 1), and how long the claim keeps other replicas from sending one (longer than one sendMessage with its retries).
PROGRESS_UNSENT = 0
PROGRESS_LEASE_S = 120.0
# Subscribers read per query when an announcement fans out: on SQLite each page holds the store's one connection
# (1,000 rows held it up to 37 ms on the loaded machine).
RECIPIENT_PAGE = 500


class QueuedAlert(NamedTuple):
    id: int
    announcement_id: int
    user_id: int
    text: str
    resent: bool = False  # a repeat of a send a crash cut off: sent with a label saying so


def _queued(row: Row) -> QueuedAlert:
    """A queued alert, from every column of its row read by name (a database one migration behind reads too)."""
    return QueuedAlert(int(row["id"]), int(row["announcement_id"]), int(row["user_id"]), row["text"],
                       "resent" in row.keys() and bool(row["resent"]))


class AlertRecipient(NamedTuple):
    user_id: int
    card_id: str
    below_usd: float | None
    language: str | None
    telegram_language: str | None


class AlertProgress(TypedDict):
    total: int
    sent: int
    failed: int
    blocked: int
    queued: int


class AlertRepository(Repository):
    async def enqueue_alerts(self, announcement_id: int, rows: Iterable[tuple[int, str]]) -> int:
        """Queue one alert per (user_id, text); a user already queued for this announcement is skipped. Written in
        chunks of ENQUEUE_CHUNK rows, one multi-row INSERT committed on its own each, so a fan-out to 100,000
        users never holds the write lock for long. Each chunk is all or none; a call cut off between chunks (a
        crash, a bad row in a later chunk) leaves the earlier chunks queued, and calling it again with the same
        rows completes it without a duplicate (the UNIQUE key). Returns how many were newly queued."""
        now = time.time()
        added = 0
        chunk: list[tuple[int, str]] = []
        for row in rows:
            chunk.append(row)
            if len(chunk) == ENQUEUE_CHUNK:
                added += await self._enqueue_chunk(announcement_id, chunk, now)
                chunk = []
        if chunk:
            added += await self._enqueue_chunk(announcement_id, chunk, now)
        if added >= ANALYZE_AFTER:
            await self._database.refresh_statistics("alerts")
        return added

    async def _enqueue_chunk(self, announcement_id: int, chunk: list[tuple[int, str]], now: float) -> int:
        # One statement, committed on its own (atomic on both engines): one hop to SQLite's thread, one round trip
        # to PostgreSQL, where BEGIN ... COMMIT around it would take three under the lock.
        values = ", ".join(["(?, ?, ?, 'queued', ?)"] * len(chunk))
        parameters = tuple(value for user_id, text in chunk for value in (announcement_id, user_id, text, now))
        added = await self._database.write_returning(
            f"INSERT INTO alerts (announcement_id, user_id, text, status, created_at) VALUES {values} "
            "ON CONFLICT (announcement_id, user_id) DO NOTHING RETURNING id",
            parameters,
        )
        return len(added)

    async def alert_recipients(self, card_ids: Iterable[str]) -> AsyncIterator[AlertRecipient]:
        """Who an alert about these cards reaches: each subscription of a user who has not blocked the bot, with
        the user's language read in the same join (not one read per subscriber). By card in the given order,
        then by user id; read a page at a time along subscriptions_by_card and handed on page by page, so no
        read holds the store long and 100,000 subscribers are never all in memory at once. The page's start is
        given for users too: PostgreSQL's merge join does not carry `s.user_id > ?` over the join, so without it
        each page read the users from the first one on (29 ms for a page past 50,000, 7 s for a 100,000 fan-out:
        quadratic)."""
        for card_id in card_ids:
            after = None
            while True:
                start = "" if after is None else "AND s.user_id > ? AND u.user_id > ?"
                rows = await self._database.fetch(
                    f"""
                    SELECT s.user_id, s.below_usd, u.language, u.telegram_language
                    FROM subscriptions AS s
                    JOIN users AS u ON u.user_id = s.user_id
                    WHERE s.card_id = ? AND u.blocked = 0 {start}
                    ORDER BY s.user_id
                    LIMIT ?
                    """,
                    (card_id, RECIPIENT_PAGE) if after is None else (card_id, after, after, RECIPIENT_PAGE),
                )
                for row in rows:
                    yield AlertRecipient(int(row["user_id"]), card_id, row["below_usd"], row["language"],
                                         row["telegram_language"])
                if len(rows) < RECIPIENT_PAGE:
                    break
                after = int(rows[-1]["user_id"])

    async def next_alerts(self, limit: int = 100) -> list[QueuedAlert]:
        """Queued alerts, oldest first."""
        rows = await self._database.fetch(
            """
            SELECT *
            FROM alerts
            WHERE status = 'queued'
            ORDER BY id
            LIMIT ?
            """,
            (limit,),
        )
        return [_queued(row) for row in rows]

    async def claim_alerts(self, owner: str, limit: int = 100, lease_s: float = ALERT_LEASE_S) -> list[QueuedAlert]:
        """Queued alerts for `owner` to send, oldest first: those nobody holds, those whose lease ran out (a dead
        replica's) and `owner`'s own. Each is held for `lease_s` seconds; two replicas claiming at once get
        disjoint alerts (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: a write statement takes the write lock as it
        starts, so the claims run one after another)."""
        now = time.time()
        # One statement, committed on its own: a claim is atomic without BEGIN ... COMMIT around it, which would
        # hold the store's lock for two more round trips (hops on SQLite).
        rows = await self._database.write_returning(
            f"""
            WITH picked AS (
                SELECT id FROM alerts
                WHERE status = 'queued' AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)
                ORDER BY id
                LIMIT ?
                {self._database.skip_locked}
            )
            UPDATE alerts SET claimed_by = ?, claimed_until = ?
            FROM picked
            WHERE alerts.id = picked.id
            RETURNING alerts.id, alerts.announcement_id, alerts.user_id, alerts.text, alerts.resent
            """,
            (now, owner, limit, owner, now + lease_s),
        )
        return sorted(_queued(row) for row in rows)

    async def release_alerts(self, owner: str) -> int:
        """Give back `owner`'s claims on alerts still queued (a stopping replica), so another sends them now."""
        released = await self._database.write_returning(
            "UPDATE alerts SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND status = 'queued' "
            "RETURNING id",
            (owner,),
        )
        return len(released)

    async def release_dead_claims(self, alive: Callable[[str], bool]) -> int:
        """Free the claims on queued alerts whose holder `alive` says is dead (a killed process of this host), so
        they are sent now rather than after the lease. Returns how many. The holders are read first, outside any
        write: a claim made meanwhile is a living sender's, and each release is one statement that frees only a
        dead holder's queued alerts."""
        rows = await self._database.fetch("SELECT DISTINCT claimed_by FROM alerts "
                                          "WHERE status = 'queued' AND claimed_by IS NOT NULL")
        freed = 0
        for owner in (str(row["claimed_by"]) for row in rows):
            if not alive(owner):
                freed += await self.release_alerts(owner)
        return freed

    async def mark_alert(self, alert_id: int, status: str, error: str | None = None) -> None:
        """Record the outcome of one send. The first outcome wins (a repeat call changes nothing), so a
        restarted broadcaster cannot turn a sent alert back into a failed one. 'blocked' also marks the user
        blocked, in the same transaction; any other outcome is one statement, one round trip (it runs once per
        alert, between two sends)."""
        if status not in ALERT_OUTCOMES:
            raise ValueError(f"alert status must be one of {', '.join(ALERT_OUTCOMES)}, got {status!r}")
        now = time.time()
        update = """
            UPDATE alerts
            SET status = ?, error = ?, sent_at = ?
            WHERE id = ? AND status IN ('queued', 'sending')
            RETURNING user_id
            """
        parameters = (status, error, now if status == "sent" else None, alert_id)
        if status != "blocked":
            changed = await self._database.write_returning(update, parameters)
        else:
            async with self._database.transaction() as db:
                changed = await fetch_rows(db, update, parameters)
                if changed:
                    await set_blocked(db, int(changed[0]["user_id"]), True, now)
        if not changed and not await self._database.fetch("SELECT 1 FROM alerts WHERE id = ?", (alert_id,)):
            raise ValueError(f"no alert with id {alert_id}")

    async def claim_alert(self, alert_id: int, owner: str | None = None, lease_s: float = ALERT_LEASE_S) -> bool:
        """queued -> sending, committed before the send: from here on a crash leaves a trace and the alert is
        never sent again without a decision. With `owner` (a replica's claim_alerts batch) only while no other
        replica's lease holds it, and the lease is renewed for the send. False when it is no longer queued or
        another sender holds it. One statement, committed on its own: one round trip per alert."""
        now = time.time()
        if owner is None:
            rows = await self._database.write_returning(
                "UPDATE alerts SET status = 'sending' WHERE id = ? AND status = 'queued' RETURNING id", (alert_id,))
        else:
            rows = await self._database.write_returning(
                """
                UPDATE alerts SET status = 'sending', claimed_by = ?, claimed_until = ?
                WHERE id = ? AND status = 'queued'
                      AND (claimed_by IS NULL OR claimed_by = ? OR claimed_until < ?)
                RETURNING id
                """,
                (owner, now + lease_s, alert_id, owner, now),
            )
        return len(rows) == 1

    async def release_alert(self, alert_id: int) -> None:
        """sending -> queued: Telegram refused the send (rate limit), so it certainly did not go out."""
        await self._database.write_one("UPDATE alerts SET status = 'queued' WHERE id = ? AND status = 'sending'",
                                       (alert_id,))

    async def settle_interrupted_alerts(self, alive: Callable[[str], bool] | None = None) -> dict[int, int]:
        """Before sends: 'sending' alerts cut off by a dead process, whose reaching the user is unknown, are queued
        again once, as a repeat (`resent`: sent with a label saying so), and become 'unknown' when they were that
        repeat already. Returns announcement id -> how many were settled either way. Without `alive` (one process
        on the database, at its start) every 'sending' alert was cut off; with it (replicas) only those whose
        lease ran out, that no sender holds, or whose holder `alive` says is dead."""
        now = time.time()
        async with self._database.transaction() as db:
            rows = await fetch_rows(db, "SELECT id, announcement_id, claimed_by, claimed_until, resent FROM alerts "
                                        "WHERE status = 'sending'")
            # By announcement, then id: the counts rows are then locked in one order by every settler (PostgreSQL).
            cut = [row for row in sorted(rows, key=lambda row: (int(row["announcement_id"]), int(row["id"])))
                   if alive is None or row["claimed_by"] is None or row["claimed_until"] is None
                   or float(row["claimed_until"]) < now or not alive(str(row["claimed_by"]))]
            counts: dict[int, int] = {}
            for row in cut:
                if row["resent"]:
                    cursor = await db.execute("UPDATE alerts SET status = 'unknown', error = ? "
                                              "WHERE id = ? AND status = 'sending'", (INTERRUPTED, int(row["id"])))
                else:
                    cursor = await db.execute("UPDATE alerts SET status = 'queued', resent = 1, claimed_by = NULL, "
                                              "claimed_until = NULL WHERE id = ? AND status = 'sending'",
                                              (int(row["id"]),))
                if cursor.rowcount == 1:
                    counts[int(row["announcement_id"])] = counts.get(int(row["announcement_id"]), 0) + 1
                await cursor.close()
        return counts

    async def alert_unknown(self, announcement_id: int) -> int:
        """Alerts of an announcement whose fate is unknown (interrupted or a lost response): not resent."""
        counts = await self._counts(announcement_id)
        return counts["sending"] + counts["unknown"]

    async def progress_message(self, announcement_id: int) -> tuple[int, int] | None:
        """The admin's progress message of an announcement's alerts (chat id, message id), once sent; a claim whose
        message is not sent yet is not one."""
        rows = await self._database.fetch(
            "SELECT chat_id, message_id FROM alert_progress_messages WHERE announcement_id = ? AND message_id > 0",
            (announcement_id,))
        return (int(rows[0]["chat_id"]), int(rows[0]["message_id"])) if rows else None

    async def claim_progress_message(self, announcement_id: int, chat_id: int, owner: str,
                                     alive: Callable[[str], bool], lease_s: float = PROGRESS_LEASE_S) -> bool:
        """Whether `owner` may send the progress message: it claimed the row first (one INSERT that only one
        replica wins), or took over a claim whose holder died or whose lease ran out before the id was written
        (that holder may have sent one: the admin can get two, a customer never does)."""
        now = time.time()
        won = await self._database.write_returning(
            """
            INSERT INTO alert_progress_messages (announcement_id, chat_id, message_id, claimed_by, claimed_until)
            VALUES (?, ?, ?, ?, ?) ON CONFLICT (announcement_id) DO NOTHING RETURNING announcement_id
            """,
            (announcement_id, chat_id, PROGRESS_UNSENT, owner, now + lease_s))
        if won:
            return True
        rows = await self._database.fetch(
            "SELECT claimed_by, claimed_until FROM alert_progress_messages"
            " WHERE announcement_id = ? AND message_id = ?", (announcement_id, PROGRESS_UNSENT))
        if not rows:
            return False  # sent already
        holder, until = str(rows[0]["claimed_by"]), float(rows[0]["claimed_until"])  # a claim has both
        if holder != owner and alive(holder) and until >= now:
            return False
        taken = await self._database.write_returning(
            """
            UPDATE alert_progress_messages SET chat_id = ?, claimed_by = ?, claimed_until = ?
            WHERE announcement_id = ? AND message_id = ? AND claimed_by = ?
            RETURNING announcement_id
            """,
            (chat_id, owner, now + lease_s, announcement_id, PROGRESS_UNSENT, holder))
        return bool(taken)

    async def release_progress_claim(self, announcement_id: int, owner: str) -> None:
        """The claimed send failed: the next progress update (of any replica) claims and sends again."""
        await self._database.write_one(
            "DELETE FROM alert_progress_messages WHERE announcement_id = ? AND message_id = ? AND claimed_by = ?",
            (announcement_id, PROGRESS_UNSENT, owner))

    async def save_progress_message(self, announcement_id: int, chat_id: int, message_id: int) -> None:
        await self._database.write_one(
            """
            INSERT INTO alert_progress_messages (announcement_id, chat_id, message_id) VALUES (?, ?, ?)
            ON CONFLICT (announcement_id) DO UPDATE SET chat_id = excluded.chat_id, message_id = excluded.message_id,
                claimed_by = NULL, claimed_until = NULL
            """,
            (announcement_id, chat_id, message_id))

    async def alert_progress(self, announcement_id: int) -> AlertProgress:
        """How many alerts of an announcement are in which state: one row of alert_counts (migration 13's triggers
        keep it equal to counting the alerts), not a scan of them."""
        counts = await self._counts(announcement_id)
        return AlertProgress(total=sum(counts.values()), sent=counts["sent"], failed=counts["failed"],
                             blocked=counts["blocked"], queued=counts["queued"])

    async def _counts(self, announcement_id: int) -> dict[str, int]:
        rows = await self._database.fetch(
            f"SELECT {', '.join(ALERT_STATES)} FROM alert_counts WHERE announcement_id = ?", (announcement_id,))
        return {state: int(rows[0][state]) if rows else 0 for state in ALERT_STATES}
