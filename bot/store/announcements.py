"""Catalog announcements and the parts of each channel post: a version is begun at most once per starting point."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from bot.store.database import Connection, Repository, Row, fetch_rows

# A channel post is a few messages; a replica holding the post longer than this is taken for dead.
POST_LEASE_S = 120.0
_COLUMNS = ("id, catalog_id, sha256, base_sha256, catalog_text, message, status, message_ids, created_at, "
            "posted_at, preview_sent_at, needs_confirmation, admin_note")


@dataclass(frozen=True, slots=True)
class Announcement:
    id: int
    catalog_id: str
    sha256: str  # the catalog file's hash
    base_sha256: str  # the hash of the last posted version this one was diffed against; "" for a baseline
    catalog_text: str
    message: str
    status: str  # pending | posted | discarded
    message_ids: tuple[int, ...]  # the channel messages, once posted
    created_at: float
    posted_at: float | None
    preview_sent_at: float | None = None  # None while pending: the admins have not seen a Post button yet
    needs_confirmation: bool = False  # never posted without an admin's Post, even with auto-announce
    admin_note: str | None = None  # said to the admins above the preview (HTML), e.g. many cards removed


class PartState(NamedTuple):
    """One part of a channel post: 'intent' (about to be sent, or sent with its fate unknown), 'sent' (its
    message id known) or 'confirmed' (an admin saw it in the channel)."""

    state: str
    message_id: int | None
    asked_at: float | None


class AnnouncedVersion(NamedTuple):
    catalog_id: str
    sha256: str
    posted_at: float


def _announcement(row: Row) -> Announcement:
    return Announcement(
        id=int(row["id"]), catalog_id=row["catalog_id"], sha256=row["sha256"], base_sha256=row["base_sha256"],
        catalog_text=row["catalog_text"], message=row["message"], status=row["status"],
        message_ids=tuple(json.loads(row["message_ids"])) if row["message_ids"] else (),
        created_at=float(row["created_at"]),
        posted_at=float(row["posted_at"]) if row["posted_at"] is not None else None,
        preview_sent_at=float(row["preview_sent_at"]) if row["preview_sent_at"] is not None else None,
        needs_confirmation=bool(row["needs_confirmation"]), admin_note=row["admin_note"],
    )


async def _status(db: Connection, announcement_id: int) -> str:
    rows = await fetch_rows(db, "SELECT status FROM announcements WHERE id = ?", (announcement_id,))
    if not rows:
        raise ValueError(f"no announcement with id {announcement_id}")
    return str(rows[0]["status"])


class AnnouncementRepository(Repository):
    async def announced_versions(self) -> list[AnnouncedVersion]:
        """Posted announcements, oldest first; discarded ones are not listed."""
        rows = await self._database.fetch(
            """
            SELECT catalog_id, sha256, posted_at
            FROM announcements
            WHERE status = 'posted'
            ORDER BY posted_at, id
            """
        )
        return [AnnouncedVersion(row["catalog_id"], row["sha256"], float(row["posted_at"])) for row in rows]

    async def last_announced(self, catalog_id: str) -> str | None:
        """The file hash of the catalog's last posted version."""
        row = await self._last_posted(catalog_id)
        return str(row["sha256"]) if row else None

    async def last_announced_text(self, catalog_id: str) -> str | None:
        row = await self._last_posted(catalog_id)
        return str(row["catalog_text"]) if row else None

    async def _last_posted(self, catalog_id: str) -> Row | None:
        rows = await self._database.fetch(
            """
            SELECT sha256, catalog_text
            FROM announcements
            WHERE catalog_id = ? AND status = 'posted'
            ORDER BY posted_at DESC, id DESC
            LIMIT 1
            """,
            (catalog_id,),
        )
        return rows[0] if rows else None

    async def last_posted(self) -> Announcement | None:
        """The last posted announcement of any catalog id: what the channel knows, whatever the file calls
        itself now (the bot serves one catalog; renaming its `id` must not hide later changes)."""
        rows = await self._database.fetch(
            f"SELECT {_COLUMNS} FROM announcements WHERE status = 'posted' ORDER BY posted_at DESC, id DESC LIMIT 1")
        return _announcement(rows[0]) if rows else None

    async def begin_announcement(self, catalog_id: str, sha256: str, catalog_text: str, message: str, *,
                                 base_sha256: str = "", needs_confirmation: bool = False,
                                 admin_note: str | None = None) -> int | None:
        """Record a pending announcement of one catalog version diffed against `base_sha256`; None if that key
        was ever begun before (pending, posted or discarded), so each is announced at most once. The UNIQUE
        key decides, so two processes racing here cannot both win."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                """
                INSERT INTO announcements (catalog_id, sha256, base_sha256, catalog_text, message, status,
                                           created_at, needs_confirmation, admin_note)
                VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)
                ON CONFLICT (catalog_id, sha256, base_sha256) DO NOTHING
                """,
                (catalog_id, sha256, base_sha256, catalog_text, message, time.time(), int(needs_confirmation),
                 admin_note),
            )
            inserted = cursor.rowcount == 1
            announcement_id = cursor.lastrowid
            await cursor.close()
        return announcement_id if inserted else None

    async def claim_announcement(self, announcement_id: int, owner: str, lease_s: float = POST_LEASE_S) -> bool:
        """Whether `owner` may post this pending announcement now: nobody else holds it, or their lease ran out (a
        replica that died half-way; the parts it sent are skipped on resume). Two replicas racing get one True."""
        now = time.time()
        async with self._database.transaction() as db:
            cursor = await db.execute(
                """
                UPDATE announcements SET posting_by = ?, posting_until = ?
                WHERE id = ? AND status = 'pending'
                  AND (posting_until IS NULL OR posting_until < ? OR posting_by = ?)
                """,
                (owner, now + lease_s, announcement_id, now, owner),
            )
            return cursor.rowcount == 1

    async def release_announcement(self, announcement_id: int, owner: str) -> None:
        async with self._database.transaction() as db:
            await db.execute(
                "UPDATE announcements SET posting_by = NULL, posting_until = NULL WHERE id = ? AND posting_by = ?",
                (announcement_id, owner),
            )

    async def release_dead_posting_claims(self, alive: Callable[[str], bool]) -> None:
        """Free the posting claims whose holder `alive` says is dead (a killed process of this host), so a restart
        resumes the post at once instead of after the lease."""
        async with self._database.transaction() as db:
            rows = await fetch_rows(db, "SELECT DISTINCT posting_by FROM announcements "
                                        "WHERE status = 'pending' AND posting_by IS NOT NULL")
            for owner in (str(row["posting_by"]) for row in rows):
                if not alive(owner):
                    await db.execute("UPDATE announcements SET posting_by = NULL, posting_until = NULL "
                                     "WHERE posting_by = ? AND status = 'pending'", (owner,))

    async def pending_announcements(self) -> list[Announcement]:
        rows = await self._database.fetch(f"SELECT {_COLUMNS} FROM announcements WHERE status = 'pending' ORDER BY id")
        return [_announcement(row) for row in rows]

    async def get_announcement(self, announcement_id: int) -> Announcement | None:
        """One announcement with its status and catalog text, or None."""
        rows = await self._database.fetch(f"SELECT {_COLUMNS} FROM announcements WHERE id = ?", (announcement_id,))
        return _announcement(rows[0]) if rows else None

    async def mark_announcement_posted(self, announcement_id: int, message_ids: list[int]) -> None:
        """pending -> posted. Posting twice keeps the first record; a discarded or unknown id is a ValueError."""
        ids_json = json.dumps([int(message_id) for message_id in message_ids])
        async with self._database.transaction() as db:
            if await _status(db, announcement_id) == "discarded":
                raise ValueError(f"announcement {announcement_id} was discarded and cannot be posted")
            await db.execute(
                """
                UPDATE announcements
                SET status = 'posted', message_ids = ?, posted_at = ?
                WHERE id = ? AND status = 'pending'
                """,
                (ids_json, time.time(), announcement_id),
            )

    async def discard_announcement(self, announcement_id: int) -> None:
        """pending -> discarded: the version counts as handled and is never posted. A posted one cannot be discarded."""
        async with self._database.transaction() as db:
            if await _status(db, announcement_id) == "posted":
                raise ValueError(f"announcement {announcement_id} was already posted and cannot be discarded")
            await db.execute(
                "UPDATE announcements SET status = 'discarded' WHERE id = ? AND status = 'pending'",
                (announcement_id,),
            )

    async def mark_preview_sent(self, announcement_id: int) -> None:
        await self._database.write_one("UPDATE announcements SET preview_sent_at = ? WHERE id = ?",
                                       (time.time(), announcement_id))

    async def begin_announcement_part(self, announcement_id: int, part: int) -> None:
        """The intent to send one part, committed before the send: a crash after it leaves a part whose fate is
        unknown, which a resumed post asks an admin about instead of posting it again."""
        await self._database.write_one(
            """
            INSERT INTO announcement_parts (announcement_id, part, state, message_id, sent_at)
            VALUES (?, ?, 'intent', NULL, NULL)
            ON CONFLICT (announcement_id, part) DO NOTHING
            """,
            (announcement_id, part))

    async def record_announcement_part(self, announcement_id: int, part: int, message_id: int) -> None:
        """One part of a (possibly split) channel post went out: a resumed post skips it. The first record
        wins: a part already sent or confirmed keeps its state."""
        await self._database.write_one(
            """
            INSERT INTO announcement_parts (announcement_id, part, state, message_id, sent_at)
            VALUES (?, ?, 'sent', ?, ?)
            ON CONFLICT (announcement_id, part) DO UPDATE
            SET state = 'sent', message_id = excluded.message_id, sent_at = excluded.sent_at
            WHERE announcement_parts.state = 'intent'
            """,
            (announcement_id, part, message_id, time.time()))

    async def confirm_announcement_part(self, announcement_id: int, part: int) -> bool:
        """An admin saw an unknown part in the channel: it counts as sent (without a message id)."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "UPDATE announcement_parts SET state = 'confirmed', sent_at = ? "
                "WHERE announcement_id = ? AND part = ? AND state = 'intent'", (time.time(), announcement_id, part))
            changed = cursor.rowcount == 1
            await cursor.close()
        return changed

    async def forget_announcement_part(self, announcement_id: int, part: int) -> bool:
        """Drop an intent: the part certainly did not go out (refused) or an admin chose to post it again."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "DELETE FROM announcement_parts WHERE announcement_id = ? AND part = ? AND state = 'intent'",
                (announcement_id, part))
            changed = cursor.rowcount == 1
            await cursor.close()
        return changed

    async def mark_part_asked(self, announcement_id: int, part: int) -> None:
        await self._database.write_one(
            "UPDATE announcement_parts SET asked_at = ? WHERE announcement_id = ? AND part = ?",
            (time.time(), announcement_id, part))

    async def announcement_part_states(self, announcement_id: int) -> dict[int, PartState]:
        rows = await self._database.fetch(
            "SELECT part, state, message_id, asked_at FROM announcement_parts WHERE announcement_id = ? ORDER BY part",
            (announcement_id,))
        return {int(row["part"]): PartState(str(row["state"]),
                                            int(row["message_id"]) if row["message_id"] is not None else None,
                                            float(row["asked_at"]) if row["asked_at"] is not None else None)
                for row in rows}

    async def announcement_parts(self, announcement_id: int) -> dict[int, int]:
        """The parts known to be in the channel with their message id, part index -> channel message id."""
        return {part: state.message_id for part, state in (await self.announcement_part_states(announcement_id)).items()
                if state.message_id is not None}
