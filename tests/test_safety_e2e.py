"""Nothing lost, nothing doubled, end to end, through a real `cardfit bot` process and the Bot API emulator: a reply
whose answer was lost arrives once; a dropped connection is not repeated; a refused token is never printed."""
from __future__ import annotations

import asyncio
import os
import sys

import pytest

from tests.support.botapi_emulator import BotApiEmulator
from tests.test_e2e import ROOT, TOKEN, USER, bot  # noqa: F401 - the fixture

REVOKED = "654321:REVOKED-secret-token-abcdef"


async def test_a_reply_whose_answer_was_lost_arrives_once(bot):  # noqa: F811 - the fixture
    emulator, _ = bot
    for text in ("7B bf16", "13B fp8", "34B int4"):
        emulator.fail_next("sendMessage", "lost_response")
        mark = emulator.mark()
        emulator.push_message(USER, text)
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == USER, since=mark, timeout=20)
        # A blind retry came 0.5 s after the loss; the admin's error notice is a sendMessage too: let it pass
        # before the next fault is queued.
        await asyncio.sleep(1.5)
    delivered = emulator.sent("sendMessage", chat_id=USER)
    assert len(delivered) == 3 and all(c.response_lost for c in delivered)


async def test_a_dropped_send_is_not_repeated(bot):  # noqa: F811 - the fixture
    emulator, _ = bot
    emulator.fail_next("sendMessage", "drop")
    mark = emulator.mark()
    emulator.push_message(USER, "7B bf16")
    await emulator.wait_for("sendMessage", lambda c: c.chat_id == USER, since=mark, timeout=20, include_failed=True)
    await asyncio.sleep(1.5)
    assert len(emulator.sent("sendMessage", chat_id=USER, include_failed=True)) == 1


async def test_a_refused_token_is_one_line_and_never_printed(tmp_path):
    async with BotApiEmulator(token=TOKEN) as emulator:  # it answers 401 to any other token
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=REVOKED, CARDFIT_BOT_API_URL=emulator.base_url,
                   CARDFIT_DB=str(tmp_path / "cardfit.sqlite3"), CARDFIT_LOG_LEVEL="DEBUG", PTB_TIMEDELTA="1")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    printed = (out + err).decode(errors="replace")
    assert process.returncode == 2
    assert err.decode().rstrip().splitlines()[-1] == "cardfit: the bot token was refused by Telegram (revoked or " \
                                                      "mistyped? get a new one from @BotFather)"
    assert REVOKED.split(":")[1] not in printed and "REVOKED" not in printed


async def _html_500(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A Bot API behind a proxy that answers every request with its own HTML error page."""
    await reader.readuntil(b"\r\n\r\n")
    body = b"<html><body><h1>500 Internal Server Error</h1></body></html>"
    writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\nConnection: close\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()


@pytest.mark.parametrize(("api", "db", "said"), [
    ("html", "", "Telegram's Bot API"),
    ("emulator", "postgresql://cardfit:pw-secret@127.0.0.1:1/cardfit", "store postgresql://cardfit:***@127.0.0.1:1"),
    ("emulator", "postgresql://cardfit:pw-secret@[::1/cardfit", "store postgresql://cardfit:***@[::1/cardfit"),
])
async def test_a_failed_start_is_one_line_and_a_failing_exit(tmp_path, api, db, said):
    async with BotApiEmulator(token=TOKEN) as emulator:
        html = await asyncio.start_server(_html_500, "127.0.0.1", 0)
        port = html.sockets[0].getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
        env.update(CARDFIT_BOT_TOKEN=TOKEN, CARDFIT_DB=db or str(tmp_path / "cardfit.sqlite3"),
                   CARDFIT_BOT_API_URL=emulator.base_url if api == "emulator" else f"http://127.0.0.1:{port}/bot",
                   PTB_TIMEDELTA="1")
        async with html:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "bot", cwd=ROOT, env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(process.communicate(), 90)
    printed = (out + err).decode(errors="replace")
    assert process.returncode not in (0, None)
    assert "Traceback" not in printed and "pw-secret" not in printed, printed[-3000:]
    last = err.decode().rstrip().splitlines()[-1]
    assert last.startswith("cardfit: ") and said in last, last
