"""The durable inbox: the repository on both engines (store, claim with lease, mark, prune), the polling loop in
process against the Bot API emulator (duplicates, getUpdates faults still reach the admin, a graceful stop leaves
unstarted updates stored, an answer's writes committed in order before its reply), and webhook mode: 200 only after
the store has the update, a repeated update id answered 200 and handled once, a store that cannot take it answered
503."""
from __future__ import annotations

import asyncio
import json
import sqlite3
import time

import aiohttp
import pytest
import pytest_asyncio
from telegram import Update
from telegram.ext import ApplicationHandlerStop, MessageHandler, filters

from bot.config import load_settings
from bot.store import Store, StoredUpdate
from bot.telegram.app import build_application
from bot.telegram.inbox import Inbox, inbox_of, serve_polling
from bot.telegram.ptb import Pacer, label_repeat
from bot.texts.i18n import t
from bot.texts.render import CAPTION_LIMIT, TELEGRAM_LIMIT, telegram_length
from tests.support.botapi_emulator import BotApiEmulator
from tests.test_webhook import SECRET, wait_healthy, webhook_bot  # noqa: F401 - the webhook fixture

TOKEN = "123456:TEST-TOKEN-not-real"
ADMIN = 900
ME, OTHER, DEAD = "host:1:me", "host:2:other", "host:3:dead"


def stored(*ids: int) -> list[StoredUpdate]:
    return [StoredUpdate(update_id, json.dumps({"update_id": update_id})) for update_id in ids]


def alive_but(*dead: str):
    return lambda owner: owner not in dead


# -- the repository, on both engines ---------------------------------------------------------------------------------


async def test_a_batch_is_stored_once_and_a_repeated_update_id_is_left_alone(store):
    assert await store.store_updates(stored(*range(1, 251)), ME) == set(range(1, 251))  # 3 INSERTs, one transaction
    again = [StoredUpdate(5, '{"update_id": 5, "changed": true}'), *stored(251)]
    assert await store.store_updates(again, OTHER) == {251}
    states = await store.inbox_states()
    assert len(states) == 251 and set(states.values()) == {"received"}
    found = await store.claim_open_updates(OTHER, alive_but(ME), limit=5)  # ME died: OTHER takes its rows
    assert [row.update_id for row in found.handle] == [1, 2, 3, 4, 5]
    assert json.loads(found.handle[4].payload) == {"update_id": 5}  # the first copy stays
    assert await store.store_updates([], ME) == set()


async def test_the_offset_comes_from_recent_rows_only(store):
    assert await store.inbox_offset(0) is None
    await store.store_updates(stored(40, 41, 42), ME)
    assert await store.inbox_offset(time.time() - 60) == 42
    assert await store.inbox_offset(time.time() + 60) is None  # older than `since`: says nothing


async def test_states_move_forward_only(store):
    await store.store_updates(stored(1, 2, 3), ME)
    await store.mark_updates_sending([1, 2])
    await store.mark_updates_done([2, 3])
    await store.mark_updates_sending([2, 3])  # done stays done
    await store.mark_updates_done([])
    assert await store.inbox_states() == {1: "sending", 2: "done", 3: "done"}


async def test_a_live_owners_rows_are_left_alone_a_dead_ones_are_resumed_or_repeated(store):
    await store.store_updates(stored(1, 2), OTHER)
    await store.store_updates(stored(3, 4, 5), DEAD)
    await store.store_updates(stored(6), ME)
    await store.mark_updates_sending([1, 4])
    found = await store.claim_open_updates(ME, alive_but(DEAD))
    # 4 was cut off while its reply went out: handled once more, as a repeat.
    assert [(row.update_id, row.repeat) for row in found.handle] == [(3, False), (4, True), (5, False)]
    assert found.unknown == []
    assert (await store.inbox_states())[4] == "received"
    # Claimed now by ME, alive: a second replica finds nothing (OTHER's rows are its own; ME's are held).
    assert await store.claim_open_updates(OTHER, alive_but(DEAD)) == ([], [])
    # ME dies too, 4's repeat cut off again: 4 is 'unknown', its claimed rows 3, 5, 6 go to the next one (4 not a
    # third time), and OTHER's 'sending' 1 stays OTHER's.
    await store.mark_updates_sending([4])
    found = await store.claim_open_updates(OTHER, alive_but(DEAD, ME))
    assert [row.update_id for row in found.handle] == [3, 5, 6] and found.unknown == [4]
    assert (await store.inbox_states())[4] == "unknown"


