"""Deferred writes (bot/store/deferred.py, issue #14) on both engines: inside a `deferring()` block a deferred
write lands with the task's next statement (in its transaction when that is a write, all or none), a read of the
same task sees it, what still waits is written at the block's end, and nothing is deferred outside a block. In the
bot: a new user's question commits their row, the answer and the chat's context with the update's 'sending' mark,
before the reply goes out."""
from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest
from telegram.ext import ApplicationHandlerStop, MessageHandler, filters

from bot.store import INTEGRITY_ERRORS, Preferences, Store
from bot.telegram.ptb import Pacer
from engine.sizing.rule import SizeRequest
from tests.test_inbox import Running as InboxRunning

NEW = Preferences(user_id=1)
LAST_QUESTION = ("UPDATE users SET last_question = ? WHERE user_id = ?", ("kept", 1))


@pytest.fixture
async def two(db_target):
    """Two stores on one database: the first writes, the second sees only what was committed."""
    first, second = await Store.open(db_target), await Store.open(db_target)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def test_outside_a_block_a_deferred_write_is_written_at_once(two):
    first, second = two
    await first.touch_user(1, "de", read=NEW)
    assert (await second.get_preferences(1)).telegram_language == "de"


async def test_a_deferred_write_commits_with_the_tasks_next_write_before_it(two):
    first, second = two
    async with first.deferring():
        prefs = await first.touch_user(1, "de", read=NEW)
        assert prefs.stored and prefs.telegram_language == "de"
        assert not (await second.get_preferences(1)).stored  # not written yet
        await first._database.write_one(*LAST_QUESTION, short=True)  # updates the row the deferred write inserts
        stored = await second.get_preferences(1)
        assert (stored.stored, stored.telegram_language, stored.last_question) == (True, "de", "kept")


async def test_a_write_that_fails_gives_the_deferred_writes_back_and_fails_alone(two):
    first, second = two
    await first.touch_user(2, "en")
    duplicate = ("INSERT INTO users (user_id, blocked, created_at, updated_at) VALUES (?, 0, 1, 1)", (2,))
    async with first.deferring():
        await first.touch_user(1, "de", read=NEW)
        with pytest.raises(INTEGRITY_ERRORS):
            await first._database.write_one(*duplicate, short=True)
        assert not (await second.get_preferences(1)).stored  # rolled back with it: nothing half written
    assert (await second.get_preferences(1)).telegram_language == "de"  # waited again: written at the end


async def test_a_deferred_write_that_fails_never_costs_the_statement_it_joined_its_commit(two):
    first, second = two
    await first.touch_user(2, "en")
    duplicate = ("INSERT INTO users (user_id, blocked, created_at, updated_at) VALUES (?, 0, 1, 1)", (2,))
    with pytest.raises(INTEGRITY_ERRORS):  # the deferred write fails again at the block's end: raised there
        async with first.deferring():
            await first._database.defer([duplicate])
            await first.touch_user(3, "de")  # a write of its own (RETURNING), after the deferred one
            await first._database.write_one("UPDATE users SET last_question = ? WHERE user_id = ?", ("kept", 2),
                                            short=True)
            assert (await second.get_preferences(2)).last_question == "kept"
    assert (await second.get_preferences(3)).telegram_language == "de"


async def test_a_cancelled_block_whose_last_write_fails_stays_cancelled(two):
    first, second = two
    await first.touch_user(2, "en")
    duplicate = ("INSERT INTO users (user_id, blocked, created_at, updated_at) VALUES (?, 0, 1, 1)", (2,))
    started = asyncio.Event()

    async def handling() -> None:
        async with first.deferring():
            await first._database.defer([duplicate])
            await first.touch_user(1, "de", read=NEW)
            started.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(handling())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task  # not turned into the write's IntegrityError, which an inbox would take for an ended update
    assert not (await second.get_preferences(1)).stored  # all or none: the failing one took the touch with it


async def test_a_task_started_in_the_block_neither_takes_nor_defers(two):
    first, second = two
    async with first.deferring():
        await first.touch_user(1, "de", read=NEW)

        async def child() -> None:
            await first.get_preferences(5)  # a statement of another task: leaves the block's writes waiting
            await first.touch_user(6, "en", read=Preferences(user_id=6))  # not this block's: written at once

        await asyncio.create_task(child())
        assert not (await second.get_preferences(1)).stored
        assert (await second.get_preferences(6)).telegram_language == "en"
    assert (await second.get_preferences(1)).telegram_language == "de"


async def test_a_read_of_the_same_task_sees_what_it_deferred(two):
    first, _ = two
    async with first.deferring():
        await first.remember_answer(1, "70B int4", "S70Pi4", "de", (1, SizeRequest(params_b=70), "S70"))
        assert (await first.get_preferences(1)).last_question == "70B int4"
        kept = await first.kept_request(1)
        assert kept is not None and kept.params_b == 70


async def test_what_still_waits_is_written_when_the_block_ends_even_by_an_error(two):
    first, second = two
    with pytest.raises(RuntimeError):
        async with first.deferring():
            await first.touch_user(1, "de", read=NEW)
            raise RuntimeError("the handler failed")
    assert (await second.get_preferences(1)).telegram_language == "de"


