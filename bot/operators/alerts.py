"""Price-alert delivery: which subscribers an announced change reaches (and in which words), the queue, the sends
one after another under the rate limiter, and the progress message for the admin.

Delivery rule (docs/operations.md): once, or at worst twice with the second labeled. An alert is claimed
('sending', committed) right before its request goes out, inside the bot's rate limiter after its wait (SEND_CLAIM),
so a kill during the wait leaves it queued; it gets its outcome after. One found 'sending' at a start was cut off
between the two and may or may not have arrived (Telegram has no idempotency key): it is sent once more with the
label "sent again after a restart"; cut off again, it becomes 'unknown', counted in the progress message.
"""
from __future__ import annotations

import asyncio
import html
import logging
import os
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol

from telegram import InlineKeyboardMarkup
from telegram.error import Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut

from bot import metrics
from bot.config import Settings
from bot.operators.send_errors import never_reached_telegram
from bot.store import DATABASE_ERRORS, AlertProgress, QueuedAlert, Store
from bot.store.owners import new_owner, owner_alive
from bot.texts.i18n import fmt_number, fmt_usd, t
from catalog.diff import CatalogDiff
from catalog.schema import Catalog

log = logging.getLogger(__name__)
esc = html.escape
PROGRESS_EVERY_S = 3.0
# How long a sender that lost the progress message's claim waits for the winner's message id (one sendMessage).
PROGRESS_WAIT_S = 2.0
BATCH = 200
# Test-only (tests/test_crash_delivery.py): CARDFIT_TEST_CRASH_AT=<point>[:<n>] makes the process SIGKILL itself
# at the n-th (default first) pass of crash_point(<point>): "alert" right after an alert's send and before its
# record, "part" likewise for a channel part, "announced" after an announcement is recorded and before its
# preview. Unset in production, where crash_point is one dictionary lookup.
CRASH_ENV = "CARDFIT_TEST_CRASH_AT"
_crash_passes: Counter[str] = Counter()
# Set around one alert's send: the bot's rate limiter (bot/telegram/ptb.py ResilientRateLimiter, which says so with
# `runs_send_claim`) awaits it after its wait, right before the request goes out, so the alert's 'sending' claim is
# committed there and not before the wait (a kill then would leave it 'sending' although nothing went out).
SEND_CLAIM: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar("cardfit_send_claim", default=None)


class AlertTaken(Exception):  # noqa: N818 - not an error: the alert is no longer this sender's to send
    """Raised by an alert's claim inside the rate limiter when another sender took it meanwhile: nothing is sent."""


