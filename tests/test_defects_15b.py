"""Issue 15, what the earlier passes left: a deep link's sizing request counts against the flood guard like any
question, /cards is paged (◀ / ▶) instead of cut, and the admin's alert progress message is claimed in the store
so two replicas starting one fan-out send one (issue 13)."""
from __future__ import annotations

import asyncio
import copy
import io
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from telegram.error import NetworkError

from bot.cli.chat import run_chat
from bot.config import load_settings
from bot.features.callbacks import CALLBACK_LIMIT, CardsPageButton
from bot.operators.alerts import AlertDelivery
from bot.store import Store
from bot.store.owners import this_place
from bot.texts.render import TELEGRAM_LIMIT, telegram_length
from catalog.validation import validate_catalog
from tests.support.botharness import TOKEN, Harness

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
LIMIT = 5  # questions per window in these tests
NOTICE = "faster than I can answer"


def big_catalog(path: Path, count: int = 200) -> Path:
    """The bundled catalog with its cards repeated under new ids and names up to `count` cards, validated."""
    data = yaml.safe_load(BUNDLED.read_text(encoding="utf-8"))
    originals = data["cards"]
    cards = []
    for n in range(count):
        card = copy.deepcopy(originals[n % len(originals)])
        card["id"] = f"{card['id']}-{n}"
        card["name"] = f"{card['name']} #{n}"
        card.pop("aliases", None)
        cards.append(card)
    data["cards"] = cards
    assert len(validate_catalog(data).cards) == count  # a catalog the service accepts
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="test-secret",
                         rate_limit_messages=LIMIT, rate_limit_window_s=600)


@pytest.fixture
async def bot(settings):
    async with Harness(settings) as harness:
        yield harness


def buttons(params: dict) -> list[dict]:
    return [b for row in params.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


# -- defect 5: /start PAYLOAD is a question for the flood guard ---------------------------------------------------

async def test_deep_links_with_a_payload_are_flood_limited_like_questions(bot):
    await bot.send(60, "70B int4")
    data = [b.get("callback_data", "") for b in buttons(bot.replies(60)[-1])]
    details = next(d for d in data if d.startswith("d:"))
    payload = details.split(":", 2)[2]
    for _ in range(LIMIT + 3):
        await bot.send(61, f"/start {payload}")
    texts = [r["text"] for r in bot.replies(61)]
    assert sum("Memory needed" in text for text in texts) == LIMIT
    assert sum(NOTICE in text for text in texts) == 1  # the polite notice once, then silence
    assert len(texts) == LIMIT + 1


async def test_a_bare_start_is_not_counted(bot):
    for _ in range(LIMIT + 3):
        await bot.send(62, "/start")
    texts = [r["text"] for r in bot.replies(62)]
    assert len(texts) == LIMIT + 3 and not any(NOTICE in text for text in texts)
    await bot.send(62, "7B bf16")  # the question budget is untouched
    assert "Memory needed" in bot.last_text(62)


# -- defect 11: /cards is paged, not cut ---------------------------------------------------------------------------

@pytest.fixture
def big_settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="test-secret",
                         catalog=str(big_catalog(tmp_path / "big.yaml")), catalog_settle_s=0)


def page_data(params: dict) -> dict[str, str]:
    return {b["text"]: b["callback_data"] for b in buttons(params)}


async def test_cards_of_a_200_card_catalog_are_paged_and_every_card_is_on_one_page(big_settings):
    async with Harness(big_settings) as bot:
        await bot.send(70, "/cards")
        first = bot.replies(70)[-1]
        pages = [first["text"]]
        assert "page 1 of" in first["text"] and set(page_data(first)) == {"Next ▶"}
        params = first
        while "Next ▶" in page_data(params):
            data = page_data(params)["Next ▶"]
            assert len(data.encode()) <= CALLBACK_LIMIT
            await bot.press(70, data)
            params = bot.request.sent("editMessageText")[-1].params
            pages.append(params["text"])
        count = len(pages)
        assert count >= 3 and f"page {count} of {count}" in pages[-1] and set(page_data(params)) == {"◀ Previous"}
        assert all(telegram_length(text) <= TELEGRAM_LIMIT for text in pages)
        assert not any(text.rstrip().endswith("…") for text in pages)  # nothing cut
        lines = [line for text in pages for line in text.splitlines() if line.startswith("• ")]
        assert len(lines) == 200
        assert [f"#{n}</b>" in line for n, line in enumerate(lines)] == [True] * 200  # each once, in order
        await bot.press(70, page_data(params)["◀ Previous"])  # and back
        assert bot.request.sent("editMessageText")[-1].params["text"] == pages[-2]


async def test_forged_and_stale_page_buttons_get_the_stale_notice_and_change_nothing(big_settings):
    async with Harness(big_settings) as bot:
        for data in ("p:en:9999", "p:en:-1", "p:xx:1", "p:en:", "p:en:1x", "p:en:²", "p:en:" + "1" * 60):
            await bot.press(71, data)
        assert not bot.request.sent("editMessageText")
        answers = bot.request.sent("answerCallbackQuery")
        assert len(answers) == 7 and all(a.params.get("text") for a in answers)


def test_page_buttons_round_trip_and_refuse_what_they_did_not_write():
    assert CardsPageButton.decode(CardsPageButton("de", 12).encode()) == CardsPageButton("de", 12)
    for data in ("p:en:1:2", "p:de:0x1", "p:en: 1", "f:en:1", None, 3):
        assert CardsPageButton.decode(data) is None


async def test_a_small_catalog_is_one_page_without_buttons(bot):
    await bot.send(72, "/cards")
    reply = bot.replies(72)[-1]
    assert "page" not in reply["text"] and not buttons(reply) and "MI300X" in reply["text"]


async def test_the_terminal_chat_pages_cards_by_its_numbered_buttons(tmp_path):
    settings = load_settings(db=str(tmp_path / "chat.sqlite3"), catalog=str(big_catalog(tmp_path / "big.yaml")))
    stdout = io.StringIO()
    assert await run_chat(settings, io.StringIO("/cards\n1\n/quit\n"), stdout) == 0
    out = stdout.getvalue()
    assert "page 1 of" in out and "[1] Next ▶" in out  # the "more" hint: a numbered button
    assert "page 2 of" in out and "[1] ◀ Previous  [2] Next ▶" in out
    assert "MI300X #0" in out and "<b>" not in out


# -- issue 13: one progress message for the admin, however many replicas start the fan-out ------------------------

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
