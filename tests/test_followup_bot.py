"""Follow-ups through the bot: private chats, replies to an answer in a group, after a restart, in the
terminal chat, forgotten after a day; and the bot changes around them (language, inline prices, coins, taps)."""
from __future__ import annotations

import io
import re
import time

import pytest

from bot.cli.chat import run_chat
from bot.config import load_settings
from bot.store import CONTEXT_TTL_S, Store
from engine.sizing.payload import decode_request
from engine.sizing.rule import SizeRequest
from tests.support.botharness import BOT_USERNAME, Harness, buttons, harness_settings

USER = 61
GROUP = -1001


@pytest.fixture
def settings(tmp_path):
    return harness_settings(tmp_path, rate_limit_messages=8)


async def test_follow_ups_in_a_private_chat(bot):
    await bot.send(USER, "70B at 4-bit, 32k context")
    assert "Memory needed: 47.7 GB" in bot.last_text(USER)
    await bot.send(USER, "and in fp8?")
    text = bot.last_text(USER)
    assert "Memory needed: 82.7 GB" in text and "changed: precision INT4 → FP8" in text
    await bot.send(USER, "with 128k")
    text = bot.last_text(USER)
    assert "Memory needed: 114.9 GB" in text and "changed: context 32k → 128k" in text and "FP8" in text
    await bot.send(USER, "for 10 users")
    assert "changed: concurrent users 1 → 10" in bot.last_text(USER)
    await bot.send(USER, "what about Qwen 72B?")
    text = bot.last_text(USER)
    assert "Qwen2.5 72B" in text and "changed: model 70B → Qwen2.5 72B" in text and "131,072 tokens" in text
    await bot.send(USER, "und auf einer H100?")
    text = bot.last_text(USER)
    assert "geändert: Karte" in text and "H100" in text and "Benötigter Speicher" in text
    await bot.send(USER, "7B bf16")  # a whole new question starts afresh
    text = bot.last_text(USER)
    assert "changed" not in text and "8,192 tokens" in text


async def test_a_change_without_a_question_before_gets_the_help(bot):
    await bot.send(USER, "and in fp8?")
    assert "I did not find a model or a size" in bot.last_text(USER)


async def test_a_count_without_a_card_goes_on_the_card_the_answer_showed(bot):
    await bot.send(USER, "Mixtral 8x7B fp8")
    assert "1x H100 PCIe" in bot.last_text(USER)
    await bot.send(USER, "what about 2 cards?")
    text = bot.last_text(USER)
    assert "2x H100 PCIe" in text and "changed: GPU count 1 → 2" in text


async def test_a_count_with_no_card_kept_or_shown_asks_which_card(bot):
    await bot.send(USER, "1000B bf16")  # more than one host: the answer recommends no card
    await bot.send(USER, "what about 2 cards?")
    text = bot.last_text(USER)
    assert "Which card should that be?" in text and "H100" in text
    await bot.send(USER, "on 2x H200")
    assert "changed: card" in bot.last_text(USER) and "2x H200" in bot.last_text(USER)


async def test_a_reply_in_a_group_follows_up_that_answer(bot):
    await bot.send(1, f"@{BOT_USERNAME} 70B at 4-bit, 32k context", chat_type="group", chat_id=GROUP)
    first = bot.replies(GROUP)[-1]
    await bot.send(2, f"@{BOT_USERNAME} Mixtral 8x7B fp8", chat_type="group", chat_id=GROUP)
    # Someone else replies to the first answer, without a mention: that answer's request changes.
    await bot.send(3, "and in fp8?", chat_type="group", chat_id=GROUP, reply_to_bot=True,
                   reply_markup=first["reply_markup"])
    text = bot.last_text(GROUP)
    assert "Memory needed: 82.7 GB" in text and "changed: precision INT4 → FP8" in text and "Mixtral" not in text
    # A mention without a reply follows the group's last question.
    await bot.send(3, f"@{BOT_USERNAME} with 128k", chat_type="group", chat_id=GROUP)
    text = bot.last_text(GROUP)
    assert "changed: context 32k → 128k" in text and "FP8" in text


async def test_a_reply_to_an_answer_without_buttons_follows_the_group(bot):
    await bot.send(1, f"@{BOT_USERNAME} Mixtral 8x7B fp8", chat_type="group", chat_id=GROUP)
    await bot.send(4, "for 10 users", chat_type="group", chat_id=GROUP, reply_to_bot=True)
    text = bot.last_text(GROUP)
    assert "Mixtral 8x7B" in text and "batch 10" in text


async def test_follow_ups_survive_a_restart(settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "70B at 4-bit, 32k context")
    async with Harness(settings) as bot:  # a new Application on the same SQLite file
        await bot.send(USER, "and in fp8?")
        assert "Memory needed: 82.7 GB" in bot.last_text(USER)


