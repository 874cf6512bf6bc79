"""Tests for the Bot API emulator, driven through real PTB objects (Bot, Application+Updater)."""

import asyncio
import datetime as dtm
import json
import time

import aiohttp
import pytest
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    ReplyKeyboardMarkup,
    Update,
)
from telegram.error import (
    BadRequest,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import (
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:TEST-TOKEN-not-real"


@pytest.fixture
async def bot(emulator):
    async with Bot(TOKEN, base_url=emulator.base_url, base_file_url=emulator.base_file_url) as b:
        yield b


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.title(), callback_data=d) for d in data]])


# ---------------------------------------------------------------- basics
async def test_binds_loopback_only_and_context_manager():
    async with BotApiEmulator(token=TOKEN) as emu:
        assert emu.base_url == f"http://127.0.0.1:{emu.port}/bot"
        assert emu.base_file_url == f"http://127.0.0.1:{emu.port}/file/bot"
        assert emu.port > 0
    with pytest.raises(RuntimeError):
        emu.base_url  # noqa: B018 - stopped emulators have no URL


async def test_get_me(bot, emulator):
    me = await bot.get_me()
    assert me.is_bot and me.id == 123456
    assert me.username == "cardfit_test_bot"
    assert me.can_join_groups is True
    assert me.supports_inline_queries is True
    # One from Bot.initialize(), one explicit: get_me() does not serve from cache.
    assert [c.method for c in emulator.calls] == ["getMe", "getMe"]


async def test_wrong_token_is_invalid_token(emulator):
    with pytest.raises(InvalidToken):
        async with Bot("999:WRONG", base_url=emulator.base_url):
            pass
    assert emulator.calls[-1].failed == "unauthorized"


@pytest.mark.filterwarnings("ignore:Please use 'Bot.setChatTitle'")
async def test_unknown_method_is_404(bot, emulator):
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("noSuchMethod")
    assert emulator.calls[-1].failed == "not_found"
    # A real method we do not emulate is accepted and recorded.
    assert await bot.do_api_request("setChatTitle", {"chat_id": 5, "title": "x"}) is True
    assert emulator.sent("setChatTitle")[0].params == {"chat_id": 5, "title": "x"}


async def test_send_message_recorded_with_decoded_params(bot, emulator):
    msg = await bot.send_message(42, "hello", reply_markup=keyboard("a", "b"))
    assert msg.message_id == 1 and msg.chat.id == 42 and msg.text == "hello"
    assert msg.from_user.id == emulator.bot_id
    assert msg.reply_markup.inline_keyboard[0][1].callback_data == "b"
    msg2 = await bot.send_message(42, "again", disable_notification=True)
    other = await bot.send_message(7, "elsewhere")
    assert (msg2.message_id, other.message_id) == (2, 1)  # ids are per chat

    [call, call2] = emulator.sent("sendMessage", chat_id=42)
    assert call.params["chat_id"] == 42  # decoded to int
    first_button = call.params["reply_markup"]["inline_keyboard"][0][0]
    assert first_button == {"text": "A", "callback_data": "a"}
    assert call2.params["disable_notification"] is True
    assert call.result["message_id"] == 1
    assert emulator.sent(chat_id=7)[0].text == "elsewhere"
    assert emulator.message(42, 1)["text"] == "hello"
    assert emulator.stats.delivered == 3 and emulator.stats["duplicates"] == 0


async def test_reply_keyboard_recorded_but_not_echoed(bot, emulator):
    # Telegram only keeps *inline* keyboards on a Message; PTB would fail on anything else.
    msg = await bot.send_message(1, "pick", reply_markup=ReplyKeyboardMarkup([["x", "y"]]))
    assert msg.reply_markup is None
    recorded = emulator.sent("sendMessage")[0].reply_markup
    assert recorded["keyboard"] == [[{"text": "x"}, {"text": "y"}]]


@pytest.mark.parametrize("text", ["123", "true", "[1, 2]", '{"a": 1}', "null", "ü 🚀 ∑"])
async def test_string_params_are_not_json_decoded(bot, emulator, text):
    await bot.send_message(1, text)
    assert emulator.sent("sendMessage")[0].text == text


async def test_raw_http_json_body_and_case_insensitive_method(emulator):
    url = f"{emulator.base_url}{TOKEN}/SENDMESSAGE"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json={"chat_id": 3, "text": "hi",
                                           "reply_markup": '{"inline_keyboard": []}'}) as resp:
            body = await resp.json()
        async with session.get(f"{emulator.base_url}{TOKEN}/getMe") as resp:
            assert (await resp.json())["result"]["username"] == "cardfit_test_bot"
    assert body["ok"] is True and body["result"]["chat"]["id"] == 3
    call = emulator.sent("sendMessage")[0]
    assert call.method == "sendMessage"
    assert call.params["reply_markup"] == {"inline_keyboard": []}


