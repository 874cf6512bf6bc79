"""Per-user flood control: a sliding window per user, so one chatty user cannot starve the others.

Two budgets per user: questions (text, a command with words after it, an example button) and taps (a bare
command, buttons that only show an answer again: a precision or context toggle, Details, a coin). Taps come in
quick runs and cost no parsing, so they get their own, more generous budget (TAP_FACTOR x the questions'): a run
of taps never uses up the next question, and a tapping script is still capped.

Memory is bounded by the users of the last two windows, not by every user ever seen: users live in
two generations of one window each; a user seen again moves to the current one, and when a generation is a
window old the one before it is dropped whole. A dropped user's last event is then more than a window old, so
nothing they did still counts: forgetting them changes no answer, and costs nothing per update.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

TAP_FACTOR = 3
Kind = Literal["question", "tap"]


@dataclass(slots=True)
class _User:
    events: list[float] = field(default_factory=list)  # the times of the events inside the window, oldest first
    noticed: float | None = None  # when the user was last told they are over the limit


class _Windows:
    """`limit` events per `window_s` per user, and when each user was last told they are over it."""

    def __init__(self, limit: int, window_s: float, max_users: int):
        self.limit = limit
        self.window_s = window_s
        self.max_users = max_users
        self._current: dict[int, _User] = {}
        self._previous: dict[int, _User] = {}
        self._started: float | None = None  # when the current generation began

    def __len__(self) -> int:
        """The users whose state is kept (those of the last two windows)."""
        return len(self._current) + len(self._previous)

    def check(self, user_id: int, now: float) -> tuple[bool, bool]:
        state = self._user(user_id, now)
        events = state.events
        expired = 0
        while expired < len(events) and now - events[expired] >= self.window_s:
            expired += 1
        if expired:
            del events[:expired]
        if len(events) < self.limit:
            events.append(now)
            return True, False
        if state.noticed is None or now - state.noticed >= self.window_s:
            state.noticed = now
            return False, True
        return False, False

    def _user(self, user_id: int, now: float) -> _User:
        self._rotate(now)
        state = self._current.get(user_id)
        if state is None:
            state = self._previous.pop(user_id, None)
            if state is None:
                if len(self._current) >= self.max_users:
                    # More users in one window than the cap: start a new generation early. The users this drops
                    # are only those of the previous window, the ones whose events are the oldest.
                    self._previous, self._current, self._started = self._current, {}, now
                state = _User()
            self._current[user_id] = state
        return state

    def _rotate(self, now: float) -> None:
        if self._started is None:
            self._started = now
        elif now - self._started >= self.window_s:
            # Every user still in _previous was last seen before _started, a window or more ago.
            self._previous, self._current, self._started = self._current, {}, now


class FloodGuard:
    """Allow `limit` questions and `tap_limit` taps (default TAP_FACTOR x `limit`) per `window_s` per user; tell
    the caller when to send the one polite notice."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic,
                 max_users: int = 100_000, tap_limit: int | None = None):
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_users = max_users
        self.tap_limit = tap_limit if tap_limit is not None else limit * TAP_FACTOR
        self._windows: dict[Kind, _Windows] = {"question": _Windows(limit, window_s, max_users),
                                               "tap": _Windows(self.tap_limit, window_s, max_users)}

    def check(self, user_id: int, kind: Kind = "question") -> tuple[bool, bool]:
        """(allowed, send_notice). The notice goes out once per window and budget while a user is over it."""
        return self._windows[kind].check(user_id, self.clock())

    def tracked_users(self) -> int:
        """How many per-user states are kept, over both budgets (for tests and the memory benchmark)."""
        return sum(len(windows) for windows in self._windows.values())
