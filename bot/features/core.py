"""What every feature reads: the settings, the catalog in service, the store, the Hub lookup, and /reload's side
of the operators. One per process (the Telegram services, the terminal chat); the features are functions of it."""
from __future__ import annotations

from typing import Protocol

from bot.config import Settings
from bot.features.ask import Asker
from bot.features.caller import Caller
from bot.features.hub_lookup import HubLookup
from bot.operators.catalog_service import CatalogHolder, ReloadOutcome
from bot.store import Store
from catalog.schema import Catalog


class Reloader(Protocol):
    """/reload's side of the operators (bot.operators.announce.Announcer); the terminal chat has none."""

    async def check(self, *, force: bool = False) -> ReloadOutcome: ...


class Core:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, reloader: Reloader | None = None):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store
        self.reloader = reloader
        self.hub = HubLookup(store, enabled=settings.hf_lookup, timeout_s=settings.hf_timeout_s)

    @property
    def catalog(self) -> Catalog:
        return self.catalogs.catalog

    @property
    def topup_secret(self) -> str | None:
        return self.settings.topup_secret.get_secret_value() if self.settings.topup_secret else None

    def asker(self, caller: Caller, *, anonymous: bool = False) -> Asker:
        """The caller as an answer's reader: their settings, and their top-up reference unless `anonymous` (in a
        group, or an answer meant to be pasted elsewhere)."""
        return Asker(caller.preferences, None if anonymous else caller.id, self.topup_secret)
