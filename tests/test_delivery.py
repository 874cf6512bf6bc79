"""Nothing lost, nothing doubled, in process: delivery intents in the store, lost answers, the admin's
answer about a part, a catalog file that is still being written, big removals, edits made while the bot was down
and a renamed catalog id. The SIGKILL tests of a real process are in tests/test_crash_delivery.py."""
from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
import yaml
from telegram.error import NetworkError, TimedOut

from bot.config import Settings, load_settings
from bot.features.callbacks import AnnouncementButton, PartButton
from bot.features.core import CatalogHolder
from bot.operators.announce import Announcer
from bot.store import Store
from catalog.loader import CatalogError, load_catalog, parse_catalog_bytes
from tests.support.botharness import TOKEN, Harness

ADMIN, CUSTOMER = 42, 44
CHANNEL = "@cardfit_news"
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"


def make_settings(tmp_path: Path, catalog_file: Path, **overrides) -> Settings:
    values = dict(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                  announce_chat=CHANNEL, catalog=str(catalog_file), topup_secret="topup-key-for-tests")
    values.update(overrides)
    return load_settings(**values)


def edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def set_price(card_id: str, monthly: float):
    def change(data):
        next(card for card in data["cards"] if card["id"] == card_id)["price_monthly_usd"] = monthly
    return change


class Sender:
    """Records sends; `time_out` names chats whose next send times out after reaching Telegram."""

    def __init__(self, time_out: set | None = None, faults: dict | None = None):
        self.sent: list[tuple[object, str, object]] = []
        self.edits: list[tuple[object, int, str]] = []
        self.time_out = set(time_out or ())
        self.faults = dict(faults or {})  # chat -> the NetworkError its next send raises, as PTB's httpx layer does

    async def send_message(self, chat_id, text, *, reply_markup=None):
        self.sent.append((chat_id, text, reply_markup))
        if chat_id in self.time_out:
            self.time_out.discard(chat_id)
            raise TimedOut("Timed out")
        if chat_id in self.faults:
            raise self.faults.pop(chat_id)

        class Message:
            message_id = len(self.sent)

        return Message()

    async def edit_message_text(self, text, chat_id=None, message_id=None):
        self.edits.append((chat_id, message_id, text))
        return True

    def to(self, chat_id) -> list[str]:
        return [text for chat, text, _ in self.sent if chat == chat_id]


@pytest.fixture
async def store(tmp_path):
    opened = await Store.open(tmp_path / "delivery.sqlite3")
    yield opened
    await opened.close()


# -- the store's intents ---------------------------------------------------------------------------------------

async def test_a_claimed_alert_cut_off_at_a_start_is_queued_once_more_as_a_repeat_then_unknown(store):
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    await store.enqueue_alerts(announcement_id, [(1, "a"), (2, "b"), (3, "c")])
    first, second, _ = await store.next_alerts()
    assert await store.claim_alert(first.id) and not await store.claim_alert(first.id)
    assert await store.claim_alert(second.id)
    await store.mark_alert(first.id, "sent")
    assert [a.user_id for a in await store.next_alerts()] == [3]  # a 'sending' alert is not queued any more
    assert await store.settle_interrupted_alerts() == {announcement_id: 1}
    assert await store.settle_interrupted_alerts() == {}
    # Cut off once: queued again, as a repeat (sent with the label), before the alerts queued after it.
    assert [(a.user_id, a.resent) for a in await store.next_alerts()] == [(2, True), (3, False)]
    assert await store.claim_alert(second.id)
    assert await store.settle_interrupted_alerts() == {announcement_id: 1}  # cut off again: unknown
    assert [a.user_id for a in await store.next_alerts()] == [3]
    await store.mark_alert(second.id, "sent")  # a late outcome cannot rewrite an unknown one
    assert await store.alert_unknown(announcement_id) == 1
    progress = await store.alert_progress(announcement_id)
    assert (progress["total"], progress["sent"], progress["queued"]) == (3, 1, 1)
    third = (await store.next_alerts())[0]
    assert await store.claim_alert(third.id)
    await store.release_alert(third.id)  # refused by Telegram: queued again
    assert [a.user_id for a in await store.next_alerts()] == [3]


