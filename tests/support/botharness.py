"""Offline harness for handler tests: the real Application over a recording fake request layer.

Modelled on PTB's own `OfflineRequest`: every Bot API call is recorded with its decoded parameters and answered
with a plausible Bot API result; tests can script failures (429 retry_after, 403, 400, network errors) per method.
"""
from __future__ import annotations

import itertools
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml
from telegram import Update
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.config import Settings, load_settings
from bot.telegram.app import build_application

BOT_ID = 777000
BOT_USERNAME = "CardfitTestBot"
TOKEN = f"{BOT_ID}:TEST-token-not-real-0123456789"
BUNDLED_CATALOG = Path(__file__).resolve().parents[2] / "catalog" / "data" / "gpurenthub.yaml"


def harness_settings(tmp_path: Path, rate_limit_messages: int) -> Settings:
    """The bot on the bundled catalog with a fresh SQLite store under `tmp_path`, a top-up secret, and a flood limit
    of `rate_limit_messages` a minute (a test module's own: how many questions its users send)."""
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="topup-key-for-tests",
                         rate_limit_messages=rate_limit_messages, rate_limit_window_s=60)


def edit_catalog(path: Path, **prices: float) -> None:
    """Reprice cards of a catalog file in place (card id -> monthly USD), as an operator's edit does."""
    data = yaml.safe_load(path.read_text())
    for card in data["cards"]:
        if card["id"] in prices:
            card["price_monthly_usd"] = prices[card["id"]]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def copied_catalog_settings(tmp_path: Path) -> Settings:
    """The bot on a copy of the bundled GPU Rent Hub catalog and a fresh SQLite store under `tmp_path`."""
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED_CATALOG, path)
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), catalog=str(path),
                         topup_secret="topup-key-for-tests", rate_limit_messages=50)
NetworkErrorT = TypeVar("NetworkErrorT", bound=NetworkError)


@dataclass
class Call:
    method: str
    params: dict[str, Any]


@dataclass
class RecordingRequest(BaseRequest):
    calls: list[Call] = field(default_factory=list)
    failures: dict[str, list[tuple[int, dict] | Exception]] = field(default_factory=dict)
    _message_ids: itertools.count = field(default_factory=lambda: itertools.count(1000))

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    def fail(self, method: str, status: int | None = None, description: str = "", retry_after: int | None = None,
             exception: Exception | None = None, times: int = 1) -> None:
        """Make the next `times` calls of `method` fail like Telegram would."""
        for _ in range(times):
            if exception is not None:
                self.failures.setdefault(method, []).append(exception)
            else:
                body = {"ok": False, "error_code": status, "description": description}
                if retry_after is not None:
                    body["parameters"] = {"retry_after": retry_after}
                self.failures.setdefault(method, []).append((status, body))

    def sent(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout=None, write_timeout=None, connect_timeout=None, pool_timeout=None):
        api_method = url.rsplit("/", 1)[-1]
        params = {}
        if request_data is not None:
            for key, value in request_data.json_parameters.items():
                try:
                    params[key] = json.loads(value)
                except (TypeError, ValueError):
                    params[key] = value
            for key, (_, content, _) in request_data.multipart_data.items():  # an upload (sendPhoto): its bytes
                params[key] = content
        queued = self.failures.get(api_method)
        if queued:
            failure = queued.pop(0)
            self.calls.append(Call(api_method + "!failed", params))
            if isinstance(failure, Exception):
                raise failure
            status, body = failure
            return status, json.dumps(body).encode()
        self.calls.append(Call(api_method, params))
        return 200, json.dumps({"ok": True, "result": self._result(api_method, params)}).encode()

    def _result(self, method: str, params: dict) -> Any:
        if method == "getMe":
            return {"id": BOT_ID, "is_bot": True, "first_name": "Cardfit", "username": BOT_USERNAME,
                    "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": True}
        if method in ("sendMessage", "editMessageText", "sendPhoto"):
            message = {"message_id": params.get("message_id") or next(self._message_ids), "date": int(time.time()),
                       "chat": {"id": params.get("chat_id", 0), "type": "private"}, "text": params.get("text", ""),
                       "from": {"id": BOT_ID, "is_bot": True, "first_name": "Cardfit"}}
            if method == "sendPhoto":
                message.pop("text")
                message["photo"] = [{"file_id": "photo-1", "file_unique_id": "p1", "width": 900, "height": 480}]
                message["caption"] = params.get("caption", "")
            if "reply_markup" in params:
                message["reply_markup"] = params["reply_markup"]
            return message
        return True


