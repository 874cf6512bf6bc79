"""Writes that wait for the task's next statement (issue #14): fewer commits per update, the same order.

Inside `deferring()` (the inbox runs each update's handlers in one), `Database.defer(statements)` does not write:
the statements wait until the same task (or a task it started) runs its next statement on the database, which runs
them first, in the same transaction when it is a write (`write_one`, `write_many`), as a transaction of their own
just before it otherwise (a read, `write_returning`, `transaction()`). What is still waiting when the block ends is
written then. Outside a block, `defer` writes at once.

Why: an answered question wrote the user's row (bot/caller.py touch_user for a new user), then the answer and the
chat's context (UserRepository.remember_answer), then the update's 'sending' mark (bot/inbox.py), each its own
commit: about 40 us of CPU per commit on SQLite in WAL mode (BEGIN IMMEDIATE, the WAL frames, the shared-memory
index). Deferred, the three land in the one commit of the sending mark, still before the reply goes out.

What it keeps:
- Order: a deferred write lands before any later statement of its task, so the task reads what it wrote, and a
  write never overtakes an earlier one of the same task. Other tasks (other updates) may not see it yet; nothing
  orders concurrent updates today either.
- Crash safety: each write still commits before the request it precedes goes out (the sending mark is a write).
  A crash before that leaves the update 'received', and it is handled again from the start.
- Errors: a deferred write that fails fails with the statement it joined (logged there), or at the block's end;
  only idempotent upserts are deferred, so a lost one is written again by the user's next message.

Only for short writes found by key (`short=True` in Database's terms); never for a write whose caller needs to know
it committed before going on.
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

Parameters = tuple[Any, ...]
Statements = list[tuple[str, Parameters]]


class _Waiting:
    __slots__ = ("owner", "statements", "open")

    def __init__(self, owner: object) -> None:
        self.owner = owner  # the Database whose block this is: another one's statements never take these
        self.statements: Statements = []
        self.open = True


_waiting: ContextVar[_Waiting | None] = ContextVar("cardfit_deferred_writes", default=None)


def defer_here(owner: object, statements: Sequence[tuple[str, Parameters]]) -> bool:
    """Keep `statements` for the task's next statement on `owner`: True inside an open `deferring()` block of
    `owner`, else False (the caller writes them now)."""
    waiting = _waiting.get()
    if waiting is None or not waiting.open or waiting.owner is not owner:
        return False
    waiting.statements.extend(statements)
    return True


def take_deferred(owner: object) -> Statements:
    """The statements waiting in this task's block on `owner`, taken: the caller runs them before its own."""
    waiting = _waiting.get()
    if waiting is None or not waiting.statements or waiting.owner is not owner:
        return []
    taken, waiting.statements = waiting.statements, []
    return taken


@asynccontextmanager
async def deferring(owner: object, write_many: Callable[[Statements], Awaitable[None]]) -> AsyncIterator[None]:
    """The block in which `owner.defer` (a Database) waits; at its end (whatever ends it) what still waits is
    written by `write_many`, whose failure is raised from the block (the block's own exception, if it had one,
    becomes its __context__). A task the block started and that runs on after it writes at once from then on."""
    waiting = _Waiting(owner)
    token = _waiting.set(waiting)
    try:
        yield
    finally:
        waiting.open = False
        _waiting.reset(token)
        if waiting.statements:
            left, waiting.statements = waiting.statements, []
            await write_many(left)
