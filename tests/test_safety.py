"""Nothing lost, nothing doubled, nothing leaked, in process: sends that may have arrived are not repeated, a reply
that finally fails is told to the user where that cannot double it, long texts are cut, group answers and alerts stay
private, tokens and secrets are never printed, network noise and polling conflicts reach the admin summarised."""
from __future__ import annotations

import logging
import re
import sqlite3

import pytest
from telegram.error import Conflict, NetworkError

from bot.config import load_settings
from bot.features.core import Core
from bot.telegram.app import SEND_READ_TIMEOUT_S, build_application
from bot.telegram.handlers.errors import POLLING_SUMMARY_S
from bot.texts.render import clip
from tests.support.botharness import BOT_USERNAME, TOKEN, Harness, lost_response, network_error, read_timeout

ADMIN = 42


@pytest.fixture
def settings(tmp_path, request):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                         topup_secret="test-secret-0123456789", **getattr(request, "param", {}))


def attempts(bot: Harness, chat_id: int, method: str = "sendMessage") -> list[str]:
    return [c.method for c in bot.request.calls if c.params.get("chat_id") == chat_id and c.method.startswith(method)]


# -- a lost or slow response must not double the reply -----------------------------------------------------------

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


# -- no reply over Telegram's 4,096 characters -------------------------------------------------------------------

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
    monkeypatch.setattr(Core, "catalog", property(lambda self: big))
    await bot.send(111, "/card nonsense")
    text = bot.last_text(111)
    assert "/cards" in text and "more" in text and text.count(" v") <= 12


async def test_every_reply_is_cut_to_telegrams_limit_with_balanced_html(bot, monkeypatch):
    from bot.features import welcome

    def huge(lang):
        return "<b>" + "word &amp; " * 2000 + "</b>"

    monkeypatch.setattr(welcome, "render_help", huge)
    await bot.send(112, "/help")
    text = bot.last_text(112)
    assert len(text) <= 4096 and text.count("<b>") == text.count("</b>") == 1
    assert text.rstrip("\n…").endswith("</b>") and not text.rstrip("\n…</b>").endswith("&amp")


async def test_a_store_that_refuses_a_write_is_one_line_in_the_log_and_a_notice_for_the_user(bot, caplog):
    """A full disk (or PostgreSQL down): each update it fails is one warning line, no traceback, no message to
    the admins per update; the user is told something went wrong (the setting was not saved)."""
    store = bot.app.bot_data["services"].store

    async def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    store.set_preference = full
    caplog.set_level(logging.WARNING)
    await bot.send(127, "/set batch 8")
    assert "went wrong" in bot.last_text(127)
    [line] = [record for record in caplog.records if "the store failed" in record.getMessage()]
    assert line.exc_info is None and "OperationalError: database or disk is full" in line.getMessage()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


# -- what is said in a group is nobody's -------------------------------------------------------------------------

