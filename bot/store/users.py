"""Users and their preferences: field-level upserts, the last question, reachability (blocked) and language."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.store.contexts import due_sweep, keep_statement
from bot.store.database import DATABASE_ERRORS, Connection, Repository, Row, fetch_rows
from engine.sizing.rule import SizeRequest

log = logging.getLogger(__name__)

PREFERENCE_FIELDS = (
    "language",
    "precision",
    "kv_precision",
    "context_tokens",
    "batch",
    "coin",
    "billing",
    "region",
    "engine",  # the serving check's engine; None = llama.cpp for GGUF, else vLLM
    "vllm",  # the vLLM release whose accounting the serving check follows; None = the newest
)
_INTEGER_PREFERENCES = frozenset({"context_tokens", "batch"})


@dataclass(frozen=True)
class Preferences:
    user_id: int
    language: str | None = None  # "en" | "de"; None = not chosen, the bot falls back to Telegram's language_code
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch: int | None = None
    coin: str | None = None
    billing: str | None = None  # "hour" | "week" | "month" | "day"
    region: str | None = None
    engine: str | None = None  # "vllm" | "llama.cpp"
    vllm: str | None = None  # a release engine.serving.vllm.settings_for_version accepts, e.g. "0.11.0"
    last_question: str | None = None
    last_payload: str | None = None
    telegram_language: str | None = None
    blocked: bool = False  # the user blocked the bot (403); cleared when they write again
    updated_at: float = 0.0

    @property
    def stored(self) -> bool:
        """A row exists for this user (every stored row has its write time; the defaults have none)."""
        return self.updated_at > 0


_PREFERENCE_COLUMNS = (
    "user_id",
    *PREFERENCE_FIELDS,
    "last_question",
    "last_payload",
    "telegram_language",
    "blocked",
    "updated_at",
)
# Every column, read by name: a database one migration behind (a column added later) still reads, the new
# preference as not set.
_RETURNING_PREFERENCES = "*"
_SELECT_PREFERENCES = "SELECT * FROM users WHERE user_id = ?"


_REMEMBER = """
    INSERT INTO users (user_id, last_question, last_payload, telegram_language, blocked, created_at, updated_at)
    VALUES (?, ?, ?, ?, 0, ?, ?)
    ON CONFLICT (user_id) DO UPDATE SET
        last_question = excluded.last_question,
        last_payload = excluded.last_payload,
        telegram_language = coalesce(excluded.telegram_language, users.telegram_language),
        blocked = 0,
        updated_at = excluded.updated_at
"""


_TOUCH = """
    INSERT INTO users (user_id, telegram_language, blocked, created_at, updated_at)
    VALUES (?, ?, 0, ?, ?)
    ON CONFLICT (user_id) DO UPDATE SET
        -- Some updates carry no language_code; keep the last one seen rather than forget it.
        telegram_language = coalesce(excluded.telegram_language, users.telegram_language),
        blocked = 0,
        updated_at = excluded.updated_at
"""


def _preferences_from_row(row: Row) -> Preferences:
    present = set(row.keys())
    values = {column: row[column] for column in _PREFERENCE_COLUMNS if column in present}
    values["blocked"] = bool(values["blocked"])
    values["updated_at"] = float(values["updated_at"])
    return Preferences(**values)


def _checked_preference(field: str, value: object) -> object:
    if field not in PREFERENCE_FIELDS:
        raise ValueError(f"unknown preference {field!r}; expected one of {', '.join(PREFERENCE_FIELDS)}")
    if value is None:
        return None
    if field in _INTEGER_PREFERENCES:
        # bool is an int subclass; True as a batch size is a bug upstream, not a value.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"preference {field!r} must be a positive whole number, got {value!r}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"preference {field!r} must be text, got {value!r}")
    return value


async def set_blocked(db: Connection, user_id: int, blocked: bool, now: float) -> None:
    """Inside the caller's transaction (a failed alert marks its user in the same one)."""
    await db.execute(
        """
        INSERT INTO users (user_id, blocked, created_at, updated_at)
        VALUES (?, ?, ?, ?)
        ON CONFLICT (user_id) DO UPDATE SET
            blocked = excluded.blocked,
            updated_at = excluded.updated_at
        """,
        (user_id, int(bool(blocked)), now, now),
    )


