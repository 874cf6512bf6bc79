"""The announcement workflow: one channel post per catalog version and starting point, previewed to the admins
or posted at once, resumed part by part after a crash, and its alerts queued when it goes out.

Exactly-once bookkeeping lives in the store: a version is begun at most once (UNIQUE catalog id + file hash + the
hash of the last post it was diffed against), each part of a split post is recorded as it goes out, so a restart,
a second /reload or a crash part-way resumes instead of repeating.
"""
from __future__ import annotations

import asyncio
import html
import logging
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import TelegramError

from bot.alerts import AlertDelivery, Sender, fmt_percent
from bot.callbacks import AnnouncementButton
from bot.config import Settings
from bot.i18n import fmt_gb, fmt_usd, t
from bot.store import Store
from catalog.diff import CatalogDiff, diff_catalogs
from catalog.loader import CatalogError, LoadedCatalog, parse_catalog
from catalog.schema import Catalog

log = logging.getLogger(__name__)
esc = html.escape
MESSAGE_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class Announced:
    """What announcing one catalog version did."""

    status: str  # no_changes | already | previewed | posted
    text: str | None  # a line for the admin who asked (HTML); None when the preview itself is the answer
    announcement_id: int | None = None


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


def render_announcement(diff: CatalogDiff, catalog: Catalog, lang: str = "en", bot_username: str | None = None) -> str:
    lines = [t(lang, "announce.title", provider=esc(diff.provider))]
    if diff.prices:
        lines += ["", t(lang, "announce.prices")]
        for price in diff.prices:
            lines.append(t(lang, "announce.price_line", card=esc(price.card_name),
                           old_monthly=fmt_usd(lang, price.old_monthly_usd),
                           new_monthly=fmt_usd(lang, price.new_monthly_usd), percent=fmt_percent(lang, price.percent),
                           old_hourly=fmt_usd(lang, price.old_hourly_usd),
                           new_hourly=fmt_usd(lang, price.new_hourly_usd)))
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
        for stock in diff.stock:
            lines.append(t(lang, "announce.stock_line", card=esc(stock.card_name), region=esc(stock.region),
                           old=unknown if stock.old is None else stock.old,
                           new=unknown if stock.new is None else stock.new))
    if bot_username:
        lines += ["", t(lang, "announce.footer", bot=esc(bot_username))]
    return "\n".join(lines)