async def test_a_part_intent_keeps_its_first_record(store):
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    await store.begin_announcement_part(announcement_id, 0)
    assert (await store.announcement_part_states(announcement_id))[0].state == "intent"
    assert await store.announcement_parts(announcement_id) == {}
    await store.record_announcement_part(announcement_id, 0, 77)
    await store.record_announcement_part(announcement_id, 0, 78)  # a repeat record changes nothing
    assert await store.announcement_parts(announcement_id) == {0: 77}
    assert not await store.confirm_announcement_part(announcement_id, 0)  # only an intent can be confirmed
    assert not await store.forget_announcement_part(announcement_id, 0)
    await store.begin_announcement_part(announcement_id, 1)
    assert await store.confirm_announcement_part(announcement_id, 1)
    assert (await store.announcement_part_states(announcement_id))[1] == ("confirmed", None, None)
    await store.save_progress_message(announcement_id, 42, 5)
    await store.save_progress_message(announcement_id, 42, 6)
    assert await store.progress_message(announcement_id) == (42, 6)


def test_part_button_round_trip_and_rejects():
    button = PartButton("there", 12, 3)
    assert button.encode() == "annp:there:12:3" and PartButton.decode(button.encode()) == button
    assert PartButton.decode("annp:again:12:0") == PartButton("again", 12, 0)
    for bad in ("annp:there:12", "annp:maybe:1:0", "annp:there:x:0", "annp:there:1:-1", "annp:there:1:0:9", 5):
        assert PartButton.decode(bad) is None
    assert not AnnouncementButton.matches("annp:there:1:0") and not PartButton.matches("ann:post:1")


# -- lost answers ----------------------------------------------------------------------------------------------

async def _posted_to_three_subscribers(tmp_path, catalog_file, store, sender):
    """An announcer whose A40 price change is posted, with subscribers 1001-1003 waiting for their alert."""
    announcer = Announcer(make_settings(tmp_path, catalog_file), CatalogHolder(load_catalog(str(catalog_file))),
                          store, sender)
    await announcer.ensure_baseline()
    for user_id in (1001, 1002, 1003):
        await store.subscribe(user_id, "a40", None)
    edit(catalog_file, set_price("a40", 230))
    outcome = await announcer.check()
    await announcer.post(outcome.announcement_id)
    return announcer, outcome


async def test_an_alert_whose_answer_is_lost_is_counted_unknown_and_not_resent(tmp_path, catalog_file, store):
    sender = Sender(time_out={1002})
    announcer, outcome = await _posted_to_three_subscribers(tmp_path, catalog_file, store, sender)
    await announcer.start_delivery()
    assert [len(sender.to(user)) for user in (1001, 1002, 1003)] == [1, 1, 1]
    await announcer.resume()  # a restart later does not send it again
    await announcer.start_delivery()
    assert len(sender.to(1002)) == 1
    assert await store.alert_unknown(outcome.announcement_id) == 1
    assert "1 unknown" in sender.edits[-1][2] and "sent 2 / 3" in sender.edits[-1][2]
    assert len([t for t in sender.to(ADMIN) if "Alerts for announcement" in t]) == 1
    await announcer.stop()


def _network_error(cause: Exception) -> NetworkError:
    error = NetworkError(f"{type(cause).__module__.split('.')[0]}.{type(cause).__name__}: {cause}")
    error.__cause__ = cause  # how PTB's HTTPXRequest raises it
    return error


