"""The Bot API connection for sends: calls that carry no file posted as one JSON body over aiohttp's client; calls
with files through PTB's HTTPXRequest, unchanged.

PTB posts every call as a form: each parameter JSON-encoded on its own, then the whole form URL-encoded by httpx
(urllib.parse.quote over every byte of a ~1.5 KB HTML reply and its keyboard). The Bot API takes the same call as
`application/json` (https://core.telegram.org/bots/api#making-requests: "application/json (except for uploading
files)"), which costs one json.dumps. Calls with files keep PTB's multipart path unchanged (issue #14: the bot's
CPU per update on the send path).

Why aiohttp for those calls (issue #14): httpx + httpcore + anyio + h11 spent about 2.1 ms of CPU on each 1.7 KB
JSON POST to the emulator on this machine (64 at once over 8 connections), aiohttp's client about 0.4 ms for the
same posts (its HTTP parser is compiled; no anyio layer, no pool walk per request): the largest item of the bot's
CPU per update, larger than everything Cardfit itself does. aiohttp is already a dependency (webhook mode's
server, bot/telegram/webhook.py). The session is opened by initialize() (PTB calls it from Bot.initialize), or by the
first
call, and closed by shutdown(); it keeps httpx's habits where they matter: the environment's proxy (HTTP_PROXY,
HTTPS_PROXY, NO_PROXY, looked up once per origin: aiohttp's own trust_env reads them and ~/.netrc again on a worker
thread for every request, ~0.8 ms of CPU each), no redirects followed, idle connections kept 5 s, no cookies kept,
the same User-Agent, at most `connection_pool_size` connections. `proxy=` and `httpx_kwargs` given to this class
reach httpx's client only, so only the calls with files (Cardfit passes neither). An aiohttp error's text is
written into the NetworkError with the bot token taken out (some quote the whole URL, and bot/operators/alerts.py keeps
why
a send failed).

Faults are classified as PTB's own do_request does (telegram/request/_httpxrequest.py): a time-out is TimedOut,
any other transport error a NetworkError, each raised `from` the transport's error, which bot/operators/send_errors.py
reads as `__cause__` to tell "never reached Telegram" (no connection could be made: aiohttp's ClientConnectorError
and ConnectionTimeoutError, as httpx's ConnectError and ConnectTimeout; no free connection: PoolTimeout) from "may
have arrived" (anything after the request was written). The time-outs map to aiohttp's: connect to connect (the
whole set-up, the name lookup included, as httpx's) and sock_connect, read to sock_read (from the end of the write
to the answer, and between its chunks); aiohttp has no write time-out, and needs none here: a body of a few KB goes
into the socket's buffer at once, and a peer that never reads it never answers either, which the read time-out
catches. Status codes (429 RetryAfter, 400, ...) are handled above do_request by BaseRequest._request_wrapper, as
for the form path.

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
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any

import aiohttp
import httpx
from aiohttp.helpers import get_env_proxy_for_url
from telegram import InlineKeyboardMarkup, Message
from telegram._utils.defaultvalue import DEFAULT_NONE, DefaultValue
from telegram._utils.types import JSONDict, ODVInput
from telegram.constants import ChatType
from telegram.error import NetworkError, TelegramError, TimedOut
from telegram.ext import Defaults, ExtBot
from telegram.request import BaseRequest, HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter
from yarl import URL

JSON_CONTENT_TYPE = "application/json"
_JSON_HEADERS = {"Content-Type": JSON_CONTENT_TYPE}
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


# The bot token as it appears in a Bot API URL (https://api.telegram.org/bot<token>/<method>): some aiohttp errors
# quote the whole URL, and a NetworkError's text is logged and stored (bot/operators/alerts.py keeps why a send failed).
_TOKEN_IN_URL = re.compile(r"bot\d+:[A-Za-z0-9_-]+")


def _without_token(text: str) -> str:
    return _TOKEN_IN_URL.sub("bot<token>", text)


class _TokenFilter(logging.Filter):
    """httpx logs every request's URL at INFO ("HTTP Request: POST https://api.telegram.org/bot<token>/sendPhoto"):
    the calls with files still go through it. `cardfit bot` turns that logger down and redacts every record
    (bot/cli/main.py), but anything else that runs the Application (a test, a benchmark, an embedding) would log the
    token; this takes it out of httpx's records wherever they go."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _TOKEN_IN_URL.search(message):
            record.msg, record.args = _without_token(message), None
        return True


logging.getLogger("httpx").addFilter(_TokenFilter())
log = logging.getLogger(__name__)


def json_body(request_data: RequestData) -> bytes:
    """The call's parameters as one JSON object (nested objects as JSON, not as JSON-in-a-string). ASCII, as PTB's
    own json_payload: a lone surrogate in a text is escaped instead of failing to encode."""
    return json.dumps(request_data.parameters, separators=(",", ":")).encode()


