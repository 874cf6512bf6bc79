"""The catalog in service, reloaded (the watch job or /reload): read the file until it holds still, validate it, swap
it into the holder every reply reads (bot/features/core.py) whole, and hand a changed version to the announcement
workflow."""
from __future__ import annotations

import asyncio
import hashlib
import html
import logging
from pathlib import Path

from telegram.error import TelegramError

from bot import metrics
from bot.config import Settings
from bot.features.core import CatalogHolder, ReloadOutcome
from bot.operators.alerts import Sender
from bot.operators.announcements import AnnouncementWorkflow, short_sha
from bot.store import DATABASE_ERRORS
from bot.texts.i18n import t
from catalog.loader import CatalogError, LoadedCatalog, parse_catalog_bytes, read_catalog_file

log = logging.getLogger(__name__)
esc = html.escape


class CatalogService:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, sender: Sender,
                 announcements: AnnouncementWorkflow, lang: str = "en"):
        self.settings = settings
        self.catalogs = catalogs
        self.sender = sender
        self.announcements = announcements
        self.lang = lang
        self._check_lock = asyncio.Lock()
        self._rejected_sha: str | None = None
        self._rejected_error = ""
        self._unreadable_error: str | None = None  # why the file could not be read at the last try, if it could not
        # A version in service whose announcement the store could not take (an outage): tried again at each watch
        # tick until it can, instead of being "unchanged" from then on and never announced.
        self._unannounced_sha: str | None = None

    async def check(self, *, force: bool = False) -> ReloadOutcome:
        """Read the catalog file; swap in a valid new version and announce what changed since the last post."""
        async with self._check_lock:
            loaded = self.catalogs.loaded
            path = loaded.path
            try:
                # Bounded like the start's read (a regular file, at most the size cap, within a time-out): a FIFO,
                # /dev/zero or a hung volume is refused in one line instead of wedging the watch job and /reload.
                raw = await asyncio.to_thread(read_catalog_file, path)
            except CatalogError as exc:
                return await self._reject(str(exc), None, force)
            self._unreadable_error = None
            sha = hashlib.sha256(raw).hexdigest()
            if sha == loaded.sha256 and not force and sha != self._unannounced_sha:
                return ReloadOutcome("unchanged", t(self.lang, "reload.unchanged", sha=short_sha(sha)))
            if sha == self._rejected_sha and not force:
                # An invalid version is reported once and not parsed again at every watch tick.
                return ReloadOutcome("invalid", t(self.lang, "reload.invalid", error=esc(self._rejected_error)))
            if not await self._holds_still(path, raw):
                log.info("catalog file %s is still changing; taken once it holds still", path)
                return ReloadOutcome("unsettled", t(self.lang, "reload.unsettled",
                                                    delay=f"{self.settings.catalog_settle_s:g}"))
            try:
                # The same strict loader as the start (UTF-8, size cap), off the event loop: a large or hostile
                # file must not stall customers' replies.
                catalog = await asyncio.to_thread(parse_catalog_bytes, raw, str(path))
            except CatalogError as exc:
                metrics.CATALOG_RELOADS.labels("rejected").inc()
                return await self._reject(str(exc), sha, force)
            text = raw.decode("utf-8")
            self._rejected_sha = None
            if sha != loaded.sha256:
                self.catalogs.put(LoadedCatalog(catalog, path, sha))
                metrics.CATALOG_RELOADS.labels("applied").inc()
                log.info("catalog %s reloaded (%s, %d cards)", catalog.id, short_sha(sha), len(catalog.cards))
            loaded_text = t(self.lang, "reload.loaded", provider=esc(catalog.provider), count=len(catalog.cards),
                            sha=short_sha(sha))
            try:
                announced = await self.announcements.announce(catalog, sha, text)
            except DATABASE_ERRORS as exc:
                # One line per version while the store is down (the watch tries every tick), no traceback.
                if self._unannounced_sha != sha:
                    log.warning("catalog %s is in service; its announcement waits for the store (%s: %s)",
                                short_sha(sha), exc.__class__.__name__, (str(exc).splitlines() or [""])[0][:200])
                self._unannounced_sha = sha
                return ReloadOutcome("store_failed", loaded_text + "\n" + t(self.lang, "reload.store_failed"))
            if self._unannounced_sha is not None:
                log.info("catalog %s: the store is back, its announcement made (%s)", short_sha(sha), announced.status)
            self._unannounced_sha = None
            if announced.text is not None:
                loaded_text += "\n" + announced.text
            return ReloadOutcome(announced.status, loaded_text, announced.announcement_id)

    async def _holds_still(self, path: Path, raw: bytes) -> bool:
        """True when the file reads the same again after the settle delay (a writer rewriting it in place is
        still at work otherwise; the next watch tick or /reload tries again)."""
        delay = self.settings.catalog_settle_s
        if delay <= 0:
            return True
        await asyncio.sleep(delay)
        try:
            return await asyncio.to_thread(read_catalog_file, path) == raw
        except CatalogError:
            return False

    async def _reject(self, error: str, sha: str | None, force: bool) -> ReloadOutcome:
        """`sha`: the broken version's; None when the file could not be read (`error` says why)."""
        text = t(self.lang, "reload.invalid", error=esc(error))
        # Tell the admins (and the log) once per problem, not at every watch tick: once per broken version, and
        # once per reason a file cannot be read (a directory, a missing file) until it can be read again.
        notified = sha != self._rejected_sha if sha is not None else error != self._unreadable_error
        if sha is None:
            self._unreadable_error = error
        if notified:
            log.warning("catalog rejected: %s", error)
            self._rejected_sha = sha
            self._rejected_error = error
            await self.notify_admins(text)
        return ReloadOutcome("invalid", text, notified=notified)

    async def notify_admins(self, text: str) -> None:
        for admin in self.settings.admin_ids:
            try:
                await self.sender.send_message(admin, text)
            except TelegramError as exc:
                log.warning("could not notify admin %s: %s", admin, exc)
