"""bot/telegram/transport.py reply_call + post_prepared: a private chat's reply posts the very body PTB's
Message.reply_text would (byte for byte), through the same rate limiter and error mapping; anything PTB would send
differently (groups, topics, business chats, do_quote) takes PTB's own path."""
from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest
from telegram import Message, Update
from telegram.constants import ParseMode
from telegram.error import Forbidden
from telegram.ext import Defaults, ExtBot
from telegram.request import RequestData

from bot.config import load_settings
from bot.features.reply import Button, Reply
from bot.telegram.app import NoLinkPreview, build_application
from bot.telegram.context import CardfitApplication
from bot.telegram.ptb import FAILED_REQUEST_ATTR, markup, reply
from bot.telegram.transport import JsonRequest, json_body, reply_call, result_unread

TOKEN = "123456:TEST-token-not-real"
ME = {"id": 123456, "is_bot": True, "first_name": "Cardfit", "username": "cardfit_bot"}
HTML = "<b>70B</b> at 4-bit: <i>~40 GB</i> &amp; <a href=\"https://example.com/a?b=1&amp;c=2\">x</a> — ÄÖÜ ✓ \U0001f680"
BUTTONS = [[Button("BF16", data="a:1:S70Pbf"), Button("✓ INT4", data="a:1:S70Pi4")],
           [Button("Top up $5", url="https://example.com/topup?ref=abc&amount=5")]]


