"""What the running bot keeps per user is bounded by time, not by every user ever seen: PTB's
persistence marks are emptied (Cardfit has no PTB persistence), and the flood guard forgets idle users."""
from __future__ import annotations

import pytest_asyncio

from bot.config import load_settings
from tests.support.botharness import TOKEN, Harness


@pytest_asyncio.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), rate_limit_messages=2,
                             rate_limit_window_s=10)
    async with Harness(settings) as harness:
        yield harness


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_ptb_persistence_marks_do_not_keep_every_user(bot):
    assert bot.app.persistence is None
    for user in range(100, 140):
        await bot.send(user, "hello")
    # Marked after each update's handlers, emptied by the next update's pre-handler: only the last one is left.
    assert len(bot.app._user_ids_to_be_updated_in_persistence) <= 1
    assert len(bot.app._chat_ids_to_be_updated_in_persistence) <= 1
    assert len(bot.app.user_data) == 0 and len(bot.app.chat_data) == 0


async def test_the_flood_guard_still_limits_and_forgets_idle_users(bot):
    clock = Clock()
    flood = bot.app.bot_data["services"].flood
    flood.clock = clock
    for user in range(200, 230):
        await bot.send(user, "hello")
    for _ in range(3):
        await bot.send(7, "hello")
    assert sum("faster than I can answer" in r["text"] for r in bot.replies(7)) == 1  # limit 2, then one notice
    assert flood.tracked_users() == 31
    clock.now += 10
    await bot.send(8, "hello")
    clock.now += 10
    await bot.send(9, "hello")
    assert flood.tracked_users() == 2  # the users of two windows ago are forgotten
    await bot.send(7, "hello")
    assert "faster than I can answer" not in bot.replies(7)[-1]["text"]  # and 7's window had passed
