"""Updates per second, reply latency and CPU per update of the real Cardfit Application against the Bot API
emulator, beside a bare python-telegram-bot echo bot on the same emulator and the same HTTP stack (PTB's httpx
request, long polling, concurrent_updates=64). Cardfit polls as `cardfit bot` does, through its durable inbox
(bot/telegram/inbox.py: each getUpdates batch stored before it is confirmed, each update marked); the echo bot through
PTB's Updater, in the same run (issue #14). Two echo bots run: the bare PTB one (PTB's default connection: httpx,
form bodies, a pool of 256) and the same echo bot on Cardfit's send connection (bot.telegram.app.send_request: JSON
bodies
over aiohttp's client, 8 connections, the wait for one in an asyncio queue, bot/telegram/transport.py). The targets are
read against the second: Cardfit's connection is much cheaper than PTB's default, and against the bare bot that
advantage, not Cardfit's own work, would make the difference (both comparisons are printed).

Usage: .venv/bin/python -m benchmarks.bench_bot [--questions 1000] [--runs 3] [--distinct] [--profile FILE]

Each run gives each bot --questions messages from as many different users, pushed at once; the bot long-polls
them, and a reply counts when the emulator records its sendMessage. Telegram's 30 msg/s cap is lifted for both
bots (with it, all would measure 30/s). The runs alternate echo, echo on Cardfit's connection, Cardfit, then the
last two again with the emulator in a process of its own, so all see the same load on a shared machine; the
figures are the median of the runs, with their min-max. Each round ends with the last pair once more on 300
messages that trickle in at 50 a second, as a live bot sees them: each getUpdates then brings one or two, so its
cost is paid per update (the burst shares it among up to 100).

CPU: the bot's process CPU time (time.process_time: every thread, aiosqlite's included) from the first push to
the last reply, per update. With the emulator on the bot's event loop that figure also holds the emulator's work
for each call, and Cardfit's replies (1 KB of HTML, ten buttons) cost it more to parse, store and answer than the
echo bot's few words: Telegram's work, done on Telegram's machines in production. So the targets are read
against the runs with the emulator in its own process (benchmarks/emulator_process.py), whose CPU is printed
beside; the runs with it inside are printed as before. "Cardfit's own CPU per update" is Cardfit's figure minus
the echo bot's on the same connection: what Cardfit adds (pre-handler, durable inbox, store, conversation,
rendering, keyboard, rate limiter and pacer, and the HTTP stack's handling of its longer replies). The engine's
share of it (engine.parse.parse and engine.answer.build.build_answer, timed with time.thread_time around each call
made by the conversation) is reported beside it, and "own CPU without the engine" is the difference.
On a shared, loaded machine that difference of two process figures swings by a few tenths of a millisecond
between runs, so each round also runs both bots with the Bot API made up (benchmarks/fake_transport.py: no
sockets, the real Application, inbox and store above them), and measures Cardfit's part alone, in process
(`in_process`: caller, store, conversation, rendering and buttons for the same questions, 64 at once, no PTB or
HTTP), with the engine's share taken out the same way.
Targets: throughput >= 0.9x the echo bot's, own CPU <= 0.3 ms per update.

--profile FILE: one more Cardfit run after the measured ones, under cProfile with the main thread's CPU time as
its clock (time.thread_time: a loaded machine's waits do not count), saved for pstats and its top printed; not
part of the figures (the profiler slows everything several times).
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import logging
import pstats
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

import bot.features.ask as ask_module
from benchmarks.emulator_process import TOKEN as EMULATOR_TOKEN
from benchmarks.emulator_process import EmulatorProcess
from benchmarks.emulator_process import push_and_wait as emulator_round
from benchmarks.fake_transport import MadeUpSends, cpu_per_update, polling
from bot.config import load_settings
from bot.telegram.app import build_application, send_request
from bot.telegram.inbox import RawUpdatesRequest
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = EMULATOR_TOKEN
FIRST_USER = 10_000
QUESTIONS = ["70B at 4-bit, 32k context", "QLoRA Llama 3.1 70B", "Mixtral 8x7B on an RTX 4090",
             "Wie viel VRAM braucht Qwen2.5 72B in FP8?", "7B bf16", "gpt-oss-120b", "DeepSeek V3 mit 128k Kontext",
             "13B LoRA", "405B int4", "Gemma 2 27B fp8 32k batch 4"]
RATIO_TARGET = 0.9
TRICKLE, TRICKLE_PER_S = 300, 50  # the trickle runs: as a live bot sees updates, one at a time
OWN_CPU_TARGET_MS = 0.3


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.effective_message.reply_text(update.effective_message.text)


class EngineClock:
    """Thread CPU spent in the engine's parse and build_answer as the conversation calls them."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._originals: dict[str, Callable[..., Any]] = {}

    def __enter__(self) -> EngineClock:
        for name in ("parse", "build_answer"):
            original = self._originals[name] = getattr(ask_module, name)
            setattr(ask_module, name, self._timed(original))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, original in self._originals.items():
            setattr(ask_module, name, original)

    def _timed(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - started

        return timed


def question(index: int, distinct: bool) -> str:
    """The index-th question: the ten above in turn, or with --distinct each with its own batch size, so no two
    are the same request (and no memo of the parser's answers a question twice)."""
    text = QUESTIONS[index % len(QUESTIONS)]
    return f"{text.replace(' batch 4', '')}, batch {1 + index // len(QUESTIONS)}" if distinct else text


async def run(application: Application, emulator: BotApiEmulator | EmulatorProcess, count: int,
              engine: EngineClock | None = None, distinct: bool = False, inbox: bool = False,
              interval_s: float = 0.0) -> dict[str, float]:
    async with polling(application, inbox):  # Cardfit through its durable inbox, the echo bot through PTB's Updater
        await asyncio.sleep(0.3)
        texts = [question(index, distinct) for index in range(count)]
        engine_before = engine.seconds if engine else 0.0
        cpu_before = time.process_time()
        if isinstance(emulator, EmulatorProcess):
            result = await emulator.round(texts, FIRST_USER, interval_s)
        else:
            result = await emulator_round(emulator, texts, FIRST_USER, interval_s)
        cpu = time.process_time() - cpu_before
        engine_s = (engine.seconds - engine_before) if engine else 0.0
        latencies = sorted(result["latencies"])
    # In process the emulator's CPU is inside `cpu` (one process); in its own process it is reported apart.
    emulator_cpu = result["cpu_s"] if isinstance(emulator, EmulatorProcess) else 0.0
    return {"rate": count / result["elapsed"], "p50": statistics.median(latencies),
            "p95": latencies[int(len(latencies) * 0.95) - 1], "replies": result["replies"],
            "cpu_ms": cpu / count * 1000, "engine_ms": engine_s / count * 1000,
            "emulator_cpu_ms": emulator_cpu / count * 1000}


@asynccontextmanager
async def emulator_for(separate: bool) -> AsyncIterator[BotApiEmulator | EmulatorProcess]:
    """The emulator on this event loop, or (`separate`) in its own process (benchmarks/emulator_process.py)."""
    if separate:
        async with EmulatorProcess() as child:
            yield child
    else:
        async with BotApiEmulator(token=TOKEN) as emulator:
            yield emulator


async def echo_run(count: int, cardfit_connection: bool = False, separate: bool = False,
                   interval_s: float = 0.0) -> dict[str, float]:
    """The echo bot: PTB's defaults (httpx, 256 connections) or, `cardfit_connection`, Cardfit's connections
    (bot.telegram.app.send_request: JSON bodies over aiohttp, 8 connections with the wait for one in an asyncio queue;
    the
    same for getUpdates, one connection): the same HTTP stack as Cardfit's, so that Cardfit's own CPU is not its
    connections' advantage over PTB's defaults."""
    async with emulator_for(separate) as emulator:
        builder = (Application.builder().token(TOKEN).base_url(emulator.base_url)
                   .base_file_url(emulator.base_file_url).concurrent_updates(64))
        if cardfit_connection:  # both of Cardfit's connections: the sends' and getUpdates' (bot/telegram/app.py)
            builder = builder.request(send_request()).get_updates_request(RawUpdatesRequest())
        app = builder.build()
        app.add_handler(MessageHandler(filters.TEXT, echo))
        return await run(app, emulator, count, interval_s=interval_s)


async def cardfit_run(count: int, distinct: bool, separate: bool = False, interval_s: float = 0.0) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, EngineClock() as engine:
        async with emulator_for(separate) as emulator:
            settings = load_settings(bot_token=TOKEN, bot_api_url=emulator.base_url, db=f"{tmp}/bench.sqlite3",
                                     send_rate_per_s=1_000_000, rate_limit_messages=1000)
            application = build_application(settings)
            result = await run(application, emulator, count, engine, distinct, inbox=True, interval_s=interval_s)
            return result


async def reply_sent(count: int, buttons: list[list[Any]]) -> float:
    """CPU of one reply (1.5 KB of HTML, ten buttons) through bot/telegram_io.reply with the Application's own bot
    (Defaults, the rate limiter and pacer, JsonRequest's body), the socket left out."""
    from bot.features.reply import Reply
    from bot.telegram.ptb import reply

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(bot_token=TOKEN, db=f"{tmp}/reply.sqlite3", send_rate_per_s=1_000_000)
        application = build_application(settings, request=MadeUpSends(), get_updates_request=MadeUpSends())
        await application.initialize()
        message = Update.de_json({"update_id": 1, "message": {
            "message_id": 3, "date": 1, "chat": {"id": 42, "type": "private", "first_name": "U"}, "text": "70B int4",
            "from": {"id": 42, "is_bot": False, "first_name": "U", "language_code": "en"}}},
            application.bot).effective_message
        assert message is not None
        answer = Reply("<b>70B</b> at 4-bit " + "x" * 1500, buttons)
        for _ in range(100):
            await reply(message, answer)
        started = time.process_time()
        for _ in range(count):
            await reply(message, answer)
        cpu = time.process_time() - started
        await application.shutdown()
    return cpu / count * 1e6


async def parts(count: int = 2000) -> dict[str, float]:
    """CPU of pieces of an update, each timed alone: the store calls of one update one after another (the
    caller's read and touch, the `sending` mark, the answer's write) and with 64 updates at once, a getUpdates
    batch of 4 stored, a ten-button keyboard built, PTB's parse of a sent reply with it (what a send returns), and
    a reply sent above the socket."""
    from telegram import Bot, Message

    from bot.features.reply import Button
    from bot.store import Store, StoredUpdate
    from bot.telegram.ptb import _KEYBOARDS, markup

    def clock(function: Callable[[], Any], times: int) -> float:
        started = time.process_time()
        for _ in range(times):
            function()
        return (time.process_time() - started) / times * 1e6

    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"{tmp}/parts.sqlite3")

        async def update(user: int) -> None:
            await store.get_preferences(user)
            await store.touch_user(user, "en")
            await store.mark_updates_sending([user])
            await store.remember_answer(user, "70B int4", None, "en", None)

        for label, at_once, first in (("store_one_by_one_us", 1, 0), ("store_64_at_once_us", 64, count)):
            started = time.process_time()
            for start in range(first, first + count, at_once):
                await asyncio.gather(*(update(user) for user in range(start, start + at_once)))
            results[label] = (time.process_time() - started) / count * 1e6
        started = time.process_time()
        for start in range(0, count, 4):
            await store.store_updates([StoredUpdate(10**6 + start + k, "{}") for k in range(4)], "bench")
        results["store_batch_of_4_us"] = (time.process_time() - started) / (count / 4) * 1e6
        await store.close()
    buttons = [[Button(f"Card {row}{col}", data=f"pick:{row}:{col}:S70Pi4c32") for col in range(2)] for row in range(5)]

    def new_keyboard() -> None:
        _KEYBOARDS.clear()
        markup(buttons)

    results["keyboard_us"] = clock(new_keyboard, count)
    keyboard = markup(buttons)
    sent = {"message_id": 5, "date": 1_700_000_000, "text": "x" * 1500,
            "from": {"id": 1, "is_bot": True, "first_name": "Cardfit", "username": "cardfit_bot"},
            "chat": {"id": 10_001, "type": "private", "first_name": "U"},
            "reply_markup": keyboard.to_dict() if keyboard is not None else None}
    results["message_parse_us"] = clock(partial(Message.de_json, sent, Bot(TOKEN)), count)
    results["reply_sent_us"] = await reply_sent(count, buttons)
    return results