class Capture(JsonRequest):
    """The JSON body of each call, as JsonRequest writes it, answered like Telegram (or with `status`)."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[tuple[str, bytes]] = []
        self.status = 200

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        if endpoint == "getMe":
            return 200, json.dumps({"ok": True, "result": ME}).encode()
        assert request_data is not None
        self.bodies.append((endpoint, json_body(request_data)))
        if self.status != 200:
            return self.status, json.dumps({"ok": False, "error_code": self.status,
                                            "description": "Forbidden: bot was blocked by the user"}).encode()
        sent = {"message_id": 9, "date": 1, "chat": {"id": 42, "type": "private"}, "text": "x"}
        return 200, json.dumps({"ok": True, "result": sent}).encode()


@pytest.fixture
async def app() -> AsyncIterator[tuple[CardfitApplication, Capture]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(bot_token=TOKEN, db=f"{tmp}/send.sqlite3")
        capture = Capture()
        application = build_application(settings, request=capture, get_updates_request=Capture())
        await application.initialize()
        yield application, capture
        await application.shutdown()


def message(bot: Any, chat: dict[str, Any], **extra: Any) -> Message:
    data = {"update_id": 1, "message": {"message_id": 3, "date": 1, "chat": chat, "text": "70B int4",
                                        "from": {"id": 42, "is_bot": False, "first_name": "U"}, **extra}}
    found = Update.de_json(data, bot).effective_message
    assert found is not None
    return found


PRIVATE = {"id": 42, "type": "private", "first_name": "U"}


async def ptb_body(msg: Message, capture: Capture, answer: Reply) -> bytes:
    with result_unread("sendMessage"):
        await msg.reply_text(answer.text, reply_markup=markup(answer.buttons))
    return capture.bodies.pop()[1]


@pytest.mark.parametrize("answer", [Reply(HTML, BUTTONS), Reply(HTML), Reply("plain \ud800 surrogate", BUTTONS)],
                         ids=["buttons", "no-buttons", "lone-surrogate"])
async def test_a_private_reply_posts_ptbs_own_body_byte_for_byte(app, answer):
    application, capture = app
    msg = message(application.bot, PRIVATE)
    assert reply_call(msg, answer.text, markup(answer.buttons)) is not None  # the straight path is taken
    await reply(msg, answer)
    endpoint, straight = capture.bodies.pop()
    assert endpoint == "sendMessage"
    assert straight == await ptb_body(msg, capture, answer)
    sent = json.loads(straight)
    assert sent["parse_mode"] == "HTML" and sent["link_preview_options"] == {"is_disabled": True}
    assert sent["chat_id"] == 42 and sent["text"] == answer.text


async def test_other_defaults_are_written_as_ptb_writes_them():
    bot = ExtBot(TOKEN, defaults=Defaults(parse_mode=ParseMode.MARKDOWN_V2, disable_notification=True,
                                          protect_content=True, link_preview_options=NoLinkPreview()),
                 request=Capture())
    await bot.initialize()
    msg = message(bot, PRIVATE)
    data = reply_call(msg, "*hi*", markup(BUTTONS))
    assert data is not None
    capture = bot.request
    assert isinstance(capture, Capture)
    with result_unread("sendMessage"):
        await msg.reply_text("*hi*", reply_markup=markup(BUTTONS))
    assert json.loads(capture.bodies.pop()[1]) == data
    assert data["disable_notification"] is True and data["protect_content"] is True
    await bot.shutdown()


@pytest.mark.parametrize("chat, extra", [
    ({"id": -100, "type": "supergroup", "title": "G"}, {}),  # PTB quotes the message in a group
    ({"id": -5, "type": "group", "title": "G"}, {}),
    (PRIVATE, {"is_topic_message": True, "message_thread_id": 7}),
    (PRIVATE, {"business_connection_id": "biz"}),
], ids=["supergroup", "group", "topic", "business"])
async def test_what_ptb_would_send_differently_takes_ptbs_path(app, chat, extra):
    application, capture = app
    msg = message(application.bot, chat, **extra)
    assert reply_call(msg, HTML, markup(BUTTONS)) is None
    await reply(msg, Reply(HTML, BUTTONS))
    assert capture.bodies.pop()[1] == await ptb_body(msg, capture, Reply(HTML, BUTTONS))


async def test_do_quote_in_the_defaults_takes_ptbs_path():
    bot = ExtBot(TOKEN, defaults=Defaults(do_quote=True), request=Capture())
    assert reply_call(message(bot, PRIVATE), "hi", None) is None


async def test_the_straight_send_goes_through_the_rate_limiter_and_keeps_its_error_mapping(app):
    application, capture = app
    limiter = application.bot.rate_limiter
    assert limiter is not None
    seen: list[tuple[str, object]] = []
    original = limiter.process_request

    async def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append((kwargs["endpoint"], kwargs["data"].get("chat_id")))
        return await original(*args, **kwargs)

    limiter.process_request = counted  # type: ignore[method-assign]
    msg = message(application.bot, PRIVATE)
    await reply(msg, Reply(HTML, BUTTONS))
    assert seen == [("sendMessage", 42)]
    capture.status = 403
    with pytest.raises(Forbidden) as raised:
        await reply(msg, Reply(HTML, BUTTONS))
    assert getattr(raised.value, FAILED_REQUEST_ATTR) == ("sendMessage", 42)  # the error handler's (method, chat)


def _update(bot: Any, **payload: Any) -> Update:
    return Update.de_json({"update_id": 1, **payload}, bot)


def _text(chat: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
    entities = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}] if text.startswith("/") else []
    return {"message": {"message_id": 3, "date": 1, "chat": chat, "text": text, "entities": entities,
                        "from": {"id": 42, "is_bot": False, "first_name": "U"}, **extra}}


async def test_the_question_handlers_come_first_and_take_nothing_another_handler_takes(app):
    """bot/handlers/questions.register_text puts them first in group 0: safe only while no other handler of the
    group matches an update they match (PTB runs the first match of a group)."""
    from bot.telegram.handlers.questions import group_text, private_text

    application, _ = app
    handlers = application.handlers[0]
    assert [h.callback for h in handlers[:2]] == [private_text, group_text]
    group = {"id": -100, "type": "supergroup", "title": "G"}
    updates = [_text(PRIVATE, "70B int4"), _text(PRIVATE, "/size 70B"), _text(PRIVATE, "/help"),
               _text(PRIVATE, "/nosuchcommand"), _text(group, "@cardfit_bot 70B int4"), _text(group, "/size 70B"),
               _text(group, "chatter"), {"edited_message": _text(PRIVATE, "7B")["message"]},
               {"callback_query": {"id": "q", "from": {"id": 42, "is_bot": False, "first_name": "U"},
                                   "chat_instance": "c", "data": "anything"}},
               {"inline_query": {"id": "i", "from": {"id": 42, "is_bot": False, "first_name": "U"}, "query": "70B",
                                 "offset": ""}}]
    for payload in updates:
        update = _update(application.bot, **payload)
        matching = [h for h in handlers if h.check_update(update) not in (None, False)]
        if any(h.callback in (private_text, group_text) for h in matching):
            assert len(matching) == 1, payload
