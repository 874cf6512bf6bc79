"""What the user states is honoured or named as not honoured, never silently replaced: their own cards, their
budget and billing span, the runtime flags they paste."""
from __future__ import annotations

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.parse import Vocabulary


def _ask(text: str, catalog_id: str = "gpurenthub"):
    catalog = load_catalog(catalog_id).catalog
    answer, error, _ = ask_answer(text, catalog, Vocabulary.of_catalog(catalog))
    assert answer is not None and error is None, error
    return answer


@pytest.mark.parametrize("text, language", [
    ("I have 2x 3090 (48gb total), can I run llama 3.3 70b q4?", "en"),
    ("Ich habe 2x 3090 (48 GB insgesamt), läuft llama 3.3 70b q4?", "de"),
])
def test_a_memory_in_total_is_the_cards_together_not_one_card(text, language):
    answer = _ask(text)
    assert (answer.request.gpu_count, answer.request.card_vram_gb) == (2, 24)
    shown = plain(render_answer(answer, language))
    assert "2x RTX 3090 (48 GB)" in shown
    assert "48GB" not in shown  # no RTX 3090 with 48 GB of its own, which the catalog would not rent


@pytest.mark.parametrize("text, language", [
    ("Passt Qwen3 32B auf der 4090?", "de"),
    ("Can I run Qwen3 32B on a 4090?", "en"),
])
def test_the_4090_is_one_card(text, language):
    answer = _ask(text)
    assert answer.request.gpu_count == 1
    assert "1x RTX 4090 (24 GB)" in plain(render_answer(answer, language))