class AnnouncementWorkflow:
    def __init__(self, settings: Settings, store: Store, sender: Sender, alerts: AlertDelivery,
                 bot_username: str | None = None, lang: str = "en"):
        self.settings = settings
        self.store = store
        self.sender = sender
        self.alerts = alerts
        self.bot_username = bot_username
        self.lang = lang
        self._post_lock = asyncio.Lock()

    async def ensure_baseline(self, loaded: LoadedCatalog) -> None:
        """The first catalog a store ever sees is what the channel knows: recorded as announced, never posted."""
        if await self.store.last_announced(loaded.catalog.id) is None:
            text = loaded.path.read_text(encoding="utf-8")
            announcement_id = await self.store.begin_announcement(loaded.catalog.id, loaded.sha256, text, "(baseline)")
            if announcement_id is not None:
                await self.store.mark_announcement_posted(announcement_id, [])

    async def announce(self, catalog: Catalog, sha: str, text: str) -> Announced:
        """A valid new catalog version is in service: announce what changed since the last post, once."""
        previous = await self.previous_catalog(catalog.id)
        diff = diff_catalogs(previous, catalog) if previous is not None else None
        if diff is None or diff.empty:
            return Announced("no_changes", t(self.lang, "reload.no_changes"))
        message = render_announcement(diff, catalog, self.lang, self.bot_username)
        # A version is announced once per starting point: the key is this file's hash and the hash of the last
        # posted version, so a restart or a second /reload finds the same key, while going back to an earlier
        # price (the same file as before, but a change for the channel) is a new announcement.
        base = await self.store.last_announced(catalog.id) or ""
        announcement_id = await self.store.begin_announcement(catalog.id, sha, text, message, base_sha256=base)
        if announcement_id is None:
            return Announced("already", t(self.lang, "reload.pending"))
        # Older pending previews are superseded: this one is diffed against the same last post and so already
        # contains their changes; posting one of them now would announce a price that is no longer in service.
        for pending in await self.store.pending_announcements():
            if pending.catalog_id == catalog.id and pending.id < announcement_id:
                await self.store.discard_announcement(pending.id)
        if self.settings.announce_auto and self.settings.announce_chat:
            return Announced("posted", await self.post(announcement_id), announcement_id)
        await self.preview(announcement_id, message, sha)
        return Announced("previewed", None, announcement_id)

    async def previous_catalog(self, catalog_id: str) -> Catalog | None:
        text = await self.store.last_announced_text(catalog_id)
        if text is None:
            return None
        try:
            return parse_catalog(text, "last announced catalog")
        except CatalogError:
            log.exception("the last announced catalog no longer validates; announcing against nothing")
            return None

    async def preview(self, announcement_id: int, message: str, sha: str) -> None:
        chat = self.settings.announce_chat
        head = t(self.lang, "announce.preview", chat=esc(chat or "—"), sha=short_sha(sha))
        if not chat:
            head += "\n" + t(self.lang, "announce.no_chat")
        buttons = InlineKeyboardMarkup([[
            InlineKeyboardButton(t(self.lang, "button.post"),
                                 callback_data=AnnouncementButton("post", announcement_id).encode()),
            InlineKeyboardButton(t(self.lang, "button.discard"),
                                 callback_data=AnnouncementButton("discard", announcement_id).encode()),
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
            if record.status != "pending":
                return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record.status}"))
            chat = self.settings.announce_chat
            if not chat:
                return t(self.lang, "announce.no_chat")
            # The lock above keeps this process's posts apart; the store's claim keeps replicas apart.
            if not await self.store.claim_announcement(announcement_id, self.alerts.owner):
                return t(self.lang, "announce.posting")
            parts = split_message(record.message)
            try:
                sent = await self.store.announcement_parts(announcement_id)
                for index, part in enumerate(parts):
                    if index in sent:
                        continue
                    message = await self.sender.send_message(chat, part)
                    await self.store.record_announcement_part(announcement_id, index, message.message_id)
                    sent[index] = message.message_id
                queued = await self._queue_alerts(record.id, record.catalog_text)
                await self.store.mark_announcement_posted(announcement_id, [sent[i] for i in sorted(sent)])
            except BaseException:
                # A failed post is resumable at once, here or on another replica (a killed one's lease expires).
                await self.store.release_announcement(announcement_id, self.alerts.owner)
                raise
            log.info("announcement %s posted to %s in %d part(s); %d alerts queued", announcement_id, chat,
                     len(parts), queued)
        self.alerts.start_delivery()
        return t(self.lang, "announce.posted", chat=esc(chat), parts=len(parts), alerts=queued)

    async def _queue_alerts(self, announcement_id: int, catalog_text: str) -> int:
        # Before the post is marked posted: the diff is against the post before this one.
        catalog = parse_catalog(catalog_text, f"announcement {announcement_id}")
        previous = await self.previous_catalog(catalog.id)
        if previous is None:
            return 0
        return await self.alerts.queue(announcement_id, diff_catalogs(previous, catalog), catalog)

    async def discard(self, announcement_id: int) -> str:
        record = await self.store.get_announcement(announcement_id)
        if record is None:
            return t(self.lang, "announce.not_found")
        if record.status != "pending":
            return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record.status}"))
        await self.store.discard_announcement(announcement_id)
        return t(self.lang, "announce.discarded")

    async def resume(self) -> None:
        """After a restart: finish half-posted auto announcements."""
        if self.settings.announce_auto and self.settings.announce_chat:
            for record in await self.store.pending_announcements():
                await self.post(record.id)


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
