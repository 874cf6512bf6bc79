"""Alerts at scale: the progress counts kept by migration 13's triggers equal a count of the alerts (after a mixed
run of replicas, fate-unknown sends, a crash and a migration of a database that already had alerts), the fan-out
queued in chunks resumes after a crash between chunks without losing or doubling anyone, reading the subscribers with
their languages in one join renders exactly the messages one read per subscriber did, and the admin's progress
message is claimed in the store, so replicas starting one fan-out send one."""
from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
import pytest_asyncio
import yaml
from telegram.error import NetworkError

import bot.store.alerts as store_alerts
from bot.config import load_settings
from bot.operators.alerts import AlertDelivery, alerts_for
from bot.store import MIGRATIONS, Store, schema
from bot.store.owners import this_place
from catalog.diff import diff_catalogs
from catalog.loader import parse_catalog
from tests.support.botharness import TOKEN

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
CHANGED = ("h100-sxm", "h200-sxm", "mi300x")
COUNTS_MIGRATION = 13  # the migration that adds alert_counts
SCAN = "SELECT status, count(*) AS n FROM alerts WHERE announcement_id = ? GROUP BY status"


@pytest_asyncio.fixture
async def store(db_target):
    opened = await Store.open(db_target)
    yield opened
    await opened.close()


def catalogs():
    text = BUNDLED.read_text()
    data = yaml.safe_load(text)
    for card in data["cards"]:
        if card["id"] in CHANGED:
            card["price_monthly_usd"] = round(card["price_monthly_usd"] * 0.9)
    old = parse_catalog(text, "old")
    new = parse_catalog(yaml.safe_dump(data, sort_keys=False), "new")
    return diff_catalogs(old, new), new


class Sender:
    def __init__(self):
        self.sent: list[tuple[int, str]] = []

    async def send_message(self, chat_id, text, *, reply_markup=None):
        self.sent.append((chat_id, text))

        class Message:
            message_id = len(self.sent)

        return Message()

    async def edit_message_text(self, text, chat_id=None, message_id=None):
        return True


def delivery_for(store: Store, sender: Sender | None = None) -> AlertDelivery:
    settings = load_settings(bot_token="123456:TEST-token", db=":memory:")
    return AlertDelivery(settings, store, sender or Sender())


async def scanned(store: Store, announcement_id: int) -> dict[str, int]:
    rows = await store._database.fetch(SCAN, (announcement_id,))
    return {str(row["status"]): int(row["n"]) for row in rows}


async def assert_counts_equal_scan(store: Store, announcement_id: int) -> None:
    scan = await scanned(store, announcement_id)
    assert await store.alert_progress(announcement_id) == {
        "total": sum(scan.values()), "sent": scan.get("sent", 0), "failed": scan.get("failed", 0),
        "blocked": scan.get("blocked", 0), "queued": scan.get("queued", 0)}
    assert await store.alert_unknown(announcement_id) == scan.get("sending", 0) + scan.get("unknown", 0)


async def add_subscribers(store: Store, plan) -> None:
    """plan: (user_id, language, telegram_language, coin, blocked, [(card_id, below_usd), ...])"""
    for user_id, language, telegram_language, coin, blocked, subscriptions in plan:
        for card_id, below in subscriptions:
            await store.subscribe(user_id, card_id, below)
        if language:
            await store.set_preference(user_id, "language", language)
        if coin:
            await store.set_preference(user_id, "coin", coin)
        if telegram_language:
            async with store._database.transaction() as db:
                await db.execute("UPDATE users SET telegram_language = ? WHERE user_id = ?",
                                 (telegram_language, user_id))
        if blocked:
            async with store._database.transaction() as db:
                await db.execute("UPDATE users SET blocked = 1 WHERE user_id = ?", (user_id,))


def mixed_plan(count: int):
    languages = (None, "en", "de")
    telegram = (None, "de", "en", "fr")
    coins = (None, "usdt", "btc")
    plan = []
    for user_id in range(1, count + 1):
        subscriptions = [(CHANGED[user_id % 3], (None, 1e6, 1.0)[user_id % 4 % 3])]
        if user_id % 5 == 0:
            subscriptions.append((CHANGED[(user_id + 1) % 3], None))
        if user_id % 7 == 0:
            subscriptions.append(("a40", None))  # a card the announcement does not change
        plan.append((user_id, languages[user_id % 3], telegram[user_id % 4], coins[user_id % 3],
                     user_id % 11 == 0, subscriptions))
    return plan


