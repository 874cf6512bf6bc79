"""Issue 15, "nothing lost, nothing doubled": sends that may have arrived are not repeated, long texts are cut,
group answers stay anonymous, a refused token is never printed, network noise reaches the admin summarised."""
from __future__ import annotations

import pytest

from bot.app import SEND_READ_TIMEOUT_S, build_application
from bot.config import load_settings
from bot.conversation import Conversation
from tests.support.botharness import TOKEN, Harness, lost_response, network_error, read_timeout

ADMIN = 42


@pytest.fixture
def settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                         topup_secret="test-secret")


@pytest.fixture
async def bot(settings):
    async with Harness(settings) as harness:
        yield harness


def attempts(bot: Harness, chat_id: int, method: str = "sendMessage") -> list[str]:
    return [c.method for c in bot.request.calls if c.params.get("chat_id") == chat_id and c.method.startswith(method)]


# -- defect 3: a lost or slow response must not double the reply ------------------------------------------------

async def test_a_send_that_timed_out_reading_is_not_repeated(bot):
    bot.request.fail("sendMessage", exception=read_timeout())
    await bot.send(101, "7B bf16")
    assert attempts(bot, 101) == ["sendMessage!failed"]  # Telegram may have delivered it: no second copy


async def test_a_send_whose_answer_was_lost_is_not_repeated(bot):
    bot.request.fail("sendMessage", exception=lost_response())
    await bot.send(102, "7B bf16")
    assert attempts(bot, 102) == ["sendMessage!failed"]


async def test_failures_before_the_request_left_are_retried(bot):
    bot.request.fail("sendMessage", exception=network_error())
    bot.request.fail("sendMessage", 502, "Bad Gateway")
    await bot.send(103, "7B bf16")
    assert attempts(bot, 103) == ["sendMessage!failed", "sendMessage!failed", "sendMessage"]


async def test_an_edit_is_repeated_after_a_read_time_out(bot):
    await bot.send(104, "70B int4")
    fp8 = next(b for row in bot.replies(104)[-1]["reply_markup"]["inline_keyboard"] for b in row
               if b["text"] == "FP8")
    bot.request.fail("editMessageText", exception=read_timeout())
    await bot.press(104, fp8["callback_data"])
    assert attempts(bot, 104, "editMessageText") == ["editMessageText!failed", "editMessageText"]


def test_sends_wait_long_enough_for_a_slow_telegram(settings):
    application = build_application(settings)
    assert application.bot.request.read_timeout == SEND_READ_TIMEOUT_S >= 20


# -- defect 11: no reply over Telegram's 4,096 characters -------------------------------------------------------

LONG = "x" * 10_000


@pytest.mark.parametrize("command", ["/set coin {}", "/set {} int4", "/card {}", "/subscribe {}",
                                     "/subscribe {} below 2", "/compare A40 {}", "/compare {} {}"])
async def test_a_10000_character_argument_is_quoted_cut(bot, command):
    await bot.send(110, command.format(LONG, LONG))
    text = bot.last_text(110)
    assert len(text) < 1000 and "x" * 40 in text and "x" * 100 not in text and "…" in text


async def test_the_unknown_card_answer_names_a_few_cards_not_all(bot, monkeypatch):
    catalog = bot.app.bot_data["catalog"].catalog
    many = [card.model_copy(update={"id": f"{card.id}-{n}", "name": f"{card.name} v{n}"})
            for n in range(40) for card in catalog.cards[:1]]
    big = catalog.model_copy(update={"cards": (*catalog.cards, *many)})
    monkeypatch.setattr(Conversation, "catalog", property(lambda self: big))
    await bot.send(111, "/card nonsense")
    text = bot.last_text(111)
    assert "/cards" in text and "more" in text and text.count(" v") <= 12


async def test_every_reply_is_cut_to_telegrams_limit_with_balanced_html(bot, monkeypatch):
    from bot.conversation import Reply

    async def huge(caller):
        return Reply("<b>" + "word &amp; " * 2000 + "</b>")

    monkeypatch.setattr(bot.app.bot_data["services"].conversation, "help", huge)
    await bot.send(112, "/help")
    text = bot.last_text(112)
    assert len(text) <= 4096 and text.count("<b>") == text.count("</b>") == 1
    assert text.rstrip("\n…").endswith("</b>") and not text.rstrip("\n…</b>").endswith("&amp")
