"""The bot's send path and store calls: a reply clipped with its keyboard, a dropped send counted as maybe arrived,
a read kept out of another coroutine's transaction, a write that waits while another process holds SQLite's
write lock."""
from __future__ import annotations

import asyncio
import sqlite3
import threading

import httpx
import pytest
from telegram import Bot
from telegram.error import BadRequest, NetworkError

from bot.features.reply import Button, Reply
from bot.operators.send_errors import never_reached_telegram
from bot.store import Store
from bot.telegram.ptb import reply
from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:TEST-TOKEN-not-real"
USER = 4343


@pytest.fixture
async def emulator():
    async with BotApiEmulator(token=TOKEN) as emu:
        emu.push_message(USER, "hi")
        yield emu


async def test_a_refused_send_raises_and_a_dropped_one_may_have_arrived(emulator):
    async with Bot(TOKEN, base_url=emulator.base_url) as bot:
        with pytest.raises(BadRequest):
            await bot.send_message(USER, " ")  # the emulator refuses an empty text, as Telegram does
        emulator.fail_next("sendMessage", "drop")
        with pytest.raises(NetworkError) as dropped:
            await bot.send_message(USER, "x")
    assert isinstance(dropped.value.__cause__, httpx.HTTPError) and not never_reached_telegram(dropped.value)


async def test_reply_sends_the_clipped_answer_with_its_keyboard(emulator):
    async with Bot(TOKEN, base_url=emulator.base_url) as bot:
        message = await bot.send_message(USER, "question")
        assert await reply(message, Reply("answer " * 1000, [[Button("Top up", url="https://example.com/t")]])) \
            is None
    params = emulator.sent("sendMessage", chat_id=USER)[-1].params
    assert len(params["text"]) <= 4096
    assert params["reply_markup"] == {"inline_keyboard": [[{"text": "Top up", "url": "https://example.com/t"}]]}


# -- SQLite: one connection shared by the coroutines, one file shared with other processes --------------------------


async def test_a_read_waits_behind_another_coroutines_transaction_and_sees_its_commit(tmp_path):
    store = await Store.open(tmp_path / "s.sqlite3")
    try:
        await store.touch_user(1, "en")
        entered = asyncio.Event()
        release = asyncio.Event()

        async def writer() -> None:
            async with store._database.transaction() as db:
                await db.execute("UPDATE users SET last_question = 'in the transaction' WHERE user_id = 1")
                entered.set()
                await release.wait()

        task = asyncio.create_task(writer())
        await entered.wait()
        read = asyncio.create_task(store.get_preferences(1))
        await asyncio.sleep(0.05)
        assert not read.done()  # a read does not run inside another coroutine's transaction
        release.set()
        await task
        assert (await read).last_question == "in the transaction"
    finally:
        await store.close()


async def test_a_write_waits_while_another_process_holds_the_write_lock(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = await Store.open(path)
    try:
        await store.touch_user(1, "en")
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")  # another process's writer, as SQLite sees it
        timer = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
        timer.start()
        ticks = 0

        async def ticking() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(ticking())
        await store.remember_question(1, "after the lock", None)  # waits out the lock (busy timeout), no SQLITE_BUSY
        ticker.cancel()
        timer.join()
        holder.close()
        assert ticks >= 5  # the event loop ran meanwhile
        assert (await store.get_preferences(1)).last_question == "after the lock"
    finally:
        await store.close()
