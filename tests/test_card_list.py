"""/cards (bot/features/cards.py): a catalog too long for one message is paged with ◀ / ▶ buttons, never cut;
every card is on exactly one page, forged or stale page buttons change nothing, and the terminal chat pages by its
numbered buttons."""
from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest
import yaml

from bot.cli.chat import run_chat
from bot.config import load_settings
from bot.features.callbacks import CALLBACK_LIMIT, CardsPageButton
from bot.texts.render import TELEGRAM_LIMIT, telegram_length
from catalog.validation import validate_catalog
from tests.support.botharness import TOKEN, Harness, buttons

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"


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
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="test-secret-0123456789")


@pytest.fixture
def big_settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="test-secret-0123456789",
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
