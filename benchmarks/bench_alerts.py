"""Price-alert fan-out at 100,000 subscribers, on SQLite and (when a server can be started) PostgreSQL: how long
queueing takes, the longest time any store call holds the store's lock, what one progress count costs, and the send
rate against the Bot API emulator (30 messages/s, 429 above it) for a limited window, with duplicates.

Usage: .venv/bin/python -m benchmarks.bench_alerts [--subscribers 100000] [--send-seconds 12]
       [--engines sqlite,postgresql] [--limit 30]
About a minute for both engines here (50-75 s at load average 8-10 on the 2 CPUs; main took 1-4 minutes per engine).
PostgreSQL runs when tests/support/postgres.py can start a server here (else it says why and runs SQLite only).
The subscribers are written straight into users/subscriptions (mixed languages, coins, thresholds, some blocked,
one in ten on two changed cards); then AlertDelivery.queue fans a real catalog diff out to them and the delivery
sends for --send-seconds with the admin's progress message on, as in production (its edits share the 30/s).
Lock hold: the SQLite store's lock (one connection: every read and write, BEGIN to COMMIT) or the PostgreSQL
store's write lock (a write transaction), from acquired to released; PostgreSQL's lock-free reads are timed too.
Each hold is named by the store method that held it (for SQLite's batched calls, the methods of the batch), and
the longest per phase and per method are printed, with the garbage collector's pauses and WAL checkpoints beside.
Targets: longest hold <= 50 ms, sends >= 98 % of the allowed rate, 0 duplicates, progress counted
without a scan. The script uses only what main had too (Store, AlertDelivery), so it measures main as "before".
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from telegram.ext import ExtBot

from bot.config import load_settings
from bot.operators.alerts import AlertDelivery
from bot.store import Store
from bot.telegram.ptb import ResilientRateLimiter
from catalog.diff import diff_catalogs
from catalog.loader import parse_catalog
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:BENCH-token-not-real"
ADMIN = 42
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
CHANGED = ("h100-sxm", "h200-sxm", "mi300x")  # cards of the bundled catalog whose price the announcement changes
MEASURED = ("queue", "progress", "deliver", "restart")  # the phases whose holds count (not setup, main's scan)
SCAN = "SELECT status, count(*) AS n FROM alerts WHERE announcement_id = ? GROUP BY status"


class Holds:
    """Lock hold times per phase of the run."""

    def __init__(self) -> None:
        self.phase = "setup"
        self.by_phase: dict[str, list[float]] = {}
        self.reads: dict[str, list[float]] = {}
        self.worst: dict[str, tuple[float, str]] = {}  # phase -> the longest hold and the store method that held it
        self.methods: dict[str, tuple[float, int]] = {}  # store method -> its longest measured hold, how many holds
        self.intervals: dict[str, list[tuple[float, float]]] = {}
        self.cpu: dict[str, float] = {}  # phase -> the most CPU time this process spent during one hold
        self.checkpoints: list[tuple[float, float]] = []  # SQLite's WAL checkpoints, (start, end)

    def hold(self, since: float, until: float, cpu: float, where: str) -> None:
        self.cpu[self.phase] = max(self.cpu.get(self.phase, 0.0), cpu)
        seconds = until - since
        self.by_phase.setdefault(self.phase, []).append(seconds)
        self.intervals.setdefault(self.phase, []).append((since, until))
        if seconds > self.worst.get(self.phase, (0.0, ""))[0]:
            self.worst[self.phase] = (seconds, where)
        if self.phase in MEASURED:
            longest, count = self.methods.get(where, (0.0, 0))
            self.methods[where] = (max(longest, seconds), count + 1)

    def longest_without(self, pauses: list[tuple[float, float]], phases: tuple[str, ...]) -> float:
        """The longest hold once the garbage collector's pauses inside it are taken out."""
        longest = 0.0
        for phase in phases:
            for since, until in self.intervals.get(phase, ()):
                stalled = sum(max(0.0, min(until, end) - max(since, start)) for start, end in pauses
                              if start < until and end > since)
                longest = max(longest, until - since - stalled)
        return longest

    def long_during_checkpoints(self, phases: tuple[str, ...]) -> int:
        """How many holds over 50 ms overlapped a WAL checkpoint (which runs beside them, not inside)."""
        return sum(1 for phase in phases for since, until in self.intervals.get(phase, ()) if until - since > 0.05
                   and any(start < until and end > since for start, end in self.checkpoints))

    def read(self, seconds: float) -> None:
        self.reads.setdefault(self.phase, []).append(seconds)

    def longest(self, phases: tuple[str, ...] | None = None) -> float:
        return max((max(v) for k, v in self.by_phase.items() if phases is None or k in phases), default=0.0)


