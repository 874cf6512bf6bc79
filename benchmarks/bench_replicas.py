"""Webhook replicas on one PostgreSQL: answered updates per second and reply latency of one and of two real
`cardfit bot` processes in webhook mode, pushed the same updates by webhook in the same run.

Usage: .venv/bin/python -m benchmarks.bench_replicas [--updates 750] [--connections 40]
       (about a minute on the shared 2-core machine; `--updates 2000`, the earlier default, took 2-3 minutes)
A throwaway PostgreSQL server (tests/support/postgres.py) holds a fresh database per setup; the Bot API emulator
(tests/support/botapi_emulator.py) records the replies. Each update is a question from a different user, POSTed
with the secret header to the replicas in turn (round-robin, as a load balancer spreads them) over --connections
connections at once (Telegram's default max_connections for a webhook is 40); all are pushed at once, as in
bench_bot. Latency: from the start of an update's POST to the emulator receiving its reply. An update answered
twice is a duplicate, one never answered is lost (both must be 0). Telegram's 30 msg/s cap (the bot's rate
limiter) is lifted, as in bench_bot: with it each setup would measure the cap.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from tests.support import postgres
from tests.support.botapi_emulator import BotApiEmulator

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "123456:BENCH-token-not-real"
SECRET = "bench-webhook-secret_0123456789"
WEBHOOK_PATH = "/telegram"
QUESTIONS = ["70B at 4-bit, 32k context", "QLoRA Llama 3.1 70B", "Mixtral 8x7B on an RTX 4090",
             "Wie viel VRAM braucht Qwen2.5 72B in FP8?", "7B bf16", "gpt-oss-120b", "DeepSeek V3 mit 128k Kontext",
             "13B LoRA", "405B int4", "Gemma 2 27B fp8 32k batch 4"]
FIRST_USER = 100_000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Replica:
    port: int
    process: asyncio.subprocess.Process
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def start_replica(emulator: BotApiEmulator, database: str, work: Path, name: str) -> Replica:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
    env.update(CARDFIT_BOT_TOKEN=TOKEN, CARDFIT_BOT_API_URL=emulator.base_url, CARDFIT_DB=database,
               CARDFIT_WEBHOOK_URL=f"https://cardfit.example.test{WEBHOOK_PATH}", CARDFIT_WEBHOOK_SECRET=SECRET,
               CARDFIT_WEBHOOK_LISTEN="127.0.0.1", CARDFIT_WEBHOOK_PORT=str(port), CARDFIT_LOG_LEVEL="WARNING",
               CARDFIT_SEND_RATE_PER_S="1000000", CARDFIT_RATE_LIMIT_MESSAGES="1000", CARDFIT_HF_LOOKUP="0",
               CARDFIT_CATALOG_WATCH_S="3600", CARDFIT_CHART_DIR=str(work), PTB_TIMEDELTA="1")
    log = work / f"{name}.log"
    with log.open("ab") as handle:
        process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env,
                                                       stdout=handle, stderr=handle)
    return Replica(port, process, log)


async def wait_healthy(session: aiohttp.ClientSession, replica: Replica, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replica.process.returncode is not None:
            break
        try:
            async with session.get(f"{replica.url}/healthz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError(f"replica on port {replica.port} never became healthy:\n"
                       f"{replica.log.read_text(errors='replace')[-2000:]}")


async def stop_replica(replica: Replica) -> None:
    if replica.process.returncode is None:
        replica.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(replica.process.wait(), 30)
        except TimeoutError:
            replica.process.kill()
            await replica.process.wait()


async def push(session: aiohttp.ClientSession, replicas: list[Replica], updates: list[dict[str, Any]],
               connections: int) -> tuple[dict[int, float], Counter[int]]:
    """POST every update (round-robin over the replicas, at most `connections` at once); when each POST began,
    and the HTTP statuses."""
    started: dict[int, float] = {}
    statuses: Counter[int] = Counter()
    slots = asyncio.Semaphore(connections)
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}

    async def one(index: int, update: dict[str, Any]) -> None:
        async with slots:
            started[update["message"]["chat"]["id"]] = time.monotonic()
            replica = replicas[index % len(replicas)]
            async with session.post(f"{replica.url}{WEBHOOK_PATH}", json=update, headers=headers) as response:
                statuses[response.status] += 1

    await asyncio.gather(*(one(index, update) for index, update in enumerate(updates)))
    return started, statuses


async def measure(database: str, count: int, replicas_n: int, connections: int, work: Path) -> dict[str, Any]:
    async with BotApiEmulator(token=TOKEN) as emulator, aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections)) as session:
        replicas = [await start_replica(emulator, database, work, f"r{replicas_n}-{i}") for i in range(replicas_n)]
        try:
            for replica in replicas:
                await wait_healthy(session, replica)
            # The updates as Telegram would send them (the emulator builds them; it posts nothing itself).
            updates = [emulator.push_message(FIRST_USER + index, QUESTIONS[index % len(QUESTIONS)])
                       for index in range(count)]
            users = {FIRST_USER + index for index in range(count)}
            mark = emulator.mark()
            begin = time.monotonic()
            started, statuses = await push(session, replicas, updates, connections)
            try:
                await emulator.wait_for("sendMessage", lambda c: c.chat_id in users, count=count, since=mark,
                                        timeout=300)
            except TimeoutError:
                pass  # counted as lost below
            await asyncio.sleep(1.0)  # a late second answer would show up now
            replies = [c for c in emulator.sent("sendMessage") if c.seq >= mark and c.chat_id in users]
        finally:
            for replica in replicas:
                await stop_replica(replica)
    per_user = Counter(c.chat_id for c in replies)
    first: dict[int, float] = {}
    for call in replies:
        first.setdefault(call.chat_id, call.time)
    latencies = sorted((first[user] - started[user]) * 1000 for user in first)
    end = max(first.values()) if first else begin
    return {"replicas": replicas_n, "answered": len(first), "rate": len(first) / max(end - begin, 1e-9),
            "p50": statistics.median(latencies) if latencies else float("nan"),
            "p95": latencies[max(int(len(latencies) * 0.95) - 1, 0)] if latencies else float("nan"),
            "duplicates": sum(n - 1 for n in per_user.values() if n > 1), "lost": count - len(first),
            "http": dict(statuses)}


def row(metric: str, value: float, unit: str, target: str, ok: bool) -> dict[str, Any]:
    return {"metric": metric, "value": round(value, 2), "unit": unit, "target": target, "ok": ok}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--updates", type=int, default=750)
    parser.add_argument("--connections", type=int, default=40)
    parser.add_argument("--sqlite", action="store_true", help="also one replica on SQLite (the default store)")
    args = parser.parse_args()
    reason = postgres.unavailable_reason()
    if reason is not None:
        raise SystemExit(f"bench_replicas needs PostgreSQL: {reason}")
    bindir = postgres._binaries()
    assert bindir is not None
    server = postgres.PostgresServer(bindir=bindir, root=Path(tempfile.mkdtemp(prefix="cardfit-bench-pg-")))
    work = Path(tempfile.mkdtemp(prefix="cardfit-bench-replicas-"))
    try:
        server.start()
        results = [await measure(server.create_database(), args.updates, n, args.connections, work) for n in (1, 2)]
        if args.sqlite:
            sqlite = await measure(str(work / "bench.sqlite3"), args.updates, 1, args.connections, work)
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)

    for result in results:
        print(f"{result['replicas']} replica(s): {result['answered']:5d}/{args.updates} answered  "
              f"{result['rate']:7.1f} answered/s  p50 {result['p50']:7.1f} ms  p95 {result['p95']:7.1f} ms  "
              f"duplicates {result['duplicates']}  lost {result['lost']}  HTTP {result['http']}")
    if args.sqlite:
        print(f"1 replica on SQLite: {sqlite['rate']:7.1f} answered/s  p50 {sqlite['p50']:7.1f} ms  "
              f"p95 {sqlite['p95']:7.1f} ms  duplicates {sqlite['duplicates']}  lost {sqlite['lost']}")
    one, two = results
    print(f"two replicas / one: {two['rate'] / one['rate']:.2f}x throughput "
          f"({os.cpu_count()} CPUs on this machine, shared with PostgreSQL and the emulator)")
    rows = []
    for result in results:
        n = result["replicas"]
        rows += [row(f"answered/s, {n} replica(s)", result["rate"], "updates/s", "measured", result["answered"] > 0),
                 row(f"p50 latency, {n} replica(s)", result["p50"], "ms", "measured", True),
                 row(f"p95 latency, {n} replica(s)", result["p95"], "ms", "measured", True),
                 row(f"duplicates, {n} replica(s)", result["duplicates"], "updates", "= 0", result["duplicates"] == 0),
                 row(f"lost, {n} replica(s)", result["lost"], "updates", "= 0", result["lost"] == 0)]
    rows.append(row("two replicas / one, throughput", two["rate"] / one["rate"], "x", "> 1.0 (a free core per replica)",
                    two["rate"] > one["rate"]))
    print(json.dumps({"bench": "bench_replicas", "rows": rows}))


if __name__ == "__main__":
    asyncio.run(main())
