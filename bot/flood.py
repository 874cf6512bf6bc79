"""Per-user flood control: a sliding window per user, so one chatty user cannot starve the others.

Two budgets per user: questions (a sizing answer: text, /size, an example button) and taps (buttons that only
show an answer again: a precision or context toggle, Details, a coin). Taps come in quick runs and cost no
parsing, so they get their own, more generous budget (TAP_FACTOR x the questions'): a run of taps never uses up
the next question, and a tapping script is still capped.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Literal

TAP_FACTOR = 3
Kind = Literal["question", "tap"]


class _Windows:
    """`limit` events per `window_s` per user, and when each user was last told they are over it."""

    def __init__(self, limit: int, window_s: float, max_users: int):
        self.limit = limit
        self.window_s = window_s
        self.max_users = max_users
        self.events: dict[int, deque[float]] = {}
        self.noticed: dict[int, float] = {}

    def check(self, user_id: int, now: float) -> tuple[bool, bool]:
        events = self.events.get(user_id)
        if events is None:
            if len(self.events) >= self.max_users:
                self._forget_idle(now)
            events = self.events[user_id] = deque()
        while events and now - events[0] >= self.window_s:
            events.popleft()
        if len(events) < self.limit:
            events.append(now)
            return True, False
        noticed = self.noticed.get(user_id)
        if noticed is None or now - noticed >= self.window_s:
            self.noticed[user_id] = now
            return False, True
        return False, False

    def _forget_idle(self, now: float) -> None:
        for user_id in [u for u, e in self.events.items() if not e or now - e[-1] >= self.window_s]:
            self.events.pop(user_id, None)
            self.noticed.pop(user_id, None)


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
