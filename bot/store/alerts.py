"""The alert queue: queued idempotently per announcement and user, claimed by one sender at a time (a lease), the
first outcome of each send wins."""
from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple, TypedDict

from bot.store.database import Repository, fetch_rows
from bot.store.users import set_blocked

ALERT_OUTCOMES = ("sent", "failed", "blocked")
# How long a claim keeps other replicas off an alert. Longer than one claimed batch takes to send (BATCH alerts at
# the send rate, with Telegram's 429 back-offs); a replica that dies holding a claim delays those alerts this long.
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
                WHERE id = ? AND status = 'queued'
                """,
                (status, error, now if status == "sent" else None, alert_id),
            )
            changed = cursor.rowcount == 1
            await cursor.close()
            if changed and status == "blocked":
                await set_blocked(db, int(found[0]["user_id"]), True, now)

    async def alert_progress(self, announcement_id: int) -> AlertProgress:
        rows = await self._database.fetch(
            "SELECT status, count(*) AS n FROM alerts WHERE announcement_id = ? GROUP BY status", (announcement_id,)
        )
        counts = {str(row["status"]): int(row["n"]) for row in rows}
        return AlertProgress(total=sum(counts.values()), sent=counts.get("sent", 0), failed=counts.get("failed", 0),
                             blocked=counts.get("blocked", 0), queued=counts.get("queued", 0))