@pytest.mark.parametrize(("cause", "status"), [
    (httpx.RemoteProtocolError("Server disconnected without sending a response."), "unknown"),
    (httpx.ReadError("connection reset"), "unknown"),
    (httpx.ConnectError("connection refused"), "failed"),
])
async def test_an_alert_whose_connection_dropped_after_sending_is_unknown_not_failed(tmp_path, catalog_file, store,
                                                                                     cause, status):
    sender = Sender(faults={1002: _network_error(cause)})
    announcer, outcome = await _posted_to_three_subscribers(tmp_path, catalog_file, store, sender)
    await announcer.start_delivery()
    await announcer.resume()
    await announcer.start_delivery()
    assert [len(sender.to(user)) for user in (1001, 1002, 1003)] == [1, 1, 1]  # never sent twice
    progress = await store.alert_progress(outcome.announcement_id)
    assert progress["sent"] == 2
    assert await store.alert_unknown(outcome.announcement_id) == (1 if status == "unknown" else 0)
    assert progress["failed"] == (1 if status == "failed" else 0)
    await announcer.stop()


async def test_a_channel_part_whose_answer_is_lost_is_asked_about_and_post_again_posts_it(tmp_path, catalog_file,
                                                                                           store):
    settings = make_settings(tmp_path, catalog_file)
    sender = Sender(time_out={CHANNEL})
    announcer = Announcer(settings, CatalogHolder(load_catalog(str(catalog_file))), store, sender)
    await announcer.ensure_baseline()
    edit(catalog_file, set_price("a40", 230))
    outcome = await announcer.check()
    answer = await announcer.post(outcome.announcement_id)
    assert "waits for an admin's answer about part 1 of 1" in answer
    part, question = sender.sent[-2], sender.sent[-1]
    assert part[0] == ADMIN and part[1] == sender.to(CHANNEL)[0]  # the exact part
    data = [b.callback_data for row in question[2].inline_keyboard for b in row]
    assert data == [PartButton("again", outcome.announcement_id, 0).encode(),
                    PartButton("there", outcome.announcement_id, 0).encode()]
    assert "waits" in await announcer.post(outcome.announcement_id)  # a second Post does not post blindly
    assert len(sender.to(CHANNEL)) == 1 and len(sender.to(ADMIN)) == 3  # and does not ask again

    assert (await announcer.resolve_part(outcome.announcement_id, 0, "again")).startswith("✅ Posted")
    assert len(sender.to(CHANNEL)) == 2
    assert "already answered" in await announcer.resolve_part(outcome.announcement_id, 0, "there")
    assert (await store.get_announcement(outcome.announcement_id)).status == "posted"
    await announcer.stop()


async def test_the_part_buttons_are_for_admins_and_continue_the_post(tmp_path, catalog_file):
    settings = make_settings(tmp_path, catalog_file)
    async with Harness(settings) as bot:
        edit(catalog_file, set_price("a40", 230))
        store = bot.app.bot_data["services"].store
        announcement_id = await store.begin_announcement("gpurenthub", "sha-x", catalog_file.read_text(), "post",
                                                         base_sha256=(await store.last_posted()).sha256)
        await store.begin_announcement_part(announcement_id, 0)  # as a killed process leaves it
        there = PartButton("there", announcement_id, 0).encode()
        await bot.press(CUSTOMER, there)
        assert bot.request.sent("answerCallbackQuery")[-1].params["show_alert"] is True
        await bot.press(ADMIN, there)
        assert bot.last_text(ADMIN).startswith("✅ Posted to @cardfit_news")
        assert not [c for c in bot.request.sent("sendMessage") if c.params["chat_id"] == CHANNEL]
        await bot.press(ADMIN, there)
        assert "already answered" in bot.last_text(ADMIN)
        await bot.press(ADMIN, "annp:there:zz:0")
        assert bot.request.sent("answerCallbackQuery")[-1].params.get("text") == "Unknown button."


# -- a half-written file ----------------------------------------------------------------------------------------

def valid_prefix(raw: bytes) -> bytes:
    """The longest line-boundary prefix of the catalog that is itself a valid catalog with fewer cards."""
    full = len(parse_catalog_bytes(raw, "full").cards)
    lines = raw.split(b"\n")
    for end in range(len(lines) - 1, 0, -1):
        prefix = b"\n".join(lines[:end]) + b"\n"
        try:
            if len(parse_catalog_bytes(prefix, "prefix").cards) < full:
                return prefix
        except CatalogError:
            continue
    raise AssertionError("no valid prefix")


