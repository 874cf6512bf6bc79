"""What the Hugging Face Hub said about a repository, kept until it expires so replicas ask once."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from bot.store.database import Repository

HUB_FOUND_TTL_S = 7 * 86_400.0  # a released repository's config and weights rarely change
HUB_ERROR_TTL_S = 3_600.0  # gated, missing or unreadable: the owner may open, publish or fix it


@dataclass(frozen=True, slots=True)
class HubEntry:
    repo_id: str
    status: str  # found | gated | missing | unreadable
    config: dict[str, Any] | None
    counts: dict[str, int] | None


def hub_ttl_s(status: str) -> float:
    """How long an answer of the Hub is kept."""
    return HUB_FOUND_TTL_S if status == "found" else HUB_ERROR_TTL_S


class HubModelRepository(Repository):
    async def keep_hub_entry(self, entry: HubEntry, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        ttl = hub_ttl_s(entry.status)
        await self._database.write_one(
            """
            INSERT INTO hub_models (repo_id, status, config_json, counts_json, fetched_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (repo_id) DO UPDATE SET
                status = excluded.status,
                config_json = excluded.config_json,
                counts_json = excluded.counts_json,
                fetched_at = excluded.fetched_at,
                expires_at = excluded.expires_at
            """,
            (entry.repo_id, entry.status, None if entry.config is None else json.dumps(entry.config),
             None if entry.counts is None else json.dumps(entry.counts), now, now + ttl),
        )

    async def hub_entry(self, repo_id: str, *, now: float | None = None) -> HubEntry | None:
        """The kept answer for `repo_id` (as typed: the Hub's ids are case-sensitive), None when none or expired."""
        now = time.time() if now is None else now
        rows = await self._database.fetch(
            "SELECT status, config_json, counts_json FROM hub_models WHERE repo_id = ? AND expires_at > ?",
            (repo_id, now),
        )
        if not rows:
            return None
        row = rows[0]
        try:
            config = json.loads(row["config_json"]) if row["config_json"] else None
            counts = json.loads(row["counts_json"]) if row["counts_json"] else None
        except ValueError:
            return None
        return HubEntry(repo_id, str(row["status"]), config, counts)
