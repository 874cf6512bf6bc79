"""The overall send pacing (bot/telegram_io.SendSchedule, Pacer) on a fake clock: late wake-ups are caught up,
never more than the rate in any sliding second, bursts after a stall or idle time bounded."""
from __future__ import annotations

import asyncio
import math
import random
from bisect import bisect_right
from collections.abc import Callable

import pytest

from bot.telegram.ptb import Pacer, ResilientRateLimiter, SendSchedule


def most_in_one_second(times: list[float]) -> int:
    """The most sends in any window (t - 1, t], the emulator's and Telegram's sliding second."""
    ordered = sorted(times)
    return max((i + 1 - bisect_right(ordered, t - 1.0) for i, t in enumerate(ordered)), default=0)


def drive(schedule: SendSchedule, count: int, late: Callable[[], float], start: float = 0.0,
          round_trip: Callable[[], float] = lambda: 0.0005) -> list[float]:
    """`count` sends from one sender that always has the next message ready (alert delivery: one at a time),
    wakes up `late()` seconds after each wait it asked for (a loaded CPU) and gets each answer `round_trip()`
    later; returns when each one went out."""
    now, times = start, []
    for _ in range(count):
        while (delay := schedule.wait(now)) > 0:
            now += delay + late()
        counted = schedule.sent(now)
        times.append(now)
        now += round_trip()
        schedule.answered(counted, now)
    return times


@pytest.mark.parametrize("seed", range(5))
def test_late_wake_ups_are_caught_up_without_passing_30_in_any_second(seed: int) -> None:
    rng = random.Random(seed)

    def late() -> float:  # mostly a few ms, now and then a garbage collection's 50-150 ms
        return rng.uniform(0.05, 0.15) if rng.random() < 0.03 else rng.expovariate(1 / 0.004)

    times = drive(SendSchedule(30, catch_up_s=0.2), 3000, late)
    span = times[-1] - times[0]
    # 3,000 sends take N/30 s (less the first catch-up): the lateness costs only what it adds to a send that
    # waited for the sliding second (4 ms a second here, ~0.5 %), not what it adds to every wait
    assert 2999 / 30 - 0.3 < span < 2999 / 30 * 1.015
    assert most_in_one_second(times) <= 30


def test_the_old_pacing_lost_every_late_wake_up() -> None:
    """Pacing each message 1/30 s after the previous one (what aiolimiter's one-message bucket did) under the same
    lateness: the reference the test above must beat, so it cannot pass by accident of the lateness model."""
    rng = random.Random(0)
    now, previous, times = 0.0, -1.0, []
    for _ in range(3000):
        now = max(now, previous + 1 / 30) + rng.expovariate(1 / 0.004)
        previous = now
        times.append(now)
    assert (times[-1] - times[0]) > 2999 / 30 * 1.1


def most_within(times: list[float], seconds: float) -> int:
    ordered = sorted(times)
    return max(i + 1 - bisect_right(ordered, t - seconds) for i, t in enumerate(ordered))


def test_an_on_time_sender_sends_at_the_rate_with_bounded_bursts() -> None:
    times = drive(SendSchedule(30, catch_up_s=0.2), 600, lambda: 0.0)
    assert (times[-1] - times[0]) == pytest.approx(599 / 30 - 0.2, abs=0.01)
    assert most_in_one_second(times) == 30
    assert most_within(times, 0.03) == 7  # the catch-up's 0.2 s of slots and the current one, never more


def test_catch_up_after_a_stall_is_bounded_and_stays_under_the_limit() -> None:
    schedule = SendSchedule(30, catch_up_s=0.2)
    times = drive(schedule, 60, lambda: 0.0)
    stalled = times[-1] + 0.7  # e.g. a 429's retry_after, or a long pause
    burst = []
    now = stalled
    while schedule.wait(now) == 0:
        schedule.sent(now)
        burst.append(now)
    assert len(burst) == round(0.2 * 30) + 1  # catch_up_s of missed slots and the current one, not the whole 0.7 s
    times += burst + drive(schedule, 200, lambda: 0.0, start=now)
    assert most_in_one_second(times) <= 30


def test_an_idle_bot_earns_no_more_than_the_catch_up() -> None:
    schedule = SendSchedule(30, catch_up_s=0.2)
    times = drive(schedule, 10, lambda: 0.0)
    idle = times[-1] + 3600.0
    after = drive(schedule, 30, lambda: 0.0, start=idle)
    assert after[6] - idle < 0.01 < after[7] - idle  # 0.2 s of slots and the current one at once, then 30/s
    assert after[-1] - idle == pytest.approx(23 / 30, abs=0.002)


def test_worst_case_bursts_never_pass_the_window() -> None:
    """A sender stalling just long enough to use the catch-up every time, the case that bursts most."""
    rng = random.Random(7)
    times = drive(SendSchedule(30, catch_up_s=0.5), 2000, lambda: rng.choice([0.0, 0.0, 0.3, 0.6]))
    assert most_in_one_second(times) <= 30


