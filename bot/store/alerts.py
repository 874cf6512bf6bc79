"""The alert queue: queued idempotently per announcement and user, claimed ('sending') in its own committed
transaction before each send, the first outcome wins; an interrupted send becomes 'unknown', never a resend."""
from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple, TypedDict

from bot.store.database import Repository, fetch_rows
from bot.store.users import set_blocked

ALERT_OUTCOMES = ("sent", "failed", "blocked", "unknown")
# Written on an alert whose send was interrupted (the process died between the send and its record).
INTERRUPTED = "interrupted between send and record; not resent"


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

    async def claim_alert(self, alert_id: int) -> bool:
        """queued -> sending, committed before the send: from here on a crash leaves a trace and the alert is
        never sent again without a decision. False when it is no longer queued (another sender took it)."""
        async with self._database.transaction() as db:
            cursor = await db.execute("UPDATE alerts SET status = 'sending' WHERE id = ? AND status = 'queued'",
                                      (alert_id,))
            claimed = cursor.rowcount == 1
            await cursor.close()
        return claimed

    async def release_alert(self, alert_id: int) -> None:
        """sending -> queued: Telegram refused the send (rate limit), so it certainly did not go out."""
        await self._database.write_one("UPDATE alerts SET status = 'queued' WHERE id = ? AND status = 'sending'",
                                       (alert_id,))

    async def settle_interrupted_alerts(self) -> dict[int, int]:
        """At a start, before any send: every 'sending' alert was cut off by a dead process, so whether it
        reached the user is unknown. They become 'unknown' (counted, never resent). Returns announcement id ->
        how many."""
        async with self._database.transaction() as db:
            rows = await fetch_rows(db, "SELECT announcement_id, count(*) AS n FROM alerts WHERE status = 'sending' "
                                        "GROUP BY announcement_id")
            await db.execute("UPDATE alerts SET status = 'unknown', error = ? WHERE status = 'sending'",
                             (INTERRUPTED,))
        return {int(row["announcement_id"]): int(row["n"]) for row in rows}

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
