"""Price-alert delivery: 5,000 subscribers against the Bot API emulator, which allows 30 messages/s and answers
429 (retry_after) above it. Prints delivered, duplicates, 429s received and the achieved rate as a fraction of 30/s.

Usage: .venv/bin/python -m benchmarks.bench_alerts [--subscribers 5000] [--limit 30]
Target: all delivered, 0 duplicates, at least 90 % of the allowed rate. Takes about subscribers / limit seconds.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time

from telegram.ext import ExtBot

from bot.alerts import AlertDelivery
from bot.config import load_settings
from bot.store import Store
from bot.telegram_io import ResilientRateLimiter
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:BENCH-token-not-real"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--subscribers", type=int, default=5000)
    parser.add_argument("--limit", type=float, default=30, help="the emulator's messages per second")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"{tmp}/alerts.sqlite3")
        settings = load_settings(bot_token=TOKEN, db=f"{tmp}/alerts.sqlite3")
        async with BotApiEmulator(token=TOKEN) as emulator:
            emulator.rate_limit(per_second=args.limit)
            bot = ExtBot(TOKEN, base_url=emulator.base_url, base_file_url=emulator.base_file_url,
                         rate_limiter=ResilientRateLimiter(max_retries=5, messages_per_s=settings.send_rate_per_s))
            await bot.initialize()
            delivery = AlertDelivery(settings, store, bot)
            announcement = await store.begin_announcement("bench", "0" * 64, "-", "bench")
            users = range(1, args.subscribers + 1)
            await store.enqueue_alerts(announcement, [(u, f"🔔 A40 now costs $230/month (alert for {u})")
                                                      for u in users])
            start = time.monotonic()
            await delivery.deliver()
            elapsed = time.monotonic() - start
            await bot.shutdown()
            progress = await store.alert_progress(announcement)
            stats = emulator.stats
        await store.close()

    delivered = stats["delivered"]
    rate = delivered / elapsed
    print(f"subscribers {args.subscribers:,}; delivered {delivered:,} (store: sent {progress['sent']:,}, "
          f"failed {progress['failed']}, queued {progress['queued']}); duplicates {stats['duplicates']}; "
          f"429s received {stats['rejected_429']}")
    print(f"elapsed {elapsed:.1f} s; achieved {rate:.2f} msg/s = {rate / args.limit:.1%} of the allowed "
          f"{args.limit:g}/s (target >= 90 %)")


if __name__ == "__main__":
    asyncio.run(main())
