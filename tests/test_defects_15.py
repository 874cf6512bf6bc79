"""Issue 15, the sub-points still open after the first pass and the gaps an audit of its defects found: a 409 from
getUpdates summarised, /subscribe kept out of groups, Telegram's limits counted in UTF-16 units, a reply that
finally fails told to the user where that cannot double it, and the catalog reload's rules on the service path."""
from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

import pytest
from telegram.error import Conflict, NetworkError

from bot.config import load_settings
from bot.features.reply import CallbackResult, Reply
from bot.operators.announcements import split_message
from bot.telegram.handlers.errors import POLLING_SUMMARY_S
from bot.texts.render import CAPTION_LIMIT, TELEGRAM_LIMIT, clip, telegram_length, utf16_prefix
from tests.support.botharness import BOT_USERNAME, TOKEN, Harness, network_error, read_timeout

ADMIN = 42
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
EMOJI = "🚀"  # U+1F680: one code point, two UTF-16 units
assert len(EMOJI) == 1 and telegram_length(EMOJI) == 2


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED, path)
    return path


@pytest.fixture
def settings(tmp_path, catalog_file):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                         topup_secret="test-secret", catalog=str(catalog_file), catalog_settle_s=0)


@pytest.fixture
async def bot(settings):
    async with Harness(settings) as harness:
        yield harness


def admin_texts(bot: Harness) -> list[str]:
    return [p["text"] for p in bot.replies(ADMIN)]


def no_lone_surrogate(text: str) -> bool:
    text.encode("utf-16-le")  # raises on half of a surrogate pair
    return True


# -- (a) 409 Conflict from getUpdates: another instance polls with the token ------------------------------------

TERMINATED = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"


async def test_a_409_from_get_updates_is_summarised_not_a_traceback_per_failure(bot, caplog):
    caplog.set_level(logging.WARNING)
    for _ in range(6):
        await bot.app.process_error(None, Conflict(TERMINATED))
    [notice] = admin_texts(bot)
    assert "another instance uses this bot token" in notice and "1 × 409 Conflict" in notice
    assert "<pre>" not in notice and "Traceback" not in notice
    lines = [r.getMessage() for r in caplog.records if "another instance is polling with this token" in r.getMessage()]
    assert len(lines) == 6 and all(r.levelno == logging.WARNING and r.exc_info is None for r in caplog.records
                                   if "another instance" in r.getMessage())
    bot.app.bot_data["polling_conflict"].last_notice -= POLLING_SUMMARY_S  # ten minutes later
    await bot.app.process_error(None, Conflict(TERMINATED))
    assert len(admin_texts(bot)) == 2 and "6 × 409 Conflict" in admin_texts(bot)[-1]


async def test_conflicts_and_network_errors_are_counted_apart(bot, caplog):
    await bot.app.process_error(None, NetworkError("Bad Gateway"))
    await bot.app.process_error(None, Conflict("Conflict: can't use getUpdates method while webhook is active"))
    assert len(admin_texts(bot)) == 2  # two different troubles, each summarised on its own
    assert "Telegram unreachable" in admin_texts(bot)[0] and "another instance" in admin_texts(bot)[1]
    assert "another instance set a webhook for this token" in caplog.text


async def test_a_conflict_while_handling_an_update_is_still_a_bug_report(bot):
    from telegram import Update

    update = Update.de_json({"update_id": 1, "message": {
        "message_id": 1, "date": 0, "chat": {"id": 7, "type": "private"}, "text": "hi",
        "from": {"id": 7, "is_bot": False, "first_name": "U"}}}, bot.app.bot)
    await bot.app.process_error(update, Conflict("Conflict: something else"))
    assert "<pre>" in admin_texts(bot)[-1]  # only getUpdates' 409 (no update) is the polling summary


# -- (b) /subscribe in a group: an alert is as private as the list of them ----------------------------------------

async def test_subscribe_in_a_group_points_to_the_private_chat_and_subscribes_nothing(bot):
    store = bot.app.bot_data["services"].store
    await bot.send(150, f"/subscribe@{BOT_USERNAME} A40 below 0.5", chat_type="group", chat_id=-450)
    text = bot.last_text(-450)
    assert "private chat" in text and "/subscribe" in text and "A40" not in text and "0.5" not in text
    assert not await store.subscriptions(150)
    await bot.send(150, "/subscribe A40 below 0.5")  # in the private chat it does
    assert "Subscribed to <b>A40</b>" in bot.last_text(150) and await store.subscriptions(150)


async def test_unsubscribe_in_a_group_tells_the_group_nothing(bot):
    store = bot.app.bot_data["services"].store
    await bot.send(151, "/subscribe A40")
    await bot.send(151, "/unsubscribe", chat_type="supergroup", chat_id=-451)
    text = bot.last_text(-451)
    assert "private chat" in text and "1" not in text
    assert await store.subscriptions(151)  # nothing removed from a group
    await bot.send(151, "/subscribe A40", chat_type="group", chat_id=-451, language_code="de")
    assert "privaten Chat" in bot.last_text(-451)


