"""Does the bot's memory follow its traffic or every user it has ever seen? RSS after a warm-up, then after
100,000 more distinct users have each asked once (target: growth at most 5 MiB).

Usage: .venv/bin/python -m benchmarks.bench_memory [--users 10000] [--answered-every 10] [--trace]
       (`--users 100000` for the full measurement of the target: 4-9 minutes on the shared machine)

How: the real Application (build_application, its handlers, the pre-handler, a SQLite store in a temporary
directory) is driven in this process, 64 updates at a time (the bot's concurrent_updates), through the offline
request layer of the handler tests (tests/support/botharness.py; its call log is emptied after each batch), so no
HTTP server keeps per-chat state of its own. About 0.6 ms an update on an idle machine; on the shared 2-core one
100,000 users took 4-9 minutes, so the default is 10,000 users (about a minute; 15,000 took 110 s at load
average 10), checked against the same 5 MiB. A short run does not prove the target: the growth is not linear
(allocator arenas and caches fill in steps: +2.6 MiB after 15,000 users here, +1.7 MiB after 100,000 in an earlier run),
so `--users 100000` measures the target itself. Every user writes one private message: every `--answered-every`th
a sizing question (QUESTIONS of bench_bot, answered in full: engine, store
writes, keyboard), the others a greeting that is not one (parsed, answered with the help text and its buttons).
Both pass the flood guard, resolve the caller and create the user's row, which is what is per user. The flood
guard's clock is simulated at 30 new users per second, Telegram's broadcast ceiling for one bot (Bot API FAQ:
"no more than 30 messages per second"; settings.send_rate_per_s defaults to it), so its windows turn over as
they would in a real run of that many users instead of all 100,000 landing in one 10-second window. RSS is
VmRSS from /proc/self/status after gc.collect(). `--trace` adds tracemalloc's top growth sites (slower).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks.bench_bot import QUESTIONS
from bot.config import load_settings
from tests.support.botharness import TOKEN, Harness

TARGET_MIB = 5.0
TARGET_USERS = 100_000  # the target: RSS flat (within 5 MiB) after 100,000 distinct users have asked once
BATCH = 64
NEW_USERS_PER_S = 30.0  # the flood guard's simulated clock: see the module docstring
GREETING = "hello there, nice bot"


def rss_mib() -> float:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status (Linux only)")


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def ask(harness: Harness, clock: SimulatedClock, first: int, count: int, answered_every: int) -> None:
    for start in range(first, first + count, BATCH):
        users = range(start, min(start + BATCH, first + count))
        clock.now += len(users) / NEW_USERS_PER_S
        await asyncio.gather(*(
            harness.send(user, QUESTIONS[user % len(QUESTIONS)] if user % answered_every == 0 else GREETING)
            for user in users))
        harness.request.calls.clear()


async def measure(users: int, warmup: int, answered_every: int, trace: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(bot_token=TOKEN, db=f"{tmp}/memory.sqlite3", send_rate_per_s=1_000_000)
        async with Harness(settings) as harness:
            clock = SimulatedClock()
            flood = harness.app.bot_data["services"].flood
            flood.clock = clock
            await ask(harness, clock, 1_000_000, warmup, answered_every)
            before = rss_mib()
            if trace:
                tracemalloc.start(10)
                snapshot = tracemalloc.take_snapshot()
            started = time.monotonic()
            await ask(harness, clock, 2_000_000, users, answered_every)
            elapsed = time.monotonic() - started
            after = rss_mib()
            if trace:
                for stat in tracemalloc.take_snapshot().compare_to(snapshot, "traceback")[:8]:
                    print(f"{stat.size_diff / 1024:9.1f} KiB  {stat.count_diff:+7d} blocks")
                    for line in stat.traceback.format()[-6:]:
                        print("    " + line)
                tracemalloc.stop()
            tracked = flood.tracked_users() if hasattr(flood, "tracked_users") else -1  # main's guard has no count
            return {"before": before, "after": after, "elapsed": elapsed, "flood_users": tracked,
                    "ptb_marks": len(harness.app._user_ids_to_be_updated_in_persistence),
                    "user_data": len(harness.app.user_data)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--warmup", type=int, default=5_000)
    parser.add_argument("--answered-every", type=int, default=10)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    result = await measure(args.users, args.warmup, args.answered_every, args.trace)
    growth = result["after"] - result["before"]
    per_user_b = growth * 1024 * 1024 / args.users
    print(f"RSS after {args.warmup:,} warm-up users: {result['before']:.1f} MiB; after {args.users:,} more distinct "
          f"users ({args.users // args.answered_every:,} answered in full) in {result['elapsed']:.0f} s: "
          f"{result['after']:.1f} MiB")
    print(f"growth {growth:+.2f} MiB ({per_user_b:+.0f} B per user; target <= {TARGET_MIB:.0f} MiB); flood guard "
          f"keeps {result['flood_users']} users, PTB's persistence marks hold {result['ptb_marks']}, "
          f"user_data {result['user_data']}")
    if args.users < TARGET_USERS:
        print(f"(the target is at {TARGET_USERS:,} users: --users {TARGET_USERS} measures it; "
              f"{args.users:,} check the same bound on fewer users)")
    print(json.dumps({"bench": "bench_memory", "rows": [
        {"metric": f"RSS growth after {args.users:,} distinct users", "value": round(growth, 2), "unit": "MiB",
         "target": f"<= {TARGET_MIB:.0f} MiB" + ("" if args.users >= TARGET_USERS else f" (at {TARGET_USERS:,})"),
         "ok": growth <= TARGET_MIB},
        {"metric": "RSS growth per user", "value": round(per_user_b, 1), "unit": "B", "target": "flat",
         "ok": growth <= TARGET_MIB},
    ]}))


if __name__ == "__main__":
    asyncio.run(main())
