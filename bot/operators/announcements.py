"""The announcement workflow: one channel post per catalog version and starting point, previewed to the admins
or posted at once, resumed part by part after a crash, and its alerts queued when it goes out.

Exactly-once bookkeeping lives in the store: a version is begun at most once (UNIQUE catalog id + file hash + the
hash of the last post it was diffed against), each part of a split post is recorded as an intent before it goes
out and with its message id after, so a restart, a second /reload or a crash part-way resumes instead of
repeating; a part whose fate is unknown (an intent without an id) is never posted again without an admin's answer.
What the channel knows is the last post of any catalog id: the bot serves one catalog, and renaming its `id` is
announced as a change with a notice to the admins instead of hiding every later change.
"""
from __future__ import annotations

import asyncio
import hashlib
import html
import logging
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, NetworkError, TelegramError

from bot import metrics
from bot.config import Settings
from bot.features.callbacks import AnnouncementButton, PartButton
from bot.operators.alerts import AlertDelivery, Sender, crash_point, fmt_percent
from bot.store import Announcement, Store
from bot.texts.i18n import fmt_gb, fmt_usd, t
from bot.texts.render import telegram_length, utf16_prefix
from catalog.diff import CatalogDiff, diff_catalogs
from catalog.loader import CatalogError, LoadedCatalog, parse_catalog, read_catalog_file
from catalog.schema import Catalog

log = logging.getLogger(__name__)
esc = html.escape
MESSAGE_LIMIT = 4096
# A version that removes more than this share of the last post's cards is held for an admin's Post even with
# auto-announce: a truncated file (22 of 76 byte-prefixes of the bundled catalog are valid catalogs)
# or a slip of the editor looks exactly like that, and "no longer offered" cannot be taken back in a channel.
CONFIRM_REMOVED_SHARE = 1 / 3


@dataclass(frozen=True, slots=True)
class Announced:
    """What announcing one catalog version did."""

    status: str  # no_changes | already | previewed | posted
    text: str | None  # a line for the admin who asked (HTML); None when the preview itself is the answer
    announcement_id: int | None = None