# -- (c) Telegram counts UTF-16 code units -----------------------------------------------------------------------

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


# -- defect 13: a reply that finally fails is told to the user where that cannot double it -----------------------

async def test_a_reply_that_never_reached_telegram_is_followed_by_a_notice(bot):
    bot.request.fail("sendMessage", exception=network_error(), times=5)  # the first try and all four retries
    await bot.send(170, "7B bf16")
    calls = [c.method for c in bot.request.calls if c.params.get("chat_id") == 170]
    assert calls == ["sendMessage!failed"] * 5 + ["sendMessage"]
    assert "could not send my answer" in bot.last_text(170)
    assert not admin_texts(bot)  # network weather: logged, no traceback


async def test_a_reply_refused_by_telegram_reaches_the_admin_not_the_user(bot):
    bot.request.fail("sendMessage", 400, "Bad Request: message is too long")
    await bot.send(171, "7B bf16")
    assert not bot.replies(171)  # Telegram's complaint is not the user's to read (as for a refused photo)
    assert "message is too long" in admin_texts(bot)[-1].lower()  # a refused text is our bug


async def test_a_reply_that_may_have_arrived_gets_no_notice(bot):
    bot.request.fail("sendMessage", exception=read_timeout())
    await bot.send(172, "7B bf16")
    assert not bot.replies(172)


# -- audit: defect 5 through the bot (a tiny size in a deep link) --------------------------------------------------

async def test_a_deep_link_with_a_tiny_size_is_an_answer_not_a_traceback(bot):
    for payload in ("S1e-306", "S5e-324", "S0.0000001"):
        await bot.send(173, f"/start {payload}")
        assert "Traceback" not in bot.last_text(173)
    assert not admin_texts(bot)


# -- audit: catalog reload on the service path (defects 4, 7, 9) ---------------------------------------------------

async def test_an_invalid_version_is_parsed_once_off_the_event_loop_and_reported_once(bot, catalog_file,
                                                                                     monkeypatch):
    import bot.operators.catalog_service as service_module

    threads: list[str] = []
    real = service_module.parse_catalog_bytes

    def spy(raw, name):
        threads.append(threading.current_thread().name)
        return real(raw, name)

    monkeypatch.setattr(service_module, "parse_catalog_bytes", spy)
    announcer = bot.app.bot_data["services"].announcer
    catalog_file.write_text("cards: [")
    first = await announcer.check()
    assert first.status == "invalid" and first.notified
    for _ in range(3):  # watch ticks over the same broken bytes
        again = await announcer.check()
        assert again.status == "invalid" and not again.notified
    assert len(threads) == 1 and threads[0] != threading.main_thread().name
    assert len([t for t in admin_texts(bot) if "rejected" in t]) == 1


async def test_reload_refuses_a_latin1_file_the_start_would_refuse(bot, catalog_file):
    catalog_file.write_bytes(BUNDLED.read_text(encoding="utf-8")
                             .replace("GPU Rent Hub\n", "GPU Rent Hüb\n", 1).encode("latin-1", "replace"))
    await bot.send(ADMIN, "/reload")
    assert "not UTF-8 text" in admin_texts(bot)[-1]
    assert bot.app.bot_data["catalog"].catalog.provider == "GPU Rent Hub"  # the old version stays in service


# -- audit: defect 10, the secrets in the admin's error notice ------------------------------------------------------

async def test_the_admins_traceback_has_no_secret_in_it(bot, monkeypatch):
    from bot.features import welcome

    def leaky(lang):
        raise RuntimeError(f"failed with {TOKEN} and key test-secret")

    monkeypatch.setattr(welcome, "render_help", leaky)
    await bot.send(180, "/help")
    notice = admin_texts(bot)[-1]
    assert "RuntimeError: failed with *** and key ***" in notice
    assert TOKEN.split(":")[1] not in notice and "test-secret" not in notice
    assert "something went wrong" in bot.last_text(180)


async def test_a_reply_refused_six_times_with_429_is_logged_with_context_and_told(bot, caplog):
    # ResilientRateLimiter(max_retries=5): the first try and five waits. The issue found this dropped silently.
    bot.request.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, times=6)  # ~6 s
    await bot.send(174, "7B bf16")
    calls = [c.method for c in bot.request.calls if c.params.get("chat_id") == 174]
    assert calls == ["sendMessage!failed"] * 6 + ["sendMessage"]
    assert "could not send my answer" in bot.last_text(174)
    assert any("gave up on a request while handling update" in r.getMessage() and "chat 174" in r.getMessage()
               and "RetryAfter" in r.getMessage() for r in caplog.records)
    assert not admin_texts(bot)