def caller() -> str:
    """The repository method (bot/store/, not the Database layer) on the current stack."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if "/bot/store/" in path and not path.endswith("database.py"):
            return frame.f_code.co_name
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


class GcPauses:
    """Python's garbage collector stops everything, a lock holder too: its longest pause per generation."""

    def __init__(self) -> None:
        self.longest: dict[int, float] = {}
        self.intervals: list[tuple[float, float]] = []  # those over 1 ms, (start, end) in perf_counter seconds
        self._since = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._since = time.perf_counter()
        else:
            now = time.perf_counter()
            generation = info["generation"]
            self.longest[generation] = max(self.longest.get(generation, 0.0), now - self._since)
            if now - self._since > 0.001:
                self.intervals.append((self._since, now))

    def close(self) -> None:
        gc.callbacks.remove(self._callback)


class TimedLock(asyncio.Lock):
    """An asyncio.Lock that reports how long each holder kept it, and which store method(s) held it."""

    def __init__(self, report: Callable[[float, float, float, str], None], database: Any) -> None:
        super().__init__()
        self._report = report
        self._database = database
        self._since = self._cpu_since = 0.0
        self._where = "?"

    async def acquire(self) -> bool:  # type: ignore[override]
        await super().acquire()
        self._since, self._cpu_since = time.perf_counter(), time.process_time()
        self._where = caller()
        return True

    def release(self) -> None:
        self._report(self._since, time.perf_counter(), time.process_time() - self._cpu_since, self._where)
        super().release()


def instrument(store: Store, holds: Holds) -> None:
    database: Any = store._database  # noqa: SLF001 - the benchmark measures the layer's own lock
    attribute = "_lock" if database.engine == "sqlite" else "_write_lock"
    setattr(database, attribute, TimedLock(holds.hold, database))
    checkpointer = getattr(database, "_checkpointer", None)  # SQLite's WAL checkpoints (bot/store/wal.py)
    if checkpointer is not None:
        checkpoint = checkpointer.checkpoint

        async def timed_checkpoint() -> Any:
            start = time.perf_counter()
            try:
                return await checkpoint()
            finally:
                holds.checkpoints.append((start, time.perf_counter()))

        checkpointer.checkpoint = timed_checkpoint
    if database.engine != "sqlite":  # PostgreSQL's reads take no lock in this process: time them as they run
        fetch = database.fetch

        async def timed_fetch(*args: Any, **kwargs: Any) -> list[Any]:
            start = time.perf_counter()
            try:
                return list(await fetch(*args, **kwargs))
            finally:
                holds.read(time.perf_counter() - start)

        database.fetch = timed_fetch


def catalogs() -> tuple[Any, Any]:
    text = BUNDLED.read_text()
    data = yaml.safe_load(text)
    for card in data["cards"]:
        if card["id"] in CHANGED:
            card["price_monthly_usd"] = round(card["price_monthly_usd"] * 0.9)
    return parse_catalog(text, "before"), parse_catalog(yaml.safe_dump(data, sort_keys=False), "after")


