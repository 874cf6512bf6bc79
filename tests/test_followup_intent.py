"""A follow-up that asks a reverse question of the kept model ("max context on an H100?", "how many users at 8k on
an A100?") answers that question, not a plain fit on the card it names."""
from __future__ import annotations

import pytest

from bot.config import load_settings
from bot.texts.render import plain
from tests.support.botharness import TOKEN, Harness

USER = 72


@pytest.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), rate_limit_messages=50)
    async with Harness(settings) as harness:
        yield harness


async def test_max_context_on_a_card_after_a_question(bot):
    await bot.send(USER, "gpt-oss-120b")
    assert "Longest context" not in plain(bot.last_text(USER))
    await bot.send(USER, "max context on an H100?")
    text = plain(bot.last_text(USER))
    assert "📏 Longest context on 1x H100 SXM: 131,072 tokens by the rule" in text and "gpt-oss-120b" in text
    await bot.send(USER, "and on an H200?")  # still the longest context, now on the H200
    assert "📏 Longest context on 1x H200 SXM" in plain(bot.last_text(USER))


async def test_the_context_asked_before_is_not_kept_by_a_max_context_follow_up(bot):
    await bot.send(USER, "llama 3.1 8b at 32k")
    await bot.send(USER, "max context on an H100?")
    text = plain(bot.last_text(USER))
    assert "📏 Longest context on 1x H100 SXM: 131,072 tokens" in text and "32,768 tokens" not in text


async def test_how_many_users_after_a_question_keeps_the_format_and_asks_again_at_a_new_context(bot):
    await bot.send(USER, "llama 3.1 8b q8_0")
    await bot.send(USER, "how many users at 8k on an a100")
    text = plain(bot.last_text(USER))
    assert "👥 Requests at once at 8k on 1x A100 SXM" in text and "Q8_0" in text
    await bot.send(USER, "and at 32k?")
    assert "👥 Requests at once at 32k on 1x A100 SXM" in plain(bot.last_text(USER))
    await bot.send(USER, "wie viele nutzer passen auf eine h100?")
    assert "H100 SXM" in plain(bot.last_text(USER)) and "👥" in plain(bot.last_text(USER))


@pytest.mark.parametrize("question", ["wie viel kontext maximal auf einer h100?", "how much context fits on an h100?",
                                      "wie viel Kontext passt auf eine H100?"])
async def test_how_much_context_on_a_card_is_a_max_context_question_not_its_price(bot, question):
    """"wie viel"/"how much" before a card reads as a price question; before a context word it asks how much
    context (QA: the H100's price card came back and the model was lost)."""
    await bot.send(USER, "llama 3.1 8b fp8 on l40s")
    await bot.send(USER, question)
    text = plain(bot.last_text(USER))
    assert "Llama 3.1 8B" in text and "📏" in text and "H100 SXM" in text
    assert "pro Stunde" not in text and "per hour:" not in text


async def test_how_much_is_a_card_stays_a_price_question(bot):
    await bot.send(USER, "how much is an h100?")
    text = plain(bot.last_text(USER))
    assert "per hour" in text and "📏" not in text