async def test_a_task_started_in_the_block_writes_at_once_after_it_ended(two):
    first, second = two
    go = asyncio.Event()

    async def later() -> None:
        await go.wait()
        await first.touch_user(1, "de", read=NEW)

    async with first.deferring():
        task = asyncio.create_task(later())
    go.set()
    await task
    assert (await second.get_preferences(1)).telegram_language == "de"


async def test_a_transaction_and_a_returning_write_come_after_the_deferred_writes(two):
    first, second = two
    async with first.deferring():
        await first.touch_user(1, "de", read=NEW)
        await first.mark_blocked(1)  # a transaction of its own, after the row was written
        assert (await second.get_preferences(1)).blocked
        await first.touch_user(3, "en", read=Preferences(user_id=3))
        assert (await first.touch_user(4, None)).stored  # RETURNING: written at once, the deferred one first
        assert (await second.get_preferences(3)).telegram_language == "en"
    assert (await second.get_preferences(1)).blocked  # the touch came first: it never unblocks them afterwards


@pytest.mark.parametrize("language", ["de", None, "en"])
async def test_touch_user_after_a_read_gives_what_the_returning_write_gives(store, language):
    await store.touch_user(5, "de")
    await store.set_preference(5, "precision", "int4")
    await store.mark_blocked(5)
    for user in (5, 6):  # a known, blocked user; a new one
        read = await store.get_preferences(user)
        async with store.deferring():
            computed = await store.touch_user(user, language, read=read)
        assert computed == await store.get_preferences(user)


def record_writes(database, writes: list[tuple[float, str, list[str]]]) -> None:
    """Every write the engine runs, in order: (when, which call, each statement's first line)."""
    for name in ("_write_one", "_write_many", "_write_returning"):
        original = getattr(database, name)

        def recorded(*args, _original=original, _name=name, **kwargs):
            statements = args[0] if _name == "_write_many" else [(args[0], args[1])]
            writes.append((time.monotonic(), _name, [" ".join(sql.split())[:41] for sql, _ in statements]))
            return _original(*args, **kwargs)

        setattr(database, name, recorded)


TOUCH, REMEMBER = "INSERT INTO users (user_id, telegram_lang", "INSERT INTO users (user_id, last_question"
CONTEXT, SENDING = "INSERT INTO chat_context (chat_id, payloa", "UPDATE inbox SET state = ? WHERE update_i"


async def test_a_new_users_question_commits_its_writes_with_the_sending_mark_before_the_reply(emulator, tmp_path):
    seen: list[tuple[object, ...]] = []
    writes: list[tuple[float, str, list[str]]] = []
    bot = InboxRunning(emulator, tmp_path)
    record = emulator._record

    def reading_the_store(call):
        if call.method == "sendMessage" and call.chat_id == 4242:
            with sqlite3.connect(bot.settings.db) as conn:  # what is committed when the reply arrives
                seen.append((
                    conn.execute("SELECT telegram_language, last_question FROM users WHERE user_id = 4242").fetchone(),
                    conn.execute("SELECT count(*) FROM chat_context WHERE chat_id = 4242").fetchone()[0],
                    conn.execute("SELECT state FROM inbox ORDER BY update_id DESC").fetchone()[0], len(writes)))
        record(call)

    emulator._record = reading_the_store
    async with bot:
        await bot.ready()
        emulator.push_message(4241, "7B bf16")  # the process's first answer also sweeps old contexts
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 4241, timeout=20)
        await asyncio.sleep(0.2)  # its done mark
        record_writes(bot.inbox.store._database, writes)
        emulator.push_message(4242, "70B at 4-bit, 32k context", language_code="de")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 4242, timeout=20)
    [(row, contexts, state, written)] = seen
    assert (row, contexts, state) == (("de", "70B at 4-bit, 32k context"), 1, "sending")
    # Before the reply: the update stored, then one transaction with the user's row, the answer, the chat's
    # context and the sending mark.
    assert [(name, sqls if name == "_write_many" else sqls[0][:11]) for _, name, sqls in writes[:written]] == \
        [("_write_returning", "INSERT INTO"), ("_write_many", [TOUCH, REMEMBER, CONTEXT, SENDING])]


async def test_a_reply_that_waits_for_its_slot_commits_the_answer_before_it_waits(emulator, tmp_path):
    writes: list[tuple[float, str, list[str]]] = []
    arrived: dict[int, float] = {}
    bot = InboxRunning(emulator, tmp_path)
    bot.application.bot.rate_limiter._base_limiter = Pacer(1.0)  # one message a second: the second one waits
    record = emulator._record

    def timed(call):
        if call.method == "sendMessage":
            arrived.setdefault(call.chat_id, time.monotonic())
        record(call)

    emulator._record = timed
    async with bot:
        await bot.ready()
        record_writes(bot.inbox.store._database, writes)
        emulator.push_message(4401, "70B int4")
        emulator.push_message(4402, "7B bf16")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id in (4401, 4402), count=2, timeout=20)
    second = max(arrived, key=arrived.__getitem__)
    answered = [when for when, name, sqls in writes if name == "_write_many" and CONTEXT in sqls
                and SENDING not in sqls]
    assert answered, "the waiting reply's answer was not written ahead of its mark"
    assert arrived[second] - answered[-1] > 0.5  # committed before the wait, not with the mark after it


