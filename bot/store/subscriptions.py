"""Price-alert subscriptions: one per user and card, with an optional price threshold."""
from __future__ import annotations

import math
import time
from typing import NamedTuple

from bot.store.database import Repository


class Subscription(NamedTuple):
    card_id: str
    below_usd: float | None  # None: any change to the card


class Subscriber(NamedTuple):
    user_id: int
    below_usd: float | None


class SubscriptionRepository(Repository):
    async def subscribe(self, user_id: int, card_id: str, below_usd: float | None) -> None:
        """Create or replace the user's alert for one card; below_usd None means any price change."""
        if below_usd is not None:
            below_usd = float(below_usd)
            if not math.isfinite(below_usd) or below_usd < 0:
                raise ValueError(f"below_usd must be a non-negative price, got {below_usd!r}")
        now = time.time()
        async with self._database.transaction() as db:
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
        async with self._database.transaction() as db:
            if card_id is None:
                cursor = await db.execute("DELETE FROM subscriptions WHERE user_id = ?", (user_id,))
            else:
                cursor = await db.execute(
                    "DELETE FROM subscriptions WHERE user_id = ? AND card_id = ?", (user_id, card_id)
                )
            removed = cursor.rowcount
            await cursor.close()
        return removed

    async def subscriptions(self, user_id: int) -> list[Subscription]:
        rows = await self._database.fetch(
            "SELECT card_id, below_usd FROM subscriptions WHERE user_id = ? ORDER BY card_id", (user_id,)
        )
        return [Subscription(row["card_id"], row["below_usd"]) for row in rows]

    async def subscribers_for(self, card_id: str) -> list[Subscriber]:
        """Subscribers of one card who have not blocked the bot, by user_id."""
        rows = await self._database.fetch(
            """
            SELECT s.user_id, s.below_usd
            FROM subscriptions AS s
            JOIN users AS u ON u.user_id = s.user_id
            WHERE s.card_id = ? AND u.blocked = 0
            ORDER BY s.user_id
            """,
            (card_id,),
        )
        return [Subscriber(int(row["user_id"]), row["below_usd"]) for row in rows]
