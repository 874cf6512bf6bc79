"""Glue between PTB objects and the front-end-neutral features: users, keyboards, safe sends and edits."""
from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any

from aiolimiter import AsyncLimiter
from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram._utils.types import JSONDict
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import AIORateLimiter

from bot import metrics
from bot.features.caller import UserInfo
from bot.features.reply import Button, CallbackResult, Reply
from bot.operators.alerts import SEND_CLAIM
from bot.operators.send_errors import never_reached_telegram
from bot.texts.i18n import normalize_language
from bot.texts.render import CAPTION_LIMIT, TELEGRAM_LIMIT, clip

log = logging.getLogger(__name__)


def user_info(update: Update) -> UserInfo:
    user = update.effective_user
    if user is None:
        return UserInfo(0)
    return UserInfo(user.id, user.language_code, user.first_name or "", update.update_id)


def user_language(update: Update) -> str:
    """The language of the user behind an update, from Telegram's language_code (no preferences read)."""
    user = update.effective_user
    return normalize_language(user.language_code if user else None)


def user_id(update: Update) -> int | None:
    return update.effective_user.id if update.effective_user else None


def is_shared(update: Update) -> bool:
    """Said where others see the answer (a group), not in a private chat."""
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE


def message_of(update: Update) -> Message:
    """The message a message handler was called for (its filters guarantee there is one)."""
    if update.effective_message is None:
        raise ValueError(f"update {update.update_id} carries no message")
    return update.effective_message


def query_of(update: Update) -> CallbackQuery:
    if update.callback_query is None:
        raise ValueError(f"update {update.update_id} carries no callback query")
    return update.callback_query


def markup(buttons: list[list[Button]]) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup([[_button(button) for button in row] for row in buttons])


def _button(button: Button) -> InlineKeyboardButton:
    return InlineKeyboardButton(button.text, url=button.url) if button.url else \
        InlineKeyboardButton(button.text, callback_data=button.data)


async def reply(message: Message, answer: Reply) -> None:
    """The answer sent in reply."""
    # The last guard: Telegram refuses a text over 4,096 characters, and the user would get nothing at all.
    await message.reply_text(clip(answer.text), reply_markup=markup(answer.buttons))
    if answer.photo is not None:
        await message.reply_photo(answer.photo)


async def answer_tap(query: CallbackQuery, notice: str | None = None) -> None:
    """answerCallbackQuery, which only stops the button's spinner (and shows `notice`): when it fails, the tap's
    own work (the edit, the chart) still happens. Only a refusal (the user blocked the bot) goes on to the error
    handler; a dropped or late answer ("query is too old", a lost connection, a time-out) is logged."""
    try:
        await query.answer(notice)
    except Forbidden:
        raise
    except TelegramError as exc:
        log.warning("answering a button tap failed (%s: %s); its edit goes on", exc.__class__.__name__, exc)


async def show(query: CallbackQuery, result: CallbackResult) -> None:
    """A button press answered: the notice first (the spinner stops even if the edit fails), then the edit."""
    await answer_tap(query, result.notice)
    if result.reply is not None and query.message is not None:
        try:
            await query.edit_message_text(clip(result.reply.text), reply_markup=markup(result.reply.buttons))
        except BadRequest as exc:
            if not is_not_modified(exc):
                raise


def is_not_modified(error: BaseException) -> bool:
    return isinstance(error, BadRequest) and "message is not modified" in str(error).lower()


# Methods that can be repeated without a second effect: reads, setters of a state, edits (a repeated edit is
# answered "message is not modified", which the callers ignore). Sends, forwards, copies and answers are not.
REPEATABLE_PREFIXES = ("get", "set", "edit", "deleteMyCommands", "deleteWebhook")


def repeatable(endpoint: str) -> bool:
    return endpoint.startswith(REPEATABLE_PREFIXES)


# Where a message's words are, per method that sends one: a repeat after a crash is labeled there.
_LABELED_FIELDS = {"sendMessage": "text", "sendPhoto": "caption", "sendDocument": "caption"}


def label_repeat(endpoint: str, data: dict[str, Any], label: str) -> None:
    """Put `label` (HTML) above the message a request sends: it may be the second copy the user gets (sent again
    after a crash cut the first off). In place: `data` is the request's own parameters (ExtBot._do_post passes the
    same dict to the rate limiter and to the request). Kept within Telegram's limit (clip); without HTML parse mode
    the label goes as plain text."""
    key = _LABELED_FIELDS.get(endpoint)
    text = data.get(key) if key is not None else None
    if key is None or not isinstance(text, str):
        return
    html_mode = str(data.get("parse_mode") or "").upper() == "HTML"
    head = label if html_mode else re.sub(r"<[^>]+>", "", label)
    data[key] = clip(f"{head}\n\n{text}", CAPTION_LIMIT if key == "caption" else TELEGRAM_LIMIT)


