"""Webhook mode end to end: a real `cardfit bot` process with CARDFIT_WEBHOOK_URL set, on PostgreSQL, against the
Bot API emulator. The emulator only records setWebhook (it posts nothing), so the test posts updates to the bot's
port itself, as Telegram would: without the secret header 403 and not processed, with it 200 and answered.
GET /healthz: 200 while the store answers, 503 while it cannot be reached, 200 again once it is back."""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.config import ConfigError, load_settings
from tests.support.botapi_emulator import BotApiEmulator

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "123456:TEST-TOKEN-not-real"
SECRET = "webhook-secret_0123456789"
PUBLIC_URL = "https://cardfit.example.test/telegram/updates"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_healthy(session: aiohttp.ClientSession, url: str, want: int, timeout: float = 30) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    last: object = None
    while asyncio.get_running_loop().time() < deadline:
        try:
            async with session.get(url) as response:
                last = (response.status, await response.json())
                if response.status == want:
                    return last[1]
        except aiohttp.ClientError as exc:
            last = exc
        await asyncio.sleep(0.2)
    raise AssertionError(f"/healthz never answered {want}: last {last!r}")


@pytest.fixture
async def webhook_bot(tmp_path, postgres_server, request):
    database = postgres_server.create_database()
    port = free_port()
    log = tmp_path / "bot.log"
    async with BotApiEmulator(token=TOKEN) as emulator:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=TOKEN, CARDFIT_BOT_API_URL=emulator.base_url, CARDFIT_DB=database,
                   CARDFIT_WEBHOOK_URL=PUBLIC_URL, CARDFIT_WEBHOOK_SECRET=SECRET, CARDFIT_WEBHOOK_LISTEN="127.0.0.1",
                   CARDFIT_WEBHOOK_PORT=str(port), CARDFIT_LOG_LEVEL="INFO", PTB_TIMEDELTA="1")
        with log.open("ab") as handle:
            process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env,
                                                           stdout=handle, stderr=handle)
            try:
                yield emulator, f"http://127.0.0.1:{port}", database
            finally:
                if process.returncode is None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(process.wait(), 30)
                    except TimeoutError:
                        process.kill()
                        await process.wait()
                        raise
        text = log.read_text(errors="replace")
        assert process.returncode == 0, text[-3000:]
        assert "webhook mode: listening" in text
        assert TOKEN.split(":")[1] not in text and SECRET not in text, "a secret leaked into the log"
        assert "ERROR aiohttp.server" not in text and "ERROR bot.telegram.webhook" not in text
        if "serves_updates" in request.node.name:  # the malformed requests it posts: one line each
            assert text.count("holds no update the bot can handle") == 6
            assert "WARNING aiohttp.server: Error handling request from 127.0.0.1: LineTooLong: 400, message: Got " \
                in text