async def add_subscribers(store: Store, count: int) -> None:
    """Users with mixed preferences (language chosen or only Telegram's, coins, 1 % blocked), each subscribed to
    one changed card (one in ten to two), any change or a threshold the new price meets (one in fifty: misses)."""
    rng = random.Random(14)
    now = time.time()
    users, subscriptions = [], []
    for user_id in range(1, count + 1):
        users.append((user_id, rng.choice([None, "en", "de"]), rng.choice([None, "de", "en", "fr"]),
                      rng.choice([None, "usdt", "btc"]), int(rng.random() < 0.01), now, now))
        cards = rng.sample(CHANGED, 2 if rng.random() < 0.1 else 1)
        for card in cards:
            roll = rng.random()
            below = None if roll < 0.78 else 1e6 if roll < 0.98 else 1.0
            subscriptions.append((user_id, card, below, now))
    database: Any = store._database  # noqa: SLF001 - bulk setup, not the code under test
    for table, columns, rows in (("users", "user_id, language, telegram_language, coin, blocked, created_at, "
                                  "updated_at", users),
                                 ("subscriptions", "user_id, card_id, below_usd, created_at", subscriptions)):
        if database.engine == "postgresql":  # COPY: seconds less of setup on the loaded machine
            async with database._pool.acquire() as conn:  # noqa: SLF001
                await conn.copy_records_to_table(table, records=rows, columns=columns.split(", "))
            continue
        width = len(rows[0])
        for start in range(0, len(rows), 1000):
            chunk = rows[start:start + 1000]
            values = ", ".join(["(" + ", ".join(["?"] * width) + ")"] * len(chunk))
            async with database.transaction() as db:
                await db.execute(f"INSERT INTO {table} ({columns}) VALUES {values}",
                                 [value for row in chunk for value in row])
    if database.engine == "postgresql":
        # Statistics, as autovacuum keeps them for tables that grew over time; a planner without any picks a
        # sort of every subscriber of a card for each page.
        async with database.transaction() as db:
            await db.execute("ANALYZE")


