"""The handlers' typed context (PTB's ContextTypes, as in its examples/contexttypesbot.py): the services and the
caller the pre-handler resolved, as properties, so no handler reaches into bot_data or imports the app."""
from __future__ import annotations

from typing import Any

from telegram.ext import Application, CallbackContext, ContextTypes, ExtBot, JobQueue

from bot.config import Settings
from bot.features.caller import Caller
from bot.features.core import CatalogHolder, Core
from bot.operators.announce import Announcer
from bot.store import Store
from bot.telegram.flood import FloodGuard
from bot.telegram.services import Services


class CustomContext(CallbackContext[ExtBot[int], dict[Any, Any], dict[Any, Any], dict[str, Any]]):
    def __init__(self, application: CardfitApplication, chat_id: int | None = None, user_id: int | None = None):
        super().__init__(application, chat_id=chat_id, user_id=user_id)
        self._caller: Caller | None = None

    @property
    def services(self) -> Services:
        services: Services = self.bot_data["services"]
        return services

    @property
    def settings(self) -> Settings:
        settings: Settings = self.bot_data["settings"]
        return settings

    @property
    def catalogs(self) -> CatalogHolder:
        catalogs: CatalogHolder = self.bot_data["catalog"]
        return catalogs

    @property
    def core(self) -> Core:
        """What the features read (bot/features/core.py)."""
        return self.services.core

    @property
    def store(self) -> Store:
        return self.services.store

    @property
    def announcer(self) -> Announcer:
        return self.services.announcer

    @property
    def flood(self) -> FloodGuard:
        return self.services.flood

    @property
    def caller(self) -> Caller:
        """Who sent this update, resolved once before the handlers ran (bot/telegram/handlers/incoming.py)."""
        if self._caller is None:
            raise RuntimeError("no caller was resolved for this update")
        return self._caller

    @caller.setter
    def caller(self, caller: Caller) -> None:
        self._caller = caller


# ExtBot[int]: the bot's rate limiter (AIORateLimiter) takes an int of retries per call.
CardfitApplication = Application[
    ExtBot[int], CustomContext, dict[Any, Any], dict[Any, Any], dict[str, Any], JobQueue[CustomContext]
]
CONTEXT_TYPES: ContextTypes[CustomContext, dict[Any, Any], dict[Any, Any], dict[str, Any]] = ContextTypes(
    context=CustomContext)
