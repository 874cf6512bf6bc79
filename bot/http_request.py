"""The Bot API connection for sends: PTB's HTTPXRequest, with calls that carry no file posted as one JSON body.

PTB posts every call as a form: each parameter JSON-encoded on its own, then the whole form URL-encoded by httpx
(urllib.parse.quote over every byte of a ~1.5 KB HTML reply and its keyboard). The Bot API takes the same call as
`application/json` (https://core.telegram.org/bots/api#making-requests: "application/json (except for uploading
files)"), which costs one json.dumps. Calls with files keep PTB's multipart path unchanged (issue #14: the bot's
CPU per update on the send path).

Faults are classified exactly as PTB's own do_request does (telegram/request/_httpxrequest.py): a time-out is
TimedOut, any other httpx error a NetworkError, each raised `from` the httpx error, which bot/send_errors.py reads
as `__cause__` to tell "never reached Telegram" from "may have arrived". Status codes (429 RetryAfter, 400, ...) are
handled above do_request by BaseRequest._request_wrapper, as for the form path.

A send whose returned Message nobody reads (`result_unread`: the bot's replies and edits) is answered `True`
instead of the message's JSON once the call succeeded; PTB's Bot._send_message hands a `True` back as it is, so the
message and its keyboard are not parsed into objects only to be dropped (issue #14: ~0.3 ms per reply with ten
buttons). Every failure is raised by BaseRequest.post before that point, exactly as without it.

A reply in a private chat (`reply_call` + `post_prepared`) skips PTB's shortcut plumbing: Message.reply_text ->
Bot.send_message -> _send_message -> ExtBot._insert_defaults (an isinstance walk over the ~20 parameters of every
send, most of them None) -> RequestParameter.from_input for each. Its body is written as PTB writes it (the same
keys in the same order, the Defaults' values as PTB converts them, once per Defaults object) and it goes through
the same rate limiter and the same request.post, so pacing, the inbox's 'sending' mark, retries, error mapping and
result_unread are those of any send (issue #14: ~60 us per reply; tests/test_send_path.py compares the bodies).
Anything that would make PTB's call differ (a group: PTB quotes there; a topic, a business or direct-messages chat;
do_quote in the Defaults; arbitrary callback data) takes PTB's own path.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any

import httpx
from telegram import InlineKeyboardMarkup, Message
from telegram._utils.defaultvalue import DEFAULT_NONE, DefaultValue
from telegram._utils.types import JSONDict, ODVInput
from telegram.constants import ChatType
from telegram.error import NetworkError, TimedOut
from telegram.ext import Defaults, ExtBot
from telegram.request import BaseRequest, HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter

JSON_CONTENT_TYPE = "application/json"
POOL_TIMEOUT_MESSAGE = ("Pool timeout: All connections in the connection pool are occupied. Request was *not* sent "
                        "to Telegram. Consider adjusting the connection pool size or the pool timeout.")


# The Bot API method whose result the current task will not read (set around one call by result_unread).
_unread: ContextVar[str | None] = ContextVar("cardfit_unread_result", default=None)


@contextmanager
def result_unread(method: str) -> Iterator[None]:
    """Around one Bot API call (`method`, e.g. "sendMessage") whose returned object the caller drops: the call
    answers True once Telegram accepted it (see the module's docstring)."""
    token = _unread.set(method)
    try:
        yield
    finally:
        _unread.reset(token)


def json_body(request_data: RequestData) -> bytes:
    """The call's parameters as one JSON object (nested objects as JSON, not as JSON-in-a-string). ASCII, as PTB's
    own json_payload: a lone surrogate in a text is escaped instead of failing to encode."""
    return json.dumps(request_data.parameters, separators=(",", ":")).encode()


class JsonRequest(HTTPXRequest):
    """HTTPXRequest that posts a call without files as `application/json`; with files, PTB's multipart form. A call
    inside result_unread answers True instead of its result."""

    def __init__(self, connection_pool_size: int = 256, **kwargs: Any) -> None:
        super().__init__(connection_pool_size=connection_pool_size, **kwargs)
        # A JSON call waits for one of the pool's connections here, in an asyncio queue, rather than in httpcore's
        # pool: httpcore walks every connection and every waiting request whenever a request starts or ends, so
        # with 64 answers at once and 8 connections (bot/app.py) that walk was the largest single item of the
        # bot's profile (issue #14). At most this many JSON calls are in httpcore at once, and they find a
        # connection free (multipart calls still queue there, as before).
        self._slots = asyncio.Semaphore(connection_pool_size)

    # BaseRequest.post is marked final for typing; overriding it leaves PTB's own body (status codes, parsing, error
    # mapping) untouched and only replaces the parsed result afterwards.
    async def post(  # type: ignore[misc]
        self,
        url: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> JSONDict | list[JSONDict] | bool:
        result = await super().post(url, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout)
        unread = _unread.get()
        if unread is not None and isinstance(result, dict) and url.endswith("/" + unread):
            return True
        return result

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if request_data is None or request_data.contains_files or method != "POST" or self._client.is_closed:
            return await super().do_request(url, method, request_data, read_timeout, write_timeout,
                                            connect_timeout, pool_timeout)
        defaults = self._client.timeout
        timeout = httpx.Timeout(
            connect=defaults.connect if isinstance(connect_timeout, DefaultValue) else connect_timeout,
            read=defaults.read if isinstance(read_timeout, DefaultValue) else read_timeout,
            write=defaults.write if isinstance(write_timeout, DefaultValue) else write_timeout,
            pool=defaults.pool if isinstance(pool_timeout, DefaultValue) else pool_timeout,
        )
        await self._connection_slot(timeout.pool)
        try:
            response = await self._client.request(
                method=method, url=url, timeout=timeout, content=json_body(request_data),
                headers={"User-Agent": self.USER_AGENT, "Content-Type": JSON_CONTENT_TYPE},
            )
        except httpx.TimeoutException as err:
            if isinstance(err, httpx.PoolTimeout):
                raise TimedOut(message=POOL_TIMEOUT_MESSAGE) from err
            raise TimedOut from err
        except httpx.HTTPError as err:  # the base class last, as PTB does
            raise NetworkError(f"httpx.{err.__class__.__name__}: {err}") from err
        finally:
            self._slots.release()
        return response.status_code, response.content

    async def _connection_slot(self, timeout: float | None) -> None:
        """One of the pool's places, waiting at most the pool time-out (None: no limit), as httpx would; a call
        that gets none is what httpx's PoolTimeout is: never sent (bot/send_errors.py reads the cause)."""
        slots = self._slots
        if not slots.locked():
            await slots.acquire()  # a free place: taken at once, no suspension
            return
        try:
            await asyncio.wait_for(slots.acquire(), timeout)
        except TimeoutError:
            raise TimedOut(message=POOL_TIMEOUT_MESSAGE) from httpx.PoolTimeout(POOL_TIMEOUT_MESSAGE)


# The parameters of a plain sendMessage that ExtBot fills from its Defaults, in the (alphabetical) order PTB's
# Bot._send_message adds them between `text` and `reply_markup`.
_DEFAULTED = ("disable_notification", "link_preview_options", "parse_mode", "protect_content")
_DEFAULTS_WIRE: dict[Defaults | None, JSONDict] = {}


def _defaults_wire(bot: ExtBot[Any]) -> JSONDict:
    """What the bot's Defaults put into a plain send, converted as PTB converts them: computed by PTB itself
    (ExtBot._insert_defaults, RequestParameter.from_input), once per Defaults object (immutable)."""
    wire = _DEFAULTS_WIRE.get(bot.defaults)
    if wire is None:
        data: JSONDict = dict.fromkeys(_DEFAULTED, DEFAULT_NONE)
        bot._insert_defaults(data)
        wire = {name: RequestParameter.from_input(name, value).value for name, value in data.items()
                if value is not None}
        if len(_DEFAULTS_WIRE) >= 8:  # one Defaults per application; bounded for tests that build many
            _DEFAULTS_WIRE.clear()
        _DEFAULTS_WIRE[bot.defaults] = wire
    return wire


def reply_call(message: Message, text: str, reply_markup: InlineKeyboardMarkup | None) -> JSONDict | None:
    """The sendMessage parameters, in their wire form, that `message.reply_text(text, reply_markup=...)` would
    post; None when that call could carry more than this writes (see the module's docstring)."""
    bot = message.get_bot()
    if (not isinstance(bot, ExtBot) or bot.callback_data_cache is not None or message.chat.type != ChatType.PRIVATE
            or message.is_topic_message or message.business_connection_id is not None
            or message.direct_messages_topic is not None or (bot.defaults is not None and bot.defaults.do_quote)):
        return None
    data: JSONDict = {"chat_id": message.chat_id, "text": text, **_defaults_wire(bot)}
    if reply_markup is not None:
        data["reply_markup"] = reply_markup.to_dict()
    return data


async def post_prepared(bot: ExtBot[Any], endpoint: str, data: JSONDict) -> Any:
    """ExtBot._do_post for parameters already in their wire form (reply_call): through the bot's rate limiter,
    then Bot._do_post's request.post, without converting each parameter again."""
    limiter = bot.rate_limiter
    if limiter is None:
        return await _post_prepared(bot, endpoint, data)
    return await limiter.process_request(callback=partial(_post_prepared, bot), args=(endpoint, data), kwargs={},
                                         endpoint=endpoint, data=data, rate_limit_args=None)


async def _post_prepared(bot: ExtBot[Any], endpoint: str, data: JSONDict, **timeouts: Any) -> Any:
    parameters = [RequestParameter(name=name, value=value, input_files=None) for name, value in data.items()]
    return await bot.request.post(url=f"{bot.base_url}/{endpoint}", request_data=RequestData(parameters),
                                  **timeouts)