async def one_read_per_subscriber(store: Store, diff, catalog) -> list[tuple[int, str]]:
    """The fan-out as main's AlertDelivery.queue wrote it: subscribers per card, then each one's preferences."""
    rows: list[tuple[int, str]] = []
    for card_id in sorted(diff.changed_card_ids()):
        for user_id, below in await store.subscribers_for(card_id):
            prefs = await store.get_preferences(user_id)
            lang = prefs.language or prefs.telegram_language or "en"
            text = alerts_for(diff, catalog, card_id, below, lang if lang in ("en", "de") else "en")
            if text is not None:
                rows.append((user_id, text))
    merged: dict[int, list[str]] = {}
    for user_id, text in rows:
        merged.setdefault(user_id, []).append(text)
    return [(user_id, "\n\n".join(texts)) for user_id, texts in merged.items()]


# -- one join renders what one read per subscriber rendered ---------------------------------------------------------


async def test_one_join_queues_the_same_messages_as_one_read_per_subscriber(store, monkeypatch):
    monkeypatch.setattr(store_alerts, "RECIPIENT_PAGE", 7)  # several pages per card
    diff, catalog = catalogs()
    await add_subscribers(store, mixed_plan(60))
    expected = await one_read_per_subscriber(store, diff, catalog)
    # the set is mixed: both languages (chosen, or Telegram's, "fr" falling back to English), two cards joined in one
    # message, a threshold the new price misses, blocked users left out
    assert any("kostet jetzt" in text for _, text in expected) and any("now costs" in text for _, text in expected)
    assert any(text.count("🔔") == 2 for _, text in expected)
    users = {user_id for user_id, _ in expected}
    assert 11 not in users and 22 not in users and len(users) < 60

    announcement_id = await store.begin_announcement("gpurenthub", "a" * 64, "-", "msg")
    pages = sum([len(await store.subscribers_for(card)) // 7 + 1 for card in diff.changed_card_ids()])
    reads = 0
    fetch = store._database.fetch

    async def counted(*args):
        nonlocal reads
        reads += 1
        return await fetch(*args)

    async def no_preferences(user_id):
        raise AssertionError("preferences are read in the join, not per subscriber")

    monkeypatch.setattr(store._database, "fetch", counted)
    monkeypatch.setattr(store, "get_preferences", no_preferences)
    queued = await delivery_for(store).queue(announcement_id, diff, catalog)
    queue_reads = reads

    assert queued == len(expected)
    assert [(alert.user_id, alert.text) for alert in await store.next_alerts(1000)] == expected
    # a page per 7 subscribers of each changed card (and one more that comes back short), never one per subscriber
    assert 3 < queue_reads <= pages


# -- chunked enqueue: a crash between chunks loses and doubles nobody ----------------------------------------------


async def test_a_fanout_cut_off_between_chunks_resumes_without_loss_or_duplicate(store, monkeypatch):
    monkeypatch.setattr(store_alerts, "ENQUEUE_CHUNK", 8)
    diff, catalog = catalogs()
    await add_subscribers(store, mixed_plan(45))
    expected = await one_read_per_subscriber(store, diff, catalog)
    assert len(expected) > 3 * 8
    announcement_id = await store.begin_announcement("gpurenthub", "b" * 64, "-", "msg")

    database = store._database
    write_returning = database.write_returning  # each chunk is one statement committed on its own
    chunks = 0

    async def dies_in_the_third_chunk(sql, parameters):
        nonlocal chunks
        if sql.startswith("INSERT INTO alerts"):
            chunks += 1
            if chunks == 3:
                raise ConnectionResetError("the process died here")  # not written, as a kill would leave it
        return await write_returning(sql, parameters)

    monkeypatch.setattr(database, "write_returning", dies_in_the_third_chunk)
    with pytest.raises(ConnectionResetError):
        await delivery_for(store).queue(announcement_id, diff, catalog)
    monkeypatch.setattr(database, "write_returning", write_returning)

    assert [(a.user_id, a.text) for a in await store.next_alerts(1000)] == expected[:16]  # two whole chunks
    await assert_counts_equal_scan(store, announcement_id)

    # The post is resumed (announcements._post_claimed queues again before it marks the post posted).
    assert await delivery_for(store).queue(announcement_id, diff, catalog) == len(expected) - 16
    assert await delivery_for(store).queue(announcement_id, diff, catalog) == 0
    queued = [(a.user_id, a.text) for a in await store.next_alerts(1000)]
    assert sorted(queued) == sorted(expected)
    assert len({user_id for user_id, _ in queued}) == len(queued)
    await assert_counts_equal_scan(store, announcement_id)


async def test_a_big_fanout_refreshes_the_planner_statistics_once_and_a_small_one_does_not(store, monkeypatch):
    # PostgreSQL runs ANALYZE on the alerts (stale statistics made each claim read every queued alert); SQLite
    # does nothing. Either way the alerts are queued and claimable as before.
    monkeypatch.setattr(store_alerts, "ENQUEUE_CHUNK", 4)
    monkeypatch.setattr(store_alerts, "ANALYZE_AFTER", 10)
    database = store._database
    refresh = database.refresh_statistics
    refreshed = []

    async def spy(table):
        refreshed.append(table)
        await refresh(table)

    monkeypatch.setattr(database, "refresh_statistics", spy)
    small = await store.begin_announcement("gpurenthub", "f" * 64, "-", "small")
    assert await store.enqueue_alerts(small, [(user_id, f"s {user_id}") for user_id in range(1, 10)]) == 9
    assert refreshed == []
    big = await store.begin_announcement("gpurenthub", "9" * 64, "-", "big")
    assert await store.enqueue_alerts(big, [(user_id, f"b {user_id}") for user_id in range(1, 26)]) == 25
    assert refreshed == ["alerts"]
    assert await store.enqueue_alerts(big, [(user_id, f"b {user_id}") for user_id in range(1, 26)]) == 0
    assert refreshed == ["alerts"]  # counted by what was newly queued
    claimed = await store.claim_alerts("owner-a", 30)
    assert [alert.user_id for alert in claimed] == list(range(1, 10)) + list(range(1, 22))
    await assert_counts_equal_scan(store, big)


async def test_a_bad_row_in_a_later_chunk_keeps_the_earlier_chunks_and_a_repeat_completes(store, monkeypatch):
    monkeypatch.setattr(store_alerts, "ENQUEUE_CHUNK", 2)
    announcement_id = await store.begin_announcement("gpurenthub", "c" * 64, "-", "msg")
    rows = [(1, "a"), (2, "b"), (3, None), (4, "d")]
    with pytest.raises(Exception):  # noqa: B017 - the engine's own integrity error
        await store.enqueue_alerts(announcement_id, rows)
    assert [a.user_id for a in await store.next_alerts()] == [1, 2]
    assert await store.enqueue_alerts(announcement_id, [(1, "a"), (2, "b"), (3, "c"), (4, "d")]) == 2
    assert [a.user_id for a in await store.next_alerts()] == [1, 2, 3, 4]
    await assert_counts_equal_scan(store, announcement_id)


# -- counts equal a scan ---------------------------------------------------------------------------------------------


async def test_counts_equal_a_scan_after_replicas_outcomes_fate_unknown_and_a_crash(db_target):
    first, second = await Store.open(db_target), await Store.open(db_target)
    try:
        one = await first.begin_announcement("gpurenthub", "d" * 64, "-", "one")
        two = await first.begin_announcement("gpurenthub", "e" * 64, "-", "two")
        await first.enqueue_alerts(one, [(user_id, f"one {user_id}") for user_id in range(1, 61)])
        await second.enqueue_alerts(two, [(user_id, f"two {user_id}") for user_id in range(1, 31)])
        await assert_counts_equal_scan(first, one)

        async def replica(store: Store, owner: str, outcomes: tuple[str, ...]) -> None:
            index = 0
            while batch := await store.claim_alerts(owner, 7):
                for alert in batch:
                    if not await store.claim_alert(alert.id, owner):
                        continue
                    index += 1
                    if index == 17:
                        await store.release_alert(alert.id)  # refused (429): certainly not sent, queued again
                    elif index % 6 == 0:
                        pass  # cut off between send and record: stays 'sending', its fate unknown
                    else:
                        await store.mark_alert(alert.id, outcomes[index % len(outcomes)], "x")
                    if index == 24:
                        await store.release_alerts(owner)  # a stopping replica hands its batch back
                        return
                    await asyncio.sleep(0)

        await asyncio.gather(replica(first, "host-a:1:x", ("sent", "failed", "sent", "unknown")),
                             replica(second, "host-b:2:y", ("sent", "blocked", "sent")))
        for announcement_id in (one, two):
            await assert_counts_equal_scan(first, announcement_id)
            await assert_counts_equal_scan(second, announcement_id)
        assert (await scanned(first, one)).get("sending", 0) + (await scanned(first, two)).get("sending", 0) > 0
    finally:
        await first.close()
        await second.close()

    # A restart settles the cut-off sends as unknown; the counts follow, and an announcement's delete too.
    restarted = await Store.open(db_target)
    try:
        settled = await restarted.settle_interrupted_alerts()
        assert sum(settled.values()) > 0
        sender = Sender()
        delivery = delivery_for(restarted, sender)
        await delivery.deliver()
        for announcement_id in (one, two):
            await assert_counts_equal_scan(restarted, announcement_id)
            assert (await restarted.alert_progress(announcement_id))["queued"] == 0
        assert len(sender.sent) == len(set(sender.sent))
        async with restarted._database.transaction() as db:
            await db.execute("DELETE FROM alerts WHERE announcement_id = ? AND user_id <= 10", (one,))
        await assert_counts_equal_scan(restarted, one)
        async with restarted._database.transaction() as db:
            await db.execute("DELETE FROM announcements WHERE id = ?", (two,))
        assert await restarted.alert_progress(two) == {"total": 0, "sent": 0, "failed": 0, "blocked": 0,
                                                       "queued": 0}
    finally:
        await restarted.close()


async def test_the_migration_counts_the_alerts_a_database_already_has(db_target, monkeypatch):
    monkeypatch.setattr(schema, "MIGRATIONS", [m for m in MIGRATIONS if m[0] < COUNTS_MIGRATION])
    old = await Store.open(db_target)
    announcement_id = await old.begin_announcement("gpurenthub", "f" * 64, "-", "msg")
    await old.enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in range(1, 21)])
    for alert in await old.next_alerts(9):
        await old.claim_alert(alert.id)
        if alert.user_id % 3:
            await old.mark_alert(alert.id, ("sent", "failed", "blocked", "unknown")[alert.user_id % 4])
    scan_before = await scanned(old, announcement_id)
    await old.close()

    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)
    new = await Store.open(db_target)
    try:
        assert new.schema_version == MIGRATIONS[-1][0]
        assert await scanned(new, announcement_id) == scan_before
        await assert_counts_equal_scan(new, announcement_id)
        assert {"sending", "queued", "sent"} <= set(scan_before)
    finally:
        await new.close()