async def test_a_repeat_not_yet_sent_stays_a_repeat(store):
    """A repeat claimed and then left (its process died before it sent anything) is still labeled next time."""
    await store.store_updates(stored(1), DEAD)
    await store.mark_updates_sending([1])
    assert [row.repeat for row in (await store.claim_open_updates(OTHER, alive_but(DEAD))).handle] == [True]
    found = await store.claim_open_updates(ME, alive_but(DEAD, OTHER))
    assert [(row.update_id, row.repeat) for row in found.handle] == [(1, True)] and found.unknown == []


async def test_a_lease_that_ran_out_frees_the_rows_and_a_renewal_keeps_them(store):
    await store.store_updates(stored(1), OTHER, lease_s=-1)  # already expired
    await store.store_updates(stored(2), OTHER, lease_s=-1)
    assert await store.renew_inbox_claims(OTHER) == 2
    assert await store.claim_open_updates(ME, alive_but()) == ([], [])
    await store.store_updates(stored(3), OTHER, lease_s=-1)
    found = await store.claim_open_updates(ME, alive_but())
    assert [row.update_id for row in found.handle] == [3]


async def test_a_stopping_owner_gives_back_what_it_did_not_start(store):
    await store.store_updates(stored(1, 2, 3), ME)
    await store.mark_updates_sending([2])
    await store.mark_updates_done([3])
    assert await store.release_inbox_claims(ME) == 1
    found = await store.claim_open_updates(OTHER, alive_but())  # ME still alive: only the released row
    assert [row.update_id for row in found.handle] == [1] and found.unknown == []


async def test_pruning_forgets_old_finished_rows_only(store):
    await store.store_updates(stored(1, 2, 3, 4), ME)
    await store.mark_updates_done([1])
    await store.claim_open_updates(OTHER, alive_but(ME))  # claims 1..4 minus done
    await store.mark_updates_sending([2])
    await store.claim_open_updates(ME, alive_but(OTHER))  # 2 -> a repeat, 3 and 4 back to ME
    await store.mark_updates_sending([2])
    await store.claim_open_updates(OTHER, alive_but(ME))  # 2 cut off again -> unknown
    assert await store.prune_inbox(time.time() - 3600) == 0  # all younger than an hour
    assert await store.prune_inbox(time.time() + 1) == 2  # done 1 and unknown 2; 3 and 4 are still open
    assert await store.inbox_states() == {3: "received", 4: "received"}


def test_a_repeat_is_labeled_above_its_text_in_the_users_language_within_telegrams_limits():
    label = t("de", "delivery.repeat")
    assert label.startswith("🔁 <i>Nach einem Neustart erneut gesendet") and t("en", "delivery.repeat").startswith(
        "🔁 <i>Sent again after a restart — ignore it if you already have it")
    data = {"chat_id": 5, "text": "<b>70B</b> fits", "parse_mode": "HTML"}
    label_repeat("sendMessage", data, label)
    assert data["text"] == f"{label}\n\n<b>70B</b> fits"
    plain = {"chat_id": 5, "text": "x"}
    label_repeat("sendMessage", plain, label)  # no HTML parse mode: the label without its tags
    assert plain["text"].startswith("🔁 Nach einem Neustart") and "<i>" not in plain["text"]
    long = {"chat_id": 5, "text": "line\n" * 900, "parse_mode": "HTML"}  # 4,500 characters
    label_repeat("sendMessage", long, label)
    assert long["text"].startswith(label) and telegram_length(long["text"]) <= TELEGRAM_LIMIT
    caption = {"chat_id": 5, "caption": "c" * 1020, "parse_mode": "HTML"}
    label_repeat("sendPhoto", caption, label)
    assert caption["caption"].startswith(label) and telegram_length(caption["caption"]) <= CAPTION_LIMIT
    tap = {"callback_query_id": "1", "text": "ok"}
    label_repeat("answerCallbackQuery", tap, label)  # a notice on a button: not a message, left alone
    assert tap["text"] == "ok"


# -- polling, in process ---------------------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def emulator():
    async with BotApiEmulator(token=TOKEN) as emu:
        yield emu


