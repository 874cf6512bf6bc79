"""The flood guard (bot/telegram/flood.py): limits per user and budget, one notice per window, and state that is
forgotten by time, so memory follows the users of the last windows, not every user ever seen."""
from __future__ import annotations

from bot.telegram.flood import FloodGuard


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def guard(limit: int = 3, window_s: float = 10.0, **kwargs: int) -> tuple[FloodGuard, Clock]:
    clock = Clock()
    return FloodGuard(limit, window_s, clock=clock, **kwargs), clock


def test_limit_per_window_then_one_notice_then_silence():
    flood, clock = guard()
    assert [flood.check(1) for _ in range(3)] == [(True, False)] * 3
    assert flood.check(1) == (False, True)
    clock.now += 5
    assert flood.check(1) == (False, False)


def test_the_window_slides():
    flood, clock = guard()
    flood.check(1)
    clock.now += 6
    flood.check(1)
    flood.check(1)
    assert flood.check(1)[0] is False
    clock.now += 4  # the first event is now 10 s old: one slot is free again, the others are not
    assert flood.check(1) == (True, False)
    assert flood.check(1)[0] is False


def test_a_notice_again_after_a_window():
    flood, clock = guard(limit=1)
    flood.check(1)
    assert flood.check(1) == (False, True)
    clock.now += 9.9
    assert flood.check(1) == (False, False)
    clock.now += 0.1
    assert flood.check(1) == (True, False)  # the first event expired
    assert flood.check(1) == (False, True)


def test_users_and_budgets_are_independent():
    flood, _ = guard(limit=1)
    assert flood.check(1) == (True, False)
    assert flood.check(1)[0] is False
    assert flood.check(2) == (True, False)
    assert [flood.check(1, "tap")[0] for _ in range(4)] == [True, True, True, False]  # 3 x the questions'


def test_a_user_kept_across_a_generation_keeps_their_events():
    flood, clock = guard(limit=2)
    flood.check(1)
    clock.now += 9
    flood.check(1)
    clock.now += 1.5  # the generation turns over here; the second event is 1.5 s old and still counts
    flood.check(2)
    assert flood.check(1) == (True, False)  # the first expired, so one slot
    assert flood.check(1) == (False, True)


def test_idle_users_are_forgotten_after_two_windows():
    flood, clock = guard(limit=1)
    for user in range(1000):
        flood.check(user)
    assert flood.tracked_users() == 1000
    clock.now += 10
    flood.check(5000)
    assert flood.tracked_users() == 1001  # the last window's users are still kept
    clock.now += 10
    flood.check(5001)
    assert flood.tracked_users() == 2  # the users of 20 s ago are gone
    assert flood.check(3) == (True, False)  # and a forgotten user starts fresh, as their events had expired


def test_state_follows_the_users_of_the_last_windows_not_all_users_ever_seen():
    flood, clock = guard(limit=8, window_s=10.0)
    most = 0
    for user in range(20_000):  # 100 new users a second for 200 s
        clock.now += 0.01
        flood.check(user)
        most = max(most, flood.tracked_users())
    assert most <= 2 * 10 * 100 + 10  # two windows of 1,000 users (and the clock's rounding)


def test_more_users_in_one_window_than_the_cap_stay_bounded():
    flood, _ = guard(limit=1, max_users=100)
    for user in range(1000):
        flood.check(user)
    assert flood.tracked_users() <= 2 * 100
    assert flood.check(999)[0] is False  # the most recent users are still limited
