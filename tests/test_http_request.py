"""bot/telegram/transport.py: sends posted as JSON arrive as the form path's did, faults keep their classification;
bot/telegram/ptb.py markup: the same buttons give the same, equal keyboard."""
from __future__ import annotations

import asyncio
import datetime as dtm
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import NetworkError, RetryAfter, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter

import bot.telegram.ptb as telegram_io
from bot.config import load_settings
from bot.features.reply import Button
from bot.operators.send_errors import never_reached_telegram
from bot.telegram.app import SEND_POOL_TIMEOUT_S, build_application
from bot.telegram.ptb import markup
from bot.telegram.transport import JsonRequest, json_body
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:TEST-TOKEN-not-real"
USER = 4242
HTML = "<b>70B</b> at 4-bit: <i>~40 GB</i> &amp; a <a href=\"https://example.com/a?b=1&amp;c=2\">link</a> — ÄÖÜ ✓"
BUTTONS = [[Button(f"Card {row}{col}", data=f"pick:{row}:{col}") for col in range(2)] for row in range(4)] + [
    [Button("Top up", url="https://example.com/topup?ref=abc&amount=10")]]


def traced(seen: list[str]) -> JsonRequest:
    """A JsonRequest that notes each call's content type, on the aiohttp (JSON) path and the httpx (file) one."""
    def note(path: str, content_type: str) -> None:
        if not path.endswith(("/getMe", "/deleteWebhook")):
            seen.append(content_type.split(";")[0])

    async def httpx_hook(request: httpx.Request) -> None:
        note(request.url.path, request.headers.get("content-type", ""))

    async def aiohttp_hook(session: Any, context: Any, params: aiohttp.TraceRequestStartParams) -> None:
        note(params.url.path, params.headers.get("Content-Type", ""))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(aiohttp_hook)
    return JsonRequest(httpx_kwargs={"event_hooks": {"request": [httpx_hook]}},
                       session_kwargs={"trace_configs": [trace]})


@pytest.fixture
async def emulator() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN) as emu:
        emu.push_message(USER, "hi")  # the private chat exists
        yield emu


async def send_with(emulator: BotApiEmulator, request: BaseRequest) -> tuple[dict[str, Any], dict[str, Any]]:
    async with Bot(TOKEN, base_url=emulator.base_url, request=request) as bot:
        message = await bot.send_message(USER, HTML, parse_mode="HTML", reply_markup=markup(BUTTONS),
                                         disable_notification=True)
    got = message.to_dict()
    for key in ("message_id", "date"):
        got.pop(key)
    return emulator.sent("sendMessage", chat_id=USER)[-1].params, got


async def test_a_json_send_arrives_as_the_form_send_did(emulator):
    seen: list[str] = []
    form_params, form_message = await send_with(emulator, HTTPXRequest())
    json_params, json_message = await send_with(emulator, traced(seen))
    assert seen == ["application/json"]
    assert json_params == form_params
    assert json_params["text"] == HTML and json_params["disable_notification"] is True
    assert json_params["reply_markup"] == markup(BUTTONS).to_dict()  # type: ignore[union-attr]
    assert json_message == form_message
    assert json_message["reply_markup"]["inline_keyboard"][-1][0]["url"] == BUTTONS[-1][0].url


async def test_a_call_with_a_file_keeps_the_multipart_form(emulator):
    seen: list[str] = []
    async with Bot(TOKEN, base_url=emulator.base_url, request=traced(seen)) as bot:
        await bot.send_document(USER, b"a,b\n1,2\n", filename="cards.csv", caption="<b>cards</b>")
    assert seen == ["multipart/form-data"]
    assert emulator.sent("sendDocument", chat_id=USER)[-1].params["caption"] == "<b>cards</b>"


async def test_429_is_retry_after_with_its_seconds(emulator):
    emulator.fail_next("sendMessage", "retry_after", retry_after=7)
    async with Bot(TOKEN, base_url=emulator.base_url, request=JsonRequest()) as bot:
        with pytest.raises(RetryAfter) as raised:
            await bot.send_message(USER, "x")
    assert raised.value.retry_after in (7, dtm.timedelta(seconds=7))


async def test_a_connection_dropped_after_the_write_may_have_arrived(emulator):
    emulator.fail_next("sendMessage", "drop")
    async with Bot(TOKEN, base_url=emulator.base_url, request=JsonRequest()) as bot:
        with pytest.raises(NetworkError) as raised:
            await bot.send_message(USER, "x")
    assert isinstance(raised.value.__cause__, aiohttp.ClientError)
    assert not never_reached_telegram(raised.value)


async def test_a_refused_connection_never_reached_telegram():
    with pytest.raises(NetworkError) as raised:  # port 1 on the loopback: nobody listens
        await _post_json(JsonRequest(connect_timeout=2), "http://127.0.0.1:1/bot1:x/sendMessage")
    assert isinstance(raised.value.__cause__, aiohttp.ClientConnectorError)
    assert never_reached_telegram(raised.value)