async def test_message_text_validation(bot, emulator):
    with pytest.raises(BadRequest, match="too long"):
        await bot.send_message(1, "x" * 4097)
    # HTML tags do not count towards the 4096 limit.
    await bot.send_message(1, "<b>" + "x" * 4090 + "</b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match="Button_data_invalid"):
        await bot.send_message(1, "k", reply_markup=keyboard("d" * 65))
    assert emulator.stats.bad_request == 2 and emulator.stats.delivered == 1


# ---------------------------------------------------------------- edits
async def test_edit_message_text_and_errors(bot, emulator):
    msg = await bot.send_message(42, "v1", reply_markup=keyboard("a"))
    edited = await bot.edit_message_text("v2", chat_id=42, message_id=msg.message_id,
                                         reply_markup=keyboard("a"))
    assert edited.text == "v2" and edited.edit_date is not None

    with pytest.raises(BadRequest, match="(?i)message is not modified") as exc_info:
        await bot.edit_message_text("v2", chat_id=42, message_id=msg.message_id,
                                    reply_markup=keyboard("a"))
    # PTB strips "Bad Request: " and capitalize()s the rest - match case-insensitively.
    assert "exactly the same as a current content and reply markup" in str(exc_info.value)
    assert emulator.sent("editMessageText", include_failed=True)[-1].failed == "bad_request"

    # Same text without markup is a modification: it removes the keyboard (real API behaviour).
    await bot.edit_message_text("v2", chat_id=42, message_id=msg.message_id)
    assert "reply_markup" not in emulator.message(42, msg.message_id)

    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", chat_id=42, message_id=999)

    await bot.edit_message_reply_markup(chat_id=42, message_id=msg.message_id,
                                        reply_markup=keyboard("z"))
    assert emulator.message(42, msg.message_id)["reply_markup"]["inline_keyboard"][0][0][
        "callback_data"] == "z"
    with pytest.raises(BadRequest, match="(?i)not modified"):
        await bot.edit_message_reply_markup(chat_id=42, message_id=msg.message_id,
                                            reply_markup=keyboard("z"))
    assert emulator.stats.edited == 3


async def test_cannot_edit_user_message(bot, emulator):
    update = emulator.push_message(5, "mine")
    with pytest.raises(BadRequest, match="can't be edited"):
        await bot.edit_message_text("x", chat_id=5, message_id=update["message"]["message_id"])


async def test_inline_message_edit(bot, emulator):
    emulator.push_callback(9, None, "go", inline_message_id="IM1", check_button=False)
    assert await bot.edit_message_text("inline!", inline_message_id="IM1") is True
    with pytest.raises(BadRequest, match="(?i)not modified"):
        await bot.edit_message_text("inline!", inline_message_id="IM1")
    with pytest.raises(BadRequest, match="Message_id_invalid"):
        await bot.edit_message_text("x", inline_message_id="nope")


# ---------------------------------------------------------------- faults
async def test_fail_next_retry_after(bot, emulator, monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 22: int retry_after is deprecated
    emulator.fail_next("sendMessage", "retry_after", retry_after=3)
    with pytest.raises(RetryAfter) as exc_info:
        await bot.send_message(1, "hi")
    assert exc_info.value.retry_after == dtm.timedelta(seconds=3)
    [failed] = emulator.sent("sendMessage", include_failed=True)
    assert failed.failed == "retry_after" and failed.status == 429
    assert emulator.messages(1) == []  # the failed call had no effect
    assert emulator.sent("sendMessage") == []

    msg = await bot.send_message(1, "hi")  # fault consumed: next call goes through
    assert msg.message_id == 1  # the failed call did not use up a message id
    assert emulator.stats.rejected_429 == 1 and emulator.stats.delivered == 1


async def test_forbidden_and_block_user(bot, emulator):
    emulator.fail_next("sendMessage", "forbidden")
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(1, "hi")

    emulator.block_user(2)
    for _ in range(2):
        with pytest.raises(Forbidden):
            await bot.send_message(2, "hi")
    with pytest.raises(Forbidden):
        await bot.send_chat_action(2, "typing")
    await bot.send_message(3, "others are fine")
    emulator.unblock_user(2)
    await bot.send_message(2, "back")
    assert [c.failed for c in emulator.sent(chat_id=2, include_failed=True)] == [
        "blocked", "blocked", "blocked", None]
    assert emulator.stats.forbidden == 4


async def test_bad_gateway_is_network_error(bot, emulator):
    emulator.fail_next("sendMessage", "bad_gateway", times=2)
    for _ in range(2):
        with pytest.raises(NetworkError, match="Bad Gateway") as exc_info:
            await bot.send_message(1, "hi")
        assert not isinstance(exc_info.value, TimedOut)
    await bot.send_message(1, "hi")
    assert len(emulator.messages(1)) == 1


async def test_drop_is_network_error(bot, emulator):
    emulator.fail_next("sendMessage", "drop")
    with pytest.raises(NetworkError, match="disconnected"):
        await bot.send_message(1, "hi")
    assert emulator.sent("sendMessage", include_failed=True)[0].failed == "drop"
    assert emulator.messages(1) == []
    await bot.send_message(1, "hi")  # PTB reconnects transparently
    assert len(emulator.messages(1)) == 1


async def test_lost_response_takes_effect(bot, emulator):
    emulator.fail_next("sendMessage", "lost_response")
    with pytest.raises(NetworkError):
        await bot.send_message(1, "hi")
    await bot.send_message(1, "hi")  # a blind retry...
    assert emulator.stats.duplicates == 1  # ...delivers twice
    assert emulator.sent("sendMessage")[0].response_lost is True


def test_fail_next_validates_arguments():
    emu = BotApiEmulator()
    with pytest.raises(ValueError, match="unknown fault kind"):
        emu.fail_next("sendMessage", "explode")
    with pytest.raises(ValueError, match="not a Bot API method"):
        emu.fail_next("sendMesage", "drop")


async def test_rate_limit_rejects_above_limit(bot, emulator, monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    emulator.rate_limit(per_second=5)
    results = await asyncio.gather(*(bot.send_message(i, f"m{i}") for i in range(12)),
                                   return_exceptions=True)
    rejected = [r for r in results if isinstance(r, RetryAfter)]
    assert len(rejected) == 7 and all(r.retry_after == dtm.timedelta(seconds=1) for r in rejected)
    assert emulator.stats.delivered == 5 and emulator.stats.rejected_429 == 7
    assert len(emulator.sent("sendMessage", include_failed=True)) == 12
    # Other methods are not limited.
    await bot.get_me()
    emulator.rate_limit(None)
    await bot.send_message(1, "free again")


async def test_rate_limit_per_chat(bot, emulator, monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    emulator.rate_limit(per_second=100, per_chat_per_second=1)
    await bot.send_message(1, "a")
    with pytest.raises(RetryAfter):
        await bot.send_message(1, "b")
    await bot.send_message(2, "c")


# ---------------------------------------------------------------- updates
async def test_get_updates_offset_limit_and_long_poll(bot, emulator):
    for i in range(3):
        emulator.push_message(10, f"m{i}")
    first = await bot.get_updates(limit=2)
    assert [u.message.text for u in first] == ["m0", "m1"]
    ids = [u.update_id for u in first]
    assert ids[1] == ids[0] + 1
    rest = await bot.get_updates(offset=ids[-1] + 1)
    assert [u.message.text for u in rest] == ["m2"]
    assert emulator.pending_updates == 1  # not confirmed until the next offset
    assert await bot.get_updates(offset=rest[-1].update_id + 1) == ()
    assert emulator.pending_updates == 0

    # Long polling returns as soon as an update arrives...
    async def push_later():
        await asyncio.sleep(0.2)
        emulator.push_message(10, "late")

    started = time.monotonic()
    pusher = asyncio.create_task(push_later())
    late = await bot.get_updates(offset=rest[-1].update_id + 1, timeout=5)
    await pusher
    assert [u.message.text for u in late] == ["late"]
    assert 0.15 < time.monotonic() - started < 2
    # ...and otherwise waits out the timeout.
    started = time.monotonic()
    assert await bot.get_updates(offset=late[-1].update_id + 1, timeout=1) == ()
    assert 0.9 < time.monotonic() - started < 2


async def test_allowed_updates_filtering(bot, emulator):
    emulator.push_inline_query(1, "x")
    emulator.push_message(1, "m")
    updates = await bot.get_updates(allowed_updates=["message"])
    assert [u.message.text for u in updates] == ["m"]
    assert emulator.pending_updates == 1


async def test_webhook_blocks_get_updates(bot, emulator):
    await bot.set_webhook("https://example.invalid/hook")
    assert (await bot.get_webhook_info()).url == "https://example.invalid/hook"
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()
    emulator.push_message(1, "x")
    await bot.delete_webhook(drop_pending_updates=True)
    info = await bot.get_webhook_info()
    assert info.url == "" and info.pending_update_count == 0


async def test_push_message_entities(emulator):
    update = Update.de_json(emulator.push_message(1, "/fit@cardfit_test_bot 70b ping @someone"),
                            None)
    entities = update.message.parse_entities()
    assert list(entities.values()) == ["/fit@cardfit_test_bot", "@someone"]
    # Offsets are UTF-16 units: the emoji counts as 2.
    update = Update.de_json(emulator.push_message(1, "🚀 @cardfit_test_bot"), None)
    assert list(update.message.parse_entities().values()) == ["@cardfit_test_bot"]
    assert emulator.push_message(1, "plain")["message"].get("entities") is None


async def test_polling_end_to_end(emulator):
    """Application + Updater.start_polling: messages, commands and callbacks round-trip."""

    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.message.reply_text("Pick one", reply_markup=keyboard("a100", "h100"))

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        # PTB 22 only quotes (reply_parameters) when asked to, even in groups.
        await update.message.reply_text(f"echo: {update.message.text}", do_quote=True)

    async def pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        await query.answer()
        # The callback carries the stored bot message: its text and keyboard are visible.
        assert query.message.text == "Pick one"
        assert query.message.reply_markup.inline_keyboard[0][1].callback_data == "h100"
        await query.edit_message_text(f"You chose {query.data}")

    app = (
        ApplicationBuilder()
        .token(TOKEN)
        .base_url(emulator.base_url)
        .base_file_url(emulator.base_file_url)
        .build()
    )
    app.add_handler(CommandHandler("start", start))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    app.add_handler(CallbackQueryHandler(pressed))
    errors: list[object] = []
    app.add_error_handler(lambda update, context: errors.append(context.error))

    async with app:
        await app.start()
        await app.updater.start_polling(timeout=5, poll_interval=0)
        try:
            emulator.push_message(77, "hello there", first_name="Ann")
            [reply] = await emulator.wait_for("sendMessage", lambda c: c.chat_id == 77, timeout=5)
            assert reply.text == "echo: hello there"
            assert reply.params["reply_parameters"]["message_id"] == 1  # reply_text quotes
            assert reply.result["reply_to_message"]["text"] == "hello there"

            emulator.push_message(77, "/start")
            [menu] = await emulator.wait_for("sendMessage", lambda c: c.text == "Pick one",
                                             timeout=5)
            emulator.push_callback(77, menu.result["message_id"], "h100")
            [edit] = await emulator.wait_for("editMessageText", timeout=5)
            await emulator.wait_for("answerCallbackQuery", timeout=5)
            assert edit.text == "You chose h100"
            assert emulator.message(77, menu.result["message_id"])["text"] == "You chose h100"
        finally:
            await app.updater.stop()
            await app.stop()
    assert errors == []
    # Updater.stop() confirms the fetched updates with one last getUpdates(timeout=0).
    assert emulator.pending_updates == 0


async def test_push_callback_checks_message_and_button(bot, emulator):
    with pytest.raises(LookupError, match="no message 5"):
        emulator.push_callback(1, 5, "x")
    msg = await bot.send_message(1, "k", reply_markup=keyboard("yes"))
    with pytest.raises(ValueError, match="no button"):
        emulator.push_callback(1, msg.message_id, "no")
    update = emulator.push_callback(1, msg.message_id, "yes")
    query_id = update["callback_query"]["id"]
    assert await bot.answer_callback_query(query_id, text="ok") is True
    with pytest.raises(BadRequest, match="(?i)query is too old"):
        await bot.answer_callback_query(query_id)  # answering twice is rejected


async def test_inline_query_answer(bot, emulator):
    update = emulator.push_inline_query(3, "h100", chat_type="sender")
    result = InlineQueryResultArticle("r1", "H100", InputTextMessageContent("80 GB"))
    await bot.answer_inline_query(update["inline_query"]["id"], [result], cache_time=0)
    [call] = emulator.sent("answerInlineQuery")
    assert call.params["results"][0]["id"] == "r1" and call.params["cache_time"] == 0
    with pytest.raises(BadRequest, match="(?i)query is too old"):
        await bot.answer_inline_query(update["inline_query"]["id"], [result])
    parsed = Update.de_json(update, bot)
    assert parsed.inline_query.query == "h100" and parsed.inline_query.chat_type == "sender"


async def test_commands_per_scope_and_language(bot, emulator):
    await bot.set_my_commands([BotCommand("fit", "Will it fit?")])
    await bot.set_my_commands([BotCommand("fit", "Passt es?")], language_code="de")
    await bot.set_my_commands([BotCommand("admin", "x")], scope=BotCommandScopeChat(5))
    assert [c.description for c in await bot.get_my_commands()] == ["Will it fit?"]
    assert [c.description for c in await bot.get_my_commands(language_code="de")] == ["Passt es?"]
    assert [c.command for c in await bot.get_my_commands(scope=BotCommandScopeChat(5))] == ["admin"]
    assert emulator.get_commands({"type": "chat", "chat_id": 5})[0]["command"] == "admin"
    assert emulator.sent("setMyCommands")[2].params["scope"] == {"type": "chat", "chat_id": 5}
    await bot.delete_my_commands(language_code="de")
    assert await bot.get_my_commands(language_code="de") == ()
    with pytest.raises(BadRequest, match="Bot_command_invalid"):
        await bot.set_my_commands([BotCommand("Fit", "uppercase is not allowed")])
    assert await bot.set_my_description("Sizes GPUs") is True
    assert (await bot.get_my_description()).description == "Sizes GPUs"
    assert await bot.set_my_short_description("GPU sizing") is True
    assert await bot.send_chat_action(1, "typing") is True
    assert await bot.log_out() is True and await bot.close() is True


async def test_generic_send_and_files(bot, emulator):
    msg = await bot.send_document(1, b"col1,col2\n", filename="plan.csv", caption="Your plan")
    assert msg.caption == "Your plan"
    upload = emulator.sent("sendDocument")[0].params["document"]
    assert upload["filename"] == "plan.csv" and upload["content"] == b"col1,col2\n"

    info = emulator.add_file(b"\x00\x01data", file_id="F1")
    tg_file = await bot.get_file("F1")
    assert tg_file.file_path == f"{emulator.base_file_url}{TOKEN}/{info['file_path']}"
    assert bytes(await tg_file.download_as_bytearray()) == b"\x00\x01data"


async def test_wait_for_timeout_lists_recent_calls(bot, emulator):
    await bot.send_message(1, "only this")
    with pytest.raises(TimeoutError, match=r"(?s)answerCallbackQuery.*sendMessage ok"):
        await emulator.wait_for("answerCallbackQuery", timeout=0.1)
    # since= restricts to calls after a mark.
    mark = emulator.mark()
    waiter = asyncio.create_task(emulator.wait_for("sendMessage", since=mark, timeout=5))
    await asyncio.sleep(0)
    assert not waiter.done()
    await bot.send_message(1, "second")
    [call] = await waiter
    assert call.text == "second"


async def test_concurrent_pollers_conflict(bot, emulator):
    # A second Bot (= second bot instance): one Bot can't do this, PTB's getUpdates pool has
    # a single connection, so its second call would just wait for the pool.
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.1)
    async with Bot(TOKEN, base_url=emulator.base_url) as other:
        assert await other.get_updates(timeout=0) == ()
    with pytest.raises(Conflict, match="terminated by other getUpdates"):
        await first


async def test_throughput_smoke(emulator):
    """Not a benchmark - guards against accidental O(n^2) on the emulator's hot path.

    Uses a raw aiohttp client: PTB+httpx itself tops out around 1k requests/s on one core,
    which would hide the emulator's own cost. Client and emulator share this process, so CPU time (not wall time)
    measures their cost and stays meaningful on a machine shared with other work.
    """
    url = f"{emulator.base_url}{TOKEN}/sendMessage"
    total, workers = 3000, 20
    markup = json.dumps({"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]})

    async def worker(session, first):
        for i in range(first, total, workers):
            data = {"chat_id": str(i % 50), "text": f"m{i}", "reply_markup": markup}
            async with session.post(url, data=data) as resp:
                assert resp.status == 200
                await resp.read()

    started = time.process_time()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=workers)) as session:
        await asyncio.gather(*(worker(session, k) for k in range(workers)))
    elapsed = time.process_time() - started
    assert emulator.stats.delivered == total and emulator.stats.duplicates == 0
    assert len(emulator.sent("sendMessage", chat_id=3)) == total // 50
    assert elapsed < 6, f"{total} sendMessage took {elapsed:.1f}s of CPU"
    assert json.dumps(emulator.stats.as_dict())  # serialisable for benchmark reports
