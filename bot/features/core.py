"""What every feature reads: the settings, the catalog in service, the store, the Hub lookup, and /reload's side
of the operators. One per process (the Telegram services, the terminal chat); the features are functions of it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.config import Settings
from bot.features.ask import Asker
from bot.features.caller import Caller
from bot.features.hub_lookup import HubLookup
from bot.store import Store
from catalog.loader import LoadedCatalog
from catalog.schema import Catalog
from engine.parse import Vocabulary


class CatalogHolder:
    """The catalog in service; swapped whole on a reload so a reply never mixes two versions."""

    def __init__(self, loaded: LoadedCatalog):
        self.put(loaded)

    def put(self, loaded: LoadedCatalog) -> None:
        """Put a validated catalog in service: the one place where what is derived from a catalog gets built.

        The parser's vocabulary is built here, once per catalog version, and swapped with it in one assignment,
        so a reply never reads one version's cards with another version's names."""
        self._current = (loaded, Vocabulary.of_catalog(loaded.catalog))

    @property
    def loaded(self) -> LoadedCatalog:
        return self._current[0]

    @loaded.setter
    def loaded(self, loaded: LoadedCatalog) -> None:
        self.put(loaded)

    @property
    def catalog(self) -> Catalog:
        return self._current[0].catalog

    @property
    def vocabulary(self) -> Vocabulary:
        """The model, card and region names of the catalog in service (engine.parse.Vocabulary)."""
        return self._current[1]


@dataclass(slots=True)
class ReloadOutcome:
    status: str  # unchanged | unsettled | invalid | store_failed | no_changes | previewed | posted | already
    text: str  # for the admin who asked (HTML)
    announcement_id: int | None = None
    notified: bool = False  # the admins were just told (an invalid file): no need to repeat it to the asker


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