async def test_an_update_that_sends_nothing_has_its_deferred_writes_written_at_its_end(emulator, tmp_path):
    async def silent(update, context):  # defers a write, sends nothing, stops the update
        await context.store.touch_user(4343, "de", read=Preferences(user_id=4343))
        raise ApplicationHandlerStop

    bot = InboxRunning(emulator, tmp_path)
    bot.application.add_handler(MessageHandler(filters.Regex("^silent$"), silent), group=-2)
    async with bot:
        await bot.ready()
        pushed = emulator.push_message(4343, "silent")
        deadline = asyncio.get_running_loop().time() + 20
        while bot.inbox.counts["done"] < 1:
            assert asyncio.get_running_loop().time() < deadline, "the update was never handled"
            await asyncio.sleep(0.05)
    assert not emulator.sent("sendMessage", chat_id=4343)
    store = await Store.open(bot.settings.db)
    try:
        assert (await store.get_preferences(4343)).telegram_language == "de"
        assert await store.inbox_states() == {pushed["update_id"]: "done"}
    finally:
        await store.close()


async def test_a_follow_up_in_the_same_batch_reads_the_answer_before_it(emulator, tmp_path):
    async with InboxRunning(emulator, tmp_path) as bot:
        await bot.ready()
        emulator.push_message(4501, "70B at 4-bit, 32k context")  # both in one getUpdates answer
        emulator.push_message(4501, "and at 8k?")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 4501, count=2, timeout=20)
    first, second = [call.text for call in emulator.sent("sendMessage", chat_id=4501)]
    assert "32,768" in first and "8,192" in second  # the follow-up changed the first question's context
    assert "did not find" not in second


@pytest.fixture
async def locked(tmp_path, monkeypatch):
    """A SQLite store with a 300 ms busy timeout, and a second connection to the same file that takes the write
    lock when the test begins a transaction on it (another process, as far as the store can tell)."""
    from bot.store import sqlite_calls

    monkeypatch.setattr(sqlite_calls, "BUSY_TIMEOUT_MS", 300)
    path = tmp_path / "locked.db"
    store = await Store.open(path)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        yield store, other
    finally:
        other.close()
        await store.close()


async def test_a_locked_database_fails_the_joined_write_once_and_the_writes_wait(locked):
    store, other = locked
    async with store.deferring():
        await store.touch_user(1, "de", read=NEW)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError):
            await store._database.write_one(*LAST_QUESTION, short=True)
        assert time.monotonic() - started < 0.55  # one busy timeout, not the joined one and then its own
        other.execute("COMMIT")
    assert (await store.get_preferences(1)).telegram_language == "de"  # written at the block's end


async def test_a_sweep_that_fails_never_fails_the_answer(store, monkeypatch):
    import bot.store.users as users

    broken = [("DELETE FROM no_such_table WHERE updated_at < ?", (0.0,))]
    monkeypatch.setattr(users, "due_sweep", lambda database, now: broken)
    await store.remember_answer(7, "70B int4", "S70Pi4", "en", (7, SizeRequest(params_b=70), "S70"))
    assert (await store.get_preferences(7)).last_question == "70B int4"
    assert (await store.kept_request(7)) is not None


async def test_after_a_lock_ran_out_reads_stop_waiting_for_the_deferred_writes(locked):
    store, other = locked
    async with store.deferring():
        await store.touch_user(1, "de", read=NEW)
        other.execute("BEGIN IMMEDIATE")
        await store.get_preferences(2)  # tries to write them first, waits out the lock once, reads
        started = time.monotonic()
        await store.get_preferences(3)
        await store.kept_request(3)
        assert time.monotonic() - started < 0.2  # a read needs no lock: it no longer waits for one
        other.execute("COMMIT")
    assert (await store.get_preferences(1)).telegram_language == "de"


async def test_a_mark_cancelled_midway_is_written_by_the_updates_next_request():
    from bot.telegram.inbox import Inbox, _Handling

    release, calls = asyncio.Event(), []

    class Store:
        async def mark_updates_sending(self, update_ids):
            calls.append(update_ids)
            if len(calls) == 1:
                await asyncio.sleep(30)  # cancelled here
            await release.wait()

    inbox = Inbox.__new__(Inbox)
    inbox.store = Store()
    handling = _Handling(inbox, 7)
    first = asyncio.create_task(inbox.before_send(handling))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(inbox.before_send(handling))  # another request of the same update
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0.01)
    assert not second.done()  # not released by the cancelled write: it writes the mark itself
    assert calls == [[7], [7]]
    release.set()
    await second
    with pytest.raises(asyncio.CancelledError):
        await first