def crash_point(name: str) -> None:
    wanted = os.environ.get(CRASH_ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _crash_passes[name] += 1
    if _crash_passes[name] == (int(nth) if nth.isdigit() else 1):
        log.warning("test crash point %s reached: killing the process", name)
        os.kill(os.getpid(), signal.SIGKILL)


class Sender(Protocol):
    """What the operator side needs of a bot (PTB's ExtBot, or a recording fake in tests)."""

    async def send_message(self, chat_id: int | str, text: str, *,
                           reply_markup: InlineKeyboardMarkup | None = None) -> Any: ...
    async def edit_message_text(self, text: str, chat_id: int | str | None = None,
                                message_id: int | None = None) -> Any: ...


def fmt_percent(lang: str, value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    return f"{sign}{fmt_number(lang, abs(value), 1)} %"


def alerts_for(diff: CatalogDiff, catalog: Catalog, card_id: str, below_usd: float | None, lang: str) -> str | None:
    """The alert text for one subscription, or None when the announced change does not match it.

    A price threshold is in the catalog's own unit (per month for a monthly catalog, per hour for an hourly one)
    and matches when the new price is below it; without a threshold any change to the card matches.
    """
    def unit_price(hourly: float, monthly: float) -> float:
        return monthly if catalog.price_unit == "month" else hourly

    footer = t(lang, "alert.footer", card_id=esc(card_id))
    for price in diff.prices:
        if price.card_id == card_id:
            if below_usd is not None and unit_price(price.new_hourly_usd, price.new_monthly_usd) >= below_usd:
                return None
            return t(lang, "alert.price", card=esc(price.card_name), provider=esc(diff.provider),
                     monthly=fmt_usd(lang, price.new_monthly_usd), hourly=fmt_usd(lang, price.new_hourly_usd),
                     old_monthly=fmt_usd(lang, price.old_monthly_usd),
                     percent=fmt_percent(lang, price.percent)) + "\n" + footer
    for card in diff.added:
        if card.id == card_id:
            hourly, monthly = catalog.hourly_list_price_usd(card), catalog.monthly_list_price_usd(card)
            if below_usd is not None and unit_price(hourly, monthly) >= below_usd:
                return None
            return t(lang, "alert.added", provider=esc(diff.provider), card=esc(card.name),
                     monthly=fmt_usd(lang, monthly), hourly=fmt_usd(lang, hourly)) + "\n" + footer
    for card in diff.removed:
        if card.id == card_id:
            return t(lang, "alert.removed", card=esc(card.name), provider=esc(diff.provider)) + "\n" + footer
    if below_usd is None:
        for stock in diff.stock:
            if stock.card_id == card_id:
                unknown = t(lang, "announce.unknown_stock")
                return t(lang, "alert.stock", card=esc(stock.card_name), provider=esc(diff.provider),
                         region=esc(stock.region), new=unknown if stock.new is None else stock.new,
                         old=unknown if stock.old is None else stock.old) + "\n" + footer
    return None


def _delivery_ended(task: asyncio.Task[dict[int, AlertProgress]]) -> None:
    """A delivery run that failed: a store that refuses writes (a full disk, PostgreSQL down) is one line, the
    alerts stay queued for the next sweep or start; anything else is logged with its traceback. Either way its
    exception is retrieved (no "Task exception was never retrieved" later)."""
    if task.cancelled():
        return
    error = task.exception()
    if error is None:
        return
    if isinstance(error, DATABASE_ERRORS):
        log.warning("alert delivery stopped: the store failed (%s: %s); the queued alerts are sent by the next "
                    "sweep or start", error.__class__.__name__, str(error).splitlines()[0][:200] if str(error) else "")
    else:
        log.error("alert delivery failed", exc_info=error)


class AlertDelivery:
    def __init__(self, settings: Settings, store: Store, sender: Sender, lang: str = "en"):
        self.settings = settings
        self.store = store
        self.sender = sender
        self.lang = lang
        self._deliver_lock = asyncio.Lock()
        # Who holds a claimed alert (the store's lease), unique per sender even for replicas on one host.
        self.owner = new_owner()
        self._delivery: asyncio.Task[dict[int, AlertProgress]] | None = None
        self._stopping = False
        # Whether the sender's rate limiter runs SEND_CLAIM after its wait (PTB's bot); else (a fake sender in
        # tests) the claim is written before the send.
        self.claims_in_limiter = bool(getattr(getattr(sender, "rate_limiter", None), "runs_send_claim", False))

    async def queue(self, announcement_id: int, diff: CatalogDiff, catalog: Catalog) -> int:
        """Queue the alerts one posted announcement triggers; returns how many were newly queued. The subscribers
        and their languages come in one join; a text depends only on (card, threshold, language), so each is
        rendered once however many subscribers share it. Queued in chunks: calling it again after a crash
        between chunks queues the rest, never a user twice."""
        rendered: dict[tuple[str, float | None, str], str | None] = {}
        # One message per user per announcement (the store's UNIQUE key): a user's several cards joined, by card
        # id. Plain strings, not a list per user: 100,000 small containers would make each of Python's full
        # garbage collections (which stop every coroutine, a lock holder too) scan them all.
        merged: dict[int, str] = {}
        async for recipient in self.store.alert_recipients(sorted(diff.changed_card_ids())):
            lang = recipient.language or recipient.telegram_language or "en"
            key = (recipient.card_id, recipient.below_usd, lang if lang in ("en", "de") else "en")
            if key not in rendered:
                rendered[key] = alerts_for(diff, catalog, *key)
            text = rendered[key]
            if text is not None:
                earlier = merged.get(recipient.user_id)
                merged[recipient.user_id] = text if earlier is None else f"{earlier}\n\n{text}"
        return await self.store.enqueue_alerts(announcement_id, merged.items())

    def start_delivery(self) -> asyncio.Task[dict[int, AlertProgress]]:
        if self._delivery is None or self._delivery.done():
            self._delivery = asyncio.get_running_loop().create_task(self.deliver(), name="cardfit-alerts")
            self._delivery.add_done_callback(_delivery_ended)
        return self._delivery

    async def deliver(self) -> dict[int, AlertProgress]:
        """Send queued alerts one after another under the rate limiter; every outcome is stored at once. Each
        batch is claimed first, so replicas delivering at the same time never send one alert twice."""
        async with self._deliver_lock:
            try:
                return await self._deliver_claimed()
            finally:
                # A stopping sender hands its queued claims back at once; a killed one's claims expire
                # (ALERT_LEASE_S). Its 'sending' alerts stay: they are sent once more, labeled, when settled.
                try:
                    await self.store.release_alerts(self.owner)
                except DATABASE_ERRORS as exc:
                    log.warning("could not release alert claims (they expire by themselves): %s", exc)

    async def _deliver_claimed(self) -> dict[int, AlertProgress]:
        last_edit: dict[int, float] = {}
        touched: set[int] = set()
        # A dead replica's cut-off sends, once its lease ran out: queued again as labeled repeats.
        for announcement_id in await self.store.settle_interrupted_alerts(self.owner_alive):
            touched.add(announcement_id)
        while True:
            batch = await self.store.claim_alerts(self.owner, BATCH)
            if not batch:
                break
            for alert in batch:
                if self._stopping:
                    return {aid: await self.store.alert_progress(aid) for aid in touched}
                if not self.claims_in_limiter and not await self.store.claim_alert(alert.id, self.owner):
                    continue  # taken by another sender meanwhile
                try:
                    status, error = await self._send_claimed(alert)
                except AlertTaken:
                    continue  # taken by another sender meanwhile: nothing was sent
                except (asyncio.CancelledError, Exception):
                    # Cancelled without an answer (a forced stop after stop()'s grace period; a graceful one
                    # lets the send finish) or not a Telegram answer at all (the HTTP client already shut
                    # down): the alert goes back to the queue.
                    await self.store.release_alert(alert.id)
                    raise
                if status is None:
                    # Refused: certainly not sent; still claimed by us, so the next batch picks it up again.
                    await self.store.release_alert(alert.id)
                    continue
                crash_point("alert")
                await self.store.mark_alert(alert.id, status, error)
                metrics.ALERTS.labels(status).inc()
                touched.add(alert.announcement_id)
                now = time.monotonic()
                if now - last_edit.get(alert.announcement_id, 0.0) >= PROGRESS_EVERY_S:
                    last_edit[alert.announcement_id] = now
                    await self._progress(alert.announcement_id)
        for announcement_id in touched:
            await self._progress(announcement_id)
        return {aid: await self.store.alert_progress(aid) for aid in touched}

    async def _send_claimed(self, alert: QueuedAlert) -> tuple[str | None, str | None]:
        """The alert's send, claimed ('sending', committed) inside the rate limiter right before its request
        (once, however often the limiter retries it); a repeat after a crash carries the label saying so."""
        text = alert.text
        if alert.resent:
            text = f"{await self._repeat_label(alert.user_id)}\n\n{text}"
        if not self.claims_in_limiter:
            return await self._send_alert(alert.user_id, text)
        claimed = False

        async def claim() -> None:
            nonlocal claimed
            if claimed:
                return
            if not await self.store.claim_alert(alert.id, self.owner):
                raise AlertTaken(alert.id)
            claimed = True
            crash_point("alert-claimed")

        token = SEND_CLAIM.set(claim)
        try:
            return await self._send_alert(alert.user_id, text)
        finally:
            SEND_CLAIM.reset(token)

    async def _repeat_label(self, user_id: int) -> str:
        try:
            prefs = await self.store.get_preferences(user_id)
            lang = prefs.language or prefs.telegram_language or "en"
        except DATABASE_ERRORS:
            lang = "en"
        return t(lang if lang in ("en", "de") else "en", "delivery.repeat")

    def owner_alive(self, owner: str) -> bool:
        """Whether the sender that holds a claim may still be running (bot/store/owners.py)."""
        return owner_alive(owner)

    async def _send_alert(self, user_id: int, text: str) -> tuple[str | None, str | None]:
        try:
            await self.sender.send_message(user_id, text)
            return "sent", None
        except Forbidden as exc:
            return "blocked", str(exc)[:200]
        except RetryAfter as exc:
            # The rate limiter already waited and retried; back off once more and leave the alert queued.
            wait = exc.retry_after
            await asyncio.sleep((wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)) + 0.5)
            return None, None
        except TimedOut as exc:
            # The request may have reached Telegram and only the answer was lost: the user may have it.
            log.warning("alert to %s timed out; its delivery is unknown and it is not resent", user_id)
            return "unknown", str(exc)[:200]
        except NetworkError as exc:
            # A connection dropped after the request was written (not a connect failure or a 502 from Telegram's
            # front, which prove nothing arrived): as with a time-out, the user may have it.
            if not never_reached_telegram(exc):
                log.warning("alert to %s: connection lost after sending; delivery unknown, not resent", user_id)
                return "unknown", str(exc)[:200]
            log.warning("alert to %s failed: %s", user_id, exc)
            return "failed", str(exc)[:200]
        except TelegramError as exc:
            log.warning("alert to %s failed: %s", user_id, exc)
            return "failed", str(exc)[:200]

    async def _progress(self, announcement_id: int) -> None:
        """Send or edit the admin's progress message; its id is stored, so a restart edits the same message."""
        if not self.settings.admin_ids:
            return
        known = await self.store.progress_message(announcement_id)
        if known is None:
            known = await self._create_progress(announcement_id, await self._progress_text(announcement_id))
            if known is None:
                return
        text = await self._progress_text(announcement_id)  # read after a wait for the winner's message: current
        try:
            await self.sender.edit_message_text(text, chat_id=known[0], message_id=known[1])
        except TelegramError as exc:
            if "not modified" not in str(exc).lower():
                log.warning("progress message failed: %s", exc)

    async def _progress_text(self, announcement_id: int) -> str:
        counts = await self.store.alert_progress(announcement_id)
        text = t(self.lang, "alert.progress", id=announcement_id, sent=f"{counts['sent']:,}",
                 total=f"{counts['total']:,}", failed=counts["failed"], blocked=counts["blocked"])
        unknown = await self.store.alert_unknown(announcement_id)
        if unknown:
            text += t(self.lang, "alert.progress_unknown", unknown=f"{unknown:,}")
        return text

    async def _create_progress(self, announcement_id: int, text: str) -> tuple[int, int] | None:
        """Send the progress message when this sender wins its claim in the store (else replicas starting one
        fan-out at once would send one each) and say None; a sender that lost waits a moment for the winner's
        message id and says it (to edit), or None when it is not there yet: the winner's later edits show the
        counts."""
        admin = self.settings.admin_ids[0]
        if await self.store.claim_progress_message(announcement_id, admin, self.owner, self.owner_alive):
            try:
                message = await self.sender.send_message(admin, text)
            except TelegramError as exc:
                log.warning("progress message failed: %s", exc)
                await self.store.release_progress_claim(announcement_id, self.owner)
                return None
            await self.store.save_progress_message(announcement_id, admin, message.message_id)
            return None
        deadline = time.monotonic() + PROGRESS_WAIT_S
        while time.monotonic() < deadline:
            await asyncio.sleep(PROGRESS_WAIT_S / 20)
            known = await self.store.progress_message(announcement_id)
            if known is not None:
                return known
        return None

    async def resume(self) -> None:
        """After a restart: queue the alerts cut off between send and record once more, as labeled repeats (one
        cut off as a repeat already is counted unknown), show that in their progress messages, and deliver what is
        still queued."""
        for announcement_id, count in (await self.store.settle_interrupted_alerts(self.owner_alive)).items():
            log.warning("%d alert(s) of announcement %s were interrupted between send and record: sent once more, "
                        "labeled as a repeat (counted unknown when already a repeat)", count, announcement_id)
            await self._progress(announcement_id)
        await self.store.release_dead_claims(self.owner_alive)
        if await self.store.next_alerts(1):
            self.start_delivery()

    async def stop(self, grace_s: float = 10.0) -> None:
        """Stop alert delivery (at shutdown): the send in flight may finish (up to `grace_s`), so a graceful stop
        cuts no send off; queued alerts stay queued and resume at the next start."""
        self._stopping = True
        task = self._delivery
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), grace_s)
        except (TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down; the cause was logged
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down; the cause was logged
                pass
