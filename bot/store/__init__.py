"""Persistent bot state in SQLite or PostgreSQL: one `Store` over one Database, a repository per table group."""
from __future__ import annotations

from pathlib import Path

from bot.store.alerts import ALERT_LEASE_S, ALERT_OUTCOMES, AlertProgress, AlertRepository, QueuedAlert
from bot.store.announcements import AnnouncedVersion, Announcement, AnnouncementRepository, PartState
from bot.store.contexts import CONTEXT_TTL_S, ChatContextRepository
from bot.store.database import DATABASE_ERRORS, INTEGRITY_ERRORS, Database, SqliteDatabase, is_postgres_url
from bot.store.demand import DEMAND_RETENTION_DAYS, DemandRecord, DemandRepository, PeriodFigures
from bot.store.hub_models import HubEntry, HubModelRepository
from bot.store.inbox import INBOX_LEASE_S, InboxRepository, Resumed, StoredUpdate
from bot.store.postgres import PostgresDatabase
from bot.store.schema import MIGRATIONS, migrate, split_sql_script
from bot.store.subscriptions import Subscriber, Subscription, SubscriptionRepository
from bot.store.users import PREFERENCE_FIELDS, Preferences, UserRepository

__all__ = [
    "ALERT_LEASE_S", "ALERT_OUTCOMES", "CONTEXT_TTL_S", "DATABASE_ERRORS", "INTEGRITY_ERRORS", "MIGRATIONS",
    "PREFERENCE_FIELDS", "AlertProgress", "AnnouncedVersion", "Announcement", "ChatContextRepository", "HubEntry",
    "PartState", "Preferences", "QueuedAlert", "Store", "Subscriber", "Subscription", "is_postgres_url",
    "split_sql_script",
    "INBOX_LEASE_S", "Resumed", "StoredUpdate",  # the durable inbox
    "DEMAND_RETENTION_DAYS", "DemandRecord", "PeriodFigures",  # what customers ask for
]


async def open_database(target: str | Path) -> Database:
    """A file path (or ':memory:') opens SQLite, a postgresql:// URL opens PostgreSQL."""
    if is_postgres_url(target):
        return await PostgresDatabase.connect(str(target))
    return await SqliteDatabase.connect(target)


class Store(UserRepository, AnnouncementRepository, SubscriptionRepository, AlertRepository, ChatContextRepository,
            HubModelRepository, InboxRepository, DemandRepository):
    """The repositories over one Database: `await Store.open(target)` connects and migrates (a file path: SQLite,
    a postgresql:// URL: PostgreSQL), `close()` closes."""

    def __init__(self, database: Database, schema_version: int) -> None:
        super().__init__(database)
        self._schema_version = schema_version

    @classmethod
    async def open(cls, path: str | Path) -> Store:
        database = await open_database(path)
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
        """The file, or the URL without its password."""
        return self._database.path

    @property
    def engine(self) -> str:
        return self._database.engine

    async def ping(self) -> None:
        """One round trip to the database; raises one of DATABASE_ERRORS when it cannot serve."""
        await self._database.fetch("SELECT 1")