def failed_request(error: BaseException) -> tuple[str, object] | None:
    """(method, chat_id) of the Bot API call that raised `error` after its retries, when the rate limiter saw it."""
    found = getattr(error, FAILED_REQUEST_ATTR, None)
    return found if isinstance(found, tuple) else None


FAILED_REQUEST_ATTR = "cardfit_failed_request"


class SendSchedule:
    """When the next message may go out: one slot every 1/rate seconds on an absolute clock, so a sender woken
    late (a busy CPU, a garbage collection) catches up on the slots it missed instead of losing them, within two
    bounds: at most `catch_up_s` of missed slots are kept (an idle or stalled bot earns no burst beyond that: 7
    messages at 30/s), and never more than rate x 1 s messages in any sliding second (Telegram's ~30 messages/s
    for all ordinary messages, python-telegram-bot wiki "Avoiding flood limits"; Telegram documents no exact
    window).

    The sliding second is counted as the receiver counts it: a message is in it from when it went out until its
    answer came back (at most `in_flight_s` later), since it reached Telegram somewhere in between; counted from
    the moment it went out, a request that spent longer in flight than the one 30 later (a busy event loop, a
    garbage collection) lands within the same second as that one, and a 429 halts every send for a second
    (bench_alerts: 5 of them in 12 s). What this costs is each round trip once a second, and each late wake-up
    once a second, instead of every late wake-up (pacing each message 1/rate after the previous lost 3-6 %).
    Pure: the caller passes the time, so tests drive it with a fake clock."""

    def __init__(self, messages_per_s: float, *, catch_up_s: float = 0.2, in_flight_s: float = 0.25,
                 window_s: float = 1.0) -> None:
        self.interval = 1.0 / messages_per_s
        self.catch_up_s = catch_up_s
        self.in_flight_s = in_flight_s
        self.window_s = window_s
        self._next = -math.inf  # the next free slot
        # The last per-window sends, each [when it last counted]: a new one may go only once the oldest of them
        # has left the window.
        self._recent: deque[list[float]] = deque(maxlen=max(1, math.ceil(messages_per_s * window_s - 1e-9)))

    def wait(self, now: float) -> float:
        """Seconds until a message may go out (0: now)."""
        recent = self._recent
        delay = max(self._next, now - self.catch_up_s) - now
        # Compared as the window is (now - window_s, now], so that rounding cannot let one more in.
        if len(recent) == recent.maxlen and now - self.window_s < recent[0][0]:
            delay = max(delay, recent[0][0] + self.window_s - now, 1e-6)
        return max(0.0, delay)

    def sent(self, now: float) -> list[float]:
        """A message went out at `now` (after wait(now) answered 0): it takes the oldest free slot. The answer
        is given to answered()."""
        counted = [now]
        recent = self._recent
        # Sends that have left the window for good (answered() adds at most in_flight_s) are dropped, so that the
        # deque holds only the last second's sends whatever the rate (bench_memory lifts it to 1,000,000/s, and its
        # maxlen with it: every send was kept).
        horizon = now - self.window_s - self.in_flight_s
        while recent and recent[0][0] <= horizon:
            recent.popleft()
        recent.append(counted)
        self._next = max(self._next, now - self.catch_up_s) + self.interval
        return counted

    def answered(self, counted: list[float], now: float) -> None:
        """The request that sent() returned `counted` for came back (answer or error) at `now`."""
        counted[0] = max(counted[0], min(now, counted[0] + self.in_flight_s))


_in_flight: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("cardfit_in_flight", default=None)