async def _post_json(request: JsonRequest, url: str, **timeouts: float) -> Any:
    await request.initialize()
    try:
        return await _post_json_open(request, url, **timeouts)
    finally:
        await request.shutdown()


async def test_a_read_time_out_may_have_arrived_and_a_pool_time_out_never_reached():
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)  # the request arrives and is never answered
        await asyncio.sleep(5)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/bot1:x/sendMessage"
    try:
        with pytest.raises(TimedOut) as read:
            await _post_json(JsonRequest(), url, read_timeout=0.2)
        assert isinstance(read.value.__cause__, aiohttp.SocketTimeoutError)
        assert not never_reached_telegram(read.value)

        request = JsonRequest(connection_pool_size=1, pool_timeout=0.2, read_timeout=2)
        await request.initialize()
        first = asyncio.create_task(_post_json_open(request, url))
        await asyncio.sleep(0.1)  # it holds the only connection
        with pytest.raises(TimedOut) as pool:
            await _post_json_open(request, url)
        first.cancel()
        await request.shutdown()
        assert isinstance(pool.value.__cause__, httpx.PoolTimeout) and never_reached_telegram(pool.value)
    finally:
        server.close()


async def _post_json_open(request: JsonRequest, url: str, **timeouts: float) -> Any:
    data = RequestData([RequestParameter.from_input("chat_id", USER), RequestParameter.from_input("text", "x")])
    return await request.post(url, request_data=data, **timeouts)  # type: ignore[arg-type]


def test_the_application_sends_through_json_with_the_long_time_outs(tmp_path):
    application = build_application(load_settings(bot_token=TOKEN, db=str(tmp_path / "c.sqlite3")))
    request = application.bot.request
    assert isinstance(request, JsonRequest)
    assert request.read_timeout == 25.0 and request._client.timeout.write == 25.0
    assert request._client.timeout.pool == SEND_POOL_TIMEOUT_S > 1  # waiting for a connection is harmless


def plain(buttons: list[list[Button]]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.text, url=b.url) if b.url
                                  else InlineKeyboardButton(b.text, callback_data=b.data) for b in row]
                                 for row in buttons])


def test_the_same_buttons_give_the_same_equal_keyboard():
    first = markup(BUTTONS)
    again = markup([list(row) for row in BUTTONS])  # equal buttons, new lists, as the reply cache hands them out
    assert again is first
    assert first == plain(BUTTONS) and plain(BUTTONS) == first and hash(first) == hash(plain(BUTTONS))
    assert first is not None and first.to_dict() == plain(BUTTONS).to_dict()
    assert first.to_json() == plain(BUTTONS).to_json()
    other = markup([[Button("Top up", url="https://example.com/topup?ref=xyz&amount=10")]])
    assert other is not first and other == plain([[Button("Top up", url="https://example.com/topup?ref=xyz&amount=10")]])
    assert markup([]) is None


def test_the_keyboard_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(telegram_io, "MAX_KEYBOARDS", 3)
    monkeypatch.setattr(telegram_io, "_KEYBOARDS", {})
    for index in range(10):
        keyboard = markup([[Button(f"b{index}", data=str(index))]])
        assert keyboard == plain([[Button(f"b{index}", data=str(index))]])
        assert len(telegram_io._KEYBOARDS) <= 3


def test_the_body_is_ascii_json_and_a_lone_surrogate_does_not_break_it():
    data = RequestData([RequestParameter.from_input("text", "Ä ✓ \ud83d"), RequestParameter.from_input("chat_id", 7),
                        RequestParameter.from_input("reply_markup", markup(BUTTONS))])
    body = json_body(data)
    assert body.isascii()
    assert json.loads(body) == {"text": "Ä ✓ \ud83d", "chat_id": 7, "reply_markup": plain(BUTTONS).to_dict()}


