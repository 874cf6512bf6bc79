"""In-process fake Telegram Bot API (aiohttp, 127.0.0.1 only) for end-to-end tests and benchmarks.

Point a real ``telegram.Bot`` / ``Application`` at it::

    async with BotApiEmulator(token="123456:TEST-TOKEN-not-real") as emu:
        bot = telegram.Bot(emu.token, base_url=emu.base_url, base_file_url=emu.base_file_url)
        emu.push_message(42, "/start")            # a user writes to the bot
        [reply] = await emu.wait_for("sendMessage")  # what the bot answered

What it models (and why):

* Request decoding the way the real server does it: PTB 22 sends every request as
  ``application/x-www-form-urlencoded`` (multipart when uploading files) where plain
  strings are sent raw and everything else (ints, bools, lists, objects) is JSON-encoded.
  A raw string field such as ``text="[1]"`` therefore must NOT be JSON-decoded, so decoding
  is per field name (see ``_JSON_FIELDS`` etc.), like the typed parser of the real server.
* Response shapes are real Bot API objects so PTB's ``de_json`` accepts them.
* Error texts/codes are copied from the real API where they matter to callers
  (``message is not modified``, ``message to edit not found``, 429 ``retry_after``, 403 blocked).
* Long polling, offset confirmation and the single-poller rule (409 Conflict) behave like
  Telegram so Updater start/stop races show up here and not in production.

Everything is single-threaded on the event loop that called :meth:`BotApiEmulator.start`;
the ``push_*`` helpers are plain (sync) methods and must be called from that loop.
The server only ever binds 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import copy
import html
import itertools
import json
import re
import socket
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.web_request import BaseRequest

__all__ = ["FAULT_KINDS", "HOST", "BotApiEmulator", "Call", "Stats"]

#: The only address the emulator listens on. Never make this configurable: tests must not
#: open anything reachable from outside the machine.
HOST = "127.0.0.1"

#: Kinds accepted by :meth:`BotApiEmulator.fail_next`.
#: ``lost_response`` is an extra: the call DOES take effect, then the connection is dropped
#: (the classic "did my message go out?" case that causes duplicates on blind retries).
FAULT_KINDS = ("retry_after", "bad_gateway", "drop", "forbidden", "lost_response")

# What nginx in front of api.telegram.org answers when the backend is down. PTB must treat the
# non-JSON body as a NetworkError, which is exactly what we want to exercise.
_NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n"
    b"</body>\r\n</html>\r\n"
)

_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
_BLOCKED = "Forbidden: bot was blocked by the user"
_QUERY_TOO_OLD = (
    "Bad Request: query is too old and response timeout expired or query ID is invalid"
)
_POLL_CONFLICT = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)
_WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)

# Real Bot API method names (from PTB 22.8's Bot class plus `close`). Names outside this list get
# 404 "Not Found" like the real server; names inside it that we do not emulate get `true`.
_API_METHODS = """
addStickerToSet answerCallbackQuery answerGuestQuery answerInlineQuery answerPreCheckoutQuery
answerShippingQuery answerWebAppQuery approveChatJoinRequest approveSuggestedPost banChatMember
banChatSenderChat close closeForumTopic closeGeneralForumTopic convertGiftToStars copyMessage
copyMessages createChatInviteLink createChatSubscriptionInviteLink createForumTopic
createInvoiceLink createNewStickerSet declineChatJoinRequest declineSuggestedPost
deleteAllMessageReactions deleteBusinessMessages deleteChatPhoto deleteChatStickerSet
deleteForumTopic deleteMessage deleteMessageReaction deleteMessages deleteMyCommands
deleteStickerFromSet deleteStickerSet deleteStory deleteWebhook editChatInviteLink
editChatSubscriptionInviteLink editForumTopic editGeneralForumTopic editMessageCaption
editMessageChecklist editMessageLiveLocation editMessageMedia editMessageReplyMarkup
editMessageText editStory editUserStarSubscription exportChatInviteLink forwardMessage
forwardMessages getAvailableGifts getBusinessAccountGifts getBusinessAccountStarBalance
getBusinessConnection getChat getChatAdministrators getChatGifts getChatMember
getChatMemberCount getChatMenuButton getCustomEmojiStickers getFile getForumTopicIconStickers
getGameHighScores getManagedBotAccessSettings getManagedBotToken getMe getMyCommands
getMyDefaultAdministratorRights getMyDescription getMyName getMyShortDescription
getMyStarBalance getStarTransactions getStickerSet getUpdates getUserChatBoosts getUserGifts
getUserPersonalChatMessages getUserProfileAudios getUserProfilePhotos getWebhookInfo
giftPremiumSubscription hideGeneralForumTopic leaveChat logOut pinChatMessage postStory
promoteChatMember readBusinessMessage refundStarPayment removeBusinessAccountProfilePhoto
removeChatVerification removeMyProfilePhoto removeUserVerification reopenForumTopic
reopenGeneralForumTopic replaceManagedBotToken replaceStickerInSet repostStory
restrictChatMember revokeChatInviteLink savePreparedInlineMessage savePreparedKeyboardButton
sendAnimation sendAudio sendChatAction sendChecklist sendContact sendDice sendDocument sendGame
sendGift sendInvoice sendLivePhoto sendLocation sendMediaGroup sendMessage sendMessageDraft
sendPaidMedia sendPhoto sendPoll sendSticker sendVenue sendVideo sendVideoNote sendVoice
setBusinessAccountBio setBusinessAccountGiftSettings setBusinessAccountName
setBusinessAccountProfilePhoto setBusinessAccountUsername setChatAdministratorCustomTitle
setChatDescription setChatMemberTag setChatMenuButton setChatPermissions setChatPhoto
setChatStickerSet setChatTitle setCustomEmojiStickerSetThumbnail setGameScore
setManagedBotAccessSettings setMessageReaction setMyCommands setMyDefaultAdministratorRights
setMyDescription setMyName setMyProfilePhoto setMyShortDescription setPassportDataErrors
setStickerEmojiList setStickerKeywords setStickerMaskPosition setStickerPositionInSet
setStickerSetThumbnail setStickerSetTitle setUserEmojiStatus setWebhook stopMessageLiveLocation
stopPoll transferBusinessAccountStars transferGift unbanChatMember unbanChatSenderChat
unhideGeneralForumTopic unpinAllChatMessages unpinAllForumTopicMessages
unpinAllGeneralForumTopicMessages unpinChatMessage upgradeGift uploadStickerFile verifyChat
verifyUser
""".split()
_CANON = {m.lower(): m for m in _API_METHODS}

# send* methods that return True rather than a Message; every other send* gets a generic Message
# because PTB would crash de_json-ing `true` where it expects a Message.
_SEND_RETURNING_TRUE = frozenset({"sendchataction", "sendmessagedraft", "sendgift"})

# --- parameter decoding ----------------------------------------------------------------------
# Fields whose value is a JSON object/array. Only decoded when the value looks like JSON, because a
# few names (e.g. `media`) are a JSON object for one method and a plain string for another.
_JSON_FIELDS = frozenset(
    """reply_markup results commands scope entities caption_entities allowed_updates
    reply_parameters link_preview_options media options prices explanation_entities
    question_entities button menu_button rights permissions message_ids reaction
    shipping_options errors input_message_content stickers keywords emoji_list mask_position
    checklist text_entities suggested_post_parameters accepted_gift_types result
    input_sticker""".split()
)
_INT_FIELDS = frozenset(
    """message_id user_id offset limit message_thread_id reply_to_message_id cache_time
    until_date duration width height length max_connections expire_date member_limit
    open_period close_date correct_option_id live_period heading proximity_alert_radius
    sender_chat_id score icon_color direct_messages_topic_id star_count
    subscription_period subscription_price""".split()
)
_FLOAT_FIELDS = frozenset({"timeout", "latitude", "longitude", "horizontal_accuracy"})
_BOOL_FIELDS = frozenset(
    """disable_notification protect_content show_alert is_personal drop_pending_updates
    disable_web_page_preview allow_sending_without_reply has_spoiler supports_streaming
    disable_content_type_detection is_anonymous allows_multiple_answers is_closed for_channels
    revoke_messages only_if_banned allow_paid_broadcast show_caption_above_media
    creates_join_request disable_edit_message is_big""".split()
)
# chat ids are ints, or "@channelusername" strings.
_CHAT_ID_FIELDS = frozenset({"chat_id", "from_chat_id"})
_INT_RE = re.compile(r"-?\d+\Z")

# Updates Telegram does not send unless explicitly listed in allowed_updates.
_NOT_DEFAULT_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})

_COMMAND_RE = re.compile(r"/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{1,64})?(?![A-Za-z0-9_@])")
_MENTION_RE = re.compile(r"(?<![A-Za-z0-9_@/])@[A-Za-z0-9_]{4,32}(?![A-Za-z0-9_])")
_BOT_COMMAND_NAME_RE = re.compile(r"[a-z0-9_]{1,32}\Z")
_HTML_TAG_RE = re.compile(r"<[^>]*>")


def _decode_value(name: str, value: Any) -> Any:
    """Turn one wire value into the Python value the real server would see."""
    if not isinstance(value, str):
        return value  # already typed (JSON request body) or an uploaded file
    if name in _JSON_FIELDS:
        if value[:1] in ("{", "["):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value
    if name in _CHAT_ID_FIELDS:
        return int(value) if _INT_RE.match(value) else value
    if name in _INT_FIELDS:
        return int(value) if _INT_RE.match(value) else value
    if name in _FLOAT_FIELDS:
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number
    if name in _BOOL_FIELDS:
        low = value.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0", ""):
            return False
    return value


def _utf16_len(text: str) -> int:
    # Telegram measures entity offsets/lengths in UTF-16 code units; PTB relies on that.
    return len(text.encode("utf-16-le")) // 2


def _visible_length(text: str, parse_mode: str | None) -> int:
    """Approximate length after Telegram strips markup (only HTML is handled)."""
    if parse_mode and parse_mode.upper() == "HTML":
        text = html.unescape(_HTML_TAG_RE.sub("", text))
    return _utf16_len(text)


def _update_type(update: dict[str, Any]) -> str:
    for key in update:
        if key != "update_id":
            return key
    return ""


class _ApiError(Exception):
    """An error answer of the Bot API; raised by method handlers, turned into JSON by _handle."""

    def __init__(self, code: int, description: str, kind: str = "bad_request", **parameters: Any):
        super().__init__(description)
        self.code = code
        self.description = description
        self.kind = kind
        self.parameters = parameters


@dataclass(slots=True)
class Call:
    """One request the emulator received, with decoded params.

    ``failed`` is None when the call took effect; otherwise a short reason: an injected fault
    kind ("retry_after", "bad_gateway", "drop", "forbidden"), "rate_limited", "blocked",
    "bad_request", "conflict", "unauthorized" or "not_found".
    ``response_lost`` is True for the ``lost_response`` fault: took effect, client saw no answer.
    """

    method: str
    params: dict[str, Any]
    time: float  # time.monotonic() when the request arrived
    failed: str | None = None
    status: int = 200
    result: Any = None  # the `result` returned on success
    error: str | None = None  # the `description` returned on failure
    response_lost: bool = False
    seq: int = -1  # index in BotApiEmulator.calls

    @property
    def ok(self) -> bool:
        return self.failed is None

    @property
    def chat_id(self) -> Any:
        return self.params.get("chat_id")

    @property
    def text(self) -> str | None:
        return self.params.get("text")

    @property
    def reply_markup(self) -> Any:
        return self.params.get("reply_markup")

    def short(self) -> str:
        """One-line description for error messages."""
        status = "ok" if self.failed is None else f"FAILED({self.failed})"
        params = {k: v for k, v in self.params.items() if k != "reply_markup"}
        text = repr(params)
        if len(text) > 160:
            text = text[:157] + "..."
        return f"#{self.seq} {self.method} {status} {text}"


@dataclass
class Stats:
    """Counters for benchmarks. Subscriptable (``stats["delivered"]``) as well as attributes."""

    requests: int = 0  # every HTTP request to /bot<token>/...
    delivered: int = 0  # messages created by sendMessage and other send* methods
    edited: int = 0  # successful editMessageText / editMessageReplyMarkup
    rejected_429: int = 0  # 429 answers (rate limit mode + injected retry_after)
    forbidden: int = 0  # 403 answers (blocked users + injected)
    bad_request: int = 0  # natural 400 answers (not modified, not found, ...)
    injected: int = 0  # faults consumed from fail_next()
    duplicates: int = 0  # deliveries whose (chat_id, text) had already been delivered
    by_method: Counter = field(default_factory=Counter)  # successful calls per method

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["by_method"] = dict(self.by_method)
        return data


@dataclass(slots=True)
class _Fault:
    kind: str
    retry_after: int


@dataclass(slots=True)
class _Waiter:
    predicate: Callable[[Call], bool] | None
    count: int
    include_failed: bool
    since: int
    future: asyncio.Future
    matched: list[Call] = field(default_factory=list)


@dataclass(slots=True)
class _RateLimit:
    per_second: int | None
    per_chat_per_second: int | None
    methods: frozenset[str]
    retry_after: int
    window: deque = field(default_factory=deque)
    chat_windows: dict[Any, deque] = field(default_factory=dict)


class BotApiEmulator:
    """A fake api.telegram.org. See the module docstring for usage."""

    def __init__(
        self,
        token: str = "123456:TEST-TOKEN-not-real",
        *,
        port: int = 0,
        bot_username: str = "cardfit_test_bot",
        bot_first_name: str = "Cardfit Test",
        strict_chats: bool = False,
        latency: float = 0.0,
        first_update_id: int = 1,
    ) -> None:
        """
        Args:
            token: the only token accepted; others get 401 Unauthorized.
            port: 0 picks a free ephemeral port (the default; use it).
            strict_chats: if True, sending to a chat no user has written from answers
                400 "chat not found" like Telegram; if False such chats are created on the fly
                (convenient for benchmarks that fan out to many chat ids).
            latency: seconds added to every request, to mimic the real network round trip in
                benchmarks (real Bot API calls take ~50-150 ms).
        """
        self.token = token
        self.port = port
        self.strict_chats = strict_chats
        self.latency = latency
        bot_id_part = token.split(":", 1)[0]
        self.bot_id = int(bot_id_part) if bot_id_part.isdigit() else 1
        self.bot_user: dict[str, Any] = {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": bot_first_name,
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": True,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

        # --- recording (append-only list + indexes, so filters never rescan everything) ---
        self.calls: list[Call] = []
        self._by_method: dict[str, list[Call]] = {}
        self._by_chat: dict[Any, list[Call]] = {}
        self._waiters: dict[str, list[_Waiter]] = {}
        self.stats = Stats()

        # --- Telegram-side state ---
        self._users: dict[int, dict[str, Any]] = {}
        self._chats: dict[Any, dict[str, Any]] = {}
        self._messages: dict[Any, dict[int, dict[str, Any]]] = {}
        self._last_message_id: dict[Any, int] = {}
        self._inline_messages: dict[str, dict[str, Any]] = {}
        self._open_callback_queries: set[str] = set()
        self._open_inline_queries: set[str] = set()
        self._delivered_keys: set[tuple[Any, str]] = set()
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        # (kind, language_code) -> text; kind is description / short_description / name.
        self.descriptions: dict[tuple[str, str], str] = {("name", ""): bot_first_name}
        self.blocked: set[Any] = set()
        self._files: dict[str, dict[str, Any]] = {}
        self._file_bytes: dict[str, bytes] = {}
        self.webhook_url = ""

        # --- updates / long polling ---
        self._pending: deque[dict[str, Any]] = deque()
        self._next_update_id = first_update_id
        self._allowed_updates: frozenset[str] | None = None  # None = Telegram's default set
        self._update_event = asyncio.Event()
        self._poll_generation = 0
        # getUpdates requests that reached the method (a call is recorded only once answered: see wait_polling).
        self.polls_begun = 0
        self._poll_begun = asyncio.Event()
        self._ids = itertools.count(1)

        # --- fault injection ---
        self._faults: dict[str, deque[_Fault]] = {}
        self._rate: _RateLimit | None = None

        self._runner: web.ServerRunner | None = None
        self._closing = False

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        """Give this to PTB as ``base_url``; PTB appends the token and ``/<method>``."""
        self._require_started()
        return f"http://{HOST}:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        self._require_started()
        return f"http://{HOST}:{self.port}/file/bot"

    def _require_started(self) -> None:
        if self._runner is None:
            raise RuntimeError("BotApiEmulator is not started; await emu.start() first")

    async def start(self) -> BotApiEmulator:
        if self._runner is not None:
            raise RuntimeError("BotApiEmulator already started")
        self._closing = False
        # Bind the socket ourselves so the listen address is provably 127.0.0.1 and the
        # ephemeral port is known without poking at aiohttp internals.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((HOST, self.port))
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        server = web.Server(
            self._handle,
            request_factory=self._make_request,
            access_log=None,  # per-request logging would dominate benchmark profiles
        )
        self._server = server
        # Long polls are woken on stop(), so shutdown never needs to wait long.
        runner = web.ServerRunner(server, shutdown_timeout=2.0)
        await runner.setup()
        site = web.SockSite(runner, sock)
        await site.start()
        self._runner = runner
        return self

    def _make_request(self, message, payload, protocol, writer, task) -> BaseRequest:
        # Telegram accepts uploads up to 50 MB; aiohttp's default body limit is 1 MiB.
        return BaseRequest(
            message, payload, protocol, writer, task, asyncio.get_running_loop(),
            client_max_size=50 * 1024 * 1024,
        )

    async def stop(self) -> None:
        if self._runner is None:
            return
        self._closing = True
        self._wake_pollers()
        for waiters in self._waiters.values():
            for w in waiters:
                if not w.future.done():
                    w.future.set_exception(RuntimeError("BotApiEmulator stopped"))
        self._waiters.clear()
        runner, self._runner = self._runner, None
        await runner.cleanup()

    async def __aenter__(self) -> BotApiEmulator:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ recording / queries
    def mark(self) -> int:
        """Current position in :attr:`calls`; pass as ``since=`` to only look at later calls."""
        return len(self.calls)

    def sent(
        self, method: str | None = None, chat_id: Any = None, *, include_failed: bool = False
    ) -> list[Call]:
        """Recorded calls, filtered by method (case-insensitive) and/or chat_id.

        Failed calls (no effect) are left out unless ``include_failed``.
        """
        if chat_id is not None:
            chat_id = _decode_value("chat_id", str(chat_id))
        if method is not None:
            source: Iterable[Call] = self._by_method.get(method.lower(), ())
            if chat_id is not None:
                source = (c for c in source if c.params.get("chat_id") == chat_id)
        elif chat_id is not None:
            source = self._by_chat.get(chat_id, ())
        else:
            source = self.calls
        return [c for c in source if include_failed or c.failed is None]

    async def wait_for(
        self,
        method: str,
        predicate: Callable[[Call], bool] | None = None,
        count: int = 1,
        timeout: float = 10.0,
        *,
        since: int = 0,
        include_failed: bool = False,
    ) -> list[Call]:
        """Wait until ``count`` calls of ``method`` matching ``predicate`` have been recorded.

        Counts the whole history from ``since`` (an index from :meth:`mark`; default 0), so a
        reply that arrived before this call is awaited still counts. Returns exactly the first
        ``count`` matching calls. Raises TimeoutError listing the recent calls otherwise.
        """
        key = method.lower()
        waiter = _Waiter(predicate, count, include_failed, since,
                         asyncio.get_running_loop().create_future())
        for call in self._by_method.get(key, ()):
            if call.seq >= since and self._waiter_accepts(waiter, call):
                waiter.matched.append(call)
                if len(waiter.matched) >= count:
                    return waiter.matched
        self._waiters.setdefault(key, []).append(waiter)
        try:
            return await asyncio.wait_for(waiter.future, timeout)
        except TimeoutError:
            recent = "\n  ".join(c.short() for c in self.calls[-20:]) or "(no calls at all)"
            raise TimeoutError(
                f"wait_for({method!r}, count={count}) timed out after {timeout}s: "
                f"{len(waiter.matched)} matching call(s) seen. Last {min(20, len(self.calls))} "
                f"of {len(self.calls)} calls:\n  {recent}"
            ) from None
        finally:
            waiters = self._waiters.get(key)
            if waiters and waiter in waiters:
                waiters.remove(waiter)

    async def wait_polling(self, after: int = 0, timeout: float = 10.0) -> None:
        """Wait until more than ``after`` getUpdates requests (a :attr:`polls_begun` taken before) have reached
        the method: the bot has started and polls. ``wait_for("getUpdates")`` would wait until one is answered,
        and a long poll with nothing to deliver is answered only when its timeout runs out (10 s for PTB), long
        after the bot was ready. Rejected requests (injected faults, 409 while a webhook is set) do not count."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.polls_begun <= after:
            remaining = deadline - loop.time()
            if remaining <= 0:
                recent = "\n  ".join(c.short() for c in self.calls[-20:]) or "(no calls at all)"
                raise TimeoutError(f"wait_polling(after={after}) timed out after {timeout}s: {self.polls_begun} "
                                   f"getUpdates request(s) so far. Last calls:\n  {recent}")
            self._poll_begun.clear()
            try:
                await asyncio.wait_for(self._poll_begun.wait(), remaining)
            except TimeoutError:
                pass

    @staticmethod
    def _waiter_accepts(waiter: _Waiter, call: Call) -> bool:
        if call.failed is not None and not waiter.include_failed:
            return False
        return waiter.predicate is None or bool(waiter.predicate(call))

    def _record(self, call: Call) -> None:
        call.seq = len(self.calls)
        self.calls.append(call)
        key = call.method.lower()
        self._by_method.setdefault(key, []).append(call)
        chat_id = call.params.get("chat_id")
        if chat_id is not None:
            try:
                self._by_chat.setdefault(chat_id, []).append(call)
            except TypeError:  # unhashable garbage sent as chat_id
                pass
        if call.failed is None:
            self.stats.by_method[call.method] += 1
        waiters = self._waiters.get(key)
        if not waiters:
            return
        for waiter in list(waiters):
            if waiter.future.done() or call.seq < waiter.since:
                continue
            try:
                accepted = self._waiter_accepts(waiter, call)
            except Exception as exc:  # a broken predicate must fail the test, not the server
                waiter.future.set_exception(exc)
                continue
            if accepted:
                waiter.matched.append(call)
                if len(waiter.matched) >= waiter.count:
                    waiter.future.set_result(waiter.matched)

    # ------------------------------------------------------------------ fault injection
    def fail_next(self, method: str, kind: str, times: int = 1, retry_after: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` fail with ``kind`` (see FAULT_KINDS).

        Faults queue up in order per method. A failed call is recorded with ``failed=kind``
        and has no effect (except ``lost_response``, which takes effect and loses the answer).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        if method.lower() not in _CANON:
            raise ValueError(f"{method!r} is not a Bot API method")
        queue = self._faults.setdefault(method.lower(), deque())
        queue.extend(_Fault(kind, int(retry_after)) for _ in range(times))

    def block_user(self, chat_id: int) -> None:
        """Every send* to this chat answers 403 "bot was blocked by the user" until unblocked."""
        self.blocked.add(chat_id)

    def unblock_user(self, chat_id: int) -> None:
        self.blocked.discard(chat_id)

    def rate_limit(
        self,
        per_second: int | None = 30,
        *,
        per_chat_per_second: int | None = None,
        methods: Iterable[str] = ("sendMessage", "editMessageText"),
        retry_after: int = 1,
    ) -> None:
        """Turn on flood control: over ``per_second`` accepted calls of ``methods`` in any
        sliding 1-second window (global; optionally also per chat) answer 429.

        ``rate_limit(None)`` turns it off. Only accepted calls use up the budget, like a
        token bucket that does not punish the rejected retries.
        """
        if per_second is None and per_chat_per_second is None:
            self._rate = None
            return
        self._rate = _RateLimit(
            per_second, per_chat_per_second, frozenset(m.lower() for m in methods), retry_after
        )

    def _rate_check(self, key: str, chat_id: Any, now: float) -> int | None:
        """Return retry_after if this call is over the limit, else consume budget."""
        rate = self._rate
        if rate is None or key not in rate.methods:
            return None
        cutoff = now - 1.0
        window = rate.window
        # Amortised O(1): each timestamp is appended once and popped once.
        while window and window[0] <= cutoff:
            window.popleft()
        if rate.per_second is not None and len(window) >= rate.per_second:
            return rate.retry_after
        chat_window = None
        if rate.per_chat_per_second is not None and chat_id is not None:
            chat_window = rate.chat_windows.setdefault(chat_id, deque())
            while chat_window and chat_window[0] <= cutoff:
                chat_window.popleft()
            if len(chat_window) >= rate.per_chat_per_second:
                return rate.retry_after
        window.append(now)
        if chat_window is not None:
            chat_window.append(now)
        return None

    # ------------------------------------------------------------------ HTTP
    @staticmethod
    def _json(payload: Any, status: int = 200) -> web.Response:
        return web.Response(
            status=status,
            body=json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode(),
            content_type="application/json",
        )

    @classmethod
    def _error(cls, code: int, description: str, parameters: dict | None = None) -> web.Response:
        body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return cls._json(body, code)

    async def _read_params(self, request: BaseRequest) -> dict[str, Any]:
        raw: dict[str, Any] = dict(request.query)  # the Bot API also accepts GET/query params
        if request.body_exists:
            ctype = request.content_type
            if ctype == "application/json":
                body = await request.json()
                if isinstance(body, dict):
                    raw.update(body)
            elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                for name, value in form.items():
                    if isinstance(value, web.FileField):
                        content = value.file.read()
                        value = {"filename": value.filename, "content_type": value.content_type,
                                 "size": len(content), "content": content}
                    raw[name] = value
        return {name: _decode_value(name, value) for name, value in raw.items()}

    async def _handle(self, request: BaseRequest) -> web.StreamResponse:  # noqa: C901 - one flat route table
        path = request.path
        if path.startswith("/file/bot"):
            return self._serve_file(path[len("/file/bot"):])
        if not path.startswith("/bot"):
            return self._error(404, "Not Found")
        token, _, method = path[4:].partition("/")
        now = time.monotonic()
        self.stats.requests += 1
        if token != self.token:
            self._record(Call(method, {}, now, "unauthorized", 401, error="Unauthorized"))
            return self._error(401, "Unauthorized")
        key = method.lower()
        canon = _CANON.get(key)
        if canon is None:
            self._record(Call(method, {}, now, "not_found", 404, error="Not Found"))
            return self._error(404, "Not Found")
        try:
            params = await self._read_params(request)
        except ValueError as exc:
            self._record(Call(canon, {}, now, "bad_request", 400, error=str(exc)))
            return self._error(400, f"Bad Request: can't parse request: {exc}")
        if self.latency:
            await asyncio.sleep(self.latency)
        call = Call(canon, params, now)

        # 1. injected faults: answered before anything takes effect.
        lost_response = False
        faults = self._faults.get(key)
        if faults:
            fault = faults.popleft()
            if not faults:
                del self._faults[key]
            self.stats.injected += 1
            if fault.kind == "lost_response":
                lost_response = True
            else:
                return self._inject(request, call, fault)

        # 2. blocked users and flood control.
        chat_id = params.get("chat_id")
        is_send = key.startswith("send")
        if is_send and chat_id in self.blocked:
            self.stats.forbidden += 1
            return self._fail(call, "blocked", 403, _BLOCKED)
        retry = self._rate_check(key, chat_id, now)
        if retry is not None:
            self.stats.rejected_429 += 1
            return self._fail(call, "rate_limited", 429,
                              f"Too Many Requests: retry after {retry}", retry_after=retry)

        # 3. the method itself.
        try:
            if key == "getupdates":
                result = await self._get_updates(params)
            else:
                handler = self._handlers.get(key)
                if handler is not None:
                    result = handler(self, params)
                elif is_send and key not in _SEND_RETURNING_TRUE:
                    result = self._send_generic(key, params)
                else:
                    result = True
        except _ApiError as exc:
            if exc.code == 400:
                self.stats.bad_request += 1
            elif exc.code == 403:
                self.stats.forbidden += 1
            return self._fail(call, exc.kind, exc.code, exc.description, **exc.parameters)

        call.result = result
        if lost_response:
            call.response_lost = True
            self._record(call)
            request.protocol.force_close()
            return web.Response()
        self._record(call)
        return self._json({"ok": True, "result": result})

    def _fail(self, call: Call, kind: str, code: int, description: str,
              **parameters: Any) -> web.Response:
        call.failed, call.status, call.error = kind, code, description
        self._record(call)
        return self._error(code, description, parameters or None)

    def _inject(self, request: BaseRequest, call: Call, fault: _Fault) -> web.StreamResponse:
        kind = fault.kind
        if kind == "retry_after":
            self.stats.rejected_429 += 1
            description = f"Too Many Requests: retry after {fault.retry_after}"
            return self._fail(call, kind, 429, description, retry_after=fault.retry_after)
        if kind == "forbidden":
            self.stats.forbidden += 1
            return self._fail(call, kind, 403, _BLOCKED)
        call.failed = kind
        if kind == "bad_gateway":
            call.status, call.error = 502, "Bad Gateway"
            self._record(call)
            return web.Response(status=502, body=_NGINX_502, content_type="text/html")
        # "drop": close the TCP connection without any response bytes. aiohttp then skips
        # writing the response we return (it logs "premature client disconnection" at debug).
        call.status, call.error = 0, "connection dropped"
        self._record(call)
        request.protocol.force_close()
        return web.Response()

    def _serve_file(self, rest: str) -> web.Response:
        token, _, file_path = rest.partition("/")
        if token != self.token:
            return self._error(401, "Unauthorized")
        content = self._file_bytes.get(file_path)
        if content is None:
            return self._error(404, "Not Found")
        return web.Response(body=content, content_type="application/octet-stream")

    # ------------------------------------------------------------------ chats & messages
    def _make_user(self, user_id: int, first_name: str | None, username: str | None,
                   language_code: str | None, last_name: str | None = None) -> dict[str, Any]:
        user = self._users.get(user_id)
        if user is None:
            user = {"id": user_id, "is_bot": False, "first_name": first_name or f"User{user_id}"}
            self._users[user_id] = user
        # Later pushes may rename the user; keep the latest values like Telegram would.
        if first_name:
            user["first_name"] = first_name
        for name, value in (("last_name", last_name), ("username", username),
                            ("language_code", language_code)):
            if value:
                user[name] = value
        return user

    def _chat_for(self, chat_id: Any, chat_type: str, user: dict[str, Any] | None,
                  title: str | None) -> dict[str, Any]:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = {"id": chat_id, "type": chat_type}
            if chat_type == "private" and user is not None:
                chat["first_name"] = user["first_name"]
                for name in ("last_name", "username"):
                    if name in user:
                        chat[name] = user[name]
            else:
                chat["title"] = title or "Test group"
            self._chats[chat_id] = chat
        elif title and chat_type != "private":
            chat["title"] = title
        return chat

    def _resolve_chat(self, chat_id: Any) -> dict[str, Any]:
        if chat_id is None or chat_id == "":
            raise _ApiError(400, "Bad Request: chat_id is empty")
        chat = self._chats.get(chat_id)
        if chat is not None:
            return chat
        if isinstance(chat_id, str):  # "@username"
            wanted = chat_id.lstrip("@").lower()
            for chat in self._chats.values():
                if str(chat.get("username", "")).lower() == wanted:
                    return chat
            raise _ApiError(400, "Bad Request: chat not found")
        if self.strict_chats:
            raise _ApiError(400, "Bad Request: chat not found")
        if chat_id > 0:
            return self._chat_for(chat_id, "private", {"first_name": f"User{chat_id}"}, None)
        kind = "supergroup" if str(chat_id).startswith("-100") else "group"
        return self._chat_for(chat_id, kind, None, None)

    def _new_message(self, chat: dict[str, Any], sender: dict[str, Any],
                     **fields: Any) -> dict[str, Any]:
        chat_id = chat["id"]
        # Message ids are per chat and shared by user and bot messages, as in private chats.
        message_id = self._last_message_id.get(chat_id, 0) + 1
        self._last_message_id[chat_id] = message_id
        message = {"message_id": message_id, "from": sender, "chat": chat,
                   "date": int(time.time()), **fields}
        self._messages.setdefault(chat_id, {})[message_id] = message
        return message

    def _reply_to(self, chat_id: Any, message_id: Any) -> dict[str, Any] | None:
        replied = self._messages.get(chat_id, {}).get(message_id)
        if replied is None:
            return None
        # Telegram never nests reply_to_message more than one level.
        return {k: v for k, v in replied.items() if k != "reply_to_message"}

    def messages(self, chat_id: Any) -> list[dict[str, Any]]:
        """All live (not deleted) messages of a chat, user's and bot's, oldest first."""
        return list(self._messages.get(chat_id, {}).values())

    def message(self, chat_id: Any, message_id: int) -> dict[str, Any] | None:
        """Current state of one stored message (reflects edits), or None."""
        return self._messages.get(chat_id, {}).get(message_id)

    def add_file(self, content: bytes, file_id: str | None = None,
                 file_path: str | None = None) -> dict[str, Any]:
        """Register a file for getFile + download through base_file_url. Returns the File."""
        n = next(self._ids)
        file_id = file_id or f"FILE{n}"
        file_path = file_path or f"documents/file_{n}"
        info = {"file_id": file_id, "file_unique_id": f"U{n}", "file_size": len(content),
                "file_path": file_path}
        self._files[file_id] = info
        self._file_bytes[file_path] = content
        return info

    # ------------------------------------------------------------------ pushing updates
    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue a raw update (``update_id`` assigned when missing) and wake long polls."""
        update_id = update.get("update_id")
        if update_id is None:
            update = {"update_id": self._next_update_id, **update}
            self._next_update_id += 1
        else:
            self._next_update_id = max(self._next_update_id, int(update_id) + 1)
        # Register query ids so answerCallbackQuery/answerInlineQuery accept them.
        if "callback_query" in update:
            self._open_callback_queries.add(str(update["callback_query"]["id"]))
        if "inline_query" in update:
            self._open_inline_queries.add(str(update["inline_query"]["id"]))
        self._pending.append(update)
        self._wake_pollers()
        return update

    def push_message(
        self,
        user_id: int,
        text: str,
        chat_id: int | None = None,
        chat_type: str = "private",
        language_code: str | None = "en",
        first_name: str | None = None,
        username: str | None = None,
        *,
        last_name: str | None = None,
        title: str | None = None,
        entities: list[dict[str, Any]] | None = None,
        reply_to_message_id: int | None = None,
    ) -> dict[str, Any]:
        """A user sends ``text``. Returns the queued update.

        Entities are detected like Telegram does for a leading ``/command[@bot]`` and for
        ``@username`` mentions (offsets in UTF-16 units); pass ``entities`` to override.
        """
        if chat_id is None:
            if chat_type != "private":
                raise ValueError("push_message: pass chat_id for group/supergroup/channel chats")
            chat_id = user_id
        user = self._make_user(user_id, first_name, username, language_code, last_name)
        chat = self._chat_for(chat_id, chat_type, user, title)
        fields: dict[str, Any] = {"text": text}
        if entities is None:
            entities = self._detect_entities(text)
        if entities:
            fields["entities"] = entities
        if reply_to_message_id is not None:
            replied = self._reply_to(chat_id, reply_to_message_id)
            if replied is None:
                raise LookupError(f"no message {reply_to_message_id} in chat {chat_id} to reply to")
            fields["reply_to_message"] = replied
        message = self._new_message(chat, user, **fields)
        return self.push_update({"message": message})

    @staticmethod
    def _detect_entities(text: str) -> list[dict[str, Any]]:
        entities = []
        command = _COMMAND_RE.match(text)
        if command:
            entities.append({"type": "bot_command", "offset": 0,
                             "length": _utf16_len(command.group())})
        for mention in _MENTION_RE.finditer(text):
            entities.append({"type": "mention", "offset": _utf16_len(text[:mention.start()]),
                             "length": _utf16_len(mention.group())})
        return entities

    def push_callback(
        self,
        user_id: int,
        message_id: int | None,
        data: str,
        chat_id: int | None = None,
        *,
        inline_message_id: str | None = None,
        check_button: bool = True,
        language_code: str | None = "en",
        first_name: str | None = None,
        username: str | None = None,
    ) -> dict[str, Any]:
        """The user presses an inline button on bot message ``message_id`` in ``chat_id``
        (default: the user's private chat). The update carries a snapshot of the stored
        message, so PTB sees its current text and reply_markup.

        With ``check_button`` (default) ``data`` must be the callback_data of a button on
        that message, because a real client can only press buttons that exist.
        Use ``inline_message_id`` (and ``message_id=None``) for messages sent via inline mode.
        """
        user = self._make_user(user_id, first_name, username, language_code)
        query_id = str(4_000_000_000_000 + next(self._ids))
        query: dict[str, Any] = {"id": query_id, "from": user, "data": data}
        if inline_message_id is not None:
            stored = self._inline_messages.setdefault(inline_message_id, {})
            query["inline_message_id"] = inline_message_id
            query["chat_instance"] = f"inline-{inline_message_id}"
        else:
            chat_id = user_id if chat_id is None else chat_id
            stored = self._messages.get(chat_id, {}).get(message_id)
            if stored is None:
                known = sorted(self._messages.get(chat_id, {}))
                raise LookupError(
                    f"push_callback: no message {message_id} in chat {chat_id}; "
                    f"stored message ids there: {known}"
                )
            query["message"] = copy.deepcopy(stored)
            query["chat_instance"] = str(7_000_000_000 + abs(hash(chat_id)) % 1_000_000_000)
        if check_button:
            buttons = [
                button.get("callback_data")
                for row in (stored.get("reply_markup") or {}).get("inline_keyboard", [])
                for button in row
            ]
            if data not in buttons:
                raise ValueError(
                    f"push_callback: message has no button with callback_data={data!r}; "
                    f"buttons: {buttons} (pass check_button=False to send it anyway)"
                )
        return self.push_update({"callback_query": query})

    def push_inline_query(
        self,
        user_id: int,
        query: str,
        offset: str = "",
        *,
        chat_type: str | None = None,
        language_code: str | None = "en",
        first_name: str | None = None,
        username: str | None = None,
    ) -> dict[str, Any]:
        """The user types ``@bot query`` in some chat."""
        user = self._make_user(user_id, first_name, username, language_code)
        inline_query: dict[str, Any] = {
            "id": str(5_000_000_000_000 + next(self._ids)),
            "from": user,
            "query": query,
            "offset": offset,
        }
        if chat_type is not None:
            inline_query["chat_type"] = chat_type
        return self.push_update({"inline_query": inline_query})

    @property
    def pending_updates(self) -> int:
        """Updates queued and not yet confirmed by a getUpdates offset."""
        return len(self._pending)

    # ------------------------------------------------------------------ getUpdates
    def _wake_pollers(self) -> None:
        # Swap in a fresh Event so each waiter wakes exactly once per change.
        event, self._update_event = self._update_event, asyncio.Event()
        event.set()

    def _is_allowed(self, update: dict[str, Any]) -> bool:
        kind = _update_type(update)
        if self._allowed_updates is None:
            return kind not in _NOT_DEFAULT_UPDATES
        return kind in self._allowed_updates

    def _take_updates(self, limit: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        skipped = False
        for update in self._pending:
            if self._is_allowed(update):
                out.append(update)
                if len(out) >= limit:
                    break
            else:
                skipped = True
        if skipped:
            # Updates of types the bot did not subscribe to are never delivered: forget them.
            self._pending = deque(u for u in self._pending if self._is_allowed(u))
        return out

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook_url:
            raise _ApiError(409, _WEBHOOK_CONFLICT, kind="conflict")
        offset = p.get("offset") or 0
        limit = p.get("limit", 100)
        limit = 100 if not isinstance(limit, int) else min(max(limit, 1), 100)
        timeout = p.get("timeout", 0)
        timeout = max(0.0, float(timeout)) if isinstance(timeout, (int, float)) else 0.0
        allowed = p.get("allowed_updates")
        if isinstance(allowed, list):
            # An empty list means "all default types", like the real API.
            self._allowed_updates = frozenset(allowed) if allowed else None
        self.polls_begun += 1
        self._poll_begun.set()

        # Confirm: everything below offset is gone for good.
        if isinstance(offset, int) and offset > 0:
            pending = self._pending
            while pending and pending[0]["update_id"] < offset:
                pending.popleft()
        elif isinstance(offset, int) and offset < 0:
            while len(self._pending) > -offset:
                self._pending.popleft()

        # Only one getUpdates may be in flight; a newer one terminates the older with 409.
        # This also retires server-side polls whose client already hung up (PTB cancels its
        # long poll on Updater.stop()).
        self._poll_generation += 1
        generation = self._poll_generation
        self._wake_pollers()

        deadline = time.monotonic() + timeout
        while True:
            updates = self._take_updates(limit)
            if updates or self._closing:
                return updates
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return updates
            event = self._update_event
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                pass
            if generation != self._poll_generation:
                raise _ApiError(409, _POLL_CONFLICT, kind="conflict")

    # ------------------------------------------------------------------ method handlers
    def _get_me(self, p: dict[str, Any]) -> dict[str, Any]:
        return self.bot_user

    def _ok(self, p: dict[str, Any]) -> bool:
        return True

    def _set_webhook(self, p: dict[str, Any]) -> bool:
        self.webhook_url = str(p.get("url") or "")
        if p.get("drop_pending_updates"):
            self._pending.clear()
        return True

    def _delete_webhook(self, p: dict[str, Any]) -> bool:
        self.webhook_url = ""
        if p.get("drop_pending_updates"):
            self._pending.clear()
        return True

    def _get_webhook_info(self, p: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {"url": self.webhook_url, "has_custom_certificate": False,
                                "pending_update_count": len(self._pending)}
        if self._allowed_updates is not None:
            info["allowed_updates"] = sorted(self._allowed_updates)
        return info

    @staticmethod
    def _check_text(text: Any, parse_mode: Any) -> str:
        if not isinstance(text, str) or not text.strip():
            raise _ApiError(400, "Bad Request: message text is empty")
        if _visible_length(text, parse_mode) > 4096:
            raise _ApiError(400, "Bad Request: message is too long")
        return text

    @staticmethod
    def _inline_markup(markup: Any) -> dict[str, Any] | None:
        """The markup Telegram stores on the message: only inline keyboards are kept
        (PTB parses Message.reply_markup as InlineKeyboardMarkup and would choke on others)."""
        if not isinstance(markup, dict) or "inline_keyboard" not in markup:
            return None
        for row in markup["inline_keyboard"]:
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(str(data).encode()) <= 64:
                    raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
        return markup

    def _deliver(self, chat: dict[str, Any], p: dict[str, Any], **fields: Any) -> dict[str, Any]:
        markup = self._inline_markup(p.get("reply_markup"))
        if markup is not None:
            fields["reply_markup"] = markup
        reply_parameters = p.get("reply_parameters")
        reply_to = p.get("reply_to_message_id")
        if isinstance(reply_parameters, dict):
            reply_to = reply_parameters.get("message_id")
        if reply_to is not None:
            replied = self._reply_to(chat["id"], reply_to)
            if replied is not None:
                fields["reply_to_message"] = replied
            elif not (isinstance(reply_parameters, dict)
                      and reply_parameters.get("allow_sending_without_reply")):
                raise _ApiError(400, "Bad Request: message to be replied not found")
        message = self._new_message(chat, self.bot_user, **fields)
        self.stats.delivered += 1
        content = fields.get("text") or fields.get("caption")
        if content:  # captionless media are not "the same message" just because both are empty
            dup_key = (chat["id"], content)
            if dup_key in self._delivered_keys:
                self.stats.duplicates += 1
            else:
                self._delivered_keys.add(dup_key)
        return message

    def _send_message(self, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._resolve_chat(p.get("chat_id"))
        text = self._check_text(p.get("text"), p.get("parse_mode"))
        return self._deliver(chat, p, text=text)

    def _send_generic(self, key: str, p: dict[str, Any]) -> Any:
        """sendPhoto/sendDocument/...: a Message with the caption; media objects are omitted."""
        chat = self._resolve_chat(p.get("chat_id"))
        if key == "sendmediagroup":
            media = p.get("media") if isinstance(p.get("media"), list) else [{}]
            return [self._deliver(chat, {}, **({"caption": m["caption"]} if m.get("caption")
                                              else {})) for m in media]
        fields = {"caption": p["caption"]} if p.get("caption") else {}
        if fields and _visible_length(str(fields["caption"]), p.get("parse_mode")) > 1024:
            raise _ApiError(400, "Bad Request: message caption is too long")
        return self._deliver(chat, p, **fields)

    def _edit_target(self, p: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        inline_id = p.get("inline_message_id")
        if inline_id:
            stored = self._inline_messages.get(inline_id)
            if stored is None:
                raise _ApiError(400, "Bad Request: MESSAGE_ID_INVALID")
            return stored, True
        chat_id = p.get("chat_id")
        if chat_id is None:
            raise _ApiError(400, "Bad Request: chat_id is empty")
        if isinstance(chat_id, str):
            chat_id = self._resolve_chat(chat_id)["id"]
        message = self._messages.get(chat_id, {}).get(p.get("message_id"))
        if message is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        if message["from"]["id"] != self.bot_id:
            raise _ApiError(400, "Bad Request: message can't be edited")
        return message, False

    def _edit_message_text(self, p: dict[str, Any]) -> Any:
        message, inline = self._edit_target(p)
        text = self._check_text(p.get("text"), p.get("parse_mode"))
        if not inline and "text" not in message:
            raise _ApiError(400, "Bad Request: there is no text in the message to edit")
        # Omitting reply_markup in an edit removes the inline keyboard, as in the real API.
        markup = self._inline_markup(p.get("reply_markup"))
        if message.get("text") == text and message.get("reply_markup") == markup:
            raise _ApiError(400, _NOT_MODIFIED)
        return self._apply_edit(message, inline, text=text, reply_markup=markup)

    def _edit_message_reply_markup(self, p: dict[str, Any]) -> Any:
        message, inline = self._edit_target(p)
        markup = self._inline_markup(p.get("reply_markup"))
        if message.get("reply_markup") == markup:
            raise _ApiError(400, _NOT_MODIFIED)
        return self._apply_edit(message, inline, reply_markup=markup)

    def _apply_edit(self, message: dict[str, Any], inline: bool, **changes: Any) -> Any:
        for name, value in changes.items():
            if value is None:
                message.pop(name, None)
            else:
                message[name] = value
        self.stats.edited += 1
        if inline:
            return True  # the real API returns True for inline messages
        message["edit_date"] = int(time.time())
        return message

    def _delete_message(self, p: dict[str, Any]) -> bool:
        chat_messages = self._messages.get(p.get("chat_id"), {})
        if chat_messages.pop(p.get("message_id"), None) is None:
            raise _ApiError(400, "Bad Request: message to delete not found")
        return True

    def _answer_callback_query(self, p: dict[str, Any]) -> bool:
        query_id = str(p.get("callback_query_id", ""))
        if query_id not in self._open_callback_queries:
            raise _ApiError(400, _QUERY_TOO_OLD)
        self._open_callback_queries.discard(query_id)  # a query can be answered once
        return True

    def _answer_inline_query(self, p: dict[str, Any]) -> bool:
        query_id = str(p.get("inline_query_id", ""))
        if query_id not in self._open_inline_queries:
            raise _ApiError(400, _QUERY_TOO_OLD)
        results = p.get("results")
        if not isinstance(results, list):
            raise _ApiError(400, "Bad Request: can't parse inline query results JSON object")
        if len(results) > 50:
            raise _ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [r.get("id") for r in results if isinstance(r, dict)]
        if len(set(ids)) != len(ids):
            raise _ApiError(400, "Bad Request: RESULT_ID_DUPLICATE")
        for result in results:
            content = result.get("input_message_content") if isinstance(result, dict) else None
            if isinstance(content, dict) and "message_text" in content \
                    and _visible_length(str(content["message_text"]), content.get("parse_mode")) > 4096:
                raise _ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self._open_inline_queries.discard(query_id)
        return True

    @staticmethod
    def _commands_key(p: dict[str, Any]) -> tuple[str, str]:
        scope = p.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(p.get("language_code") or "")

    def _set_my_commands(self, p: dict[str, Any]) -> bool:
        commands = p.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise _ApiError(400, "Bad Request: can't parse commands JSON object")
        for command in commands:
            if not _BOT_COMMAND_NAME_RE.match(str(command.get("command", ""))):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        key = self._commands_key(p)
        if commands:
            self.commands[key] = commands
        else:
            self.commands.pop(key, None)
        return True

    def _get_my_commands(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        # Exact scope + language, no fallback: that is what getMyCommands returns.
        return self.commands.get(self._commands_key(p), [])

    def _delete_my_commands(self, p: dict[str, Any]) -> bool:
        self.commands.pop(self._commands_key(p), None)
        return True

    def get_commands(self, scope: dict[str, Any] | None = None,
                     language_code: str = "") -> list[dict[str, Any]]:
        """Commands stored for a scope/language (test helper; same lookup as getMyCommands)."""
        return self._get_my_commands({"scope": scope, "language_code": language_code})

    def _describe(kind: str) -> tuple[Callable, Callable]:  # noqa: N805 - class-body helper
        def setter(self: BotApiEmulator, p: dict[str, Any]) -> bool:
            self.descriptions[(kind, str(p.get("language_code") or ""))] = str(p.get(kind) or "")
            return True

        def getter(self: BotApiEmulator, p: dict[str, Any]) -> dict[str, str]:
            return {kind: self.descriptions.get((kind, str(p.get("language_code") or "")), "")}

        return setter, getter

    _set_description, _get_description = _describe("description")
    _set_short_description, _get_short_description = _describe("short_description")
    _set_name, _get_name = _describe("name")
    del _describe

    def _get_file(self, p: dict[str, Any]) -> dict[str, Any]:
        info = self._files.get(str(p.get("file_id", "")))
        if info is None:
            raise _ApiError(400, "Bad Request: invalid file_id")
        return info

    def _get_chat(self, p: dict[str, Any]) -> dict[str, Any]:
        chat_id = p.get("chat_id")
        chat = self._chats.get(chat_id)
        if chat is None and isinstance(chat_id, str):
            chat = self._resolve_chat(chat_id)
        if chat is None:
            raise _ApiError(400, "Bad Request: chat not found")
        # ChatFullInfo has a few required fields beyond Chat.
        return {**chat, "accent_color_id": 0, "max_reaction_count": 11,
                "accepted_gift_types": {"unlimited_gifts": True, "limited_gifts": True,
                                        "unique_gifts": True, "premium_subscription": True,
                                        "gifts_from_channels": True}}

    _handlers: dict[str, Callable[[BotApiEmulator, dict[str, Any]], Any]] = {
        "getme": _get_me,
        "logout": _ok,
        "close": _ok,
        "setwebhook": _set_webhook,
        "deletewebhook": _delete_webhook,
        "getwebhookinfo": _get_webhook_info,
        "sendmessage": _send_message,
        "editmessagetext": _edit_message_text,
        "editmessagereplymarkup": _edit_message_reply_markup,
        "deletemessage": _delete_message,
        "answercallbackquery": _answer_callback_query,
        "answerinlinequery": _answer_inline_query,
        "setmycommands": _set_my_commands,
        "getmycommands": _get_my_commands,
        "deletemycommands": _delete_my_commands,
        "setmydescription": _set_description,
        "getmydescription": _get_description,
        "setmyshortdescription": _set_short_description,
        "getmyshortdescription": _get_short_description,
        "setmyname": _set_name,
        "getmyname": _get_name,
        "getfile": _get_file,
        "getchat": _get_chat,
    }