async def test_a_file_still_being_written_is_not_taken(tmp_path, catalog_file):
    settings = make_settings(tmp_path, catalog_file, announce_auto=True, catalog_settle_s=0.8)
    store = await Store.open(settings.db)
    sender = Sender()
    holder = CatalogHolder(load_catalog(str(catalog_file)))
    announcer = Announcer(settings, holder, store, sender)
    try:
        await announcer.ensure_baseline()
        edit(catalog_file, set_price("a40", 230))
        full = catalog_file.read_bytes()
        catalog_file.write_bytes(valid_prefix(full))  # a writer half-way through rewriting the file in place

        async def finish_writing():  # well after the first read, well before the second
            await asyncio.sleep(0.3)
            catalog_file.write_bytes(full)

        outcome, _ = await asyncio.gather(announcer.check(), finish_writing())
        assert outcome.status == "unsettled" and "rename" in outcome.text
        assert len(holder.catalog.cards) == 15 and not sender.to(CHANNEL)
        outcome = await announcer.check()  # the next tick: the file holds still
        assert outcome.status == "posted" and len(holder.catalog.cards) == 15
        [post] = sender.to(CHANNEL)
        assert "A40" in post and "No longer offered" not in post
    finally:
        await announcer.stop()
        await store.close()


async def test_rewriting_the_file_in_place_while_the_watch_job_polls_posts_each_edit_once(tmp_path, catalog_file):
    """Six in-place rewrites, written in chunks, while the watch job polls. Without the
    settle delay (catalog_settle_s=0) this run posted 15-26 announcements here, several falsely "no longer
    offered", and held dozens of previews; with it, exactly one post per edit."""
    settings = make_settings(tmp_path, catalog_file, announce_auto=True, catalog_settle_s=0.3)
    store = await Store.open(settings.db)
    sender = Sender()
    holder = CatalogHolder(load_catalog(str(catalog_file)))
    announcer = Announcer(settings, holder, store, sender)
    writing = True

    async def watch():
        while writing:
            await announcer.check()
            await asyncio.sleep(0.01)

    try:
        await announcer.ensure_baseline()
        poller = asyncio.create_task(watch())
        for price in (231, 232, 233, 234, 235, 236):
            edit(catalog_file, set_price("a40", price))
            lines = catalog_file.read_bytes().split(b"\n")
            with catalog_file.open("r+b") as handle:  # in place, twelve lines at a time, as a slow writer saves
                handle.truncate(0)
                for start in range(0, len(lines), 12):
                    handle.write(b"\n".join(lines[start:start + 12]) + (b"\n" if start + 12 < len(lines) else b""))
                    handle.flush()
                    await asyncio.sleep(0.02)
            await asyncio.sleep(0.8)  # settle delay + a parse: this edit is posted before the next begins
        writing = False
        await poller
        posts = sender.to(CHANNEL)
        assert len(posts) == 6 and not [post for post in posts if "No longer offered" in post]
        assert [f"→ ${price}/month" in post for post, price in zip(posts, range(231, 237), strict=True)] == [True] * 6
    finally:
        writing = False
        await announcer.stop()
        await store.close()


async def test_a_version_that_removes_over_a_third_of_the_cards_waits_for_an_admin_even_with_auto(tmp_path,
                                                                                                 catalog_file):
    settings = make_settings(tmp_path, catalog_file, announce_auto=True)
    store = await Store.open(settings.db)
    sender = Sender()
    holder = CatalogHolder(load_catalog(str(catalog_file)))
    announcer = Announcer(settings, holder, store, sender)
    try:
        await announcer.ensure_baseline()
        edit(catalog_file, lambda data: data.update(cards=data["cards"][:9]))  # 6 of 15 gone: over a third
        outcome = await announcer.check()
        assert outcome.status == "previewed" and not sender.to(CHANNEL)
        preview = sender.sent[-1]
        assert "removes 6 of 15 cards" in preview[1] and "Preview" in preview[1]
        assert [b.text for row in preview[2].inline_keyboard for b in row] == ["📣 Post to channel", "🗑 Discard"]
        restarted = Announcer(settings, holder, store, sender)
        await restarted.resume()  # auto-announce still does not post it at a start
        assert not sender.to(CHANNEL)
        assert (await restarted.post(outcome.announcement_id)).startswith("✅ Posted")
        assert "No longer offered" in sender.to(CHANNEL)[0]
        edit(catalog_file, lambda data: data.update(cards=data["cards"][:7]))  # 2 of 9: not over a third
        assert (await restarted.check()).status == "posted"
        await restarted.stop()
    finally:
        await announcer.stop()
        await store.close()


