"""Words renters write that were listed as not understood, read where they mean something, in English and German:
a customer is a user, "schafft" asks whether it fits, "how many parallel requests" asks for the users a layout
serves, euros with no amount keep the prices in US dollars (said), a named model's use case ("for coding") changes
no memory; one epoch is written in the singular."""
from __future__ import annotations

import pytest

from bot.features.ask import ask_blocking
from bot.texts.render import render_answer
from catalog.loader import load_catalog
from engine.parse import Vocabulary, parse


def codes(request) -> list[str]:
    return [getattr(note, "code", None) for note in request.assumed]


@pytest.mark.parametrize(("text", "batch"), [
    ("was kostet qwen3 32b für einen kunde", 1),
    ("qwen3 8b for one customer", 1),
    ("qwen3 8b für 5 gleichzeitige kunden", 5),
    ("llama 3.1 70b with 16 parallel requests", 16),
])
def test_customers_and_parallel_requests_are_users(text, batch):
    request = parse(text).request
    assert request.batch == batch and not request.ignored


@pytest.mark.parametrize("text", [
    "how many parallel requests can llama 3.1 8b serve",
    "wie viele parallele anfragen schafft llama 3.1 8b",
])
def test_how_many_parallel_requests_asks_for_the_users(text):
    result = parse(text)
    assert result.request.intent == "max_batch" and not result.request.ignored


@pytest.mark.parametrize("text", ["welche gpu schafft llama 3.3 70b", "schafft das qwen3 14b in fp8?"])
def test_schafft_is_a_question_word(text):
    assert "schafft" not in parse(text).request.ignored


@pytest.mark.parametrize(("text", "written"), [("qwen3 32b prices in euro", "euro"),
                                               ("qwen3 32b zahlen in Euro", "Euro")])
def test_euros_without_an_amount_keep_the_prices_in_dollars_and_say_so(text, written):
    request = parse(text).request
    assert "prices_in_usd" in codes(request) and not request.ignored
    assert request.budget_usd is None


@pytest.mark.parametrize("text", ["qwen2.5 coder 32b for coding", "Qwen3 Coder 30B als Coding-Assistent"])
def test_the_use_case_of_a_named_model_is_no_leftover(text):
    assert parse(text).request.ignored == []


def test_an_open_question_still_lists_the_use_case_it_does_not_choose_by():
    catalog = load_catalog("gpurenthub").catalog
    result = parse("best coding model for a 4090", Vocabulary.of_catalog(catalog))
    assert "coding" in result.request.ignored


@pytest.mark.parametrize(("text", "lang", "written"), [
    ("lora llama 3.1 8b on 1B tokens for 1 epoch on an a100", "en", "(1B × 1 epoch)"),
    ("LoRA Llama 3.1 8B auf 1B Tokens, 1 Epoche, auf einer A100", "de", "(1 Mrd. × 1 Epoche)"),
])
def test_one_epoch_is_singular(text, lang, written):
    catalog = load_catalog("gpurenthub").catalog
    asked = ask_blocking(text, catalog, Vocabulary.of_catalog(catalog))
    assert written in render_answer(asked.answer, lang)