class Harness:
    """Build, start and drive the real Application; make updates the way Telegram sends them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.request = RecordingRequest()
        self.app = build_application(settings, request=self.request, get_updates_request=RecordingRequest())
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1)

    async def __aenter__(self) -> Harness:
        await self.app.initialize()
        await self.app.post_init(self.app)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.app.post_shutdown(self.app)
        await self.app.shutdown()

    def user(self, user_id: int, language_code: str = "en") -> dict:
        return {"id": user_id, "is_bot": False, "first_name": f"User{user_id}", "language_code": language_code}

    async def send(self, user_id: int, text: str, *, language_code: str = "en", chat_type: str = "private",
                   chat_id: int | None = None, reply_to_bot: bool = False,
                   reply_markup: dict | None = None, update_id: int | None = None) -> Update:
        """`reply_to_bot`: the message replies to one of the bot's; `reply_markup`: that message's keyboard
        (as the bot sent it), which carries the answer's request; `update_id`: the update's id (default: the
        next one), e.g. an earlier one to handle an update again as after a crash."""
        entities = []
        if text.startswith("/"):
            entities.append({"type": "bot_command", "offset": 0, "length": len(text.split()[0])})
        mention = f"@{BOT_USERNAME}"
        if mention.lower() in text.lower():
            entities.append({"type": "mention", "offset": text.lower().index(mention.lower()), "length": len(mention)})
        message = {"message_id": next(self._message_ids), "date": int(time.time()),
                   "chat": {"id": chat_id or user_id, "type": chat_type},
                   "from": self.user(user_id, language_code), "text": text}
        if entities:
            message["entities"] = entities
        if reply_to_bot:
            message["reply_to_message"] = {"message_id": 1, "date": int(time.time()),
                                           "chat": message["chat"], "text": "earlier answer",
                                           "from": {"id": BOT_ID, "is_bot": True, "first_name": "Cardfit"}}
            if reply_markup is not None:
                message["reply_to_message"]["reply_markup"] = reply_markup
        if update_id is None:
            update_id = next(self._update_ids)
        return await self._process({"update_id": update_id, "message": message})

    async def press(self, user_id: int, data: str, *, message_text: str = "answer", message_id: int = 1000,
                    language_code: str = "en", chat_type: str = "private", chat_id: int | None = None) -> Update:
        query = {"id": str(next(self._update_ids)), "from": self.user(user_id, language_code),
                 "chat_instance": "ci", "data": data,
                 "message": {"message_id": message_id, "date": int(time.time()),
                             "chat": {"id": chat_id or user_id, "type": chat_type}, "text": message_text,
                             "from": {"id": BOT_ID, "is_bot": True, "first_name": "Cardfit"}}}
        return await self._process({"update_id": next(self._update_ids), "callback_query": query})

    async def inline(self, user_id: int, query: str, *, language_code: str = "en",
                     chat_type: str | None = None) -> Update:
        inline_query = {"id": str(next(self._update_ids)), "from": self.user(user_id, language_code),
                        "query": query, "offset": ""}
        if chat_type is not None:
            inline_query["chat_type"] = chat_type
        return await self._process({"update_id": next(self._update_ids), "inline_query": inline_query})

    async def _process(self, data: dict) -> Update:
        update = Update.de_json(data, self.app.bot)
        await self.app.process_update(update)
        return update

    def replies(self, chat_id: int | None = None) -> list[dict]:
        return [c.params for c in self.request.sent("sendMessage")
                if chat_id is None or c.params.get("chat_id") == chat_id]

    def last_text(self, chat_id: int | None = None) -> str:
        return self.replies(chat_id)[-1]["text"]

    def last_plain(self, chat_id: int) -> str:
        """The last reply to `chat_id` without its HTML tags."""
        return re.sub(r"<[^>]+>", "", self.last_text(chat_id)).replace("&#x27;", "'")


def network_error() -> NetworkError:
    """What PTB's HTTPXRequest raises when the connection could not be made: the request never left."""
    return _wrapped(NetworkError("httpx.ConnectError: connection refused"), httpx.ConnectError("refused"))


def read_timeout() -> TimedOut:
    """What PTB raises when the request was written and no answer came in time: it may have taken effect."""
    return _wrapped(TimedOut(), httpx.ReadTimeout("timed out"))


def lost_response() -> NetworkError:
    """The connection closed after the request was written, before the answer: it may have taken effect."""
    return _wrapped(NetworkError("httpx.RemoteProtocolError: Server disconnected without sending a response."),
                    httpx.RemoteProtocolError("Server disconnected without sending a response."))


def _wrapped(error: NetworkErrorT, cause: BaseException) -> NetworkErrorT:
    error.__cause__ = cause  # as `raise ... from err` in telegram/request/_httpxrequest.py
    return error


def buttons(params: dict) -> list[dict]:
    """The inline keyboard's buttons of a sent message's parameters, row after row."""
    return [b for row in (params.get("reply_markup") or {}).get("inline_keyboard", []) for b in row]