def test_the_settle_delay_defaults_to_one_second(monkeypatch):
    monkeypatch.delenv("CARDFIT_CATALOG_SETTLE_S", raising=False)
    assert Settings().catalog_settle_s == 1.0
    monkeypatch.setenv("CARDFIT_CATALOG_SETTLE_S", "-1")
    with pytest.raises(Exception, match="CARDFIT_CATALOG_SETTLE_S"):
        load_settings()


# -- changes that were never announced ----------------------------------------------------------------------

async def test_an_edit_made_while_the_bot_was_down_is_announced_at_the_start(tmp_path, catalog_file):
    settings = make_settings(tmp_path, catalog_file)
    async with Harness(settings):
        pass  # the first start: the baseline
    edit(catalog_file, set_price("l4", 260))
    async with Harness(settings) as bot:
        previews = [p for p in bot.replies(ADMIN) if "Preview" in p["text"]]
        assert len(previews) == 1 and "L4" in previews[0]["text"] and "$250 → $260/month" in previews[0]["text"]
    async with Harness(settings) as bot:  # nothing new at the next start: the same pending version
        assert not [p for p in bot.replies(ADMIN) if "Preview" in p["text"]]


async def test_a_pending_announcement_whose_preview_never_went_out_gets_it_at_the_start(tmp_path, catalog_file):
    settings = make_settings(tmp_path, catalog_file)
    async with Harness(settings):
        pass
    store = await Store.open(settings.db)
    try:  # what a crash between recording and previewing leaves
        edit(catalog_file, set_price("l4", 260))
        announcement_id = await store.begin_announcement("gpurenthub", "sha-y", catalog_file.read_text(), "L4 news",
                                                         base_sha256=(await store.last_posted()).sha256)
    finally:
        await store.close()
    catalog_file.write_bytes(BUNDLED.read_bytes())  # and the file went back, so only the old record is left
    async with Harness(settings) as bot:
        previews = [p for p in bot.replies(ADMIN) if "Preview" in p["text"]]
        assert len(previews) == 1 and "L4 news" in previews[0]["text"]
        assert AnnouncementButton("post", announcement_id).encode() in str(previews[0]["reply_markup"])
    async with Harness(settings) as bot:  # sent once: recorded
        assert not [p for p in bot.replies(ADMIN) if "Preview" in p["text"]]


async def test_renaming_the_catalog_id_is_announced_as_a_change_with_a_notice(tmp_path, catalog_file):
    settings = make_settings(tmp_path, catalog_file)
    async with Harness(settings) as bot:
        announcer = bot.app.bot_data["services"].announcer

        def rename(data):
            data["id"] = "gpurenthub-eu"
            set_price("a40", 230)(data)
        edit(catalog_file, rename)
        outcome = await announcer.check()
        assert outcome.status == "previewed"
        preview = bot.last_text(ADMIN)
        assert "changed from <code>gpurenthub</code> to <code>gpurenthub-eu</code>" in preview
        assert "$240 → $230/month" in preview and "No longer offered" not in preview
        await announcer.post(outcome.announcement_id)
        edit(catalog_file, set_price("l4", 260))  # and the next change under the new id is one too
        outcome = await announcer.check()
        assert outcome.status == "previewed" and "$250 → $260/month" in bot.last_text(ADMIN)
        assert "changed from" not in bot.last_text(ADMIN)