def urls(params: dict) -> list[str]:
    return [b.get("url", "") for row in params.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


async def test_a_deep_link_in_a_group_carries_no_ref(bot):
    await bot.send(120, f"/start@{BOT_USERNAME} Mllama-3_1-70bPi4C32k", chat_type="group", chat_id=-400)
    reply = bot.replies(-400)[-1]
    assert "1x A40" in reply["text"] and "&amp;ref=" not in reply["text"]
    assert not any("ref=" in u for u in urls(reply))
    await bot.send(120, "/start Mllama-3_1-70bPi4C32k")  # in private it does
    assert any("ref=" in u for u in urls(bot.replies(120)[-1]))


PRIVATE_SETTINGS = ("/set region DFW-1", "/set coin XMR", "/set billing week", "/set batch 8", "/set lang de")


def shows_a_setting(text: str) -> list[str]:
    """What of PRIVATE_SETTINGS an answer shows: the region noted as a setting, the coin, the weekly price, the
    batch, the German the member chose."""
    found = [word for word in ("your setting", "Einstellung", "XMR", "/week", "/Woche", "batch 8", "Batch 8")
             if word in text]
    return found + (["German"] if "Speicher" in text or "Monat" in text else [])


@pytest.mark.parametrize("settings", [{"rate_limit_messages": 100}], indirect=True)
async def test_a_members_private_settings_shape_no_answer_in_a_group(bot):
    for line in PRIVATE_SETTINGS:
        await bot.send(125, line)
    await bot.send(125, "70B int4")  # in the private chat they do
    assert shows_a_setting(bot.last_text(125))
    group = dict(chat_type="supergroup", chat_id=-405)
    await bot.send(125, f"@{BOT_USERNAME} 70B int4", **group)
    await bot.send(125, "/size 70B int4", **group)
    await bot.send(125, f"/start@{BOT_USERNAME} Mllama-3_1-70bPi4C32k", **group)
    await bot.send(125, "/card H100", **group)
    await bot.send(125, "/cards", **group)
    texts = [reply["text"] for reply in bot.replies(-405)]
    assert len(texts) == 5
    assert [shows_a_setting(text) for text in texts] == [[]] * 5, texts
    assert not any("XMR" in button for reply in bot.replies(-405) for row in
                   reply.get("reply_markup", {}).get("inline_keyboard", []) for button in map(str, row))
    coin = next(b for row in bot.replies(-405)[0]["reply_markup"]["inline_keyboard"] for b in row
                if b["text"].startswith("🪙"))
    await bot.press(125, coin["callback_data"], **group)  # a button in the group: still none of them
    edit = bot.request.sent("editMessageText")[-1].params
    assert shows_a_setting(edit["text"]) == []
    await bot.inline(125, "70B int4", chat_type="supergroup")  # an inline answer typed in a group
    results = bot.request.sent("answerInlineQuery")[-1].params["results"]
    assert not any(shows_a_setting(str(result)) for result in results)
    await bot.send(125, "/settings", **group)
    assert "private chat" in bot.last_text(-405)


async def test_compare_in_a_group_does_not_read_a_members_last_question(bot):
    await bot.send(126, "llama 3 405b fp8 128k context")  # asked in private
    await bot.send(126, "/compare A40 H100")
    assert "405" in bot.last_text(126)
    await bot.send(126, f"/compare@{BOT_USERNAME} A40 H100", chat_type="supergroup", chat_id=-406)
    text = bot.last_text(-406)
    assert "private chat" in text and "405" not in text and "128" not in text


async def test_subscriptions_are_not_shown_to_a_group(bot):
    await bot.send(121, "/subscribe A40 below 0.5")
    await bot.send(121, "/subscriptions", chat_type="group", chat_id=-401)
    text = bot.last_text(-401)
    assert "private chat" in text and "A40" not in text
    await bot.send(121, "/subscriptions")
    assert "A40" in bot.last_text(121)


async def test_a_group_that_refuses_the_bot_does_not_block_the_user(bot):
    svc = bot.app.bot_data["services"]
    await bot.send(122, "/subscribe A40")
    bot.request.fail("sendMessage", 403, "Forbidden: bot was kicked from the group chat")
    await bot.send(122, f"@{BOT_USERNAME} 7B bf16", chat_type="group", chat_id=-402)
    assert not (await svc.store.get_preferences(122)).blocked
    assert await svc.store.subscriptions(122)
    bot.request.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await bot.send(122, "7B bf16")  # the user's own chat refusing: that is a block
    assert (await svc.store.get_preferences(122)).blocked


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


# -- noise for the admin, silence for the user -------------------------------------------------------------------

def admin_texts(bot: Harness) -> list[str]:
    return [p["text"] for p in bot.replies(ADMIN)]


async def test_polling_network_errors_reach_the_admin_summarised(bot):
    for _ in range(5):
        await bot.app.process_error(None, NetworkError("Bad Gateway"))
    [notice] = admin_texts(bot)
    assert "Telegram unreachable" in notice and "1 network error" in notice and "<pre>" not in notice
    bot.app.bot_data["polling_trouble"].last_notice -= POLLING_SUMMARY_S  # ten minutes later
    await bot.app.process_error(None, NetworkError("Bad Gateway"))
    assert len(admin_texts(bot)) == 2 and "5 network error" in admin_texts(bot)[-1]


async def test_a_reply_lost_to_the_network_is_logged_with_context(bot, caplog):
    bot.request.fail("sendMessage", exception=read_timeout())
    await bot.send(130, "7B bf16")
    assert not admin_texts(bot)  # network weather, not a bug: no traceback for the admin
    assert not bot.replies(130)  # and no "could not send" into the chat the send may have reached
    assert any("sendMessage to chat 130 failed" in r.getMessage() for r in caplog.records)


async def test_a_failed_edit_tells_the_user(bot):
    await bot.send(131, "70B int4")
    fp8 = next(b for row in bot.replies(131)[-1]["reply_markup"]["inline_keyboard"] for b in row
               if b["text"] == "FP8")
    bot.request.fail("editMessageText", 400, "Bad Request: can't parse entities: unsupported start tag")
    await bot.press(131, fp8["callback_data"])
    assert "could not send my answer" in bot.last_text(131)
    assert "Can&#x27;t parse entities" in admin_texts(bot)[-1]  # a refused text is our bug: the admin hears of it


@pytest.mark.parametrize("text", [
    "<pre>" + "a &amp; b\n" * 1000 + "</pre>",  # a tag across many lines: closed after the cut
    "<b>" + "x" * 4000 + '</b> <a href="https://example.com/?a=1&amp;b=2">link</a>' + "y" * 200,  # no line break
    "z" * 4090 + "&amp;&lt;&gt;" + "z" * 50,  # an entity at the limit: not split
])
def test_clip_cuts_at_a_safe_point_and_closes_tags(text):
    clipped = clip(text)
    assert len(clipped) <= 4096 and clipped.endswith("…")
    for tag in ("pre", "b", "a"):
        assert clipped.count(f"<{tag}") == clipped.count(f"</{tag}>")
    assert re.sub(r"&(amp|lt|gt);", "", clipped).count("&") == 0 and clipped.count("<") == clipped.count(">")


# -- another instance polling with the token: a summary, not a traceback per failure ---------------------------

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


# -- a reply that finally fails is told to the user where that cannot double it ---------------------------------

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


# -- the token in nothing the process prints ---------------------------------------------------------------------

def test_tracebacks_are_redacted_in_log_records_and_on_stderr(capsys):
    import logging

    from bot.cli.main import RedactSecrets

    redact = RedactSecrets(["123456:SECRET-token-xyz"])
    try:
        raise RuntimeError("The token `123456:SECRET-token-xyz` was rejected by the server.")
    except RuntimeError as exc:
        error = exc
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, (type(exc), exc, exc.__traceback__))
    redact.filter(record)
    formatted = logging.Formatter().format(record)
    assert "SECRET" not in formatted and "The token `***` was rejected" in formatted
    redact.excepthook(type(error), error, error.__traceback__)
    err = capsys.readouterr().err
    assert "SECRET" not in err and "RuntimeError: The token `***`" in err


