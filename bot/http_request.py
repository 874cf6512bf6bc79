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
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import JSONDict, ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData

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
        return response.status_code, response.content