async def test_a_day_old_context_is_forgotten(bot):
    store = bot.app.bot_data["services"].store
    day_ago = time.time() - CONTEXT_TTL_S - 1
    await store.keep_request(USER, SizeRequest(params_b=70, precision="int4"), "S70Pi4", now=day_ago)
    await bot.send(USER, "and in fp8?")
    assert "I did not find a model or a size" in bot.last_text(USER)


async def test_the_store_keeps_a_request_a_day_and_then_deletes_it(tmp_path):
    store = await Store.open(tmp_path / "ctx.sqlite3")
    try:
        now = 1_000_000.0
        await store.keep_request(5, SizeRequest(model="llama-3.1-70b", precision="fp8"), None, now=now)
        kept = await store.kept_request(5, now=now + CONTEXT_TTL_S - 1)
        assert kept is not None and (kept.model, kept.precision) == ("llama-3.1-70b", "fp8")
        assert await store.kept_request(5, now=now + CONTEXT_TTL_S + 1) is None
        await store.keep_request(6, SizeRequest(params_b=7), "S7", now=now + CONTEXT_TTL_S + 1)
        rows = await store._database.fetch("SELECT chat_id FROM chat_context")
        assert [row["chat_id"] for row in rows] == [6]  # the day-old row went on the next write
    finally:
        await store.close()


async def test_follow_ups_in_the_terminal_chat(tmp_path):
    settings = load_settings(db=str(tmp_path / "chat.sqlite3"))
    stdin = io.StringIO("70B at 4-bit, 32k context\nand in fp8?\n6\nwhat about Qwen 72B?\n/quit\n")
    stdout = io.StringIO()
    assert await run_chat(settings, stdin, stdout) == 0
    out = stdout.getvalue()
    assert "Memory needed: 82.7 GB" in out and "changed: precision INT4 → FP8" in out
    # Button 6 (128k) was pressed on the FP8 answer; the next follow-up keeps what the tap showed.
    assert "changed: model 70B → Qwen2.5 72B" in out
    assert re.search(r"Qwen2.5 72B · FP8 · 131,072 tokens", out)


# -- the language: the question's only when it tells one --------------------------------------------------------

async def test_an_english_question_from_a_german_client_is_answered_in_english(bot):
    await bot.send(USER, "how much memory do I need for 70B int4?", language_code="de")
    assert "Memory needed" in bot.last_text(USER)
    await bot.send(USER, "70B int4", language_code="de")  # tells nothing: the client's language
    assert "Benötigter Speicher" in bot.last_text(USER)
    await bot.send(USER, "/set lang de", language_code="de")
    await bot.send(USER, "how much memory do I need for 70B int4?", language_code="de")
    assert "Benötigter Speicher" in bot.last_text(USER)  # an explicit /set lang still wins


# -- inline price questions ----------------------------------------------------------------------------------

async def test_inline_price_question(bot):
    await bot.inline(USER, "how much is an H100 per day?")
    [result] = bot.request.sent("answerInlineQuery")[-1].params["results"]
    assert result["id"] == "price" and result["title"].startswith("1x H100") and "/month" in result["title"]
    assert "/hour" in result["description"]
    assert "per day" in result["input_message_content"]["message_text"]


# -- the coin picker -----------------------------------------------------------------------------------------

async def test_a_picked_coin_wins_over_the_coin_the_question_named(bot):
    await bot.send(USER, "70B int4 in BTC")
    answer = bot.replies(USER)[-1]
    assert "coin=BTC" in next(b["url"] for b in buttons(answer) if "url" in b)
    picker = next(b for b in buttons(answer) if b.get("callback_data", "").startswith("k:"))
    await bot.press(USER, picker["callback_data"])
    picked = bot.request.sent("editMessageText")[-1].params
    xmr = next(b for b in buttons(picked) if b["text"] == "XMR")
    await bot.press(USER, xmr["callback_data"])
    shown = bot.request.sent("editMessageText")[-1].params
    assert "coin=XMR" in next(b["url"] for b in buttons(shown) if "url" in b)
    for button in buttons(shown):
        if button.get("callback_data", "").startswith(("f:", "d:")):
            assert decode_request(button["callback_data"].split(":", 2)[2]).coin is None


# -- the flood guard: taps have their own budget -------------------------------------------------------------

async def test_ten_taps_then_a_question_is_answered(bot):
    await bot.send(USER, "70B at 4-bit, 32k context")
    toggle = next(b for b in buttons(bot.replies(USER)[-1]) if b["text"] == "FP8")
    for _ in range(10):
        await bot.press(USER, toggle["callback_data"])
    assert len(bot.request.sent("editMessageText")) == 10
    await bot.send(USER, "7B bf16")
    assert "RTX A5000" in bot.last_text(USER) and "too many" not in bot.last_text(USER).lower()


async def test_taps_are_still_capped(bot):
    await bot.send(USER, "70B at 4-bit, 32k context")
    toggle = next(b for b in buttons(bot.replies(USER)[-1]) if b["text"] == "FP8")
    for _ in range(30):
        await bot.press(USER, toggle["callback_data"])
    assert len(bot.request.sent("editMessageText")) == 24  # 3 x the 8 questions per window