async def test_the_admins_traceback_has_no_secret_in_it(bot, monkeypatch):
    from bot.features import welcome

    def leaky(lang):
        raise RuntimeError(f"failed with {TOKEN} and key test-secret-0123456789")

    monkeypatch.setattr(welcome, "render_help", leaky)
    await bot.send(180, "/help")
    notice = admin_texts(bot)[-1]
    assert "RuntimeError: failed with *** and key ***" in notice
    assert TOKEN.split(":")[1] not in notice and "test-secret-0123456789" not in notice
    assert "something went wrong" in bot.last_text(180)


async def test_a_reply_refused_with_429_past_the_bound_is_logged_in_one_line_and_told(bot, caplog):
    # ResilientRateLimiter waits out 429s for up to retry_after_bound_s (60 s in service; 2 s here): then a reply
    # given up on must not vanish, and the log has one line for it, not a traceback.
    bot.app.bot.rate_limiter.retry_after_bound_s = 2.0
    bot.request.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, times=2)  # ~1 s
    await bot.send(174, "7B bf16")
    calls = [c.method for c in bot.request.calls if c.params.get("chat_id") == 174]
    assert calls == ["sendMessage!failed"] * 2 + ["sendMessage"]
    assert "could not send my answer" in bot.last_text(174)
    assert any("gave up on a request while handling update" in r.getMessage() and "chat 174" in r.getMessage()
               and "RetryAfter" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not admin_texts(bot)


async def test_a_long_429_storm_still_delivers_the_answers(bot, caplog):
    # Eight 429s in a row (~9 s) outlast PTB's count of tries (max_retries) but not the time bound: the answer, not
    # "could not send my answer", and no traceback.
    bot.request.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, times=8)
    await bot.send(175, "7B bf16")
    calls = [c.method for c in bot.request.calls if c.params.get("chat_id") == 175]
    assert calls == ["sendMessage!failed"] * 8 + ["sendMessage"]
    assert "could not send" not in bot.last_text(175) and "7B" in bot.last_text(175)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


async def test_a_card_memory_of_forty_digits_gets_a_clear_answer_not_something_went_wrong(bot):
    await bot.send(130, f"an 807{'0' * 38}GB A100 for 70b")
    text = bot.last_text(130)
    assert "card memory 807" in text and "out of range" in text and "went wrong" not in text
    await bot.send(131, f"ein 807{'0' * 38}GB A100 für 70b", language_code="de")
    assert "Kartenspeicher 807" in bot.last_text(131) and "1.000.000 GB" in bot.last_text(131)
    assert not [c for c in bot.request.sent("sendMessage") if c.params["chat_id"] == ADMIN]  # no traceback
