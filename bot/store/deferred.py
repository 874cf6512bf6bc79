"""Writes that wait for the task's next statement: fewer commits per update, the same order.

Inside `deferring()` (the inbox runs each update's handlers in one), `Database.defer(statements)` does not write:
the statements wait until the block's own task runs its next statement on that database, which runs them first,
in the same transaction when it is a write (`write_one`, `write_many`), as a transaction of their own just before
it otherwise (a read, `write_returning`, `transaction()`). What still waits when the block ends is written then.
Outside a block, and in any task the block starts (an alert delivery started by an admin's tap, a chart), `defer`
writes at once and nothing is taken.

Why: an answered question wrote the user's row (bot/features/caller.py touch_user, for a new user), then the answer and
the
chat's context (UserRepository.remember_answer), then the update's 'sending' mark (bot/telegram/inbox.py), each its own
commit: ~15 us of CPU per commit on SQLite in WAL mode beyond its statements (BEGIN IMMEDIATE, the WAL frames,
the shared-memory index), plus a store call's glue. Deferred, the three land in the sending mark's one commit,
still before the reply goes out (the mark is written in the update's own task, so it takes them).

What it keeps:
- Order: a deferred write lands before any later statement of its task, so the task reads what it wrote, and a
  write never overtakes an earlier one of the same task. Other updates may see it later than before, never later
  than the reply's request: a reply that must wait for its slot (the pace, a group's limit, a 429) has them
  written before it waits (bot/telegram/inbox.py InboxRateLimiter), so the chat's next message reads this answer.
- Crash safety: each write still commits before the request it precedes goes out. A crash before that leaves the
  update 'received', handled again from the start (the deferred writes are idempotent upserts found by key).
- Failures: when the transaction they joined fails, the deferred statements wait again (the block's next
  statement or its end tries them) and the statement they joined runs alone, as it would have without them: a
  deferred write never costs the sending mark its commit. When it failed because another process held SQLite's
  write lock for the whole busy timeout, the statement fails at once instead (alone it would wait again, and the
  reply with it). A failure at the block's end is raised from the block, or only logged when the block itself
  failed (a cancelled update stays cancelled); then they are lost, as an answer's write that failed was before.

Only for short upserts found by key (`short=True` in Database's terms; not the sweep of old contexts); never for a
write whose caller needs to know it committed before going on.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

log = logging.getLogger(__name__)

Parameters = tuple[Any, ...]
Statements = list[tuple[str, Parameters]]


class _Waiting:
    __slots__ = ("owner", "task", "statements", "open", "locked_out")

    def __init__(self, owner: object) -> None:
        self.owner = owner  # the Database whose block this is: another one's statements never take these
        self.task = asyncio.current_task()  # the block's own task: a task it starts neither defers nor takes
        self.statements: Statements = []
        self.open = True
        self.locked_out = False  # a write of them waited out another process's lock: reads stop carrying them


_waiting: ContextVar[_Waiting | None] = ContextVar("cardfit_deferred_writes", default=None)


def _mine(owner: object) -> _Waiting | None:
    waiting = _waiting.get()
    if waiting is None or not waiting.open or waiting.owner is not owner or waiting.task is not asyncio.current_task():
        return None
    return waiting


class Taken:
    """Deferred statements taken by a statement that runs them first; `give_back` when that failed: they wait
    again, ahead of any deferred since, for the block's next statement or its end."""

    __slots__ = ("statements", "_waiting")

    def __init__(self, statements: Statements, waiting: _Waiting | None) -> None:
        self.statements = statements
        self._waiting = waiting

    def __bool__(self) -> bool:
        return bool(self.statements)

    def give_back(self, locked_out: bool = False) -> None:
        """`locked_out`: they failed waiting for another process's lock; from now on only writes carry them
        (a read needs no lock and must not wait for one again)."""
        if self._waiting is not None and self._waiting.open:
            self._waiting.statements[:0] = self.statements
            self._waiting.locked_out = self._waiting.locked_out or locked_out
        elif self.statements:
            log.warning("store: %d deferred write(s) lost: they failed after their block ended", len(self.statements))
        self.statements = []


NOTHING_TAKEN = Taken([], None)


def defer_here(owner: object, statements: Sequence[tuple[str, Parameters]]) -> bool:
    """Keep `statements` for the task's next statement on `owner`: True in the task of an open `deferring()`
    block of `owner`, else False (the caller writes them now)."""
    waiting = _mine(owner)
    if waiting is None:
        return False
    waiting.statements.extend(statements)
    return True


def take_deferred(owner: object, *, before_a_read: bool = False) -> Taken:
    """The statements waiting in this task's block on `owner`, taken: the caller runs them before its own
    (`before_a_read`: none once a write of them waited out a lock)."""
    waiting = _mine(owner)
    if waiting is None or not waiting.statements or (before_a_read and waiting.locked_out):
        return NOTHING_TAKEN
    taken = Taken(waiting.statements, waiting)
    waiting.statements = []
    return taken


@asynccontextmanager
async def deferring(owner: object, write_many: Callable[[Statements], Awaitable[None]]) -> AsyncIterator[None]:
    """The block in which `owner.defer` (a Database) waits; at its end what still waits is written by
    `write_many`. When the block itself failed (a cancelled update among others), a failure of that write is only
    logged, so the block's own exception goes on; otherwise it is raised from the block."""
    waiting = _Waiting(owner)
    token = _waiting.set(waiting)
    ended = False
    try:
        yield
        ended = True
    finally:
        waiting.open = False
        _waiting.reset(token)
        left, waiting.statements = waiting.statements, []
        if left and ended:
            await write_many(left)
        elif left:
            try:
                await write_many(left)
            except Exception as exc:  # noqa: BLE001 - the block's own exception is the one that goes on
                log.warning("store: %d deferred write(s) lost with a failed block: %s", len(left),
                            exc.__class__.__name__)