class UserRepository(Repository):
    async def get_preferences(self, user_id: int) -> Preferences:
        rows = await self._database.fetch(_SELECT_PREFERENCES, (user_id,))
        return _preferences_from_row(rows[0]) if rows else Preferences(user_id=user_id)

    async def set_preference(self, user_id: int, field: str, value: object, order: int | None = None) -> Preferences:
        """Set (or with None, clear) one preference; only that column (and its order) is written, so concurrent
        updates of other fields are never lost. `order`: the id of the Telegram update that asks for it. A setting
        asked for by an older update than the last one that wrote THIS field is not written (an update handled
        again after a crash never reverts a newer acknowledged setting; a newer write of another field does not
        stop it); None (the terminal chat) always writes. Returns the preferences as stored after the write: a
        caller compares the field with what it asked for to know whether it was written."""
        value = _checked_preference(field, value)
        now = time.time()
        # `field` is one of PREFERENCE_FIELDS (checked above), so formatting it into the SQL is safe.
        order_column = f"{field}_order"
        sql = f"""
            INSERT INTO users (user_id, {field}, {order_column}, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET
                {field} = excluded.{field},
                {order_column} = coalesce(excluded.{order_column}, users.{order_column}),
                updated_at = excluded.updated_at
            WHERE excluded.{order_column} IS NULL OR users.{order_column} IS NULL
                  OR users.{order_column} <= excluded.{order_column}
        """
        async with self._database.transaction() as db:
            await db.execute(sql, (user_id, value, order, now, now))
            rows = await fetch_rows(db, _SELECT_PREFERENCES, (user_id,))
        if order is not None and rows and rows[0][order_column] is not None \
                and int(rows[0][order_column]) > order:
            log.warning("store: /set %s of update %s not written: user %s has a newer setting of it (update %s)",
                        field, order, user_id, rows[0][order_column])
        return _preferences_from_row(rows[0])

    async def touch_user(self, user_id: int, telegram_language: str | None) -> Preferences:
        """Record that the user wrote to the bot: they are reachable again, and their Telegram language.
        Returns the preferences as stored after the write."""
        now = time.time()
        rows = await self._database.write_returning(f"{_TOUCH} RETURNING {_RETURNING_PREFERENCES}",
                                                    (user_id, telegram_language, now, now))
        return _preferences_from_row(rows[0])

    async def remember_question(self, user_id: int, text: str, payload: str | None,
                                telegram_language: str | None = None) -> None:
        """The user's last question; writing to the bot also means they are reachable again (as touch_user)."""
        now = time.time()
        await self._database.write_one(_REMEMBER, (user_id, text, payload, telegram_language, now, now))

    async def remember_answer(self, user_id: int, text: str, payload: str | None, telegram_language: str | None,
                              kept: tuple[int, SizeRequest, str | None] | None) -> None:
        """After an answer: remember_question and, with `kept` (chat id, request, payload), keep_request, in one
        transaction, committed before the reply goes out (the chat's next message reads this answer)."""
        now = time.time()
        statements = [(_REMEMBER, (user_id, text, payload, telegram_language, now, now))]
        if kept is not None:
            statements.append(keep_statement(*kept, now))
            # The sweep (once a minute) deletes by an index scan: not for the sending mark's transaction, and
            # housekeeping that fails (a locked database) must not fail the answer; the next one is a minute later.
            if sweep := due_sweep(self._database, now):
                try:
                    await self._database.write_many(sweep)
                except DATABASE_ERRORS as exc:
                    log.warning("store: could not sweep old chat contexts: %s", exc.__class__.__name__)
        await self._database.write_many(statements)

    async def mark_blocked(self, user_id: int, blocked: bool = True) -> None:
        now = time.time()
        async with self._database.transaction() as db:
            await set_blocked(db, user_id, blocked, now)

    async def count_users(self) -> int:
        """All known users, blocked ones included."""
        rows = await self._database.fetch("SELECT count(*) FROM users")
        return int(rows[0][0])