class Running:
    """serve_polling in this process's event loop, stopped by an Event."""

    def __init__(self, emulator: BotApiEmulator, tmp_path) -> None:
        self.settings = load_settings(bot_token=TOKEN, bot_api_url=emulator.base_url, db=str(tmp_path / "in.db"),
                                      admin_ids=f"{ADMIN}", catalog_watch_s=3600, send_rate_per_s=600)
        self.application = build_application(self.settings)
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(serve_polling(self.application, self.stop))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        assert self.task is not None
        await asyncio.wait_for(self.task, 30)

    async def ready(self) -> None:
        """Until the inbox runs (polling starts right after)."""
        deadline = time.monotonic() + 30
        while not (inbox_of(self.application) is not None and self.inbox.running):
            assert time.monotonic() < deadline, "the bot never started"
            await asyncio.sleep(0.05)

    @property
    def inbox(self) -> Inbox:
        inbox = inbox_of(self.application)
        assert inbox is not None
        return inbox


async def test_polling_answers_each_update_once_even_when_it_arrives_twice(emulator, tmp_path):
    async with Running(emulator, tmp_path) as bot:
        await bot.ready()
        pushed = emulator.push_message(701, "/set lang de")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 701, timeout=20)
        # Telegram sends an update again (a lost confirmation): stored once, handled once.
        assert await bot.inbox.accept([Update.de_json(pushed, bot.application.bot)]) == 0
        await asyncio.sleep(0.3)
        assert len(emulator.sent("sendMessage", chat_id=701)) == 1
        assert bot.inbox.counts["duplicate"] == 1
    store = await Store.open(bot.settings.db)
    try:
        assert await store.inbox_states() == {pushed["update_id"]: "done"}
    finally:
        await store.close()
    with sqlite3.connect(bot.settings.db) as conn:
        [(payload,)] = conn.execute("SELECT payload FROM inbox").fetchall()
    assert json.loads(payload) == pushed  # getUpdates' own JSON (RawUpdatesRequest), not PTB's re-serialisation


async def test_getupdates_faults_still_reach_the_admin_and_polling_goes_on(emulator, tmp_path):
    emulator.fail_next("getUpdates", "bad_gateway", times=3)
    emulator.fail_next("getUpdates", "retry_after", retry_after=1)
    async with Running(emulator, tmp_path):
        [notice] = await emulator.wait_for("sendMessage", lambda c: c.chat_id == ADMIN, timeout=30)
        assert "Telegram unreachable" in notice.text  # bot/handlers/errors.py's summary, once
        emulator.push_message(702, "/set lang de")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 702, timeout=30)
    assert len(emulator.sent("sendMessage", chat_id=ADMIN)) == 1


async def test_a_graceful_stop_leaves_unstarted_updates_for_the_next_start(emulator, tmp_path):
    bot = Running(emulator, tmp_path)
    async with bot:
        await bot.ready()
        bot.inbox.begin_stop()  # as SIGTERM does, before these arrive
        for user in range(800, 805):
            emulator.push_message(user, "/set lang de")
        deadline = time.monotonic() + 20
        while bot.inbox.counts["left"] < 5 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    assert not [c for c in emulator.sent("sendMessage") if 800 <= c.chat_id < 805]
    assert emulator.pending_updates == 0  # confirmed: the store has them

    async with Running(emulator, tmp_path):
        await emulator.wait_for("sendMessage", lambda c: 800 <= c.chat_id < 805, count=5, timeout=20)
    assert len([c for c in emulator.sent("sendMessage") if 800 <= c.chat_id < 805]) == 5


# -- webhook mode: a real `cardfit bot` process on PostgreSQL -------------------------------------------------------


