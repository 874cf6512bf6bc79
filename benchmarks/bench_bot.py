"""Updates per second and reply latency of the real Cardfit Application against the Bot API emulator, beside a
bare python-telegram-bot echo bot on the same emulator in the same run.

Usage: .venv/bin/python -m benchmarks.bench_bot [--questions 1000]
Each bot gets --questions messages from as many different users, pushed at once, and long-polls them; a reply
counts when the emulator records its sendMessage. Telegram's 30 msg/s cap is lifted for both bots (with it,
both would measure 30/s). Target: Cardfit >= 0.8x the echo bot's throughput.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bot.app import build_application
from bot.config import load_settings
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:BENCH-token-not-real"
QUESTIONS = ["70B at 4-bit, 32k context", "QLoRA Llama 3.1 70B", "Mixtral 8x7B on an RTX 4090",
             "Wie viel VRAM braucht Qwen2.5 72B in FP8?", "7B bf16", "gpt-oss-120b", "DeepSeek V3 mit 128k Kontext",
             "13B LoRA", "405B int4", "Gemma 2 27B fp8 32k batch 4"]


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.effective_message.reply_text(update.effective_message.text)


async def run(application: Application, emulator: BotApiEmulator, count: int) -> dict:
    await application.initialize()
    if application.post_init:
        await application.post_init(application)
    await application.start()
    await application.updater.start_polling(poll_interval=0, timeout=5)
    await asyncio.sleep(0.3)
    pushed: dict[int, float] = {}
    mark = emulator.mark()
    start = time.monotonic()
    for index in range(count):
        user = 10_000 + index
        emulator.push_message(user, QUESTIONS[index % len(QUESTIONS)])
        pushed[user] = time.monotonic()
    calls = await emulator.wait_for("sendMessage", lambda c: c.chat_id in pushed, count=count, since=mark,
                                    timeout=600)
    elapsed = max(c.time for c in calls) - start
    latencies = sorted((c.time - pushed[c.chat_id]) * 1000 for c in calls)
    await application.updater.stop()
    await application.stop()
    if application.post_shutdown:
        await application.post_shutdown(application)
    await application.shutdown()
    return {"rate": count / elapsed, "p50": statistics.median(latencies),
            "p95": latencies[int(len(latencies) * 0.95) - 1], "replies": len({c.chat_id for c in calls})}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=1000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    async with BotApiEmulator(token=TOKEN) as emulator:
        echo_app = (Application.builder().token(TOKEN).base_url(emulator.base_url)
                    .base_file_url(emulator.base_file_url).concurrent_updates(64).build())
        echo_app.add_handler(MessageHandler(filters.TEXT, echo))
        baseline = await run(echo_app, emulator, args.questions)

    with tempfile.TemporaryDirectory() as tmp:
        async with BotApiEmulator(token=TOKEN) as emulator:
            settings = load_settings(bot_token=TOKEN, bot_api_url=emulator.base_url, db=f"{tmp}/bench.sqlite3",
                                     send_rate_per_s=1_000_000, rate_limit_messages=1000)
            cardfit = await run(build_application(settings), emulator, args.questions)

    for name, result in (("echo bot (bare PTB)", baseline), ("Cardfit", cardfit)):
        print(f"{name:22s} {result['replies']:5d} replies  {result['rate']:8.1f} updates/s  "
              f"p50 {result['p50']:7.1f} ms  p95 {result['p95']:7.1f} ms")
    print(f"Cardfit / echo throughput: {cardfit['rate'] / baseline['rate']:.2f}x (target >= 0.80x)")


if __name__ == "__main__":
    asyncio.run(main())
