"""A replica killed with SIGKILL during an alert fan-out loses nothing and repeats one alert, labeled. Two
real processes in webhook mode on one PostgreSQL, against the Bot API emulator: replica A posts a price change and fans
it out to 300 subscribers; replica B starts meanwhile (a rolling deploy) and takes the alerts A does not hold; A is
killed between an alert's send and its record (CARDFIT_TEST_CRASH_AT, bot/operators/alerts.py). What A held is
resumed at once, by B's alert sweep while A stays dead or by A's restart (Docker's restart policy). Every
subscriber gets one alert; the one cut off (it may or may not have arrived) is sent once more, labeled as a repeat;
the admin sees one progress message, edited.

A gate in front of the emulator (A's CARDFIT_BOT_API_URL only) holds A's sends until B has joined, so the order of
events is the same on every run, however loaded the machine."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sys
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs

import aiohttp
import pytest
import yaml
from aiohttp import web

from bot.config import load_settings
from bot.features.core import CatalogHolder
from bot.operators.alerts import BATCH
from bot.operators.announce import Announcer
from bot.store import Store
from catalog.loader import load_catalog
from tests.support.botapi_emulator import BotApiEmulator, Call

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "catalog" / "data" / "gpurenthub.yaml"
TOKEN = "123456:TEST-TOKEN-not-real"
SECRET = "webhook-secret_0123456789"
ADMIN = 900
CHANNEL = -1001234567890
SUBSCRIBERS = range(10_000, 10_300)  # more than one claimed batch (bot/operators/alerts.py BATCH = 200)
HOLD_AFTER = 40  # A's sendMessage calls let through before the gate holds A until B has joined
CRASH_AT = 100  # A dies right after its 100th alert's send, before its record


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Gate:
    """An HTTP pass-through to the emulator that can hold sendMessage calls, and notes to whom each went."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.open = asyncio.Event()
        self.open.set()
        self.hold_after: int | None = None
        self.messages = 0
        self.held = asyncio.Event()
        self.chats: list[int] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = free_port()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        if request.path.endswith("/sendMessage"):
            self.messages += 1
            if self.hold_after is not None and self.messages > self.hold_after:
                self.held.set()
                await self.open.wait()
            if request.content_type == "application/json":  # a JSON body, else PTB's form body
                chat = str(json.loads(body).get("chat_id", ""))
            else:
                chat = parse_qs(body.decode()).get("chat_id", [""])[0]
            if chat.lstrip("-").isdigit():
                self.chats.append(int(chat))
        assert self._session is not None
        headers = {"Content-Type": request.headers["Content-Type"]} if "Content-Type" in request.headers else {}
        async with self._session.post(f"{self.upstream}{request.path.removeprefix('/bot')}", data=body,
                                      headers=headers) as answer:
            return web.Response(status=answer.status, body=await answer.read(), content_type="application/json")

    async def __aenter__(self) -> Gate:
        self._session = aiohttp.ClientSession()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.open.set()
        assert self._runner is not None and self._session is not None
        await self._runner.cleanup()
        await self._session.close()


class Replica:
    """One `cardfit bot` process in webhook mode; started again with `start()` after it died."""

    def __init__(self, name: str, tmp_path: Path, database: str, catalog: Path, api_url: str):
        self.name, self.database, self.catalog, self.api_url = name, database, catalog, api_url
        self.log = tmp_path / f"{name}.log"
        self.port = free_port()
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, crash_at: str | None = None, watch_s: str = "3600") -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=TOKEN, CARDFIT_BOT_API_URL=self.api_url, CARDFIT_DB=self.database,
                   CARDFIT_ADMIN_IDS=str(ADMIN), CARDFIT_CATALOG=str(self.catalog),
                   CARDFIT_ANNOUNCE_CHAT=str(CHANNEL), CARDFIT_ANNOUNCE_AUTO="1", CARDFIT_CATALOG_WATCH_S=watch_s,
                   CARDFIT_SEND_RATE_PER_S="300", CARDFIT_WEBHOOK_URL="https://cardfit.example.test/telegram",
                   CARDFIT_WEBHOOK_SECRET=SECRET, CARDFIT_WEBHOOK_LISTEN="127.0.0.1",
                   CARDFIT_WEBHOOK_PORT=str(self.port), CARDFIT_LOG_LEVEL="INFO", PTB_TIMEDELTA="1")
        if crash_at is not None:
            env["CARDFIT_TEST_CRASH_AT"] = crash_at
        with self.log.open("ab") as handle:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env, stdout=handle, stderr=handle)

    async def exited(self, timeout: float = 30) -> int:
        assert self.process is not None
        return await asyncio.wait_for(self.process.wait(), timeout)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                assert await self.exited() == 0, self.tail()
            finally:
                if self.process.returncode is None:
                    self.process.kill()
                    await self.process.wait()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