# -- one progress message for the admin, however many replicas start the fan-out ------------------------------------

ADMIN = 42


class SlowSender:
    """One Telegram for every replica: a send takes a moment, so two replicas are both past their check before
    either's message exists (what made each send one)."""

    def __init__(self, fail_sends: int = 0):
        self.sent: list[tuple[int, str]] = []
        self.edits: list[tuple[int | None, int | None, str]] = []
        self.fail_sends = fail_sends

    async def send_message(self, chat_id, text, *, reply_markup=None):
        await asyncio.sleep(0.2)
        if self.fail_sends:
            self.fail_sends -= 1
            raise NetworkError("connection refused")
        self.sent.append((chat_id, text))
        return SimpleNamespace(message_id=500 + len(self.sent))

    async def edit_message_text(self, text, chat_id=None, message_id=None):
        self.edits.append((chat_id, message_id, text))


async def announcement_with_alerts(store: Store) -> int:
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    assert announcement_id is not None
    await store.enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in range(1, 4)])
    return announcement_id


async def test_two_replicas_starting_one_fan_out_send_one_progress_message(db_target):
    settings = load_settings(bot_token=TOKEN, db=db_target, admin_ids=f"{ADMIN}")
    first, second = await Store.open(db_target), await Store.open(db_target)  # one database, two replicas
    try:
        announcement_id = await announcement_with_alerts(first)
        sender = SlowSender()
        replicas = [AlertDelivery(settings, first, sender), AlertDelivery(settings, second, sender)]
        await asyncio.gather(*(replica._progress(announcement_id) for replica in replicas))
        assert [chat for chat, _ in sender.sent] == [ADMIN]  # one message, not one per replica
        message = await second.progress_message(announcement_id)
        assert message == (ADMIN, 501)
        assert [(chat, mid) for chat, mid, _ in sender.edits] == [message]  # the other edited the winner's
        await replicas[1]._progress(announcement_id)  # later updates edit it too
        assert len(sender.sent) == 1 and len(sender.edits) == 2
    finally:
        await first.close()
        await second.close()