async def test_webhook_serves_updates_with_the_secret_only_and_healthz_follows_the_store(webhook_bot,
                                                                                        postgres_server):
    emulator, base, database = webhook_bot
    async with aiohttp.ClientSession() as session:
        health = await wait_healthy(session, f"{base}/healthz", 200)
        assert health["status"] == "ok" and health["store"] == "ok" and health["store_engine"] == "postgresql"
        assert health["catalog"]["id"] and len(health["catalog"]["sha256"]) == 12
        [set_webhook] = emulator.sent("setWebhook")
        assert set_webhook.params["url"] == PUBLIC_URL and set_webhook.params["secret_token"] == SECRET
        assert not emulator.sent("getUpdates")  # webhook mode never polls

        endpoint = f"{base}/telegram/updates"
        forged = emulator.push_message(601, "/help")
        async with session.post(endpoint, json=forged) as response:
            assert response.status == 403
        async with session.post(endpoint, json=forged, headers={"X-Telegram-Bot-Api-Secret-Token": "guess"}) as r:
            assert r.status == 403
        mark = emulator.mark()
        genuine = emulator.push_message(602, "70B at 4-bit, 32k context")
        async with session.post(endpoint, json=genuine, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as r:
            assert r.status == 200
        [answer] = await emulator.wait_for("sendMessage", lambda c: c.chat_id == 602, since=mark, timeout=20)
        assert "47.7 GB" in answer.text
        # What cannot be handled is acknowledged (Telegram would send it again for a day) and logged once.
        deep_chain: dict = {"message_id": 1, "date": 0, "chat": {"id": 603, "type": "private"}, "text": "x"}
        for _ in range(900):
            deep_chain = {**deep_chain, "reply_to_message": deep_chain}
        malformed = [b"not json", b"[" * 100_000 + b"]" * 100_000, {"update_id": 9, "message": "x"},
                     {"update_id": "10", "message": genuine["message"]}, {"update_id": 2 ** 63, "message": "x"},
                     {"update_id": 11, "message": deep_chain}]
        for body in malformed:
            sent = {"data": body} if isinstance(body, bytes) else {"data": json.dumps(body)}
            async with session.post(endpoint, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}, **sent) as r:
                assert r.status == 200, str(body)[:80]
        # A header past aiohttp's 8 KB limit, without the secret: refused, and one warning line in the log.
        async with session.post(endpoint, json=forged, headers={"X-Padding": "p" * 9000}) as r:
            assert r.status >= 400
        await asyncio.sleep(0.5)
        assert not emulator.sent("sendMessage", chat_id=601)  # the forged update was never processed

        # The store goes away: new connections refused, the pool's connections cut.
        name = database.rsplit("/", 1)[1]
        postgres_server.psql(postgres_server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        postgres_server.psql(postgres_server.url(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                                    f"WHERE datname = '{name}'")
        down = await wait_healthy(session, f"{base}/healthz", 503)
        assert down["status"] == "unavailable" and down["store"] == "unreachable"
        postgres_server.psql(postgres_server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert (await wait_healthy(session, f"{base}/healthz", 200))["store"] == "ok"


def test_webhook_mode_needs_a_secret_and_a_url():
    with pytest.raises(ConfigError, match="CARDFIT_WEBHOOK_SECRET: required when CARDFIT_WEBHOOK_URL is set"):
        load_settings(webhook_url=PUBLIC_URL)
    with pytest.raises(ConfigError, match="CARDFIT_WEBHOOK_URL: must be the public https:// URL"):
        load_settings(webhook_url="cardfit.example.test", webhook_secret=SECRET)
    with pytest.raises(ConfigError, match="CARDFIT_WEBHOOK_SECRET: must be 1-256 characters"):
        load_settings(webhook_url=PUBLIC_URL, webhook_secret="spaces are not allowed")
    settings = load_settings(webhook_url=PUBLIC_URL, webhook_secret=SECRET)
    assert settings.webhook_path == "/telegram/updates" and settings.webhook_port == 8080
    assert settings.webhook_listen == "0.0.0.0"
    assert load_settings().webhook_url is None  # polling stays the default
    assert SECRET not in repr(settings)


async def test_webhook_serves_metrics_of_the_updates_it_took(webhook_bot):
    emulator, base, _ = webhook_bot
    async with aiohttp.ClientSession() as session:
        await wait_healthy(session, f"{base}/healthz", 200)
        mark = emulator.mark()
        update = emulator.push_message(604, "70B int4")
        async with session.post(f"{base}/telegram/updates", json=update,
                                headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as response:
            assert response.status == 200
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 604, since=mark, timeout=20)
        await asyncio.sleep(0.3)
        async with session.get(f"{base}/metrics") as response:
            assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain")
            text = await response.text()
    replica = next(line for line in text.splitlines() if line.startswith("cardfit_updates_received_total"))
    assert 'kind="message"' in replica and re.search(r'replica="[^"]+:\d+"', replica) and replica.endswith(" 1.0")
    assert re.search(r'^cardfit_updates_handled_total\{kind="message",replica="[^"]+"\} 1\.0$', text, re.M)
    assert re.search(r'^cardfit_replies_sent_total\{method="sendMessage",replica="[^"]+"\} 1\.0$', text, re.M)
    assert re.search(r'^cardfit_demand_records_total\{outcome="kept",replica="[^"]+"\} 1\.0$', text, re.M)
