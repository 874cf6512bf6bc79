"""The pre-handler (group -1): the caller resolved once per update, activity recorded only when it changes
something, chatter not addressed to the bot left alone, a failure reported once."""
from __future__ import annotations

import pytest

from bot.config import load_settings
from tests.support.botharness import BOT_USERNAME, TOKEN, Harness, buttons

ADMIN = 42


@pytest.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                             rate_limit_messages=50)
    async with Harness(settings) as harness:
        yield harness


def count_calls(monkeypatch, target, name: str) -> list[tuple]:
    calls: list[tuple] = []
    original = getattr(target, name)

    async def counted(*args, **kwargs):
        calls.append(args)
        return await original(*args, **kwargs)

    monkeypatch.setattr(target, name, counted)
    return calls


async def test_one_preferences_read_per_update_and_one_activity_write_per_change(bot, monkeypatch):
    store = bot.app.bot_data["services"].store
    reads = count_calls(monkeypatch, store, "get_preferences")
    touches = count_calls(monkeypatch, store, "touch_user")
    await bot.send(1, "70B int4")  # a new user: read, then record (the write returns the row)
    assert (len(reads), len(touches)) == (1, 1)
    await bot.send(1, "/help")
    await bot.send(1, "7B fp8")
    bf16 = next(b for b in buttons(bot.replies(1)[-1]) if b["text"] == "BF16")
    await bot.press(1, bf16["callback_data"])
    assert (len(reads), len(touches)) == (4, 1)  # nothing new to record: one read each
    await bot.send(1, "/settings", language_code="de")  # another client language: recorded
    assert len(touches) == 2 and (await store.get_preferences(1)).telegram_language == "de"


async def test_a_blocked_user_who_writes_any_command_is_reachable_again(bot):
    store = bot.app.bot_data["services"].store
    await store.mark_blocked(2)
    await bot.send(2, "/help")
    assert not (await store.get_preferences(2)).blocked


async def test_group_chatter_and_inline_queries_record_nothing(bot, monkeypatch):
    store = bot.app.bot_data["services"].store
    reads = count_calls(monkeypatch, store, "get_preferences")
    touches = count_calls(monkeypatch, store, "touch_user")
    await bot.send(3, "lunch?", chat_type="group", chat_id=-500)
    await bot.send(3, "/size@SomeOtherBot 7B", chat_type="group", chat_id=-500)
    assert reads == [] and not bot.replies(-500)
    await bot.inline(3, "70B int4")
    assert len(reads) == 1 and touches == [] and await store.count_users() == 0
    await bot.send(3, f"@{BOT_USERNAME} 7B", chat_type="group", chat_id=-500)
    assert len(touches) == 1 and "Memory needed" in bot.last_text(-500)


async def test_a_failure_while_resolving_is_reported_once_and_stops_the_update(bot, monkeypatch):
    store = bot.app.bot_data["services"].store

    async def broken(user_id):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "get_preferences", broken)
    await bot.send(4, "70B int4")
    assert [r["text"] for r in bot.replies(4)] == [bot.last_text(4)] and "went wrong" in bot.last_text(4)
    admin = [r for r in bot.replies(ADMIN) if "disk on fire" in r["text"]]
    assert len(admin) == 1
