"""The conversation's memory: the last question's request per chat, for follow-ups, kept a day."""
from __future__ import annotations

import time
from weakref import WeakKeyDictionary

from bot.store.database import Database, Parameters, Repository
from engine.answer.followup import request_from_json, request_to_json
from engine.sizing.payload import PayloadError, decode_request
from engine.sizing.rule import SizeRequest

CONTEXT_TTL_S = 86_400.0  # "and in fp8?" the next day is a new conversation
# How often a write of a context also deletes the day-old ones: not with every answer (the DELETE was a statement
# per answer, ~9 us, that found nothing almost every time). Reads filter by age, so what is kept up to
# this much longer is never used.
SWEEP_EVERY_S = 60.0


_KEEP = """
    INSERT INTO chat_context (chat_id, payload, request_json, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (chat_id) DO UPDATE SET
        payload = excluded.payload,
        request_json = excluded.request_json,
        updated_at = excluded.updated_at
"""
_SWEEP = "DELETE FROM chat_context WHERE updated_at < ?"


# Per database: when its contexts were last swept, by the `now` of the write that swept them.
_swept: WeakKeyDictionary[Database, float] = WeakKeyDictionary()


def keep_statements(database: Database, chat_id: int, request: SizeRequest, payload: str | None,
                    now: float) -> list[tuple[str, Parameters]]:
    """The writes that keep a chat's last question, for one transaction (alone, or with the user's row:
    UserRepository.remember_answer): with the sweep of day-old contexts when SWEEP_EVERY_S passed since the last
    (or the clock went back). A write that fails after this counted its sweep: the next one comes a minute later."""
    return [keep_statement(chat_id, request, payload, now), *due_sweep(database, now)]


def keep_statement(chat_id: int, request: SizeRequest, payload: str | None, now: float) -> tuple[str, Parameters]:
    return _KEEP, (chat_id, payload, request_to_json(request), now)


def due_sweep(database: Database, now: float) -> list[tuple[str, Parameters]]:
    """The sweep of day-old contexts when SWEEP_EVERY_S passed since the last (or the clock went back), else none;
    counted as done from here."""
    last = _swept.get(database)
    if last is not None and last <= now < last + SWEEP_EVERY_S:
        return []
    _swept[database] = now
    return [(_SWEEP, (now - CONTEXT_TTL_S,))]


class ChatContextRepository(Repository):
    async def keep_request(self, chat_id: int, request: SizeRequest, payload: str | None, *,
                           now: float | None = None) -> None:
        """Keep `request` (as the user set it, before their settings are filled in) as the chat's last question;
        contexts older than a day are deleted on the way (once a minute), so the table holds about a day of chats."""
        await self._database.write_many(keep_statements(self._database, chat_id, request, payload,
                                                        time.time() if now is None else now))

    async def kept_request(self, chat_id: int, *, now: float | None = None) -> SizeRequest | None:
        """The chat's last question if it is less than a day old; None when there is none, or none readable."""
        now = time.time() if now is None else now
        rows = await self._database.fetch(
            "SELECT payload, request_json FROM chat_context WHERE chat_id = ? AND updated_at >= ?",
            (chat_id, now - CONTEXT_TTL_S),
        )
        if not rows:
            return None
        request = request_from_json(rows[0]["request_json"])
        if request is None and rows[0]["payload"]:
            try:
                request = decode_request(rows[0]["payload"])
            except PayloadError:
                return None
        return request