def short_sha(sha: str) -> str:
    return sha[:12]


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split at line boundaries into parts under `limit` UTF-16 units, as Telegram counts (a single over-long line
    is cut hard, never through an emoji)."""
    parts: list[str] = []
    current, used = "", 0
    for line in text.split("\n"):
        size = telegram_length(line)
        while size > limit:
            if current:
                parts.append(current)
                current, used = "", 0
            cut = max(1, utf16_prefix(line, limit))
            parts.append(line[:cut])
            line = line[cut:]
            size = telegram_length(line)
        if current and used + 1 + size > limit:
            parts.append(current)
            current, used = line, size
        elif current:
            current, used = f"{current}\n{line}", used + 1 + size
        else:
            current, used = line, size
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
        if await self.store.last_posted() is None:
            text = (await asyncio.to_thread(read_catalog_file, loaded.path)).decode("utf-8")
            announcement_id = await self.store.begin_announcement(loaded.catalog.id, loaded.sha256, text, "(baseline)")
            if announcement_id is not None:
                await self.store.mark_announcement_posted(announcement_id, [])

    async def announce_current(self, loaded: LoadedCatalog) -> Announced | None:
        """At a start: the file in service against the last post, so an edit made while the bot was down is
        announced too (None when the file changed again since it was loaded: the watch job takes that one)."""
        try:
            raw = await asyncio.to_thread(read_catalog_file, loaded.path)
        except CatalogError:
            return None
        if hashlib.sha256(raw).hexdigest() != loaded.sha256:
            return None
        return await self.announce(loaded.catalog, loaded.sha256, raw.decode("utf-8"))

    async def announce(self, catalog: Catalog, sha: str, text: str) -> Announced:
        """A valid new catalog version is in service: announce what changed since the last post, once."""
        last = await self.store.last_posted()
        previous = self._parse_posted(last)
        diff = diff_catalogs(previous, catalog) if previous is not None else None
        if last is None or previous is None or diff is None or diff.empty:
            return Announced("no_changes", t(self.lang, "reload.no_changes"))
        message = render_announcement(diff, catalog, self.lang, self.bot_username)
        notes = []
        if last.catalog_id != catalog.id:
            notes.append(t(self.lang, "announce.id_changed", old=esc(last.catalog_id), new=esc(catalog.id)))
        confirm = len(diff.removed) > CONFIRM_REMOVED_SHARE * len(previous.cards)
        if confirm:
            notes.append(t(self.lang, "announce.needs_confirmation", removed=len(diff.removed),
                           total=len(previous.cards)))
        # A version is announced once per starting point: the key is this file's hash and the hash of the last
        # posted version, so a restart or a second /reload finds the same key, while going back to an earlier
        # price (the same file as before, but a change for the channel) is a new announcement.
        announcement_id = await self.store.begin_announcement(
            catalog.id, sha, text, message, base_sha256=last.sha256, needs_confirmation=confirm,
            admin_note="\n".join(notes) or None)
        if announcement_id is None:
            return Announced("already", t(self.lang, "reload.pending"))
        crash_point("announced")
        # Older pending previews are superseded: this one is diffed against the same last post and so already
        # contains their changes; posting one of them now would announce a price that is no longer in service.
        for pending in await self.store.pending_announcements():
            if pending.id < announcement_id and not await self.store.announcement_part_states(pending.id):
                await self.store.discard_announcement(pending.id)
        if self.settings.announce_auto and self.settings.announce_chat and not confirm:
            return Announced("posted", await self.post(announcement_id), announcement_id)
        record = await self.store.get_announcement(announcement_id)
        if record is not None:
            await self.preview(record)
        return Announced("previewed", None, announcement_id)

    @staticmethod
    def _parse_posted(record: Announcement | None) -> Catalog | None:
        if record is None:
            return None
        try:
            return parse_catalog(record.catalog_text, "last announced catalog")
        except CatalogError:
            log.exception("the last announced catalog no longer validates; announcing against nothing")
            return None

    async def previous_catalog(self) -> Catalog | None:
        """The catalog of the last post (of any catalog id): what the channel knows."""
        return self._parse_posted(await self.store.last_posted())

    async def preview(self, record: Announcement) -> None:
        """The preview with Post/Discard to every admin; recorded once one of them has it, so a start after a
        crash in between sends it again (a pending announcement without a Post button is never posted)."""
        chat = self.settings.announce_chat
        head = t(self.lang, "announce.preview", chat=esc(chat or "—"), sha=short_sha(record.sha256))
        if record.admin_note:
            head = f"{record.admin_note}\n\n{head}"
        if not chat:
            head += "\n" + t(self.lang, "announce.no_chat")
        buttons = InlineKeyboardMarkup([[
            InlineKeyboardButton(t(self.lang, "button.post"),
                                 callback_data=AnnouncementButton("post", record.id).encode()),
            InlineKeyboardButton(t(self.lang, "button.discard"),
                                 callback_data=AnnouncementButton("discard", record.id).encode()),
        ]])
        parts = split_message(record.message, MESSAGE_LIMIT - telegram_length(head) - 2)
        delivered = not self.settings.admin_ids
        for admin in self.settings.admin_ids:
            try:
                for index, part in enumerate(parts):
                    last = index == len(parts) - 1
                    text = f"{head}\n\n{part}" if index == 0 else part
                    await self.sender.send_message(admin, text, reply_markup=buttons if last else None)
                delivered = True
            except TelegramError as exc:
                log.warning("could not send the preview to admin %s: %s", admin, exc)
        if delivered:
            await self.store.mark_preview_sent(record.id)

    async def post(self, announcement_id: int) -> str:
        """Post a pending announcement to the channel (resuming a half-done post), then queue its alerts."""
        async with self._post_lock:
            text, posted = await self._post(announcement_id)
        if posted:
            self.alerts.start_delivery()
        return text

    async def resolve_part(self, announcement_id: int, part: int, action: str) -> str:
        """An admin's answer about a part whose fate was unknown: 'there' counts it as posted, 'again' posts it
        once more; then the post goes on. A second answer to the same question changes nothing."""
        async with self._post_lock:
            if action == "there":
                changed = await self.store.confirm_announcement_part(announcement_id, part)
            else:
                changed = await self.store.forget_announcement_part(announcement_id, part)
            if not changed:
                return t(self.lang, "announce.part_answered")
            text, posted = await self._post(announcement_id)
        if posted:
            self.alerts.start_delivery()
        return text

    async def _post(self, announcement_id: int) -> tuple[str, bool]:
        record = await self.store.get_announcement(announcement_id)
        if record is None:
            return t(self.lang, "announce.not_found"), False
        if record.status != "pending":
            return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record.status}")), False
        chat = self.settings.announce_chat
        if not chat:
            return t(self.lang, "announce.no_chat"), False
        # The lock in post() keeps this process's posts apart; the store's claim keeps replicas apart.
        if not await self.store.claim_announcement(announcement_id, self.alerts.owner):
            return t(self.lang, "announce.posting"), False
        posted = False
        try:
            text, posted = await self._post_claimed(record, chat)
        finally:
            if not posted:
                # Not finished (an unknown part waits for an admin, or the post failed): resumable at once, here
                # or on another replica; a killed replica's claim expires by its lease.
                await self.store.release_announcement(announcement_id, self.alerts.owner)
        return text, posted

    async def _post_claimed(self, record: Announcement, chat: str) -> tuple[str, bool]:
        announcement_id = record.id
        parts = split_message(record.message)
        states = await self.store.announcement_part_states(announcement_id)
        for index, part in enumerate(parts):
            state = states.get(index)
            if state is not None and state.state != "intent":
                continue
            if state is not None:  # an intent from an earlier attempt: sent or not, nobody knows
                return await self._ask_about_part(record, parts, index, ask=state.asked_at is None), False
            await self.store.begin_announcement_part(announcement_id, index)
            try:
                message = await self.sender.send_message(chat, part)
            except BadRequest:
                await self.store.forget_announcement_part(announcement_id, index)  # refused: certainly not posted
                raise
            except NetworkError as exc:  # timed out, connection lost: the part may be in the channel
                log.warning("part %d of announcement %s: %s; its fate is unknown", index, announcement_id, exc)
                return await self._ask_about_part(record, parts, index, ask=True), False
            except TelegramError:
                await self.store.forget_announcement_part(announcement_id, index)
                raise
            crash_point("part")
            await self.store.record_announcement_part(announcement_id, index, message.message_id)
        sent = await self.store.announcement_parts(announcement_id)
        queued = await self._queue_alerts(record.id, record.catalog_text)
        await self.store.mark_announcement_posted(announcement_id, [sent[i] for i in sorted(sent)])
        log.info("announcement %s posted to %s in %d part(s); %d alerts queued", announcement_id, chat,
                 len(parts), queued)
        return t(self.lang, "announce.posted", chat=esc(chat), parts=len(parts), alerts=queued), True

    async def _ask_about_part(self, record: Announcement, parts: list[str], index: int, *, ask: bool) -> str:
        """Show the admins the exact part whose fate is unknown and ask: Post again / It is there."""
        waiting = t(self.lang, "announce.part_waiting", id=record.id, part=index + 1, parts=len(parts))
        if not ask:
            return waiting
        question = t(self.lang, "announce.part_unknown", id=record.id, part=index + 1, parts=len(parts),
                     chat=esc(self.settings.announce_chat or "—"))
        buttons = InlineKeyboardMarkup([[
            InlineKeyboardButton(t(self.lang, "button.part_again"),
                                 callback_data=PartButton("again", record.id, index).encode()),
            InlineKeyboardButton(t(self.lang, "button.part_there"),
                                 callback_data=PartButton("there", record.id, index).encode()),
        ]])
        if not self.settings.admin_ids:
            log.error("part %d of announcement %s has an unknown fate and there is no admin to ask", index, record.id)
        for admin in self.settings.admin_ids:
            try:
                await self.sender.send_message(admin, parts[index])
                await self.sender.send_message(admin, question, reply_markup=buttons)
            except TelegramError as exc:
                log.warning("could not ask admin %s about a part: %s", admin, exc)
        await self.store.mark_part_asked(record.id, index)
        return waiting

    async def _queue_alerts(self, announcement_id: int, catalog_text: str) -> int:
        # Before the post is marked posted: the diff is against the post before this one.
        catalog = parse_catalog(catalog_text, f"announcement {announcement_id}")
        previous = await self.previous_catalog()
        if previous is None:
            return 0
        queued = await self.alerts.queue(announcement_id, diff_catalogs(previous, catalog), catalog)
        metrics.ALERTS.labels("queued").inc(queued)
        return queued

    async def discard(self, announcement_id: int) -> str:
        record = await self.store.get_announcement(announcement_id)
        if record is None:
            return t(self.lang, "announce.not_found")
        if record.status != "pending":
            return t(self.lang, "announce.already", status=t(self.lang, f"announce.status_{record.status}"))
        await self.store.discard_announcement(announcement_id)
        return t(self.lang, "announce.discarded")

    async def resume(self) -> None:
        """After a restart: finish posts begun (asking about a part whose fate is unknown), post pending auto
        announcements that need no confirmation, and send again a preview that never went out."""
        auto = self.settings.announce_auto and bool(self.settings.announce_chat)
        await self.store.release_dead_posting_claims(self.alerts.owner_alive)
        for record in await self.store.pending_announcements():
            try:
                begun = bool(await self.store.announcement_part_states(record.id))
                if begun or (auto and not record.needs_confirmation):
                    await self.post(record.id)
                elif record.preview_sent_at is None:
                    await self.preview(record)
            except TelegramError as exc:
                log.warning("announcement %s could not be resumed: %s", record.id, exc)


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
