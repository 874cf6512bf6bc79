"""End to end: a real `cardfit bot` process long-polling the Bot API emulator on 127.0.0.1.

A scripted user asks, taps toggles, sets preferences; the bot restarts and the preferences hold; faults injected
by the emulator (429 retry_after, 502) still deliver every reply exactly once.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.botapi_emulator import BotApiEmulator

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "123456:TEST-TOKEN-not-real"
USER = 501
ADMIN = 900


class BotProcess:
    def __init__(self, emulator: BotApiEmulator, db: Path, log: Path):
        self.emulator = emulator
        self.db = db
        self.log = log
        self.process: asyncio.subprocess.Process | None = None
        with socket.socket() as probe:  # polling mode's /metrics (CARDFIT_METRICS_PORT)
            probe.bind(("127.0.0.1", 0))
            self.metrics_port = int(probe.getsockname()[1])

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=self.emulator.token, CARDFIT_BOT_API_URL=self.emulator.base_url,
                   CARDFIT_DB=str(self.db), CARDFIT_ADMIN_IDS=str(ADMIN), CARDFIT_TOPUP_SECRET="e2e-secret-0123456789",
                   CARDFIT_LOG_LEVEL="INFO", PTB_TIMEDELTA="1", CARDFIT_METRICS_PORT=str(self.metrics_port),
                   CARDFIT_REPLICA="e2e-1")
        self.handle = self.log.open("ab")
        polls = self.emulator.polls_begun
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env, stdout=self.handle, stderr=self.handle)
        await self.emulator.wait_polling(after=polls, timeout=60)

    async def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
            raise
        finally:
            self.handle.close()


@pytest.fixture
async def bot(tmp_path):
    async with BotApiEmulator(token=TOKEN) as emulator:
        process = BotProcess(emulator, tmp_path / "e2e.sqlite3", tmp_path / "bot.log")
        await process.start()
        try:
            yield emulator, process
        finally:
            if process.process and process.process.returncode is None:
                await process.stop()
        log = (tmp_path / "bot.log").read_text(errors="replace")
        assert TOKEN.split(":")[1] not in log, "the bot token leaked into the log"


async def ask(emulator: BotApiEmulator, text: str, user: int = USER, language_code: str = "en"):
    mark = emulator.mark()
    emulator.push_message(user, text, language_code=language_code)
    calls = await emulator.wait_for("sendMessage", lambda c: c.chat_id == user, since=mark, timeout=20)
    return calls[0]


async def press(emulator: BotApiEmulator, message_id: int, data: str, user: int = USER):
    mark = emulator.mark()
    emulator.push_callback(user, message_id, data)
    await emulator.wait_for("answerCallbackQuery", since=mark, timeout=20)
    # The bot answers the tap first, then edits the message.
    await emulator.wait_for("editMessageText", lambda c: c.params.get("message_id") == message_id, since=mark,
                            timeout=20)
    return emulator.message(user, message_id)


def button(call, label: str) -> dict:
    markup = call["reply_markup"] if isinstance(call, dict) else call.reply_markup
    for row in markup["inline_keyboard"]:
        for item in row:
            if item["text"] == label or item["text"].startswith(label):
                return item
    raise AssertionError(f"no button {label!r} in {call.reply_markup}")


async def test_ask_toggle_settings_restart(bot):
    emulator, process = bot
    commands = emulator.get_commands(None, "de") if hasattr(emulator, "get_commands") else None
    assert emulator.sent("setMyCommands") and commands is not None

    answer = await ask(emulator, "70B at 4-bit, 32k context")
    assert "47.7 GB" in answer.text and "1x A40" in answer.text
    message_id = answer.result["message_id"]
    edited = await press(emulator, message_id, button(answer, "FP8")["callback_data"])
    assert "FP8" in edited["text"] and "82.7 GB" in edited["text"]

    saved = await ask(emulator, "/set coin BTC")
    assert "BTC" in saved.text
    await ask(emulator, "/set lang de")

    await process.stop()
    await process.start()  # a restart: the same database, a fresh process

    settings = await ask(emulator, "/settings")
    assert "Ihre Einstellungen" in settings.text and "coin: <b>BTC</b>" in settings.text
    again = await press(emulator, message_id, button(edited, "128k")["callback_data"])
    assert "coin=BTC" in str(again.get("reply_markup")) and "Benötigter Speicher" in again["text"]


async def test_faults_deliver_each_reply_once(bot):
    emulator, _ = bot
    emulator.fail_next("sendMessage", "retry_after", retry_after=1)
    first = await ask(emulator, "7B bf16")
    emulator.fail_next("sendMessage", "bad_gateway")
    second = await ask(emulator, "13B fp8")
    # A dropped connection is no longer among these: after the request was written it may have delivered the
    # message (the emulator's lost_response), so the bot does not repeat it (tests/test_safety_e2e.py).
    emulator.fail_next("sendMessage", "bad_gateway")
    third = await ask(emulator, "34B int4")
    for call, needle in ((first, "RTX A5000"), (second, "L4"), (third, "RTX A5000")):
        assert needle in call.text
    await asyncio.sleep(0.5)
    delivered = [c for c in emulator.sent("sendMessage", chat_id=USER)]
    assert len(delivered) == 3  # each reply once: nothing lost, nothing duplicated
    failed = emulator.sent("sendMessage", chat_id=USER, include_failed=True)
    assert len(failed) == 6


async def test_blocked_user_and_non_questions(bot):
    emulator, _ = bot
    help_reply = await ask(emulator, "Danke! 🙏", language_code="de")
    assert "Versuchen Sie" in help_reply.text and len(help_reply.reply_markup["inline_keyboard"]) == 3
    emulator.block_user(USER + 1)
    mark = emulator.mark()
    emulator.push_message(USER + 1, "70B int4")
    await emulator.wait_for("sendMessage", lambda c: c.chat_id == USER + 1, since=mark, timeout=20,
                            include_failed=True)
    emulator.unblock_user(USER + 1)
    reply = await ask(emulator, "70B int4", user=USER + 1)
    assert "A40" in reply.text


def metrics(process: BotProcess) -> dict[str, float]:
    """The bot's /metrics as {'name{labels}': value}, its replica label left out."""
    with urllib.request.urlopen(f"http://127.0.0.1:{process.metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        series, value = line.rsplit(" ", 1)
        assert 'replica="e2e-1"' in series, series
        found[re.sub(r',?replica="e2e-1"', "", series).replace("{}", "")] = float(value)
    return found


async def test_metrics_count_what_a_conversation_caused(bot):
    emulator, process = bot
    answer = await ask(emulator, "70B at 4-bit, 32k context")
    await press(emulator, answer.result["message_id"], button(answer, "FP8")["callback_data"])
    await ask(emulator, "/help")
    emulator.block_user(USER + 1)  # a reply Telegram refuses with 403
    mark = emulator.mark()
    emulator.push_message(USER + 1, "70B int4")
    await emulator.wait_for("sendMessage", lambda c: c.chat_id == USER + 1, since=mark, timeout=20,
                            include_failed=True)
    await asyncio.sleep(0.5)  # the last update is marked handled after its reply
    found = metrics(process)
    assert found['cardfit_updates_received_total{kind="message"}'] == 2
    assert found['cardfit_updates_received_total{kind="command"}'] == 1
    assert found['cardfit_updates_received_total{kind="callback_query"}'] == 1
    assert found['cardfit_updates_handled_total{kind="message"}'] == 2
    assert found['cardfit_updates_handled_total{kind="callback_query"}'] == 1
    assert found["cardfit_reply_latency_seconds_count"] == 4
    assert found['cardfit_replies_sent_total{method="sendMessage"}'] == 2  # the question and /help
    assert found['cardfit_replies_sent_total{method="editMessageText"}'] == 1  # the FP8 tap
    assert found['cardfit_replies_failed_total{cause="Forbidden",method="sendMessage"}'] == 1
    assert found['cardfit_demand_records_total{outcome="kept"}'] == 3  # the question, the tap, the blocked user's
    assert found["cardfit_inbox_backlog"] == 0
    assert found.get("cardfit_inbox_unknown_total", 0) == 0
