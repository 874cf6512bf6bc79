"""The bot's send path and store calls: a reply clipped with its keyboard, a dropped send counted as maybe arrived,
short SQLite calls on the event loop when the connection is free, on the thread when another process holds the
write lock (bot/store/database.py SqliteDatabase._call)."""
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


# -- SQLite: short calls on the loop ---------------------------------------------------------------------------------


def counting_hops(store: Store) -> list[int]:
    connection = store._database._db  # type: ignore[attr-defined]
    hops = [0]
    original = connection._execute

    async def counted(function, *args, **kwargs):
        hops[0] += 1
        return await original(function, *args, **kwargs)

    connection._execute = counted
    return hops


async def test_short_calls_on_a_wal_file_take_no_thread_hop(tmp_path):
    store = await Store.open(tmp_path / "s.sqlite3")
    try:
        hops = counting_hops(store)
        await store.touch_user(1, "de")
        await store.remember_answer(1, "70B", "P", "de", None)
        assert (await store.get_preferences(1)).last_question == "70B"
        assert await store.store_updates([], "me") == set()
        from bot.store import StoredUpdate

        assert await store.store_updates([StoredUpdate(5, "{}"), StoredUpdate(6, "{}")], "me") == {5, 6}
        assert await store.store_updates([StoredUpdate(6, "{}"), StoredUpdate(7, "{}")], "me") == {7}
        await store.mark_updates_sending([5])
        assert hops == [0]
        assert (await store.inbox_states())[5] == "sending"  # not short: on the thread
        assert hops == [1]
    finally:
        await store.close()


async def test_a_short_call_waits_behind_a_transaction_and_sees_its_commit(tmp_path):
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
        assert not read.done()  # a short call does not run inside another coroutine's transaction
        release.set()
        await task
        assert (await read).last_question == "in the transaction"
    finally:
        await store.close()


async def test_a_short_write_waits_on_the_thread_while_another_process_holds_the_lock(tmp_path):
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
        hops = counting_hops(store)
        await store.remember_question(1, "after the lock", None)  # SQLITE_BUSY on the loop, then the thread waits
        ticker.cancel()
        timer.join()
        holder.close()
        assert hops == [1]
        assert ticks >= 5  # the event loop ran meanwhile
        assert (await store.get_preferences(1)).last_question == "after the lock"
        assert hops == [1]  # and the connection is free again: back on the loop
    finally:
        await store.close()


async def test_a_cancelled_call_keeps_the_loop_off_the_connection_until_the_thread_is_done(tmp_path):
    store = await Store.open(tmp_path / "s.sqlite3")
    try:
        database = store._database
        slow = asyncio.create_task(database.fetch(  # type: ignore[attr-defined]
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) SELECT count(*) FROM n"))
        await asyncio.sleep(0.01)
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)
        # The thread may still be counting: until it is done a short call queues behind it, then runs.
        assert (await store.get_preferences(1)).stored is False
        assert database._submitted == database._finished  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_in_memory_and_other_journals_stay_on_the_thread():
    store = await Store.open(":memory:")
    try:
        hops = counting_hops(store)
        await store.touch_user(1, "en")
        assert hops == [1]
    finally:
        await store.close()
