"""The inbox table (migration 12): Telegram's updates as stored before they are confirmed, their handling state
(received -> sending -> done, or unknown) and which replica holds them, for how long. An update cut off while its
reply was going out is handled once more, its replies labeled as a repeat (migration 16's `resent`); cut off
again, it is 'unknown'."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from bot.store.database import Repository, fetch_rows

INBOX_STATES = ("received", "sending", "done", "unknown")
# How long a replica's claim keeps the others off its stored updates. It renews the claim while it runs
# (bot/telegram/inbox.py, every third of this); a replica that dies holding updates delays them this long, unless it
# ran on
# the same host (its process is then seen to be gone at once).
INBOX_LEASE_S = 300.0
# Rows per INSERT: a getUpdates answer holds at most 100 updates; 6 parameters each stays far below SQLite's
# and PostgreSQL's limits on parameters per statement.
INSERT_CHUNK = 100


class StoredUpdate(NamedTuple):
    update_id: int
    payload: str
    repeat: bool = False  # its reply may have gone out before a crash: it is sent again, labeled as a repeat


class Resumed(NamedTuple):
    """What a claim of other replicas' (or a dead process's) open updates found: those to handle now, in update id
    order (`repeat` set on those whose reply may have gone out: handled once more, labeled), and those cut off
    while their repeated reply was going out, now 'unknown'."""

    handle: list[StoredUpdate]
    unknown: list[int]


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _insert(updates: Sequence[StoredUpdate], owner: str, now: float, lease_s: float) -> tuple[str, list[Any]]:
    values = ", ".join("(?, ?, 'received', ?, ?, ?)" for _ in updates)
    parameters = [value for update in updates
                  for value in (update.update_id, update.payload, now, owner, now + lease_s)]
    return (f"INSERT INTO inbox (update_id, payload, state, received_at, claimed_by, claimed_until) "
            f"VALUES {values} ON CONFLICT (update_id) DO NOTHING RETURNING update_id", parameters)


class InboxRepository(Repository):
    async def store_updates(self, updates: Sequence[StoredUpdate], owner: str,
                            lease_s: float = INBOX_LEASE_S) -> set[int]:
        """Store a batch of updates, held by `owner`; an update id already stored is left as it is (a repeated
        delivery). One statement per INSERT_CHUNK rows, all in one transaction (a getUpdates answer, at most 100
        updates, is one statement: atomic alone, and short). Returns the ids newly stored."""
        if not updates:
            return set()
        now = time.time()
        if len(updates) <= INSERT_CHUNK:
            sql, parameters = _insert(updates, owner, now, lease_s)
            rows = await self._database.write_returning(sql, tuple(parameters))
            return {int(row["update_id"]) for row in rows}
        stored: set[int] = set()
        async with self._database.transaction() as db:
            for start in range(0, len(updates), INSERT_CHUNK):
                sql, parameters = _insert(updates[start:start + INSERT_CHUNK], owner, now, lease_s)
                rows = await fetch_rows(db, sql, parameters)
                stored.update(int(row["update_id"]) for row in rows)
        return stored

    async def inbox_offset(self, since: float) -> int | None:
        """The highest update id stored at or after `since` (Telegram keeps an unconfirmed update 24 hours; an
        older row says nothing about what it still holds)."""
        rows = await self._database.fetch("SELECT max(update_id) AS top FROM inbox WHERE received_at >= ?", (since,))
        top = rows[0]["top"] if rows else None
        return int(top) if top is not None else None

    async def mark_updates_sending(self, update_ids: Sequence[int]) -> None:
        """received -> sending, committed before the first non-repeatable request of their handling goes out;
        in the update's task."""
        await self._set_state(update_ids, "sending", ("received",))

    async def mark_updates_done(self, update_ids: Sequence[int]) -> None:
        await self._set_state(update_ids, "done", ("received", "sending"))

    async def _set_state(self, update_ids: Sequence[int], state: str, before: tuple[str, ...]) -> None:
        if not update_ids:
            return
        ids = list(update_ids)
        await self._database.write_one(
            f"UPDATE inbox SET state = ? WHERE update_id IN ({_marks(len(ids))}) AND state IN ({_marks(len(before))})",
            (state, *ids, *before))

    async def claim_open_updates(self, owner: str, alive: Callable[[str], bool], lease_s: float = INBOX_LEASE_S,
                                 limit: int = 1000) -> Resumed:
        """Open updates (received or sending) no live replica holds, for `owner`: nobody's, a lease run out, or a
        holder `alive` says is dead; `owner`'s own are left alone (it has them in hand). The received ones are
        claimed for `owner` to handle; a sending one (its reply may have gone out) is claimed too, back to
        'received' with `resent` set, to be handled once more with its replies labeled as a repeat; a sending one
        that was already a repeat becomes 'unknown'. Two replicas claiming at once get disjoint rows (PostgreSQL:
        FOR UPDATE SKIP LOCKED; SQLite: BEGIN IMMEDIATE serializes them)."""
        now = time.time()
        async with self._database.transaction() as db:
            holders = await fetch_rows(db, "SELECT DISTINCT claimed_by FROM inbox "
                                           "WHERE state IN ('received', 'sending') AND claimed_by IS NOT NULL")
            dead = [str(row["claimed_by"]) for row in holders
                    if str(row["claimed_by"]) != owner and not alive(str(row["claimed_by"]))]
            dead_clause = f" OR claimed_by IN ({_marks(len(dead))})" if dead else ""
            rows = await fetch_rows(
                db,
                f"""
                SELECT update_id, payload, state, resent FROM inbox
                WHERE state IN ('received', 'sending')
                      AND (claimed_by IS NULL OR claimed_until IS NULL
                           OR (claimed_until < ? AND claimed_by <> ?){dead_clause})
                ORDER BY update_id
                LIMIT ?
                {db.skip_locked}
                """,
                (now, owner, *dead, limit),
            )
            handle = [StoredUpdate(int(row["update_id"]), str(row["payload"]), bool(row["resent"])) for row in rows
                      if row["state"] == "received" or not row["resent"]]
            unknown = [int(row["update_id"]) for row in rows if row["state"] == "sending" and row["resent"]]
            cut = {int(row["update_id"]) for row in rows if row["state"] == "sending" and not row["resent"]}
            if handle:
                await db.execute(
                    f"UPDATE inbox SET claimed_by = ?, claimed_until = ?, "
                    f"resent = CASE WHEN state = 'sending' THEN 1 ELSE resent END, state = 'received' "
                    f"WHERE update_id IN ({_marks(len(handle))}) AND state IN ('received', 'sending')",
                    (owner, now + lease_s, *(update.update_id for update in handle)))
                handle = [update._replace(repeat=True) if update.update_id in cut else update
                          for update in handle]
            if unknown:
                await db.execute(
                    f"UPDATE inbox SET state = 'unknown' WHERE update_id IN ({_marks(len(unknown))}) "
                    f"AND state = 'sending'", unknown)
        return Resumed(handle, unknown)

    async def renew_inbox_claims(self, owner: str, lease_s: float = INBOX_LEASE_S) -> int:
        """Extend `owner`'s lease on its open updates (a live replica with a backlog keeps it)."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "UPDATE inbox SET claimed_until = ? WHERE claimed_by = ? AND state IN ('received', 'sending')",
                (time.time() + lease_s, owner))
            return cursor.rowcount

    async def release_inbox_claims(self, owner: str) -> int:
        """Give back `owner`'s received updates (a stopping replica that did not start them): the next start, or
        another replica, handles them without waiting for the lease."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "UPDATE inbox SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND state = 'received'",
                (owner,))
            return cursor.rowcount

    async def prune_inbox(self, before: float) -> int:
        """Forget finished updates (done, unknown) received before `before`. Open ones stay, whatever their age."""
        async with self._database.transaction() as db:
            cursor = await db.execute(
                "DELETE FROM inbox WHERE received_at < ? AND state IN ('done', 'unknown')", (before,))
            return cursor.rowcount

    async def inbox_states(self) -> dict[int, str]:
        """update id -> state, for tests and diagnostics."""
        rows = await self._database.fetch("SELECT update_id, state FROM inbox ORDER BY update_id")
        return {int(row["update_id"]): str(row["state"]) for row in rows}
