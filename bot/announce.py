"""Catalog changes for operators: watch and reload the catalog file, diff it against the last announced version,
preview or post one channel announcement per version, and deliver price alerts to subscribers.

Exactly-once bookkeeping lives in the store: a version is begun at most once (UNIQUE catalog id + sha256), each
part of a split post is recorded as it goes out, alerts are queued idempotently and marked one by one, so a
restart, a second /reload or a crash part-way resumes instead of repeating.
"""
from __future__ import annotations

import asyncio
import hashlib
import html
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import Forbidden, RetryAfter, TelegramError

from bot.config import Settings
from bot.conversation import CatalogHolder
from bot.i18n import fmt_gb, fmt_number, fmt_usd, t
from bot.store import Store
from catalog.diff import CatalogDiff, diff_catalogs
from catalog.loader import CatalogError, LoadedCatalog, parse_catalog
from catalog.schema import Catalog

log = logging.getLogger(__name__)
esc = html.escape
MESSAGE_LIMIT = 4096
PROGRESS_EVERY_S = 3.0


class Sender(Protocol):
    async def send_message(self, chat_id: int | str, text: str, **kwargs: Any) -> Any: ...
    async def edit_message_text(self, text: str, chat_id: int | str | None = None, message_id: int | None = None,
                                **kwargs: Any) -> Any: ...


@dataclass(slots=True)
class ReloadOutcome:
    status: str  # unchanged | invalid | no_changes | previewed | posted | already
    text: str  # for the admin who asked (HTML)
    announcement_id: int | None = None
    notified: bool = False  # the admins were just told (an invalid file): no need to repeat it to the asker


