"""The conversation through the bot: price and compare questions are answered in chat, and their buttons still work."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import load_settings
from tests.support.botharness import TOKEN, Harness

USER = 44
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"


@pytest.fixture
def settings(tmp_path):
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED, path)
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), catalog=str(path),
                         topup_secret="topup-key-for-tests", rate_limit_messages=50)


def _buttons(params: dict) -> list[dict]:
    return [b for row in (params.get("reply_markup") or {}).get("inline_keyboard", []) for b in row]


async def test_price_question_in_chat_and_its_details_button(settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "how much is an H100 per hour?")
        reply = bot.replies(USER)[-1]
        assert "per hour: $2.35" in reply["text"] and "per month: $1,690" in reply["text"]
        topup = [b for b in _buttons(reply) if b.get("url")]
        assert topup and "amount=394.33" in topup[0]["url"]  # a week: GPU Rent Hub's shortest term
        details = [b for b in _buttons(reply) if b.get("callback_data", "").startswith("d:")]
        assert details
        await bot.press(USER, details[0]["callback_data"])
        assert "per hour: $2.35" in bot.request.sent("editMessageText")[-1].params["text"]


async def test_compare_and_cheapest_questions_in_chat(settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "H100 oder A100 für 70B", language_code="de")
        text = bot.last_text(USER)
        assert "2x H100 SXM" in text and "2x A100 SXM" in text and "günstigere" in text
        await bot.send(USER, "cheapest card for 70B")
        assert "4x A40" in bot.last_text(USER).split("Alternatives")[0]
