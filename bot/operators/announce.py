"""The operators' side of the bot wired together: the catalog service reloads, the workflow announces, the
delivery sends the alerts; one object for the handlers, the start-up hooks and the tests to hold."""
from __future__ import annotations

import asyncio
import logging

from telegram.error import TelegramError

from bot.config import Settings
from bot.features.core import CatalogHolder, ReloadOutcome
from bot.operators.alerts import AlertDelivery, Sender
from bot.operators.announcements import AnnouncementWorkflow
from bot.operators.catalog_service import CatalogService
from bot.store import AlertProgress, Store

log = logging.getLogger(__name__)


class Announcer:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, sender: Sender,
                 bot_username: str | None = None, lang: str = "en"):
        self.sender = sender
        self.alerts = AlertDelivery(settings, store, sender, lang)
        self.announcements = AnnouncementWorkflow(settings, store, sender, self.alerts, bot_username, lang)
        self.catalog = CatalogService(settings, catalogs, sender, self.announcements, lang)

    async def ensure_baseline(self) -> None:
        await self.announcements.ensure_baseline(self.catalog.catalogs.loaded)

    async def check(self, *, force: bool = False) -> ReloadOutcome:
        return await self.catalog.check(force=force)

    async def post(self, announcement_id: int) -> str:
        return await self.announcements.post(announcement_id)

    async def resolve_part(self, announcement_id: int, part: int, action: str) -> str:
        return await self.announcements.resolve_part(announcement_id, part, action)

    async def discard(self, announcement_id: int) -> str:
        return await self.announcements.discard(announcement_id)

    def start_delivery(self) -> asyncio.Task[dict[int, AlertProgress]]:
        return self.alerts.start_delivery()

    async def resume(self) -> None:
        """After a restart, in this order: alerts cut off between send and record become 'unknown' before any
        new send can claim one; half-done posts and missing previews are taken up; the file in service is
        announced against the last post (an edit made while the bot was down); the queue is delivered."""
        await self.alerts.resume()
        await self.announcements.resume()
        try:
            await self.announcements.announce_current(self.catalog.catalogs.loaded)
        except TelegramError as exc:  # the channel refuses: the pending announcement stays for a later Post
            log.warning("announcing the catalog in service at start failed: %s", exc)

    async def stop(self) -> None:
        await self.alerts.stop()
