"""The alert queue: queued idempotently per announcement and user; a batch is claimed by one sender at a time (a
lease, for several replicas), each alert is marked 'sending' in its own committed transaction before its send, the
first outcome wins; an interrupted send becomes 'unknown', never a resend."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import NamedTuple, TypedDict

from bot.store.database import Repository, fetch_rows
from bot.store.users import set_blocked

ALERT_OUTCOMES = ("sent", "failed", "blocked", "unknown")
# Written on an alert whose send was interrupted (the process died between the send and its record).
INTERRUPTED = "interrupted between send and record; not resent"
# How long a claim keeps other replicas off an alert. Longer than one claimed batch takes to send (BATCH alerts at
# the send rate, with Telegram's 429 back-offs); a replica that dies holding a claim delays those alerts this long,
# and its 'sending' alerts become 'unknown' once it has run out.
ALERT_LEASE_S = 300.0


class QueuedAlert(NamedTuple):
    id: int
    announcement_id: int
    user_id: int
    text: str


class AlertProgress(TypedDict):
    total: int
    sent: int
    failed: int
    blocked: int
    queued: int


class AlertRepository(Repository):
    async def enqueue_alerts(self, announcement_id: int, rows: Iterable[tuple[int, str]]) -> int:
        """Queue one alert per (user_id, text); a user already queued for this announcement is skipped.
        All rows or none: a bad row rolls back the whole batch. Returns how many were newly queued."""
        now = time.time()
        added = 0
        async with self._database.transaction() as db:
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

    async def next_alerts(self, limit: int = 100) -> list[QueuedAlert]:
        """Queued alerts, oldest first."""
        rows = await self._database.fetch(
            """
            SELECT id, announcement_id, user_id, text
            FROM alerts
            WHERE status = 'queued'
            ORDER BY id
            LIMIT ?
            """,
            (limit,),
        )
        return [QueuedAlert(int(row["id"]), int(row["announcement_id"]), int(row["user_id"]), row["text"])
                for row in rows]

    async def claim_alerts(self, owner: str, limit: int = 100, lease_s: float = ALERT_LEASE_S) -> list[QueuedAlert]:
        """Queued alerts for `owner` to send, oldest first: those nobody holds, those whose lease ran out (a dead
        replica's) and `owner`'s own. Each is held for `lease_s` seconds; two replicas claiming at once get
        disjoint alerts (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: BEGIN IMMEDIATE serializes the claims)."""
        now = time.time()
        async with self._database.transaction() as db:
            rows = await fetch_rows(
                db,
                f"""
                WITH picked AS (
                    SELECT id FROM alerts
                    WHERE status = 'queued' AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)
                    ORDER BY id
                    LIMIT ?
                    {db.skip_locked}
                )
                UPDATE alerts SET claimed_by = ?, claimed_until = ?
                FROM picked
                WHERE alerts.id = picked.id
                RETURNING alerts.id, alerts.announcement_id, alerts.user_id, alerts.text
                """,
                (now, owner, limit, owner, now + lease_s),
            )
        return sorted(QueuedAlert(int(row["id"]), int(row["announcement_id"]), int(row["user_id"]), row["text"])
                      for row in rows)

    async def release_alerts(self, owner: str) -> int:
        """Give back `owner`'s claims on alerts still queued (a stopping replica), so another sends them now."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "UPDATE alerts SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND status = 'queued'",
                (owner,),
            )
            return cursor.rowcount

    async def release_dead_claims(self, alive: Callable[[str], bool]) -> int:
        """Free the claims on queued alerts whose holder `alive` says is dead (a killed process of this host), so
        they are sent now rather than after the lease. Returns how many."""
        async with self._database.transaction() as db:
            rows = await fetch_rows(db, "SELECT DISTINCT claimed_by FROM alerts "
                                        "WHERE status = 'queued' AND claimed_by IS NOT NULL")
            freed = 0
            for owner in (str(row["claimed_by"]) for row in rows):
                if alive(owner):
                    continue
                cursor = await db.execute("UPDATE alerts SET claimed_by = NULL, claimed_until = NULL "
                                          "WHERE claimed_by = ? AND status = 'queued'", (owner,))
                freed += cursor.rowcount
                await cursor.close()
        return freed

    async def mark_alert(self, alert_id: int, status: str, error: str | None = None) -> None:
        """Record the outcome of one send. The first outcome wins (a repeat call changes nothing), so a
        restarted broadcaster cannot turn a sent alert back into a failed one. 'blocked' also marks the user
        blocked, in the same transaction."""
        if status not in ALERT_OUTCOMES:
            raise ValueError(f"alert status must be one of {', '.join(ALERT_OUTCOMES)}, got {status!r}")
        now = time.time()
        async with self._database.transaction() as db:
            found = await fetch_rows(db, "SELECT user_id FROM alerts WHERE id = ?", (alert_id,))
            if not found:
                raise ValueError(f"no alert with id {alert_id}")
            cursor = await db.execute(
                """
                UPDATE alerts
                SET status = ?, error = ?, sent_at = ?
                WHERE id = ? AND status IN ('queued', 'sending')
                """,
                (status, error, now if status == "sent" else None, alert_id),
            )
            changed = cursor.rowcount == 1
            await cursor.close()
            if changed and status == "blocked":
                await set_blocked(db, int(found[0]["user_id"]), True, now)

    async def claim_alert(self, alert_id: int, owner: str | None = None, lease_s: float = ALERT_LEASE_S) -> bool:
        """queued -> sending, committed before the send: from here on a crash leaves a trace and the alert is
        never sent again without a decision. With `owner` (a replica's claim_alerts batch) only while no other
        replica's lease holds it, and the lease is renewed for the send. False when it is no longer queued or
        another sender holds it."""
        now = time.time()
        async with self._database.transaction() as db:
            if owner is None:
                cursor = await db.execute("UPDATE alerts SET status = 'sending' WHERE id = ? AND status = 'queued'",
                                          (alert_id,))
            else:
                cursor = await db.execute(
                    """
                    UPDATE alerts SET status = 'sending', claimed_by = ?, claimed_until = ?
                    WHERE id = ? AND status = 'queued'
                          AND (claimed_by IS NULL OR claimed_by = ? OR claimed_until < ?)
                    """,
                    (owner, now + lease_s, alert_id, owner, now),
                )
            claimed = cursor.rowcount == 1
            await cursor.close()
        return claimed

    async def release_alert(self, alert_id: int) -> None:
        """sending -> queued: Telegram refused the send (rate limit), so it certainly did not go out."""
        await self._database.write_one("UPDATE alerts SET status = 'queued' WHERE id = ? AND status = 'sending'",
                                       (alert_id,))

    async def settle_interrupted_alerts(self, alive: Callable[[str], bool] | None = None) -> dict[int, int]:
        """Before sends: 'sending' alerts cut off by a dead process, whose reaching the user is unknown, become
        'unknown' (counted, never resent). Returns announcement id -> how many. Without `alive` (one process
        on the database, at its start) every 'sending' alert was cut off; with it (replicas) only those whose
        lease ran out, that no sender holds, or whose holder `alive` says is dead."""
        now = time.time()
        async with self._database.transaction() as db:
            rows = await fetch_rows(db, "SELECT id, announcement_id, claimed_by, claimed_until FROM alerts "
                                        "WHERE status = 'sending'")
            cut = [row for row in rows
                   if alive is None or row["claimed_by"] is None or row["claimed_until"] is None
                   or float(row["claimed_until"]) < now or not alive(str(row["claimed_by"]))]
            counts: dict[int, int] = {}
            for row in cut:
                cursor = await db.execute("UPDATE alerts SET status = 'unknown', error = ? "
                                          "WHERE id = ? AND status = 'sending'", (INTERRUPTED, int(row["id"])))
                if cursor.rowcount == 1:
                    counts[int(row["announcement_id"])] = counts.get(int(row["announcement_id"]), 0) + 1
                await cursor.close()
        return counts

    async def alert_unknown(self, announcement_id: int) -> int:
        """Alerts of an announcement whose fate is unknown (interrupted or a lost response): not resent."""
        rows = await self._database.fetch(
            "SELECT count(*) AS n FROM alerts WHERE announcement_id = ? AND status IN ('sending', 'unknown')",
            (announcement_id,))
        return int(rows[0]["n"])

    async def progress_message(self, announcement_id: int) -> tuple[int, int] | None:
        """The admin's progress message of an announcement's alerts (chat id, message id), once sent."""
        rows = await self._database.fetch(
            "SELECT chat_id, message_id FROM alert_progress_messages WHERE announcement_id = ?", (announcement_id,))
        return (int(rows[0]["chat_id"]), int(rows[0]["message_id"])) if rows else None

    async def save_progress_message(self, announcement_id: int, chat_id: int, message_id: int) -> None:
        await self._database.write_one(
            """
            INSERT INTO alert_progress_messages (announcement_id, chat_id, message_id) VALUES (?, ?, ?)
            ON CONFLICT (announcement_id) DO UPDATE SET chat_id = excluded.chat_id, message_id = excluded.message_id
            """,
            (announcement_id, chat_id, message_id))

    async def alert_progress(self, announcement_id: int) -> AlertProgress:
        rows = await self._database.fetch(
            "SELECT status, count(*) AS n FROM alerts WHERE announcement_id = ? GROUP BY status", (announcement_id,)
        )
        counts = {str(row["status"]): int(row["n"]) for row in rows}
        return AlertProgress(total=sum(counts.values()), sent=counts.get("sent", 0), failed=counts.get("failed", 0),
                             blocked=counts.get("blocked", 0), queued=counts.get("queued", 0))