async def test_json_calls_wait_for_a_connection_in_the_requests_own_queue():
    """At most connection_pool_size JSON calls are on the wire at once, over at most that many connections: the
    others wait in the request's own asyncio queue (issue #14), and all arrive."""
    open_now = most = connections = 0

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now, most, connections
        connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                open_now += 1
                most = max(most, open_now)
                await reader.readuntil(b"}")  # the JSON body
                await asyncio.sleep(0.05)
                body = b'{"ok":true,"result":true}'
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                await writer.drain()
                open_now -= 1
        except asyncio.IncompleteReadError:  # the client closed its connection
            writer.close()

    server = await asyncio.start_server(slow, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/bot1:x/sendMessage"
    request = JsonRequest(connection_pool_size=2, pool_timeout=5)
    await request.initialize()
    try:
        results = await asyncio.gather(*(_post_json_open(request, url) for _ in range(8)))
    finally:
        await request.shutdown()
        server.close()
    assert results == [True] * 8
    assert most == 2 and connections <= 2


async def test_the_session_is_closed_by_shutdown_and_opened_again_by_initialize(emulator):
    request = JsonRequest()
    async with Bot(TOKEN, base_url=emulator.base_url, request=request) as bot:
        await bot.send_message(USER, "one")
        session = request._session
        assert session is not None and not session.closed
    assert session.closed and request._session is None
    async with Bot(TOKEN, base_url=emulator.base_url, request=request) as bot:
        await bot.send_message(USER, "two")
    assert [call.params["text"] for call in emulator.sent("sendMessage", chat_id=USER)] == ["one", "two"]


async def _one_shot_server(answer: bytes, seen: list[bytes]) -> tuple[asyncio.Server, str]:
    """A server that records each request's head and answers every request with `answer` (raw HTTP)."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                seen.append(head)
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_broken_answer_is_a_network_error_whose_text_holds_no_token():
    seen: list[bytes] = []
    server, base = await _one_shot_server(b"GARBAGE\r\n\r\n", seen)
    try:
        with pytest.raises(NetworkError) as raised:
            await _post_json(JsonRequest(), f"{base}/bot123456:SECRET-token_x/sendMessage")
    finally:
        server.close()
    assert seen and "SECRET" not in str(raised.value) and "123456:" not in str(raised.value)
    assert isinstance(raised.value.__cause__, aiohttp.ClientError) and not never_reached_telegram(raised.value)


async def test_a_redirect_is_an_answer_not_a_second_post():
    seen: list[bytes] = []
    server, base = await _one_shot_server(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /other\r\n"
                                          b"Content-Length: 0\r\n\r\n", seen)
    try:
        with pytest.raises(NetworkError):
            await _post_json(JsonRequest(), f"{base}/bot1:x/sendMessage")
    finally:
        server.close()
    assert [head.split(b"\r\n", 1)[0] for head in seen] == [b"POST /bot1:x/sendMessage HTTP/1.1"]


async def test_json_calls_go_through_the_environments_proxy(monkeypatch):
    seen: list[bytes] = []
    body = b'{"ok":true,"result":true}'
    proxy, proxy_url = await _one_shot_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body,
                                              seen)
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    try:
        assert await _post_json(JsonRequest(), "http://api.telegram.invalid/bot1:x/sendMessage") is True
    finally:
        proxy.close()
    assert seen[0].split(b"\r\n", 1)[0] == b"POST http://api.telegram.invalid/bot1:x/sendMessage HTTP/1.1"


async def test_the_connect_time_out_bounds_the_name_lookup_too(monkeypatch):
    async def slow_lookup(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(10)

    monkeypatch.setattr(aiohttp.TCPConnector, "_resolve_host", slow_lookup)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimedOut) as raised:
        await _post_json(JsonRequest(connect_timeout=0.3), "http://api.telegram.invalid/bot1:x/sendMessage")
    assert loop.time() - started < 3
    assert isinstance(raised.value.__cause__, aiohttp.ConnectionTimeoutError) and never_reached_telegram(raised.value)


async def test_a_call_while_the_request_shuts_down_opens_no_new_session(emulator):
    request = JsonRequest()
    async with Bot(TOKEN, base_url=emulator.base_url, request=request) as bot:
        await bot.send_message(USER, "one")  # a kept-alive connection: closing the session has to wait for it
        closing = asyncio.create_task(request.shutdown())
        await asyncio.sleep(0)  # the shutdown has begun and waits
        with pytest.raises(Exception):  # noqa: B017 - PTB's own refusal of a shut-down request, whatever its class
            await _post_json_open(request, f"{emulator.base_url}{TOKEN}/sendMessage")
        await closing
    assert request._session is None
    assert [call.params["text"] for call in emulator.sent("sendMessage", chat_id=USER)] == ["one"]


async def test_httpx_request_lines_carry_no_token(emulator, caplog):
    """The calls with files go through httpx, which logs each URL at INFO: the token is taken out of that line."""
    caplog.set_level(logging.INFO, logger="httpx")
    async with Bot(TOKEN, base_url=emulator.base_url, request=JsonRequest()) as bot:
        await bot.send_document(USER, b"a,b\n1,2\n", filename="cards.csv")
    lines = [record.getMessage() for record in caplog.records if record.name == "httpx"]
    assert any("/bot<token>/sendDocument" in line for line in lines)
    assert not any(TOKEN in line or TOKEN.split(":")[1] in line for line in lines)


async def test_a_502_page_is_one_warning_and_the_send_is_retried_once(emulator, caplog):
    """nginx's HTML 502 page is not JSON: PTB logged it as an ERROR with a traceback for every 502; here it is one
    warning line, and the send is retried (a 502 means no backend took it) and arrives once."""
    caplog.set_level(logging.INFO)
    settings = load_settings(bot_token=TOKEN, bot_api_url=emulator.base_url, db=":memory:")
    application = build_application(settings)
    emulator.fail_next("sendMessage", "bad_gateway")
    async with application.bot as bot:
        await bot.send_message(USER, "after a 502")
    assert [c.params["text"] for c in emulator.sent("sendMessage", chat_id=USER)] == ["after a 502"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("not JSON" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