async def test_a_claim_whose_holder_died_is_taken_over_and_a_failed_send_frees_it(db_target):
    settings = load_settings(bot_token=TOKEN, db=db_target, admin_ids=f"{ADMIN}")
    store = await Store.open(db_target)
    try:
        announcement_id = await announcement_with_alerts(store)
        dead = f"{this_place()}:{os.getpid()}:earlier.1:0badc0de"  # this pid, an earlier process: gone
        assert await store.claim_progress_message(announcement_id, ADMIN, dead, lambda owner: True)
        sender = SlowSender(fail_sends=1)
        delivery = AlertDelivery(settings, store, sender)
        await delivery._progress(announcement_id)  # takes the dead one's claim over; its send fails
        assert not sender.sent and await store.progress_message(announcement_id) is None
        await delivery._progress(announcement_id)  # freed: the next update claims and sends
        assert [chat for chat, _ in sender.sent] == [ADMIN]
        assert await store.progress_message(announcement_id) == (ADMIN, 501)
        # A live holder whose lease has not run out keeps its claim; a sent message is nobody's to claim.
        assert not await store.claim_progress_message(announcement_id, ADMIN, "other", lambda owner: True)
        other = await store.begin_announcement("gpurenthub", "sha-2", "yaml", "msg 2")
        assert other is not None
        assert await store.claim_progress_message(other, ADMIN, "a", lambda owner: True)
        assert not await store.claim_progress_message(other, ADMIN, "b", lambda owner: True)
        # "a" died: "b" takes over, with a lease that has run out at once; then "c" takes it from live "b".
        assert await store.claim_progress_message(other, ADMIN, "b", lambda owner: owner != "a", lease_s=-1)
        assert await store.claim_progress_message(other, ADMIN, "c", lambda owner: True)
        await store.release_progress_claim(other, "b")  # only the holder's release frees it
        assert not await store.claim_progress_message(other, ADMIN, "d", lambda owner: True)
        await store.release_progress_claim(other, "c")
        assert await store.claim_progress_message(other, ADMIN, "d", lambda owner: True)
        assert await store.progress_message(other) is None  # a claim is not a message
    finally:
        await store.close()


async def test_a_store_that_refuses_the_alerts_marks_stops_delivery_in_one_line_and_keeps_them_queued(store, caplog):
    """A full disk during a fan-out: the alert's 'sending' mark is refused, so nothing is sent; the run ends with one
    warning line (no traceback, no "Task exception was never retrieved"), the alerts stay queued for the next run."""
    announcement_id = await store.begin_announcement("gpurenthub", "f" * 64, "-", "msg")
    await store.enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in range(1, 4)])
    sender = Sender()
    delivery = delivery_for(store, sender)
    claim = store.claim_alert

    async def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    store.claim_alert = full
    caplog.set_level(logging.WARNING)
    with pytest.raises(sqlite3.OperationalError):
        await delivery.start_delivery()
    await asyncio.sleep(0)  # the task's done callback
    assert sender.sent == []
    [line] = [record for record in caplog.records if "alert delivery stopped" in record.getMessage()]
    assert line.exc_info is None and "database or disk is full" in line.getMessage()
    store.claim_alert = claim  # the disk has room again: the next run sends them, once each
    await delivery.start_delivery()
    assert sorted(chat for chat, _ in sender.sent) == [1, 2, 3]