async def test_webhook_answers_200_only_once_stored_and_handles_a_repeat_once(webhook_bot, postgres_server):  # noqa: F811
    emulator, base, database = webhook_bot
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    endpoint = f"{base}/telegram/updates"
    async with aiohttp.ClientSession() as session:
        await wait_healthy(session, f"{base}/healthz", 200)
        update = emulator.push_message(611, "/set lang de")
        async with session.post(endpoint, json=update, headers=headers) as response:
            assert response.status == 200
        # The 200 came after the commit: the row is there, seen by another connection.
        state = postgres_server.psql(database, f"SELECT state FROM inbox WHERE update_id = {update['update_id']}")
        assert state.strip() in ("received", "sending", "done")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 611, timeout=20)
        async with session.post(endpoint, json=update, headers=headers) as response:  # Telegram's retry
            assert response.status == 200
        await asyncio.sleep(0.5)
        assert len(emulator.sent("sendMessage", chat_id=611)) == 1

        # The store goes away: the update is refused (Telegram keeps it and sends it again), not lost.
        name = database.rsplit("/", 1)[1]
        postgres_server.psql(postgres_server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        postgres_server.psql(postgres_server.url(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                                    f"WHERE datname = '{name}'")
        later = emulator.push_message(612, "/set lang de")
        async with session.post(endpoint, json=later, headers=headers) as response:
            assert response.status == 503
        assert not emulator.sent("sendMessage", chat_id=612)
        postgres_server.psql(postgres_server.url(), f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await wait_healthy(session, f"{base}/healthz", 200)
        async with session.post(endpoint, json=later, headers=headers) as response:
            assert response.status == 200
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 612, timeout=20)
    assert len(emulator.sent("sendMessage", chat_id=612)) == 1


# -- what an answer writes, committed before its reply -----------------------------------------------------------


def record_writes(database, writes: list[tuple[float, str, list[str]]]) -> None:
    """Every write the store runs, in order: (when, which call, each statement's first line)."""
    for name in ("write_one", "write_many", "write_returning"):
        original = getattr(database, name)

        def recorded(*args, _original=original, _name=name, **kwargs):
            statements = args[0] if _name == "write_many" else [(args[0], args[1])]
            writes.append((time.monotonic(), _name, [" ".join(sql.split())[:41] for sql, _ in statements]))
            return _original(*args, **kwargs)

        setattr(database, name, recorded)


TOUCH, REMEMBER = "INSERT INTO users (user_id, telegram_lang", "INSERT INTO users (user_id, last_question"
CONTEXT, SENDING = "INSERT INTO chat_context (chat_id, payloa", "UPDATE inbox SET state = ? WHERE update_i"
DEMAND = "INSERT INTO demand (day, catalog_id, lang"


async def test_a_new_users_question_commits_its_writes_in_order_before_the_reply(emulator, tmp_path):
    seen: list[tuple[object, ...]] = []
    writes: list[tuple[float, str, list[str]]] = []
    bot = Running(emulator, tmp_path)
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
    # Before the reply, in this order: the update stored, the user's row, the answer with the chat's context
    # (one transaction), the anonymous demand record (bot/features/demand.py), the sending mark.
    assert [sqls[0][:11] if name == "write_returning" else sqls for _, name, sqls in writes[:written]] == \
        ["INSERT INTO", "INSERT INTO", [REMEMBER, CONTEXT], [DEMAND], [SENDING]]


async def test_a_reply_that_waits_for_its_slot_has_its_answer_committed_before_it_waits(emulator, tmp_path):
    writes: list[tuple[float, str, list[str]]] = []
    arrived: dict[int, float] = {}
    bot = Running(emulator, tmp_path)
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
    answered = [when for when, name, sqls in writes if name == "write_many" and CONTEXT in sqls]
    assert len(answered) == 2
    assert arrived[second] - answered[-1] > 0.5  # committed before the wait, not after it


async def test_an_update_that_sends_nothing_keeps_what_its_handler_wrote(emulator, tmp_path):
    async def silent(update, context):  # writes, sends nothing, stops the update
        await context.store.touch_user(4343, "de")
        raise ApplicationHandlerStop

    bot = Running(emulator, tmp_path)
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
    async with Running(emulator, tmp_path) as bot:
        await bot.ready()
        emulator.push_message(4501, "70B at 4-bit, 32k context")  # both in one getUpdates answer
        emulator.push_message(4501, "and at 8k?")
        await emulator.wait_for("sendMessage", lambda c: c.chat_id == 4501, count=2, timeout=20)
    first, second = [call.text for call in emulator.sent("sendMessage", chat_id=4501)]
    assert "32,768" in first and "8,192" in second  # the follow-up changed the first question's context
    assert "did not find" not in second


async def test_a_mark_cancelled_midway_is_written_by_the_updates_next_request():
    from bot.telegram.inbox import _Handling

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