class Sender:
    async def send_message(self, chat_id, text, *, reply_markup=None):
        raise AssertionError("the baseline sends nothing")

    async def edit_message_text(self, text, chat_id=None, message_id=None):
        raise AssertionError("the baseline edits nothing")


async def prepare(database: str, catalog: Path) -> None:
    """What the channel knows (the bundled catalog, as a first start records it) and 300 A40 subscribers."""
    settings = load_settings(bot_token=TOKEN, db=database, catalog=str(catalog))
    store = await Store.open(database)
    try:
        await Announcer(settings, CatalogHolder(load_catalog(str(catalog))), store, Sender()).ensure_baseline()
        for user_id in SUBSCRIBERS:
            await store.subscribe(user_id, "a40", None)
    finally:
        await store.close()
    data = yaml.safe_load(catalog.read_text())
    next(card for card in data["cards"] if card["id"] == "a40")["price_monthly_usd"] = 230
    catalog.write_text(yaml.safe_dump(data, sort_keys=False))


def is_alert(call: Call) -> bool:
    return call.chat_id in SUBSCRIBERS and "now costs" in (call.text or "")


def alerts(emulator: BotApiEmulator) -> list[Call]:
    return [call for call in emulator.sent("sendMessage") if is_alert(call)]


def is_progress(call: Call) -> bool:
    return call.chat_id == ADMIN and "Alerts for announcement" in (call.text or call.params.get("text") or "")


async def rows(database: str, sql: str) -> list[SimpleNamespace]:
    store = await Store.open(database)
    try:
        return [SimpleNamespace(**{key: row[key] for key in row.keys()}) for row in await store._database.fetch(sql)]
    finally:
        await store.close()


