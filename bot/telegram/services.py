"""What the handlers need, opened in post_init and closed in post_shutdown: store, operators, the features' core,
flood guard."""
from __future__ import annotations

from bot.config import Settings
from bot.features.core import CatalogHolder, Core
from bot.operators.alerts import Sender
from bot.operators.announce import Announcer
from bot.store import Store
from bot.store.database import redacted
from bot.telegram.flood import FloodGuard


class StartFailed(Exception):
    """The bot could not start, said in one line without a secret (`cardfit bot` prints it and exits)."""


class Services:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, announcer: Announcer):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store
        self.announcer = announcer
        self.core = Core(settings, catalogs, store, reloader=announcer)
        self.flood = FloodGuard(settings.rate_limit_messages, settings.rate_limit_window_s)

    @classmethod
    async def open(cls, settings: Settings, catalogs: CatalogHolder, sender: Sender,
                   bot_username: str | None) -> Services:
        try:
            store = await Store.open(settings.db)
        except Exception as exc:  # noqa: BLE001 - whatever the driver raises, the start failed on the store
            raise StartFailed(f"could not open the store {redacted(settings.db)}: "
                              f"{exc.__class__.__name__}: {exc}"[:500]) from None
        return cls(settings, catalogs, store, Announcer(settings, catalogs, store, sender, bot_username=bot_username))

    async def close(self) -> None:
        await self.announcer.stop()
        await self.store.close()