class Pacer(AsyncLimiter):
    """PTB's overall limiter (`async with` around each request) on a SendSchedule: one waiter at a time, in
    arrival order; leaving the block is the answer (a task's own request: a context variable)."""

    def __init__(self, messages_per_s: float, *, catch_up_s: float = 0.2, in_flight_s: float = 0.25,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        super().__init__(max_rate=max(1, math.ceil(messages_per_s - 1e-9)), time_period=1.0)
        self.schedule = SendSchedule(messages_per_s, catch_up_s=catch_up_s, in_flight_s=in_flight_s)
        self._clock = clock
        self._sleep = sleep
        self._turn = asyncio.Lock()

    def has_capacity(self, amount: float = 1) -> bool:
        return self.schedule.wait(self._clock()) == 0

    async def acquire(self, amount: float = 1) -> None:
        async with self._turn:
            while (delay := self.schedule.wait(self._clock())) > 0:
                await self._sleep(delay)
            _in_flight.set(self.schedule.sent(self._clock()))

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        counted = _in_flight.get()
        if counted is not None:
            _in_flight.set(None)
            self.schedule.answered(counted, self._clock())


# How long one request may keep waiting out Telegram's 429s (RetryAfter) before it is given up on. An answer a
# minute late is still the answer the user waits for, so a storm of 429s (150 of them, 2 s each, over 20 users) must
# not turn every answer into "could not send my answer"; past a minute the user has likely asked again, and the
# update holds one of the Application's 64 concurrent slots meanwhile. A single retry_after longer than the bound is
# given up on at once (Telegram asks for minutes only of a bot that floods one chat).
RETRY_AFTER_BOUND_S = 60.0


class ResilientRateLimiter(AIORateLimiter):
    """PTB's AIORateLimiter (30 msg/s overall, 20/min per group, RetryAfter honoured: every send waits it out) with
    RetryAfter retried for as long as RETRY_AFTER_BOUND_S allows, not a count of tries, plus retries
    with exponential backoff for network failures that provably had no effect (never_reached_telegram), and for
    any network failure of a repeatable method. A read time-out or a dropped connection after a send was written
    is not retried: the message may be out already, and a second one would double it.

    A BadRequest is a NetworkError subclass in PTB but is final, so it is never retried; getUpdates has its own
    retry loop in the updater and never comes through a rate limiter. A call that fails for good carries its
    method and chat (failed_request) to the error handler.

    An alert's send sets SEND_CLAIM (bot/operators/alerts.py): it is awaited here after the wait, right before
    the request, so the alert's 'sending' claim is committed with no wait between it and the request.
    """

    runs_send_claim = True  # AlertDelivery leaves its claim to SEND_CLAIM

    def __init__(self, *, messages_per_s: float = 30.0, network_retries: int = 4, backoff_s: float = 0.5,
                 retry_after_bound_s: float = RETRY_AFTER_BOUND_S, **kwargs: Any) -> None:
        # Not aiolimiter's bucket: a one-second bucket lets 30 messages out at once and more within the same
        # second, which Telegram (and the emulator's sliding window) answers with 429 and a second of silence for
        # everyone; a bucket of one message paces each one 1/30 s after the previous, so every late wake-up on a
        # busy CPU was lost for good (94-97 % of the rate in benchmarks/bench_alerts.py). See SendSchedule.
        super().__init__(**kwargs)
        self._base_limiter = Pacer(messages_per_s)
        self.network_retries = network_retries
        self.backoff_s = backoff_s
        self.retry_after_bound_s = retry_after_bound_s

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        claim = SEND_CLAIM.get()
        if claim is not None and not repeatable(endpoint):
            send = callback

            async def claimed(*call_args: Any, **call_kwargs: Any) -> bool | JSONDict | list[JSONDict]:
                await claim()  # once: it does nothing when a retry calls it again
                return await send(*call_args, **call_kwargs)

            callback = claimed
        try:
            result = await self._with_retries(callback, args, kwargs, endpoint, data, rate_limit_args)
        except TelegramError as exc:
            metrics.REPLIES_FAILED.labels(endpoint, exc.__class__.__name__).inc()
            setattr(exc, FAILED_REQUEST_ATTR, (endpoint, data.get("chat_id")))
            raise
        metrics.REPLIES_SENT.labels(endpoint).inc()
        return result

    async def _with_retries(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        delay = self.backoff_s
        for attempt in range(self.network_retries + 1):
            try:
                return await self._waiting_out_429s(callback, args, kwargs, data)
            except BadRequest:
                raise
            except NetworkError as exc:
                if attempt == self.network_retries:
                    raise
                if not (never_reached_telegram(exc) or repeatable(endpoint)):
                    log.warning("%s to chat %s failed after it was sent (%s: %s); not repeated, it may have "
                                "arrived", endpoint, data.get("chat_id"), exc.__class__.__name__, exc)
                    raise
                log.warning("%s failed (%s); retry %d in %.1f s", endpoint, exc.__class__.__name__, attempt + 1, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10)
        raise AssertionError("unreachable")

    async def _waiting_out_429s(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        data: dict[str, Any],
    ) -> bool | JSONDict | list[JSONDict]:
        """AIORateLimiter.process_request's loop, bounded by the time waited instead of a count of tries, and
        without its traceback in the log when it gives up (the error handler logs one line with the update)."""
        chat_id = data.get("chat_id")
        try:
            chat_id = int(chat_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
        # As PTB's: a negative or @name chat is a group or channel, paced by the per-group limiter too.
        group: int | str | bool = chat_id if (isinstance(chat_id, int) and chat_id < 0) or isinstance(chat_id, str) \
            else False
        waited = 0.0
        while True:
            try:
                return await self._run_request(chat=chat_id is not None, group=group,
                                                allow_paid_broadcast=data.get("allow_paid_broadcast", False),
                                                callback=callback, args=args, kwargs=kwargs)
            except RetryAfter as exc:
                # As PTB reads it: the public retry_after warns of its coming type change (a timedelta).
                sleep = exc._retry_after.total_seconds() + 0.1
                if waited + sleep > self.retry_after_bound_s:
                    raise
                waited += sleep
                log.info("Telegram asked to wait %.1f s (429); retrying (%.1f s waited so far)", sleep, waited)
                self._retry_after_event.clear()  # as PTB's: no other request goes out meanwhile
                try:
                    await asyncio.sleep(sleep)
                finally:
                    self._retry_after_event.set()