class JsonRequest(HTTPXRequest):
    """HTTPXRequest that posts a call without files as `application/json` through aiohttp's client; with files,
    PTB's multipart form through httpx. A call inside result_unread answers True instead of its result.
    `session_kwargs` go to aiohttp.ClientSession (as `httpx_kwargs` go to httpx's client: tests trace with them)."""

    def __init__(self, connection_pool_size: int = 256, session_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(connection_pool_size=connection_pool_size, **kwargs)
        self._pool_size = connection_pool_size
        self._session_kwargs = dict(session_kwargs or {})
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        # The environment's proxy for each origin (scheme://host:port), looked up once: aiohttp's own trust_env
        # reads ~/.netrc and the proxy variables again on a worker thread for every request (~0.8 ms of CPU).
        self._proxies: dict[str, tuple[Any, Any]] = {}
        # A JSON call waits for one of the pool's connections here, in an asyncio queue: the pool time-out and its
        # PoolTimeout cause ("never sent", bot/operators/send_errors.py) stay those of httpx, and aiohttp's connector,
        # with
        # as many connections, never makes a call wait (issue #14: httpcore's own wait walked every waiting
        # request whenever one started or ended).
        self._slots = asyncio.Semaphore(connection_pool_size)

    async def initialize(self) -> None:
        await super().initialize()
        self._open_session()

    async def shutdown(self) -> None:
        # httpx's client first: it is marked closed before its first await, so a call that comes while the session
        # closes takes PTB's path (and is refused as before) instead of opening a new session nobody closes.
        await super().shutdown()
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    def _open_session(self) -> aiohttp.ClientSession:
        session = self._session
        loop = asyncio.get_running_loop()
        if session is None or session.closed or self._session_loop is not loop:
            # keepalive_timeout: httpx's 5 s (aiohttp keeps an idle connection 15 s, and a server's idle close
            # racing a send loses that send: it may have arrived, so it is not repeated).
            connector = aiohttp.TCPConnector(limit=self._pool_size, limit_per_host=0, keepalive_timeout=5)
            session = self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                headers={"User-Agent": self.USER_AGENT}, **self._session_kwargs)
            self._session_loop = loop
        return session

    def _proxy(self, url: str) -> tuple[Any, Any]:
        """(proxy URL, its credentials) from the environment for `url`'s origin, as httpx's trust_env reads
        HTTP_PROXY / HTTPS_PROXY / NO_PROXY; (None, None) when none applies."""
        end = url.find("/", url.find("//") + 2)
        origin = url if end < 0 else url[:end]
        found = self._proxies.get(origin)
        if found is None:
            try:
                found = get_env_proxy_for_url(URL(origin))
            except LookupError:
                found = (None, None)
            self._proxies[origin] = found
        return found

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        """PTB's (telegram/request/_baserequest.py), except that an answer that is not JSON (nginx's HTML page for a
        502 in front of the Bot API) is one warning line instead of an ERROR with a traceback for every 502: the
        caller already handles it (a 502 is retried, bot/telegram/ptb.py), and operators page on ERRORs."""
        text = payload.decode("utf-8", "replace")
        try:
            data: JSONDict = json.loads(text)
        except ValueError as exc:
            log.warning("the Bot API answered %d bytes that are not JSON: %.120r", len(payload), text)
            raise TelegramError("Invalid server response") from exc
        return data

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
        defaults = self._client.timeout  # PTB's time-outs, as HTTPXRequest keeps them
        connect = defaults.connect if isinstance(connect_timeout, DefaultValue) else connect_timeout
        # connect bounds the whole connection set-up (the DNS lookup included, as httpx's connect time-out does);
        # sock_connect each attempt; the pool wait is ours (_connection_slot), so the connector never waits.
        timeout = aiohttp.ClientTimeout(
            connect=connect, sock_connect=connect,
            sock_read=defaults.read if isinstance(read_timeout, DefaultValue) else read_timeout)
        session = self._open_session()
        proxy, proxy_auth = self._proxy(url)
        await self._connection_slot(defaults.pool if isinstance(pool_timeout, DefaultValue) else pool_timeout)
        try:
            # allow_redirects=False: as httpx (PTB's client); a redirect is an answer, not a second POST.
            async with session.post(url, data=json_body(request_data), timeout=timeout, headers=_JSON_HEADERS,
                                    allow_redirects=False, proxy=proxy, proxy_auth=proxy_auth) as response:
                return response.status, await response.read()
        except TimeoutError as err:  # aiohttp's ConnectionTimeoutError and SocketTimeoutError are TimeoutErrors
            raise TimedOut from err
        except aiohttp.ClientError as err:
            raise NetworkError(f"aiohttp.{err.__class__.__name__}: {_without_token(str(err))}") from err
        finally:
            self._slots.release()

    async def _connection_slot(self, timeout: float | None) -> None:
        """One of the pool's places, waiting at most the pool time-out (None: no limit), as httpx would; a call
        that gets none is what httpx's PoolTimeout is: never sent (bot/operators/send_errors.py reads the cause)."""
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