@pytest.mark.parametrize("resumer", ["survivor", "restart"])
async def test_a_replica_killed_during_a_fan_out_loses_and_repeats_nothing(emulator, postgres_server, tmp_path,
                                                                           resumer):
    """survivor: B's alert sweep (every CARDFIT_CATALOG_WATCH_S, 1 s here) takes up what A held as soon as A's
    pid is gone. restart: B's sweep is off; A's restart (a new pid) takes it up at its start."""
    database = postgres_server.create_database()
    catalog = tmp_path / "catalog.yaml"  # one file for both (a shared volume in deploy/compose.yaml)
    shutil.copy(BUNDLED, catalog)
    await prepare(database, catalog)
    held_by_a, sent_by_a = list(SUBSCRIBERS[:BATCH]), list(SUBSCRIBERS[:CRASH_AT])  # alerts are claimed by id
    async with Gate(emulator.base_url) as gate:
        a = Replica("a", tmp_path, database, catalog, gate.base_url)
        b = Replica("b", tmp_path, database, catalog, emulator.base_url)
        try:
            # A starts on the edited file: posts the change, queues 300 alerts, claims a batch of 200, sends.
            gate.hold_after = HOLD_AFTER
            gate.open.clear()
            await a.start(crash_at=f"alert:{CRASH_AT}")
            await asyncio.wait_for(gate.held.wait(), 60)
            [post] = emulator.sent("sendMessage", chat_id=CHANNEL)
            [progress] = [call for call in emulator.sent("sendMessage") if is_progress(call)]
            assert [call.chat_id for call in alerts(emulator)] == sent_by_a[:HOLD_AFTER - 2]

            # B starts while A holds its batch: it takes the 100 alerts nobody holds and sends them.
            await b.start(watch_s="1" if resumer == "survivor" else "3600")
            await emulator.wait_for("sendMessage", lambda call: is_alert(call) and call.chat_id not in held_by_a,
                                    count=20, timeout=60)
            gate.open.set()
            assert await a.exited() == -signal.SIGKILL, a.tail()
            assert [chat for chat in gate.chats if chat in SUBSCRIBERS] == sent_by_a
            if resumer == "restart":
                await emulator.wait_for("sendMessage", is_alert, count=len(SUBSCRIBERS) - BATCH + CRASH_AT,
                                        timeout=60)
                await asyncio.sleep(0.5)  # B's last record
                # What the dead replica left: one intent without an outcome, the rest of its batch still claimed.
                left = await rows(database, "SELECT user_id, status, claimed_by FROM alerts "
                                            "WHERE status IN ('queued', 'sending') ORDER BY id")
                assert [(row.user_id, row.status) for row in left] == [(sent_by_a[-1], "sending")] + [
                    (user_id, "queued") for user_id in held_by_a[CRASH_AT:]]
                assert len({row.claimed_by for row in left}) == 1
                before = len(gate.chats)
                await a.start()  # same host, a new pid: its predecessor is dead, so what it held is sent at once
                await emulator.wait_for("sendMessage", is_alert, count=len(SUBSCRIBERS) + 1, timeout=60)
                await asyncio.sleep(0.5)  # A's last record and progress edit
                # The cut-off one first (queued again with its id), labeled; then the rest of A's batch.
                assert [chat for chat in gate.chats[before:] if chat in SUBSCRIBERS] == [
                    sent_by_a[-1], *held_by_a[CRASH_AT:]]
            else:
                await emulator.wait_for("sendMessage", is_alert, count=len(SUBSCRIBERS) + 1, timeout=60)
                await asyncio.sleep(0.5)  # B's last record and progress edit
                by_b = sorted(call.chat_id for call in alerts(emulator) if call.chat_id not in sent_by_a)
                assert by_b == list(SUBSCRIBERS[CRASH_AT:])  # its own 100, then the 100 A held
        finally:
            await b.stop()
            await a.stop()

    received = {user_id: len(emulator.sent("sendMessage", chat_id=user_id)) for user_id in SUBSCRIBERS}
    assert {user: n for user, n in received.items() if n != 1} == {sent_by_a[-1]: 2}
    first, repeat = emulator.sent("sendMessage", chat_id=sent_by_a[-1])
    assert repeat.text == f"🔁 <i>Sent again after a restart — ignore it if you already have it.</i>\n\n{first.text}"
    assert len(emulator.sent("sendMessage", chat_id=CHANNEL)) == 1 and post.ok
    statuses = await rows(database, "SELECT user_id, status, error FROM alerts ORDER BY id")
    assert len(statuses) == len(SUBSCRIBERS)
    # The one cut off between its send and its record was sent once more: every alert is sent.
    assert {row.status for row in statuses} == {"sent"}
    # One progress message, its id in the store, edited by the others; the last edit has it all.
    assert [call for call in emulator.sent("sendMessage") if is_progress(call)] == [progress]
    [kept] = await rows(database, "SELECT chat_id, message_id FROM alert_progress_messages")
    assert (kept.chat_id, kept.message_id) == (ADMIN, progress.result["message_id"])
    edits = emulator.sent("editMessageText")
    assert edits and all(call.params.get("message_id") == kept.message_id for call in edits)
    assert "sent 300 / 300" in edits[-1].params["text"] and "unknown" not in edits[-1].params["text"]


def alerts_of(emulator: BotApiEmulator, users: set[int]) -> list[Call]:
    return [call for call in alerts(emulator) if call.chat_id in users]


@pytest.fixture
async def emulator():
    async with BotApiEmulator(token=TOKEN) as emu:
        yield emu