@pytest.mark.parametrize("rate", [0.5, 1.0, 7.5, 30.0, 100.0])
def test_other_rates(rate: float) -> None:
    rng = random.Random(3)
    times = drive(SendSchedule(rate, catch_up_s=0.2), 200, lambda: rng.expovariate(1 / 0.01))
    assert (times[-1] - times[0]) == pytest.approx(199 / rate - 0.2, rel=0.03)
    assert most_in_one_second(times) <= max(1, math.ceil(rate))


def test_pacer_serves_concurrent_senders_in_order_on_the_schedule() -> None:
    """Pacer's async side on a fake clock: each sleep advances it by what was asked plus a late wake-up."""
    rng = random.Random(11)
    clock = [100.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds + rng.expovariate(1 / 0.005)
        await asyncio.sleep(0)

    pacer = Pacer(30, clock=lambda: clock[0], sleep=sleep)
    sent: list[tuple[int, float]] = []

    async def sender(number: int) -> None:
        async with pacer:
            sent.append((number, clock[0]))

    async def main() -> None:
        await asyncio.gather(*(sender(n) for n in range(300)))

    asyncio.run(main())
    assert [number for number, _ in sent] == list(range(300))
    times = [at for _, at in sent]
    assert (times[-1] - times[0]) == pytest.approx(299 / 30 - 0.2, rel=0.02)
    assert most_in_one_second(times) <= 30


def test_the_bot_rate_limiter_paces_on_the_schedule() -> None:
    limiter = ResilientRateLimiter(messages_per_s=20)
    base = limiter._base_limiter  # noqa: SLF001 - PTB's overall limiter is what this module replaces
    assert isinstance(base, Pacer)
    assert base.schedule.interval == pytest.approx(1 / 20)


def test_a_request_slower_in_flight_than_the_one_30_later_never_lands_in_its_second() -> None:
    """The receiver counts a request when it arrives, anywhere between going out and its answer: the one that
    failed this way before (a slow request, then 30 later a fast one, both in the receiver's same second)."""
    rng = random.Random(5)
    schedule = SendSchedule(30, catch_up_s=0.2)
    now, arrivals, times = 0.0, [], []
    for _ in range(3000):
        while (delay := schedule.wait(now)) > 0:
            now += delay + rng.expovariate(1 / 0.003)
        counted = schedule.sent(now)
        times.append(now)
        trip = rng.uniform(0.08, 0.2) if rng.random() < 0.03 else rng.uniform(0.002, 0.02)
        arrivals.append(now + rng.uniform(0.0, trip))  # it reached the receiver somewhere in flight
        now += trip
        schedule.answered(counted, now)
    assert most_in_one_second(arrivals) <= 30
    # the cost: round trips and late wake-ups once a second, not once a message (4 % with these slow trips)
    assert (times[-1] - times[0]) < 2999 / 30 * 1.06


def test_a_request_that_never_answers_holds_its_place_only_so_long() -> None:
    schedule = SendSchedule(30, in_flight_s=0.25)
    stuck = schedule.sent(0.0)
    for i in range(1, 30):
        schedule.answered(schedule.sent(i / 30), i / 30)
    schedule.answered(stuck, 60.0)  # answered a minute later (or a time-out)
    assert schedule.wait(1.0) == pytest.approx(0.25)


def test_schedule_keeps_only_the_last_window_of_sends_whatever_the_rate() -> None:
    """A lifted rate (bench_memory sends at 1,000,000/s) must not keep every send: the window's deque had that
    maxlen and grew by one list per message for the whole run (+13 MiB after 100,000 users)."""
    schedule = SendSchedule(1_000_000, in_flight_s=0.25)
    now = 0.0
    for _ in range(20_000):
        assert schedule.wait(now) == 0
        counted = schedule.sent(now)
        schedule.answered(counted, now + 0.0005)
        now += 0.001
    kept = len(schedule._recent)  # noqa: SLF001 - the bound is the point of the test
    assert kept <= math.ceil((schedule.window_s + schedule.in_flight_s) / 0.001) + 1
    assert kept >= 1000  # everything still inside the window is counted


def test_pruning_never_lets_more_than_the_rate_into_a_second() -> None:
    """Dropping sends that left the window changes no decision: 30/s stays at most 30 in any sliding second."""
    schedule = SendSchedule(30, catch_up_s=0.2)
    sent: list[float] = []
    now = 0.0
    rng = random.Random(7)
    while len(sent) < 600:
        delay = schedule.wait(now)
        if delay:
            now += delay
            continue
        counted = schedule.sent(now)
        sent.append(now)
        schedule.answered(counted, now + rng.uniform(0.0, 0.3))
        now += rng.uniform(0.0, 0.05)
    for index, start in enumerate(sent):
        assert bisect_right(sent, start + 1.0 - 1e-9) - index <= 30
