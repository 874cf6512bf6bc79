"""Per-user flood control: a sliding window per user, so one chatty user cannot starve the others."""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class FloodGuard:
    """Allow `limit` events per `window_s` per user; tell the caller when to send the one polite notice."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic,
                 max_users: int = 100_000):
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_users = max_users
        self._events: dict[int, deque[float]] = {}
        self._noticed: dict[int, float] = {}

    def check(self, user_id: int) -> tuple[bool, bool]:
        """(allowed, send_notice). The notice goes out once per window while a user is over the limit."""
        now = self.clock()
        events = self._events.get(user_id)
        if events is None:
            if len(self._events) >= self.max_users:
                self._forget_idle(now)
            events = self._events[user_id] = deque()
        while events and now - events[0] >= self.window_s:
            events.popleft()
        if len(events) < self.limit:
            events.append(now)
            return True, False
        noticed = self._noticed.get(user_id)
        if noticed is None or now - noticed >= self.window_s:
            self._noticed[user_id] = now
            return False, True
        return False, False

    def _forget_idle(self, now: float) -> None:
        for user_id in [u for u, e in self._events.items() if not e or now - e[-1] >= self.window_s]:
            self._events.pop(user_id, None)
            self._noticed.pop(user_id, None)