async def in_process(count: int, distinct: bool) -> dict[str, float]:
    """Cardfit's part alone, without PTB, HTTP or the emulator: resolve the caller and answer (store reads and
    writes, the conversation, rendering, buttons) for `count` new users, 64 at once as the Application runs
    them. Steadier than the difference of two noisy process figures above on a shared machine."""
    from bot.features.caller import UserInfo, resolve_caller
    from bot.features.core import CatalogHolder, Core
    from bot.features.questions import answer_question
    from bot.store import Store
    from catalog.loader import load_catalog

    with tempfile.TemporaryDirectory() as tmp, EngineClock() as engine:
        settings = load_settings(bot_token=TOKEN, db=f"{tmp}/in-process.sqlite3")
        catalogs = CatalogHolder(load_catalog(settings.catalog))
        store = await Store.open(settings.db)
        core = Core(settings, catalogs, store)

        async def one(index: int) -> None:
            caller = await resolve_caller(store, UserInfo(20_000 + index, "en", "Bench"))
            await answer_question(core, caller, question(index, distinct), chat_id=20_000 + index)

        await one(-1)  # the parser's first call warms it, as post_init does
        engine.seconds = 0.0
        started = time.process_time()
        for first in range(0, count, 64):
            await asyncio.gather(*(one(index) for index in range(first, min(count, first + 64))))
        cpu = time.process_time() - started
        await store.close()
    return {"cpu_ms": cpu / count * 1000, "engine_ms": engine.seconds / count * 1000}


