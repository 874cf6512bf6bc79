"""The durable inbox: every update from Telegram is stored before it is confirmed, handled
from the store and marked done; what a dead process left is handled first at the next start. Owns the polling
loop (instead of PTB's Updater) and the polling lifecycle.

Why not PTB's Updater: it advances its getUpdates offset right after a fetch (telegram/ext/_updater.py,
`_start_polling`), so the next getUpdates confirms updates that only live in memory; a crash loses them all.
Here the offset only passes updates the store has (one INSERT per getUpdates batch), and webhook mode answers 200
only after the INSERT committed (bot/telegram/webhook.py).

Delivery rule (docs/operations.md, "the durable inbox"): no user is left without an answer, and none gets one
twice unlabeled. A row is 'received' until the first non-repeatable request of its handling (a send, an answer;
not an edit or a read) is about to go out: then 'sending', committed before that request, inside the rate limiter
after its wait (InboxRateLimiter). A row found 'received' after a crash is handled (nothing reached the user yet);
one found 'sending' may have been answered or not (Telegram has no idempotency key), so it is handled once more
and its messages carry the label "sent again after a restart"; cut off again, it becomes 'unknown'.

When the store refuses a mark (a full disk), the reply still goes out and the mark is kept in memory and written
again until the store takes it (Inbox.keep): the update is never handled again by this process, and a graceful
stop tries once more. Only a crash before the store takes it leaves the row 'received' (handled again, unlabeled);
a setting it writes then never reverts a newer one (bot/store/users.py set_preference compares update ids).
"""
from __future__ import annotations

import asyncio
import datetime as dtm
import json
import logging
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from telegram import Update
from telegram._utils.types import JSONDict
from telegram.error import InvalidToken, RetryAfter, TelegramError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest

from bot import metrics
from bot.operators.alerts import SEND_CLAIM, crash_point
from bot.store import DATABASE_ERRORS, INBOX_LEASE_S, Store, StoredUpdate
from bot.telegram.context import CardfitApplication
from bot.telegram.ptb import ResilientRateLimiter, label_repeat, repeatable, user_language
from bot.texts.i18n import t

log = logging.getLogger(__name__)
T = TypeVar("T")

# Telegram keeps an unconfirmed update for 24 hours (Bot API, getUpdates): a stored row older than that tells
# nothing about what Telegram still holds, and a finished one is pruned after it.
INBOX_KEEP_S = 24 * 3600.0
SWEEP_S = 30.0  # how often a running bot renews its lease and takes over a dead replica's stored updates
PRUNE_EVERY_S = 600.0
MAX_IN_HAND = 1000  # polling pauses while this many stored updates wait for their handlers
POLL_TIMEOUT = dtm.timedelta(seconds=10)  # PTB's run_polling default long-poll
INBOX_KEY = "inbox"  # its place in application.bot_data
RAW_UPDATES_KEY = "raw_updates_request"  # the RawUpdatesRequest of getUpdates, when build_application made one
# A mark the store refused is written again after this many seconds, growing to the second figure.
KEPT_RETRY_S = (0.5, 5.0)
# A graceful stop with marks still kept tries to write them for this long before it gives up (and says so).
KEPT_CLOSE_S = 5.0