def short_sha(sha: str) -> str:
    return sha[:12]


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split at line boundaries into parts under `limit` (a single over-long line is cut hard)."""
    parts: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            parts.append(current)
            current = line
        else:
            current = candidate
    if current:
        parts.append(current)
    return parts


def _percent(lang: str, value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    return f"{sign}{fmt_number(lang, abs(value), 1)} %"


def render_announcement(diff: CatalogDiff, catalog: Catalog, lang: str = "en", bot_username: str | None = None) -> str:
    lines = [t(lang, "announce.title", provider=esc(diff.provider))]
    if diff.prices:
        lines += ["", t(lang, "announce.prices")]
        for change in diff.prices:
            lines.append(t(lang, "announce.price_line", card=esc(change.card_name),
                           old_monthly=fmt_usd(lang, change.old_monthly_usd),
                           new_monthly=fmt_usd(lang, change.new_monthly_usd), percent=_percent(lang, change.percent),
                           old_hourly=fmt_usd(lang, change.old_hourly_usd), new_hourly=fmt_usd(lang, change.new_hourly_usd)))
    if diff.added:
        lines += ["", t(lang, "announce.added")]
        for card in diff.added:
            lines.append(t(lang, "announce.added_line", card=esc(card.name), vram=fmt_gb(lang, card.vram_gb, 0),
                           monthly=fmt_usd(lang, catalog.monthly_list_price_usd(card)),
                           hourly=fmt_usd(lang, catalog.hourly_list_price_usd(card))))
    if diff.removed:
        lines += ["", t(lang, "announce.removed")]
        lines += [t(lang, "announce.removed_line", card=esc(card.name)) for card in diff.removed]
    if diff.stock:
        lines += ["", t(lang, "announce.stock")]
        unknown = t(lang, "announce.unknown_stock")
        for change in diff.stock:
            lines.append(t(lang, "announce.stock_line", card=esc(change.card_name), region=esc(change.region),
                           old=unknown if change.old is None else change.old,
                           new=unknown if change.new is None else change.new))
    if bot_username:
        lines += ["", t(lang, "announce.footer", bot=esc(bot_username))]
    return "\n".join(lines)


def alerts_for(diff: CatalogDiff, catalog: Catalog, card_id: str, below_usd: float | None, lang: str) -> str | None:
    """The alert text for one subscription, or None when the announced change does not match it.

    A price threshold is in the catalog's own unit (per month for a monthly catalog, per hour for an hourly one)
    and matches when the new price is below it; without a threshold any change to the card matches.
    """
    unit_price = (lambda hourly, monthly: monthly) if catalog.price_unit == "month" else (lambda hourly, monthly: hourly)
    footer = t(lang, "alert.footer", card_id=esc(card_id))
    for change in diff.prices:
        if change.card_id == card_id:
            if below_usd is not None and unit_price(change.new_hourly_usd, change.new_monthly_usd) >= below_usd:
                return None
            return t(lang, "alert.price", card=esc(change.card_name), provider=esc(diff.provider),
                     monthly=fmt_usd(lang, change.new_monthly_usd), hourly=fmt_usd(lang, change.new_hourly_usd),
                     old_monthly=fmt_usd(lang, change.old_monthly_usd), percent=_percent(lang, change.percent)) + "\n" + footer
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
        for change in diff.stock:
            if change.card_id == card_id:
                unknown = t(lang, "announce.unknown_stock")
                return t(lang, "alert.stock", card=esc(change.card_name), provider=esc(diff.provider),
                         region=esc(change.region), new=unknown if change.new is None else change.new,
                         old=unknown if change.old is None else change.old) + "\n" + footer
    return None


class Announcer:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, sender: Sender,
                 bot_username: str | None = None, lang: str = "en"):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store
        self.sender = sender
        self.bot_username = bot_username
        self.lang = lang
        self._check_lock = asyncio.Lock()
        self._post_lock = asyncio.Lock()
        self._deliver_lock = asyncio.Lock()
        self._rejected_sha: str | None = None
        self._delivery: asyncio.Task | None = None

    # -- the catalog in service ----------------------------------------------------------------------------

    async def ensure_baseline(self) -> None:
        """The first catalog a store ever sees is what the channel knows: recorded as announced, never posted."""
        loaded = self.catalogs.loaded
        if await self.store.last_announced(loaded.catalog.id) is None:
            text = loaded.path.read_text(encoding="utf-8")
            announcement_id = await self.store.begin_announcement(loaded.catalog.id, loaded.sha256, text, "(baseline)")
            if announcement_id is not None:
                await self.store.mark_announcement_posted(announcement_id, [])

    async def check(self, *, force: bool = False) -> ReloadOutcome:
        """Read the catalog file; swap in a valid new version and announce what changed since the last post."""
        async with self._check_lock:
            loaded = self.catalogs.loaded
            path = loaded.path
            try:
                raw = await asyncio.to_thread(path.read_bytes)
            except OSError as exc:
                return await self._reject(f"{path}: cannot read: {exc.strerror}", None, force)
            sha = hashlib.sha256(raw).hexdigest()
            if sha == loaded.sha256 and not force:
                return ReloadOutcome("unchanged", t(self.lang, "reload.unchanged", sha=short_sha(sha)))
            try:
                catalog = parse_catalog(raw.decode("utf-8", errors="replace"), str(path))
            except CatalogError as exc:
                return await self._reject(str(exc), sha, force)
            self._rejected_sha = None
            if sha != loaded.sha256:
                self.catalogs.loaded = LoadedCatalog(catalog, path, sha)
                log.info("catalog %s reloaded (%s, %d cards)", catalog.id, short_sha(sha), len(catalog.cards))
            loaded_text = t(self.lang, "reload.loaded", provider=esc(catalog.provider), count=len(catalog.cards),
                            sha=short_sha(sha))
            return await self._announce_version(catalog, sha, raw.decode("utf-8", errors="replace"), loaded_text)

    async def _reject(self, error: str, sha: str | None, force: bool) -> ReloadOutcome:
        text = t(self.lang, "reload.invalid", error=esc(error))
        notified = sha is None or sha != self._rejected_sha
        if notified:  # tell the admins (and the log) once per broken version, not at every watch tick
            log.warning("catalog rejected: %s", error)
            self._rejected_sha = sha
            await self.notify_admins(text)
        return ReloadOutcome("invalid", text, notified=notified)

    async def _announce_version(self, catalog: Catalog, sha: str, text: str, loaded_text: str) -> ReloadOutcome:
        previous = await self.previous_catalog(catalog.id)
        diff = diff_catalogs(previous, catalog) if previous is not None else None
        if diff is None or diff.empty:
            return ReloadOutcome("no_changes", loaded_text + "\n" + t(self.lang, "reload.no_changes"))
        message = render_announcement(diff, catalog, self.lang, self.bot_username)
        # A version is announced once per starting point: the key is this file's hash and the hash of the last
        # posted version, so a restart or a second /reload finds the same key, while going back to an earlier
        # price (the same file as before, but a change for the channel) is a new announcement.
        base = (await self.store.last_announced(catalog.id) or "").split("@")[0]
        announcement_id = await self.store.begin_announcement(catalog.id, f"{sha}@{base}", text, message)
        if announcement_id is None:
            return ReloadOutcome("already", loaded_text + "\n" + t(self.lang, "reload.pending"))
        # Older pending previews are superseded: this one is diffed against the same last post and so already
        # contains their changes; posting one of them now would announce a price that is no longer in service.
        for record in await self.store.pending_announcements():
            if record["catalog_id"] == catalog.id and record["id"] < announcement_id:
                await self.store.discard_announcement(record["id"])
        if self.settings.announce_auto and self.settings.announce_chat:
            result = await self.post(announcement_id)
            return ReloadOutcome("posted", loaded_text + "\n" + result, announcement_id)
        await self.preview(announcement_id, message, sha)
        return ReloadOutcome("previewed", loaded_text, announcement_id)

    async def previous_catalog(self, catalog_id: str) -> Catalog | None:
        text = await self.store.last_announced_text(catalog_id)
        if text is None:
            return None
        try:
            return parse_catalog(text, "last announced catalog")
        except CatalogError:
            log.exception("the last announced catalog no longer validates; announcing against nothing")
            return None

    # -- preview, post, discard ----------------------------------------------------------------------------

    async def preview(self, announcement_id: int, message: str, sha: str) -> None:
        chat = self.settings.announce_chat
        head = t(self.lang, "announce.preview", chat=esc(chat or "—"), sha=short_sha(sha))
        if not chat:
            head += "\n" + t(self.lang, "announce.no_chat")
        buttons = InlineKeyboardMarkup([[
            InlineKeyboardButton(t(self.lang, "button.post"), callback_data=f"ann:post:{announcement_id}"),
            InlineKeyboardButton(t(self.lang, "button.discard"), callback_data=f"ann:discard:{announcement_id}"),
        ]])
        parts = split_message(message, MESSAGE_LIMIT - len(head) - 2)
        for admin in self.settings.admin_ids:
            try:
                for index, part in enumerate(parts):
                    last = index == len(parts) - 1
                    text = f"{head}\n\n{part}" if index == 0 else part
                    await self.sender.send_message(admin, text, reply_markup=buttons if last else None)
            except TelegramError as exc:
                log.warning("could not send the preview to admin %s: %s", admin, exc)

    async def post(self, announcement_id: int) -> str:
        """Post a pending announcement to the channel (resuming a half-done post), then queue its alerts."""
        async with self._post_lock:
            record = await self.store.get_announcement(announcement_id)
            if record is None:
                return t(self.lang, "announce.not_found")
            if record["status"] != "pending":
                return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record['status']}"))
            chat = self.settings.announce_chat
            if not chat:
                return t(self.lang, "announce.no_chat")
            parts = split_message(record["message"])
            sent = await self.store.announcement_parts(announcement_id)
            for index, part in enumerate(parts):
                if index in sent:
                    continue
                message = await self.sender.send_message(chat, part)
                await self.store.record_announcement_part(announcement_id, index, message.message_id)
                sent[index] = message.message_id
            queued = await self._queue_alerts(record)
            await self.store.mark_announcement_posted(announcement_id, [sent[i] for i in sorted(sent)])
            log.info("announcement %s posted to %s in %d part(s); %d alerts queued", announcement_id, chat,
                     len(parts), queued)
        self.start_delivery()
        return t(self.lang, "announce.posted", chat=esc(chat), parts=len(parts), alerts=queued)

    async def discard(self, announcement_id: int) -> str:
        record = await self.store.get_announcement(announcement_id)
        if record is None:
            return t(self.lang, "announce.not_found")
        if record["status"] != "pending":
            return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record['status']}"))
        await self.store.discard_announcement(announcement_id)
        return t(self.lang, "announce.discarded")

    async def _queue_alerts(self, record: dict) -> int:
        catalog = parse_catalog(record["catalog_text"], f"announcement {record['id']}")
        previous = await self.previous_catalog(catalog.id)
        if previous is None:
            return 0
        diff = diff_catalogs(previous, catalog)
        rows: list[tuple[int, str]] = []
        for card_id in sorted(diff.changed_card_ids()):
            for user_id, below in await self.store.subscribers_for(card_id):
                prefs = await self.store.get_preferences(user_id)
                lang = prefs.language or prefs.telegram_language or "en"
                text = alerts_for(diff, catalog, card_id, below, lang if lang in ("en", "de") else "en")
                if text is not None:
                    rows.append((user_id, text))
        # One message per user per announcement (the store's UNIQUE key): join a user's several cards.
        merged: dict[int, list[str]] = {}
        for user_id, text in rows:
            merged.setdefault(user_id, []).append(text)
        return await self.store.enqueue_alerts(record["id"], [(u, "\n\n".join(texts)) for u, texts in merged.items()])

    # -- alert delivery ------------------------------------------------------------------------------------

    def start_delivery(self) -> asyncio.Task:
        if self._delivery is None or self._delivery.done():
            self._delivery = asyncio.get_running_loop().create_task(self.deliver(), name="cardfit-alerts")
        return self._delivery

    async def deliver(self) -> dict[int, dict]:
        """Send queued alerts one after another under the rate limiter; every outcome is stored at once."""
        async with self._deliver_lock:
            progress_messages: dict[int, dict] = {}
            last_edit: dict[int, float] = {}
            touched: set[int] = set()
            while True:
                batch = await self.store.next_alerts(200)
                if not batch:
                    break
                for alert_id, announcement_id, user_id, text in batch:
                    status, error = await self._send_alert(user_id, text)
                    if status is None:
                        continue  # still queued (rate limited): picked up again by the next batch
                    await self.store.mark_alert(alert_id, status, error)
                    touched.add(announcement_id)
                    now = time.monotonic()
                    if now - last_edit.get(announcement_id, 0.0) >= PROGRESS_EVERY_S:
                        last_edit[announcement_id] = now
                        await self._progress(announcement_id, progress_messages)
            for announcement_id in touched:
                await self._progress(announcement_id, progress_messages)
            return {aid: await self.store.alert_progress(aid) for aid in touched}

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
        except TelegramError as exc:
            log.warning("alert to %s failed: %s", user_id, exc)
            return "failed", str(exc)[:200]

    async def _progress(self, announcement_id: int, messages: dict[int, dict]) -> None:
        if not self.settings.admin_ids:
            return
        counts = await self.store.alert_progress(announcement_id)
        text = t(self.lang, "alert.progress", id=announcement_id, sent=f"{counts.get('sent', 0):,}",
                 total=f"{counts.get('total', 0):,}", failed=counts.get("failed", 0), blocked=counts.get("blocked", 0))
        admin = self.settings.admin_ids[0]
        try:
            if announcement_id in messages:
                await self.sender.edit_message_text(text, chat_id=admin, message_id=messages[announcement_id]["id"])
            else:
                message = await self.sender.send_message(admin, text)
                messages[announcement_id] = {"id": message.message_id}
        except TelegramError as exc:
            if "not modified" not in str(exc).lower():
                log.warning("progress message failed: %s", exc)

    async def resume(self) -> None:
        """After a restart: finish half-posted auto announcements and undelivered alerts."""
        if self.settings.announce_auto and self.settings.announce_chat:
            for record in await self.store.pending_announcements():
                await self.post(record["id"])
        if await self.store.next_alerts(1):
            self.start_delivery()

    async def stop(self) -> None:
        """Cancel alert delivery (at shutdown); queued alerts stay queued and resume at the next start."""
        if self._delivery is not None and not self._delivery.done():
            self._delivery.cancel()
            try:
                await self._delivery
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down; the cause was logged
                pass

    async def notify_admins(self, text: str) -> None:
        for admin in self.settings.admin_ids:
            try:
                await self.sender.send_message(admin, text)
            except TelegramError as exc:
                log.warning("could not notify admin %s: %s", admin, exc)


def dry_run_text(current: LoadedCatalog, last_announced_text: str | None, lang: str = "en") -> str:
    """What `cardfit announce --dry-run` prints: the post the current file would produce."""
    if last_announced_text is None:
        return f"No catalog of {current.catalog.id} was announced yet: the current one ({short_sha(current.sha256)}) " \
               "becomes the baseline, nothing is posted."
    previous = parse_catalog(last_announced_text, "last announced catalog")
    diff = diff_catalogs(previous, current.catalog)
    if diff.empty:
        return t(lang, "reload.no_changes")
    return render_announcement(diff, current.catalog, lang)
