"""The bot's update path with the Bot API made up (no sockets, no emulator), for bench_bot: what a bot's own code
costs per update, steadier than the difference of two process figures over real HTTP.

Both bots run their real path above the transport: getUpdates answered from a queue (as JSON, through PTB's
request.post and parsing), each send's body built as the real connection builds it (bot/telegram/transport.py
json_body), its answer made up. Cardfit runs as `cardfit bot` does (build_application, the durable inbox and its
SQLite store, serve_polling); the echo bot through PTB's Updater. The transport itself (aiohttp, the kernel's
loopback) is left out of both: it is the same code for both, and bench_bot's process figures hold it.
"""
from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters
from telegram.request import RequestData

from benchmarks.emulator_process import TOKEN
from bot.config import load_settings
from bot.telegram.app import build_application
from bot.telegram.inbox import RAW_UPDATES_KEY, RawUpdatesRequest, inbox_of, serve_polling
from bot.telegram.transport import JsonRequest, json_body

_ME = json.dumps({"ok": True, "result": {"id": 123456, "is_bot": True, "first_name": "Cardfit",
                                         "username": "cardfit_bot"}}).encode()


class _Replies:
    """Counts the sendMessage calls and wakes the waiter when the expected number arrived."""

    def __init__(self) -> None:
        self.count = 0
        self.wanted = 0
        self.done = asyncio.Event()

    def expect(self, wanted: int) -> None:
        self.count, self.wanted = 0, wanted
        self.done.clear()

    def sent(self) -> None:
        self.count += 1
        if self.count >= self.wanted:
            self.done.set()


class MadeUpSends(JsonRequest):
    """The send connection with Telegram's answers made up: each body built as JsonRequest builds it, nothing sent;
    `replies` (when given) counts the sendMessage calls."""

    def __init__(self, replies: _Replies | None = None) -> None:
        super().__init__()
        self.replies = replies

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        if url.endswith("/getMe"):
            return 200, _ME
        if request_data is not None:
            json_body(request_data)  # as the real connection writes it
        if url.endswith("/sendMessage"):
            if self.replies is not None:
                self.replies.sent()
            chat = int((request_data.parameters if request_data else {}).get("chat_id", 1))
            return 200, (b'{"ok":true,"result":{"message_id":9,"date":1,"chat":{"id":%d,"type":"private"},'
                         b'"text":"x"}}' % chat)
        return 200, b'{"ok":true,"result":true}'


class _MadeUpUpdates(RawUpdatesRequest):
    """getUpdates from a queue: up to 100 at once, a long poll of at most 1 s when it is empty."""

    def __init__(self) -> None:
        super().__init__()
        self.queue: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def push(self, updates: list[dict[str, Any]]) -> None:
        self.queue.extend(updates)
        self.arrived.set()

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        if url.endswith("/getMe"):
            return 200, _ME
        if not url.endswith("/getUpdates"):
            return 200, b'{"ok":true,"result":true}'
        while not self.queue:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), 1.0)
            except TimeoutError:
                return 200, b'{"ok":true,"result":[]}'
        batch, self.queue = self.queue[:100], self.queue[100:]
        return 200, json.dumps({"ok": True, "result": batch}).encode()


def _messages(texts: list[str], first_update: int, first_user: int) -> list[dict[str, Any]]:
    return [{"update_id": first_update + index, "message": {
        "message_id": 1, "date": 1_700_000_000, "text": text,
        "chat": {"id": first_user + index, "type": "private", "first_name": "U"},
        "from": {"id": first_user + index, "is_bot": False, "first_name": "U", "language_code": "en"}}}
        for index, text in enumerate(texts)]


async def _echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text(update.effective_message.text or "")


@asynccontextmanager
async def polling(application: Any, inbox: bool) -> AsyncIterator[None]:
    """The bot running while the block runs: Cardfit (`inbox`) as `cardfit bot` runs it, through the durable
    inbox's getUpdates loop (bot/telegram/inbox.py serve_polling), an echo bot through PTB's Updater; stopped whatever
    happens in the block, so a failed round leaves no poller behind."""
    stop = asyncio.Event()
    serving: asyncio.Task[None] | None = None
    if inbox:
        serving = asyncio.create_task(serve_polling(application, stop))
        while inbox_of(application) is None or not application.running:
            if serving.done():
                serving.result()  # it failed to start (getMe refused, the store): say why
                raise RuntimeError("the bot stopped before it started")
            await asyncio.sleep(0.01)
    else:
        await application.initialize()
        if application.post_init:
            await application.post_init(application)
        await application.start()
        await application.updater.start_polling(poll_interval=0, timeout=5)
    try:
        yield
    finally:
        if serving is not None:
            stop.set()
            await serving
        else:
            await application.updater.stop()
            await application.stop()
            if application.post_shutdown:
                await application.post_shutdown(application)
            await application.shutdown()


async def cpu_per_update(bot: str, texts: list[str], warm: list[str]) -> float:
    """Process CPU per update (µs) of `bot` ("cardfit" or "echo") answering `texts`, pushed at once, after
    `warm` answered the same way."""
    replies, updates = _Replies(), _MadeUpUpdates()
    with tempfile.TemporaryDirectory() as tmp:
        if bot == "cardfit":
            settings = load_settings(bot_token=TOKEN, db=f"{tmp}/path.sqlite3", send_rate_per_s=1_000_000,
                                     rate_limit_messages=1000)
            application: Any = build_application(settings, request=MadeUpSends(replies),
                                                 get_updates_request=updates)
            application.bot_data[RAW_UPDATES_KEY] = updates  # the inbox stores getUpdates' own JSON, as it does
        else:
            application = (Application.builder().token(TOKEN).concurrent_updates(64)
                           .request(MadeUpSends(replies)).get_updates_request(updates).build())
            application.add_handler(MessageHandler(filters.TEXT, _echo))
        async with polling(application, inbox=bot == "cardfit"):
            replies.expect(len(warm))
            updates.push(_messages(warm, 1, 500_000))
            await replies.done.wait()
            replies.expect(len(texts))
            started = time.process_time()
            updates.push(_messages(texts, 1 + len(warm), 600_000))
            await replies.done.wait()
            return (time.process_time() - started) / len(texts) * 1e6