async def timed(awaitable: Awaitable[Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - start


async def median_ms(call: Callable[[], Awaitable[Any]], times: int = 21) -> float:
    samples = []
    for _ in range(times):
        samples.append((await timed(call()))[1])
    return statistics.median(samples) * 1000


@asynccontextmanager
async def database_for(engine: str, tmp: str) -> AsyncIterator[str]:
    if engine == "sqlite":
        yield f"{tmp}/alerts.sqlite3"
        return
    from tests.support.postgres import PostgresServer, _binaries

    bindir = _binaries()
    assert bindir is not None
    server = PostgresServer(bindir=bindir, root=Path(tempfile.mkdtemp(prefix="cardfit-bench-pg-")))
    server.start()
    try:
        yield server.create_database()
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


async def run_engine(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    began = time.perf_counter()
    holds = Holds()
    old, new = catalogs()
    diff = diff_catalogs(old, new)
    with tempfile.TemporaryDirectory() as tmp:
        async with database_for(engine, tmp) as target:
            store = await Store.open(target)
            try:
                await add_subscribers(store, args.subscribers)
                setup_s = time.perf_counter() - began
                # The setup's 300,000 objects are garbage now; collect them before measuring, as a bot that has
                # run a while would have, instead of charging that collection to the first measured phase.
                gc.collect()
                instrument(store, holds)
                pauses = GcPauses()
                settings = load_settings(bot_token=TOKEN, db=f"{tmp}/unused.sqlite3", admin_ids=str(ADMIN))
                async with BotApiEmulator(token=TOKEN) as emulator:
                    emulator.rate_limit(per_second=args.limit)
                    bot = ExtBot(TOKEN, base_url=emulator.base_url, base_file_url=emulator.base_file_url,
                                 rate_limiter=ResilientRateLimiter(max_retries=5,
                                                                   messages_per_s=settings.send_rate_per_s))
                    await bot.initialize()
                    delivery = AlertDelivery(settings, store, bot)
                    announcement = await store.begin_announcement("bench", "0" * 64, "-", "bench")
                    assert announcement is not None

                    holds.phase = "queue"
                    queued, queue_s = await timed(delivery.queue(announcement, diff, new))

                    holds.phase = "progress"
                    progress_ms = await median_ms(lambda: store.alert_progress(announcement))
                    holds.phase = "scan"  # main's way of counting, for comparison; not a hold of this code
                    scan_ms = await median_ms(lambda: store._database.fetch(SCAN, (announcement,)),  # noqa: SLF001
                                              times=5)

                    holds.phase = "deliver"
                    mark = emulator.mark()
                    start = time.monotonic()
                    delivery.start_delivery()
                    await asyncio.sleep(args.send_seconds)
                    await delivery.stop(grace_s=10)
                    window = time.monotonic() - start

                    holds.phase = "restart"
                    await store.settle_interrupted_alerts(delivery.owner_alive)
                    await store.release_dead_claims(delivery.owner_alive)
                    await bot.shutdown()
                    calls = [call for call in emulator.calls[mark:] if call.ok
                             and call.method.lower() in ("sendmessage", "editmessagetext")]
                    alerts = [call for call in calls if call.chat_id != ADMIN]
                    stats = emulator.stats
                holds.phase = "check"
                progress = await store.alert_progress(announcement)
                scanned = {row["status"]: int(row["n"]) for row in await store._database.fetch(  # noqa: SLF001
                    SCAN, (announcement,))}
            finally:
                await store.close()
    pauses.close()
    span = calls[-1].time - calls[0].time if len(calls) > 1 else float("nan")
    return {
        "engine": engine, "setup_s": setup_s, "took_s": time.perf_counter() - began,
        "queued": queued, "queue_s": queue_s, "progress_ms": progress_ms, "scan_ms": scan_ms,
        "window_s": window, "alerts": len(alerts), "sends": len(calls),
        "send_rate": (len(calls) - 1) / span, "alert_rate": len(alerts) / window,
        "duplicates": stats["duplicates"], "rejected_429": stats["rejected_429"],
        "holds": {phase: (max(v), len(v), holds.worst[phase][1]) for phase, v in holds.by_phase.items()},
        "queue_held_s": sum(holds.by_phase.get("queue", ())), "queue_read_s": sum(holds.reads.get("queue", ())),
        "methods": sorted(holds.methods.items(), key=lambda item: -item[1][0]),
        "reads": {phase: (max(v), len(v)) for phase, v in holds.reads.items()},
        "gc_ms": {generation: round(seconds * 1000, 1) for generation, seconds in sorted(pauses.longest.items())},
        "longest_hold_ms": holds.longest(MEASURED) * 1000,
        "over_50ms": sum(1 for phase in MEASURED for held in holds.by_phase.get(phase, ()) if held > 0.05),
        "holds_count": sum(len(holds.by_phase.get(phase, ())) for phase in MEASURED),
        "p99_hold_ms": 1000 * sorted(held for phase in MEASURED for held in holds.by_phase.get(phase, ()))[
            int(0.99 * (sum(len(holds.by_phase.get(phase, ())) for phase in MEASURED) - 1))],
        "longest_hold_cpu_ms": 1000 * max((holds.cpu.get(phase, 0.0) for phase in MEASURED), default=0.0),
        "longest_hold_no_gc_ms": holds.longest_without(pauses.intervals, MEASURED) * 1000,
        "checkpoints": len(holds.checkpoints),
        "longest_checkpoint_ms": 1000 * max((end - start for start, end in holds.checkpoints), default=0.0),
        "over_50ms_during_checkpoint": holds.long_during_checkpoints(MEASURED),
        "counts_equal_scan": {k: v for k, v in progress.items() if k != "total"}
        == {k: scanned.get(k, 0) for k in ("sent", "failed", "blocked", "queued")}
        and progress["total"] == sum(scanned.values()),
    }


def report(result: dict[str, Any], limit: float) -> list[dict[str, Any]]:
    engine = result["engine"]
    holds = ", ".join(f"{phase} {longest * 1000:.1f} ms ({where}) of {count:,}" for phase, (longest, count, where)
                      in result["holds"].items())
    print(f"[{engine}] queued {result['queued']:,} alerts in {result['queue_s']:.2f} s; longest lock hold by phase: "
          f"{holds}; longest GC pause by generation (ms): {result['gc_ms']}")
    print(f"[{engine}] longest hold {result['longest_hold_ms']:.1f} ms, without the GC pauses inside it "
          f"{result['longest_hold_no_gc_ms']:.1f} ms; {result['over_50ms']} of {result['holds_count']:,} holds over "
          f"50 ms, p99 {result['p99_hold_ms']:.1f} ms; the most CPU this process spent during one hold "
          f"{result['longest_hold_cpu_ms']:.1f} ms (wall time beyond it: the machine's other work, or the server)")
    methods = ", ".join(f"{where} {longest * 1000:.1f} ms of {count:,}" for where, (longest, count)
                        in result["methods"][:6])
    print(f"[{engine}] longest measured hold by store method: {methods}")
    if result["checkpoints"]:
        print(f"[{engine}] {result['checkpoints']} WAL checkpoints beside the store's connection, the longest "
              f"{result['longest_checkpoint_ms']:.1f} ms; holds over 50 ms while one ran: "
              f"{result['over_50ms_during_checkpoint']}")
    if result["reads"]:
        reads = ", ".join(f"{phase} {longest * 1000:.1f} ms of {count:,}" for phase, (longest, count)
                          in result["reads"].items())
        print(f"[{engine}] longest lock-free read by phase: {reads}")
    print(f"[{engine}] progress count {result['progress_ms']:.3f} ms (a scan of the alerts: "
          f"{result['scan_ms']:.2f} ms); counts equal the scan after the run: {result['counts_equal_scan']}")
    print(f"[{engine}] queueing: {result['queue_held_s']:.2f} s holding the lock"
          + (f", {result['queue_read_s']:.2f} s in lock-free reads" if result["reads"] else ""))
    print(f"[{engine}] took {result['took_s']:.1f} s, {result['setup_s']:.1f} s of it starting the store and "
          "writing the subscribers")
    print(f"[{engine}] {result['window_s']:.1f} s of sending: {result['alerts']:,} alerts + "
          f"{result['sends'] - result['alerts']} progress messages; all sends {result['send_rate']:.2f}/s = "
          f"{result['send_rate'] / limit:.1%} of {limit:g}/s, alerts alone {result['alert_rate'] / limit:.1%}; "
          f"429s {result['rejected_429']}, duplicates {result['duplicates']}")
    return [
        {"metric": f"{engine} enqueue time", "value": round(result["queue_s"], 3), "unit": "s",
         "target": "-", "ok": True},
        {"metric": f"{engine} longest lock hold", "value": round(result["longest_hold_ms"], 2), "unit": "ms",
         "target": "<= 50", "ok": result["longest_hold_ms"] <= 50},
        {"metric": f"{engine} longest lock hold less GC pauses", "value": round(result["longest_hold_no_gc_ms"], 2),
         "unit": "ms", "target": "<= 50", "ok": result["longest_hold_no_gc_ms"] <= 50},
        {"metric": f"{engine} lock holds over 50 ms", "value": result["over_50ms"], "unit": "holds",
         "target": "0", "ok": result["over_50ms"] == 0},
        {"metric": f"{engine} progress count", "value": round(result["progress_ms"], 3), "unit": "ms",
         "target": "no scan", "ok": result["counts_equal_scan"]},
        {"metric": f"{engine} send rate", "value": round(100 * result["send_rate"] / limit, 2),
         "unit": f"% of {limit:g}/s", "target": ">= 98", "ok": result["send_rate"] / limit >= 0.98},
        {"metric": f"{engine} duplicates", "value": result["duplicates"], "unit": "", "target": "0",
         "ok": result["duplicates"] == 0},
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=100_000)
    parser.add_argument("--send-seconds", type=float, default=12.0)
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--limit", type=float, default=30, help="the emulator's messages per second")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows: list[dict[str, Any]] = []
    for engine in args.engines.split(","):
        if engine == "postgresql":
            from tests.support.postgres import unavailable_reason

            reason = unavailable_reason()
            if reason is not None:
                print(f"[postgresql] skipped: {reason}")
                continue
        rows.extend(report(await run_engine(engine, args), args.limit))
    print(json.dumps({"bench": "alerts", "rows": rows}))


def interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that a `timeout` around the script still stops the PostgreSQL server it started


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, interrupted)
    asyncio.run(main())
