"""Telegram counts a text's length in UTF-16 code units: a reply, an edit, an inline text, a caption and a channel post
are cut or split under Telegram's limits by that count, never through a surrogate pair, and the emulator refuses
what Telegram refuses."""
from __future__ import annotations

import pytest

from bot.config import load_settings
from bot.features.reply import CallbackResult, Reply
from bot.operators.announcements import split_message
from bot.texts.render import CAPTION_LIMIT, TELEGRAM_LIMIT, clip, telegram_length, utf16_prefix
from tests.support.botharness import TOKEN

EMOJI = "🚀"  # U+1F680: one code point, two UTF-16 units
assert len(EMOJI) == 1 and telegram_length(EMOJI) == 2


@pytest.fixture
def settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="test-secret-0123456789")


def no_lone_surrogate(text: str) -> bool:
    text.encode("utf-16-le")  # raises on half of a surrogate pair
    return True


@pytest.mark.parametrize("text", [
    EMOJI * 3000,  # 3,000 code points under the old count, 6,000 units
    "a" * 4095 + EMOJI,  # 4,096 code points, 4,097 units: one over
    "<b>" + (EMOJI + " x\n") * 1100 + "</b>",
    "a" * 4053 + EMOJI * 30,  # a pair straddles the cut point (4,054 units after the reserve)
    "&amp;" + "🇩🇪" * 1100 + "&lt;",  # flags: two astral code points each
])
def test_clip_counts_utf16_units(text):
    assert telegram_length(text) > TELEGRAM_LIMIT
    clipped = clip(text)
    assert telegram_length(clipped) <= TELEGRAM_LIMIT and clipped.endswith("…") and no_lone_surrogate(clipped)
    assert clipped.count("<b>") == clipped.count("</b>")


@pytest.mark.parametrize("text", ["a" * 4094 + EMOJI, EMOJI * 2048, "é" * 4096])
def test_clip_keeps_a_text_of_exactly_the_limit(text):
    assert telegram_length(text) == TELEGRAM_LIMIT and clip(text) == text


def test_clip_for_captions_and_utf16_prefix():
    caption = "x" * 1000 + EMOJI * 20
    clipped = clip(caption, CAPTION_LIMIT)
    assert telegram_length(clipped) <= CAPTION_LIMIT < telegram_length(caption)
    assert utf16_prefix("a" + EMOJI + "b", 2) == 1 and utf16_prefix("a" + EMOJI + "b", 3) == 2
    assert utf16_prefix("abc", 10) == 3 and utf16_prefix(EMOJI, 1) == 0


def test_a_long_channel_post_with_emoji_splits_under_the_limit():
    text = "\n".join(f"📉 <b>card {i}</b> {EMOJI * 40}" for i in range(200))
    parts = split_message(text)
    assert len(parts) > 2 and all(telegram_length(p) <= TELEGRAM_LIMIT for p in parts)
    assert "\n".join(parts) == text
    hard = split_message(EMOJI * 5000)  # one line longer than the limit: cut hard, never through a pair
    assert "".join(hard) == EMOJI * 5000 and all(telegram_length(p) <= TELEGRAM_LIMIT for p in hard)


async def test_a_reply_full_of_emoji_is_cut_by_utf16_units(bot, monkeypatch):
    from bot.features import welcome

    def huge(lang):
        return "<b>" + (EMOJI + " word\n") * 1000 + "</b>"  # 7,000 code points, 8,000 units

    monkeypatch.setattr(welcome, "render_help", huge)
    await bot.send(160, "/help")
    text = bot.last_text(160)
    assert TELEGRAM_LIMIT - 100 < telegram_length(text) <= TELEGRAM_LIMIT and text.count("<b>") == text.count("</b>")


async def test_an_edit_full_of_emoji_is_cut_by_utf16_units(monkeypatch):
    from bot.telegram import ptb as telegram_io

    edits: list[str] = []

    class Query:
        message = object()

        async def answer(self, notice=None):
            return True

        async def edit_message_text(self, text, reply_markup=None):
            edits.append(text)

    await telegram_io.show(Query(), CallbackResult(Reply(EMOJI * 2100 + "\n" + EMOJI * 2100)))  # type: ignore[arg-type]
    assert telegram_length(edits[0]) <= TELEGRAM_LIMIT and no_lone_surrogate(edits[0])


async def test_an_inline_text_full_of_emoji_is_cut_by_utf16_units(bot, monkeypatch):
    from bot.telegram.handlers import staff

    async def results(core, caller, query):
        return [{"id": "x", "title": "t", "description": "d", "text": (EMOJI * 30 + "\n") * 100}], False

    monkeypatch.setattr(staff, "inline_results", results)
    await bot.inline(161, "70B")
    [result] = bot.request.sent("answerInlineQuery")[-1].params["results"]
    assert telegram_length(result["input_message_content"]["message_text"]) <= TELEGRAM_LIMIT


async def test_a_chart_caption_full_of_emoji_is_cut_to_1024_units(bot, monkeypatch):
    import bot.features.chart as chart_module
    from bot.features.callbacks import ChartButton
    from engine.sizing.payload import encode_request
    from engine.sizing.rule import SizeRequest

    monkeypatch.setattr(chart_module, "chart_caption", lambda answer, lang: (EMOJI * 20 + "\n") * 40)
    await bot.press(162, ChartButton("en", encode_request(SizeRequest(model="llama-3.1-70b"))).encode())
    [photo] = bot.request.sent("sendPhoto")
    assert telegram_length(photo.params["caption"]) <= CAPTION_LIMIT and photo.params["caption"].endswith("…")


async def test_the_emulator_refuses_what_telegram_refuses(emulator):
    from telegram import Bot, InlineQueryResultArticle, InputTextMessageContent
    from telegram.error import BadRequest

    async with Bot(emulator.token, base_url=emulator.base_url, base_file_url=emulator.base_file_url) as api:
        with pytest.raises(BadRequest, match="(?i)message is too long"):
            await api.send_message(1, "a" * 4095 + EMOJI)
        await api.send_message(1, "a" * 4094 + EMOJI)
        with pytest.raises(BadRequest, match="(?i)caption is too long"):
            await api.send_photo(1, photo=b"\x89PNG\r\n\x1a\n", caption="a" * 1023 + EMOJI)
        update = emulator.push_inline_query(3, "h100", chat_type="sender")
        article = InlineQueryResultArticle("r1", "H100", InputTextMessageContent(EMOJI * 2049))
        with pytest.raises(BadRequest, match="(?i)message_too_long"):
            await api.answer_inline_query(update["inline_query"]["id"], [article])