async def profiled(count: int, distinct: bool, path: str) -> None:
    """One Cardfit run under cProfile (main thread CPU), saved to `path`; its top functions printed."""
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    await cardfit_run(count, distinct)
    profile.disable()
    profile.dump_stats(path)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
    print(f"profile of one Cardfit run (main thread CPU) saved to {path}; top 25 by own time:")
    print(text.getvalue().strip())


def spread(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--distinct", action="store_true", help="no two questions alike")
    parser.add_argument("--profile", metavar="FILE", help="profile one more Cardfit run into FILE (pstats)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    echoes, same_stack, cardfits, alone, echo_apart, cardfit_apart = [], [], [], [], [], []
    echo_trickle, cardfit_trickle, made_up_echo, made_up_cardfit = [], [], [], []
    made_up_texts = [question(index, args.distinct) for index in range(args.questions)]
    made_up_warm = [question(index, args.distinct) for index in range(50)]
    trickle = 1 / TRICKLE_PER_S
    for _ in range(args.runs):
        echoes.append(await echo_run(args.questions))
        same_stack.append(await echo_run(args.questions, cardfit_connection=True))
        cardfits.append(await cardfit_run(args.questions, args.distinct))
        echo_apart.append(await echo_run(args.questions, cardfit_connection=True, separate=True))
        cardfit_apart.append(await cardfit_run(args.questions, args.distinct, separate=True))
        alone.append(await in_process(args.questions, args.distinct))
        echo_trickle.append(await echo_run(TRICKLE, cardfit_connection=True, separate=True, interval_s=trickle))
        cardfit_trickle.append(await cardfit_run(TRICKLE, args.distinct, separate=True, interval_s=trickle))
        made_up_echo.append(await cpu_per_update("echo", made_up_texts, made_up_warm))
        made_up_cardfit.append(await cpu_per_update("cardfit", made_up_texts, made_up_warm))
    pieces = [await parts() for _ in range(args.runs)]
    if args.profile:
        await profiled(args.questions, args.distinct, args.profile)

    def col(results: list[dict[str, float]], key: str) -> list[float]:
        return [r[key] for r in results]

    print("The emulator on the bot's event loop (its CPU inside each bot's figure):")
    for name, results in (("echo bot (bare PTB)", echoes), ("echo, Cardfit's conn.", same_stack),
                          ("Cardfit", cardfits)):
        print(f"  {name:21s} {min(col(results, 'replies')):5.0f} replies  {spread(col(results, 'rate'))} updates/s  "
              f"p50 {spread(col(results, 'p50'), 0)} ms  p95 {spread(col(results, 'p95'), 0)} ms  "
              f"CPU {spread(col(results, 'cpu_ms'), 3)} ms/update")
    print("The emulator in its own process (benchmarks/emulator_process.py; the bot's process holds the bot alone):")
    for name, results in (("echo, Cardfit's conn.", echo_apart), ("Cardfit", cardfit_apart)):
        print(f"  {name:21s} {min(col(results, 'replies')):5.0f} replies  {spread(col(results, 'rate'))} updates/s  "
              f"p50 {spread(col(results, 'p50'), 0)} ms  p95 {spread(col(results, 'p95'), 0)} ms  "
              f"CPU {spread(col(results, 'cpu_ms'), 3)} ms/update (the emulator's "
              f"{spread(col(results, 'emulator_cpu_ms'), 3)} ms beside it)")
    print(f"Trickling in ({TRICKLE} messages, {TRICKLE_PER_S} a second, the emulator apart: each getUpdates "
          f"brings one or two):")
    for name, results in (("echo, Cardfit's conn.", echo_trickle), ("Cardfit", cardfit_trickle)):
        print(f"  {name:21s} {min(col(results, 'replies')):5.0f} replies  p50 {spread(col(results, 'p50'), 1)} ms  "
              f"p95 {spread(col(results, 'p95'), 1)} ms  CPU {spread(col(results, 'cpu_ms'), 3)} ms/update")
    # The targets are read against the echo bot on Cardfit's own send connection (the same HTTP stack) with the
    # emulator in its own process: each bot's figure is then that bot's process alone, as in production, where
    # Telegram's work is done on Telegram's machines. The same pair with the emulator inside, and the bare PTB
    # echo bot, are printed beside them.
    bare_ratios = [c["rate"] / e["rate"] for e, c in zip(echoes, cardfits, strict=True)]
    bare_own = [c["cpu_ms"] - e["cpu_ms"] for e, c in zip(echoes, cardfits, strict=True)]
    inline_ratios = [c["rate"] / e["rate"] for e, c in zip(same_stack, cardfits, strict=True)]
    inline_own = [c["cpu_ms"] - e["cpu_ms"] for e, c in zip(same_stack, cardfits, strict=True)]
    ratios = [c["rate"] / e["rate"] for e, c in zip(echo_apart, cardfit_apart, strict=True)]
    own = [c["cpu_ms"] - e["cpu_ms"] for e, c in zip(echo_apart, cardfit_apart, strict=True)]
    engine = col(cardfit_apart, "engine_ms")
    own_without = [o - g for o, g in zip(own, engine, strict=True)]
    print(f"Cardfit / echo throughput: {spread(ratios, 2)}x against the echo bot on Cardfit's send connection, the "
          f"emulator apart (target >= {RATIO_TARGET:.2f}x); with the emulator inside {spread(inline_ratios, 2)}x; "
          f"against the bare PTB echo bot {spread(bare_ratios, 2)}x")
    print(f"Cardfit's own CPU per update (Cardfit's process minus the echo bot's, same connection, the emulator "
          f"apart): {spread(own, 3)} ms (target <= {OWN_CPU_TARGET_MS} ms); of it the engine's parse + build_answer "
          f"{spread(engine, 3)} ms, the rest {spread(own_without, 3)} ms" + (" (--distinct)" if args.distinct else ""))
    print(f"With the emulator inside: {spread(inline_own, 3)} ms (holds the emulator's extra work for Cardfit's longer "
          f"replies); against the bare PTB echo bot (PTB's default httpx connection): {spread(bare_own, 3)} ms")
    made_up_own = [c - e for e, c in zip(made_up_echo, made_up_cardfit, strict=True)]
    print(f"With the Bot API made up (no sockets, benchmarks/fake_transport.py; the real Application, inbox and "
          f"store): Cardfit {spread(made_up_cardfit, 0)} us, the echo bot {spread(made_up_echo, 0)} us CPU per "
          f"update; Cardfit's own {spread(made_up_own, 0)} us")
    alone_cpu, alone_engine = col(alone, "cpu_ms"), col(alone, "engine_ms")
    alone_without = [c - g for c, g in zip(alone_cpu, alone_engine, strict=True)]
    print(f"In process, no HTTP (caller + store + conversation, 64 at once): {spread(alone_cpu, 3)} ms CPU per "
          f"question; of it the engine's {spread(alone_engine, 3)} ms, the rest {spread(alone_without, 3)} ms")
    piece = {key: [p[key] for p in pieces] for key in pieces[0]}
    print(f"Pieces, CPU each: store calls of one update {spread(piece['store_one_by_one_us'], 0)} us one after "
          f"another, {spread(piece['store_64_at_once_us'], 0)} us with 64 at once; a getUpdates batch of 4 stored "
          f"{spread(piece['store_batch_of_4_us'], 0)} us; a ten-button keyboard built "
          f"{spread(piece['keyboard_us'], 0)} us; PTB's parse of a sent reply with it "
          f"{spread(piece['message_parse_us'], 0)} us (no longer done: bot/telegram/transport.py "
          f"result_unread); a reply "
          f"sent through the Application's bot, above the socket, {spread(piece['reply_sent_us'], 0)} us")
    med = statistics.median

    def figure(metric: str, values: list[float], unit: str, digits: int = 1, target: float | None = None,
               at_least: bool = False) -> dict[str, Any]:
        """One row of the figures line: the median of `values`, checked against `target` when there is one."""
        value = round(med(values), digits)
        if target is None:
            return {"metric": metric, "value": value, "unit": unit, "target": "-", "ok": True}
        ok = med(values) >= target if at_least else med(values) <= target
        return {"metric": metric, "value": value, "unit": unit, "target": f"{'>=' if at_least else '<='} {target}",
                "ok": ok}

    rows = [
        figure("Cardfit updates/s", col(cardfit_apart, "rate"), "updates/s"),
        figure("echo bot updates/s (Cardfit's send connection)", col(echo_apart, "rate"), "updates/s"),
        figure("Cardfit updates/s, emulator inside", col(cardfits, "rate"), "updates/s"),
        figure("echo bot updates/s, emulator inside (bare PTB)", col(echoes, "rate"), "updates/s"),
        figure("echo bot updates/s, emulator inside (Cardfit's send connection)", col(same_stack, "rate"),
               "updates/s"),
        figure("Cardfit / bare PTB echo throughput, emulator inside", bare_ratios, "x", 3),
        figure("Cardfit / echo throughput, emulator inside", inline_ratios, "x", 3),
        figure("Cardfit minus bare PTB echo CPU per update, emulator inside", bare_own, "ms", 3),
        figure("Cardfit minus echo CPU per update, emulator inside", inline_own, "ms", 3),
        figure("Cardfit / echo throughput", ratios, "x", 3, RATIO_TARGET, at_least=True),
        figure("Cardfit p50 latency", col(cardfit_apart, "p50"), "ms"),
        figure("Cardfit p95 latency", col(cardfit_apart, "p95"), "ms"),
        figure("echo bot p50 latency", col(echo_apart, "p50"), "ms"),
        figure("echo bot p95 latency", col(echo_apart, "p95"), "ms"),
        figure("Cardfit own CPU per update", own, "ms", 3, OWN_CPU_TARGET_MS),
        figure("of it engine parse + build_answer", engine, "ms", 3),
        figure("own CPU per update without the engine", own_without, "ms", 3),
        figure("Cardfit CPU per update, Bot API made up", made_up_cardfit, "us"),
        figure("echo bot CPU per update, Bot API made up", made_up_echo, "us"),
        figure("Cardfit own CPU per update, Bot API made up", made_up_own, "us"),
        figure("in process: caller + store + conversation CPU per question", alone_cpu, "ms", 3),
        figure("in process, without the engine", alone_without, "ms", 3, OWN_CPU_TARGET_MS),
        *(figure(f"piece: {key.removesuffix('_us').replace('_', ' ')}", values, "us")
          for key, values in piece.items()),
        figure("Cardfit CPU per update, trickling in", col(cardfit_trickle, "cpu_ms"), "ms", 3),
        figure("echo bot CPU per update, trickling in", col(echo_trickle, "cpu_ms"), "ms", 3),
        figure("Cardfit p95 latency, trickling in", col(cardfit_trickle, "p95"), "ms"),
    ]
    print(json.dumps({"bench": "bench_bot", "rows": rows}))


if __name__ == "__main__":
    asyncio.run(main())