class _GroupWrite:
    """One store write for many updates: ids that arrive while a write is in flight go together in the next one
    (a group commit), so the done marks of a burst of 64 concurrent handlers cost a few statements, not 64."""

    def __init__(self, write: Callable[[list[int]], Awaitable[None]]) -> None:
        self._write = write
        self._pending: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None

    async def add(self, update_id: int) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((update_id, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="cardfit-inbox-write")
        await future

    async def _run(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            error: BaseException | None = None
            try:
                await self._write([update_id for update_id, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to every waiter of this batch
                error = exc
            for _, future in batch:
                if future.done():
                    continue
                if error is None:
                    future.set_result(None)
                else:
                    future.set_exception(error)

    async def flush(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


@dataclass(slots=True)
class _Handling:
    """The update the current task handles (a ContextVar: PTB runs a blocking handler in the update's task)."""

    inbox: Inbox
    update_id: int
    finished: bool = False
    mark: asyncio.Future[bool] | None = field(default=None)  # True: the mark was written (or failed for good)
    repeat_label: str | None = None  # handled again after a crash cut its reply off: its messages carry this label


_handling: ContextVar[_Handling | None] = ContextVar("cardfit_inbox_handling", default=None)


class InboxRateLimiter(ResilientRateLimiter):
    """The bot's rate limiter, which sees every Bot API request but getUpdates: right before the first
    non-repeatable request of an update's handling goes out, its inbox row becomes 'sending' (committed)."""

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        handling = _handling.get()
        # An alert's send (its own claim, SEND_CLAIM) in a task started from an update's handler: not that update's.
        if handling is None or repeatable(endpoint) or SEND_CLAIM.get() is not None:
            return await super().process_request(callback, args, kwargs, endpoint, data, rate_limit_args)
        current = handling
        if current.repeat_label is not None:
            label_repeat(endpoint, data, current.repeat_label)

        async def marked(*call_args: Any, **call_kwargs: Any) -> bool | JSONDict | list[JSONDict]:
            # Inside the limiter, after its wait: the window between the mark and the request is the write alone.
            await current.inbox.before_send(current)
            return await callback(*call_args, **call_kwargs)

        return await super().process_request(marked, args, kwargs, endpoint, data, rate_limit_args)


class RawUpdatesRequest(HTTPXRequest):
    """The getUpdates connection (one connection, as PTB's default for it) that keeps the last answer's updates as
    Telegram sent them, so the inbox stores Telegram's own JSON of each update. One getUpdates runs at a time, so
    the last answer is the one the caller just got."""

    def __init__(self) -> None:
        super().__init__(connection_pool_size=1)
        self._last: list[Any] | None = None

    def parse_json_payload(self, payload: bytes) -> JSONDict:  # type: ignore[override]  # called on self
        data = super().parse_json_payload(payload)
        result = data.get("result") if isinstance(data, dict) else None
        self._last = result if isinstance(result, list) else None
        return data

    def payloads(self, updates: Sequence[Update]) -> list[str] | None:
        """The raw JSON of `updates` when the last answer holds exactly them, else None."""
        last, self._last = self._last, None
        if last is None or len(last) != len(updates):
            return None
        if any(not isinstance(raw, dict) or raw.get("update_id") != update.update_id
               for raw, update in zip(last, updates, strict=True)):
            return None
        return [json.dumps(raw, ensure_ascii=False, separators=(",", ":")) for raw in last]


class Inbox:
    """The stored updates of one running bot: accept (store, then hand to the Application), handle, mark."""

    def __init__(self, application: CardfitApplication, store: Store, owner: str, alive: Callable[[str], bool], *,
                 lease_s: float = INBOX_LEASE_S, sweep_s: float = SWEEP_S) -> None:
        self.application = application
        self.store = store
        self.owner = owner  # the process's claim owner (bot/operators/alerts.py AlertDelivery.owner): one per process
        self.alive = alive
        self.lease_s = lease_s
        self.sweep_s = sweep_s
        self.counts: Counter[str] = Counter()  # stored, duplicate, resumed, repeated, unknown, done, left, kept
        self._in_hand: set[int] = set()
        metrics.INBOX_BACKLOG.set_function(lambda: len(self._in_hand))
        self._early: list[Update] = []  # accepted before start(): dispatched after the resumed ones
        self._running = False
        self._stopping = False
        self._room = asyncio.Event()
        self._done = _GroupWrite(store.mark_updates_done)
        self._sweeper: asyncio.Task[None] | None = None
        self._pruned = float("-inf")
        self._chat_tails: dict[int, asyncio.Future[None]] = {}  # a chat's last dispatched update: done when handled
        # Marks the store refused (update id -> 'sending' or 'done'), written again by _write_kept until it takes
        # them: this process never handles those updates again meanwhile (its own rows are never claimed).
        self._kept: dict[int, str] = {}
        self._kept_writer: asyncio.Task[None] | None = None
        self._repeats: dict[int, str] = {}  # update id -> its repeat label, for updates resumed as repeats

    # -- taking updates in ------------------------------------------------------------------------------------

    async def accept(self, updates: Sequence[Update], payloads: Sequence[str] | None = None) -> int:
        """Store the updates (one transaction), then hand the newly stored ones to the Application. Raises one of
        DATABASE_ERRORS when the store cannot take them: then they must stay unconfirmed. `payloads`: the updates
        as Telegram sent them, when the caller has that text (webhook); else they are serialised here."""
        texts = payloads if payloads is not None else [update.to_json() for update in updates]
        stored = await self.store.store_updates(
            [StoredUpdate(update.update_id, text) for update, text in zip(updates, texts, strict=True)],
            self.owner, self.lease_s)
        crash_point("inbox-stored")
        self.counts["stored"] += len(stored)
        self.counts["duplicate"] += len(updates) - len(stored)
        for update in updates:
            if update.update_id in stored:
                metrics.UPDATES_RECEIVED.labels(metrics.update_kind(update)).inc()
                self._dispatch(update)
        return len(stored)

    def _dispatch(self, update: Update) -> None:
        self._in_hand.add(update.update_id)
        if not self._running:
            self._early.append(update)
            return
        # PTB's create_task: Application.stop() waits for these, like for its own update tasks.
        self.application.create_task(self._handle(update), name=f"cardfit-update-{update.update_id}")

    async def _handle(self, update: Update) -> None:
        handling = _Handling(self, update.update_id, repeat_label=self._repeats.pop(update.update_id, None))
        started = time.monotonic()
        # A chat's updates are handled one after another, in the order they came: a follow-up in the same batch
        # reads the chat context its question's answer committed. Other chats' updates run meanwhile.
        chat_id = update.effective_chat.id if update.effective_chat is not None else None
        previous = self._chat_tails.get(chat_id) if chat_id is not None else None
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if chat_id is not None:
            self._chat_tails[chat_id] = turn
        try:
            if previous is not None:
                await asyncio.wait((previous,))
            # PTB's own update processor, so `concurrent_updates(64)` still bounds the handlers running at once.
            await self.application.update_processor.process_update(update, self._process(update, handling))
        except Exception:  # noqa: BLE001 - PTB routes handler errors to the error handler; this is anything else
            log.exception("inbox: update %s failed outside its handlers", update.update_id)
            handling.finished = True
        finally:
            turn.set_result(None)
            if chat_id is not None and self._chat_tails.get(chat_id) is turn:
                del self._chat_tails[chat_id]
            self._in_hand.discard(update.update_id)
            self._room.set()
        if not handling.finished:
            self.counts["left"] += 1  # a stopping bot did not start it: stays 'received' for the next start
            return
        crash_point("inbox-handled")
        metrics.handled(metrics.update_kind(update), time.monotonic() - started)
        try:
            await self._done.add(update.update_id)
            self.counts["done"] += 1
        except DATABASE_ERRORS as exc:
            log.warning("inbox: could not mark update %s done (%s); kept in memory and written again",
                        update.update_id, exc.__class__.__name__)
            self.keep(update.update_id, "done")

    async def _process(self, update: Update, handling: _Handling) -> None:
        if self._stopping:
            return
        token = _handling.set(handling)
        try:
            await self.application.process_update(update)
        finally:
            _handling.reset(token)
            handling.finished = True

    async def before_send(self, handling: _Handling) -> None:
        """Committed before the first non-repeatable request of an update's handling: received -> sending. A
        store that cannot take it does not hold the reply back: the mark is kept in memory and written again."""
        while handling.mark is not None:
            if await asyncio.shield(handling.mark):  # another request of the same update wrote it (or tried)
                crash_point("inbox-sending")
                return
            # That request was cancelled before its write ended: this one writes the mark itself (idempotent; on
            # SQLite it queues behind the cancelled one on aiosqlite's thread, so it returns once that committed).
        # One row per write, in the update's own task, not a task of its own: it commits before the send.
        mark: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        handling.mark = mark
        written = False
        try:
            await self.store.mark_updates_sending([handling.update_id])
            written = True
        except DATABASE_ERRORS as exc:
            written = True  # tried: the reply goes out; the mark is kept in memory and written again
            log.warning("inbox: could not mark update %s sending (%s); kept in memory and written again",
                        handling.update_id, exc.__class__.__name__)
            self.keep(handling.update_id, "sending")
        finally:
            if not written:
                handling.mark = None  # cancelled: the next request of this update writes it
            mark.set_result(written)
        crash_point("inbox-sending")

    def keep(self, update_id: int, state: str) -> None:
        """A mark the store refused: kept in memory ('done' wins over 'sending') and written again until the
        store takes it, so the update is never handled again as if nothing had been sent."""
        if self._kept.get(update_id) != "done":
            self._kept[update_id] = state
        self.counts["kept"] += 1
        if self._kept_writer is None or self._kept_writer.done():
            self._kept_writer = asyncio.get_running_loop().create_task(self._write_kept(),
                                                                        name="cardfit-inbox-kept")

    async def _write_kept(self) -> None:
        delay, longest = KEPT_RETRY_S
        while self._kept:
            await asyncio.sleep(delay)
            if await self._flush_kept():
                log.info("inbox: the store took the kept marks again")
                return
            delay = min(longest, delay * 2)

    async def _flush_kept(self) -> bool:
        """Write the kept marks once; True when none is left."""
        for state, write in (("done", self.store.mark_updates_done), ("sending", self.store.mark_updates_sending)):
            ids = [update_id for update_id, kept in self._kept.items() if kept == state]
            if not ids:
                continue
            try:
                await write(ids)
            except DATABASE_ERRORS:
                return False
            for update_id in ids:
                if self._kept.get(update_id) == state:  # not raised from 'sending' to 'done' meanwhile
                    del self._kept[update_id]
        return not self._kept

    # -- lifecycle ----------------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Started and not stopping: accepted updates are handled at once."""
        return self._running and not self._stopping

    async def start(self) -> None:
        """After Application.start(): the stored updates no live process holds first (in update id order), then
        those accepted while starting; then the sweeper (lease renewal, other replicas' leftovers, pruning)."""
        resumed = await self._claim()
        self._running = True
        early, self._early = self._early, []
        for update in sorted([*resumed, *early], key=lambda u: u.update_id):
            self.application.create_task(self._handle(update), name=f"cardfit-update-{update.update_id}")
        await self._prune()
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="cardfit-inbox-sweep")

    async def _claim(self) -> list[Update]:
        resumed: list[Update] = []
        while True:
            found = await self.store.claim_open_updates(self.owner, self.alive, self.lease_s)
            if found.unknown:
                self.counts["unknown"] += len(found.unknown)
                metrics.INBOX_UNKNOWN.inc(len(found.unknown))
                log.warning("inbox: %d update(s) were cut off again while their repeated reply was going out: fate "
                            "unknown, not handled a third time (update ids %s)", len(found.unknown),
                            ", ".join(map(str, found.unknown[:20])))
            repeats = [row.update_id for row in found.handle if row.repeat]
            if repeats:
                self.counts["repeated"] += len(repeats)
                log.warning("inbox: %d update(s) were cut off while their reply was going out: handled once more, "
                            "labeled as a repeat (update ids %s)", len(repeats), ", ".join(map(str, repeats[:20])))
            for row in found.handle:
                try:
                    update = Update.de_json(json.loads(row.payload), self.application.bot)
                except (ValueError, TypeError, KeyError) as exc:
                    log.error("inbox: stored update %s is unreadable (%s); marked done", row.update_id, exc)
                    await self.store.mark_updates_done([row.update_id])
                    continue
                if row.repeat:
                    self._repeats[update.update_id] = await self._repeat_label(update)
                self._in_hand.add(update.update_id)
                resumed.append(update)
            if not found.handle and not found.unknown:
                break
        if resumed:
            self.counts["resumed"] += len(resumed)
            log.warning("inbox: handling %d stored update(s) a stopped or dead process had not handled",
                        len(resumed))
        return resumed

    async def _repeat_label(self, update: Update) -> str:
        """The repeat label in the language the user reads: their /set lang, else their client's."""
        language = user_language(update)
        user = update.effective_user
        if user is not None:
            try:
                language = (await self.store.get_preferences(user.id)).language or language
            except DATABASE_ERRORS:
                pass
        return t(language, "delivery.repeat")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_s)
            try:
                await self.store.renew_inbox_claims(self.owner, self.lease_s)
                for update in await self._claim():
                    self.application.create_task(self._handle(update), name=f"cardfit-update-{update.update_id}")
                await self._prune()
            except DATABASE_ERRORS as exc:
                log.warning("inbox: sweep failed (%s); next in %.0f s", exc.__class__.__name__, self.sweep_s)

    async def _prune(self) -> None:
        now = time.monotonic()
        if now - self._pruned < PRUNE_EVERY_S:
            return
        self._pruned = now
        pruned = await self.store.prune_inbox(time.time() - INBOX_KEEP_S)
        if pruned:
            log.info("inbox: pruned %d finished update(s) older than %.0f h", pruned, INBOX_KEEP_S / 3600)

    def begin_stop(self) -> None:
        """Stopping: updates whose handling has not begun stay stored for the next start (or another replica);
        those in progress finish (Application.stop() waits for them)."""
        self._stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()  # takes nothing more in

    async def close(self) -> None:
        """After Application.stop(): the last marks written, the unstarted updates given back."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self._done.flush()
        await self._close_kept()
        try:
            released = await self.store.release_inbox_claims(self.owner)
        except DATABASE_ERRORS as exc:
            log.warning("inbox: could not release claims (they expire by themselves): %s", exc.__class__.__name__)
            return
        if released:
            log.info("inbox: %d stored update(s) left for the next start", released)

    async def _close_kept(self) -> None:
        if self._kept_writer is not None:
            self._kept_writer.cancel()
            await asyncio.gather(self._kept_writer, return_exceptions=True)
        deadline = time.monotonic() + KEPT_CLOSE_S
        while self._kept and not await self._flush_kept() and time.monotonic() < deadline:
            await asyncio.sleep(KEPT_RETRY_S[0])
        if self._kept:
            log.error("inbox: the store refused the marks of %d answered update(s) until the end; the next start "
                      "handles them again (update ids %s)", len(self._kept), ", ".join(map(str, list(self._kept)[:20])))

    # -- polling ------------------------------------------------------------------------------------------------

    async def poll(self, stop: asyncio.Event, timeout: dtm.timedelta = POLL_TIMEOUT) -> None:
        """getUpdates until `stop`: the offset passes an update only once the store has it. Errors as PTB's
        network_retry_loop treats them (telegram/ext/_utils/networkloop.py): RetryAfter waits, a time-out polls
        again, InvalidToken ends polling, any other TelegramError goes to the error handler (update None, as
        run_polling's error_callback) with a backoff of 1 s growing to 30 s."""
        top = await self.store.inbox_offset(time.time() - INBOX_KEEP_S)
        offset = None if top is None else top + 1
        found = self.application.bot_data.get(RAW_UPDATES_KEY)
        raw = found if isinstance(found, RawUpdatesRequest) else None
        interval = 0.0
        while not stop.is_set():
            await self._wait_for_room(stop)
            try:
                updates = await _unless_stopped(stop, self.application.bot.get_updates(offset=offset,
                                                                                       timeout=timeout))
                if updates:
                    await self.accept(updates, raw.payloads(updates) if raw is not None else None)
                    offset = updates[-1].update_id + 1  # only now: everything up to it is stored
                interval = 0.0
            except RetryAfter as exc:
                wait = exc.retry_after
                interval = 0.5 + (wait.total_seconds() if isinstance(wait, dtm.timedelta) else float(wait))
            except TimedOut:
                interval = 0.0
            except InvalidToken:
                raise
            except TelegramError as exc:
                self.application.create_task(self.application.process_error(update=None, error=exc))
                interval = _backoff(interval)
            except DATABASE_ERRORS as exc:
                log.warning("inbox: the store refused fetched updates (%s: %s); they stay unconfirmed and are "
                            "fetched again", exc.__class__.__name__, exc)
                interval = _backoff(interval)
            except Exception:  # noqa: BLE001 - as PTB's polling: an unreadable answer is logged, polling goes on
                log.exception("inbox: fetching updates failed; they stay unconfirmed and are fetched again")
                interval = _backoff(interval)
            if interval:
                await _unless_stopped(stop, asyncio.sleep(interval))

    async def _wait_for_room(self, stop: asyncio.Event) -> None:
        while len(self._in_hand) >= MAX_IN_HAND and not stop.is_set():
            self._room.clear()
            await _unless_stopped(stop, self._room.wait())


def _backoff(interval: float) -> float:
    return 1.0 if interval == 0 else min(30.0, 1.5 * interval)


async def _unless_stopped(stop: asyncio.Event, awaitable: Awaitable[T]) -> T | None:
    """The awaitable's result, or None when `stop` was set first (the awaitable is then cancelled)."""
    task = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((task, stopper), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


async def initialize(application: CardfitApplication) -> None:
    """Application.initialize(); when it fails (getMe refused or unreachable), the connections its bot opened are
    closed again: PTB's Bot.shutdown does nothing for a bot whose initialize did not finish."""
    try:
        await application.initialize()
    except BaseException:
        requests = [application.bot.request, application.bot_data.get(RAW_UPDATES_KEY)]
        for request in requests:
            if isinstance(request, BaseRequest):
                try:
                    await request.shutdown()
                except Exception:  # noqa: BLE001 - the first error is the one to report
                    log.debug("closing a connection after a failed start failed", exc_info=True)
        raise


def inbox_of(application: CardfitApplication) -> Inbox | None:
    """The application's inbox, once post_init opened the store (bot/telegram/app.py); None before."""
    inbox = application.bot_data.get(INBOX_KEY)
    return inbox if isinstance(inbox, Inbox) else None


async def serve_polling(application: CardfitApplication, stop: asyncio.Event | None = None) -> None:
    """Run the bot by polling until SIGTERM/SIGINT (or `stop`): run_polling's lifecycle (initialize, post_init,
    deleteWebhook, start ... stop, post_stop, shutdown, post_shutdown) around the inbox's getUpdates loop."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await initialize(application)  # getMe: InvalidToken for a refused token, as with run_polling
        try:
            if application.post_init is not None:
                await application.post_init(application)
            inbox = inbox_of(application)
            if inbox is None:
                raise RuntimeError("the inbox was not opened in post_init")
            # As PTB's Updater bootstraps: polling on a bot that had a webhook deletes it (pending updates kept).
            await application.bot.delete_webhook(drop_pending_updates=False)
            await application.start()
            await inbox.start()
            log.info("polling for updates")
            await inbox.poll(stop)
            inbox.begin_stop()
            await application.stop()
            if application.post_stop is not None:
                await application.post_stop(application)
            await inbox.close()
        finally:
            if application.running:
                await application.stop()
            await application.shutdown()
            if application.post_shutdown is not None:
                await application.post_shutdown(application)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
