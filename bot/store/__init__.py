"""Persistent bot state in SQLite: one `Store` over one connection, made of a repository per table group."""
from __future__ import annotations

from pathlib import Path

from bot.store.alerts import ALERT_OUTCOMES, AlertProgress, AlertRepository, QueuedAlert
from bot.store.announcements import AnnouncedVersion, Announcement, AnnouncementRepository, PartState
from bot.store.contexts import CONTEXT_TTL_S, ChatContextRepository
from bot.store.database import Database
from bot.store.hub_models import HubEntry, HubModelRepository
from bot.store.schema import MIGRATIONS, migrate, split_sql_script
from bot.store.subscriptions import Subscriber, Subscription, SubscriptionRepository
from bot.store.users import PREFERENCE_FIELDS, Preferences, UserRepository

__all__ = [
    "ALERT_OUTCOMES", "CONTEXT_TTL_S", "MIGRATIONS", "PREFERENCE_FIELDS", "AlertProgress", "AnnouncedVersion",
    "Announcement", "ChatContextRepository", "HubEntry", "PartState", "Preferences", "QueuedAlert", "Store",
    "Subscriber", "Subscription", "split_sql_script",
]


class Store(UserRepository, AnnouncementRepository, SubscriptionRepository, AlertRepository, ChatContextRepository,
            HubModelRepository):
    """The repositories over one Database: `await Store.open(path)` connects and migrates, `close()` closes."""

    def __init__(self, database: Database, schema_version: int) -> None:
        super().__init__(database)
        self._schema_version = schema_version

    @classmethod
    async def open(cls, path: str | Path) -> Store:
        database = await Database.open(path)
        try:
            version = await migrate(database)
        except BaseException:
            await database.close()
            raise
        return cls(database, version)

    async def close(self) -> None:
        await self._database.close()

    @property
    def schema_version(self) -> int:
        return self._schema_version

    @property
    def path(self) -> str:
        return self._database.path
