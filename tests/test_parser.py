"""Phrase parser: the corpus of real phrasings (tests/parser_corpus.yaml) plus focused unit tests."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from engine.parser import NOT_A_QUESTION, TOKENS_PER_K, ParseResult, _parse_strict, default_cards, parse
from engine.registry import build_registry, default_registry
from engine.sizing import SizeRequest

CORPUS_PATH = Path(__file__).resolve().parent / "parser_corpus.yaml"
CORPUS = yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))["cases"]
REQUEST_FIELDS = (
    "model", "params_b", "precision", "kv_precision", "context_tokens", "batch", "workload", "card", "gpu_count",
    "memory_budget_gb", "region",
)
EXPECT_KEYS = set(REQUEST_FIELDS) | {"language", "error", "model_note"}


def _slug(text: str) -> str:
    slug = re.sub(r"[^0-9a-zA-Zäöüß]+", "-", text.lower()).strip("-")
    return (slug[:48] or "empty").rstrip("-")


def _ids(cases: list[dict]) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for case in cases:
        slug = _slug(case["text"])
        seen[slug] = seen.get(slug, 0) + 1
        ids.append(slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
    return ids


def test_corpus_size_and_languages():
    assert len(CORPUS) >= 260
    german = [case for case in CORPUS if case["expect"].get("language") == "de"]
    assert len(german) >= 90
    texts = [case["text"] for case in CORPUS]
    assert len(texts) == len(set(texts)), "duplicate corpus texts"
    for case in CORPUS:
        assert set(case["expect"]) <= EXPECT_KEYS, case


@pytest.mark.parametrize("case", CORPUS, ids=_ids(CORPUS))
def test_corpus(case):
    text, expect = case["text"], case["expect"]
    result = _parse_strict(text)  # no safety net: a crash is a failure here
    assert isinstance(result, ParseResult)
    if "language" in expect:
        assert result.language == expect["language"], result
    if "error" in expect:
        assert result.request is None, result
        assert result.error is not None and expect["error"] in result.error, result.error
        return
    assert result.request is not None, result.error
    assert result.error is None
    request = result.request
    for field in REQUEST_FIELDS:
        if field in expect:
            wanted = expect[field]
            got = getattr(request, field)
            if wanted is not None and isinstance(got, float):
                assert got == pytest.approx(float(wanted)), (field, request)
            else:
                assert got == wanted, (field, request)
    if "model_note" in expect:
        assert result.model_note == expect["model_note"]
    assert result.matched_model == request.model
    # whatever the parser could not use is listed, never silently dropped -- and nothing in this corpus is junk
    assert request.ignored == [], request.ignored


# -- model notes and matching ---------------------------------------------------------------------------------

def test_fuzzy_model_note_names_model_and_user_text():
    result = parse("llama3.1 70 b instruct, 4bit")
    assert result.matched_model == "llama-3.1-70b"
    result = parse("lama 3.1 70b")
    assert result.model_note == "Llama 3.1 70B (assumed from 'lama 3.1 70b')"
    assert result.model_note in result.request.assumed


def test_exact_alias_has_no_note():
    for text in ("Llama 3.1 70B", "llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", "LLAMA3.1 70B"):
        result = parse(text)
        assert result.matched_model == "llama-3.1-70b", text
        assert result.model_note is None, text
        assert result.request.assumed == [], text


def test_note_keeps_the_users_spelling():
    result = parse("Mistrall 7B please")
    assert result.matched_model == "mistral-7b"
    assert result.model_note == f"{default_registry().get('mistral-7b').name} (assumed from 'Mistrall 7B')"


def test_size_must_agree_with_model():
    # "Llama 70B" may become any Llama of 70B, never the 8B one
    for text in ("Llama 70B", "llama 70 b", "lama 70b", "Llama-70B-Instruct"):
        result = parse(text)
        assert result.matched_model is not None, text
        assert default_registry().get(result.matched_model).params_b == pytest.approx(70, rel=0.1), text
    assert parse("llama 3.1 13b").matched_model is None  # no Llama 3.1 of 13B: size it as a typical 13B
    assert parse("llama 3.1 13b").request.params_b == 13


def test_ambiguous_family_asks_for_size():
    result = parse("llama 3.1")
    assert result.request is None
    assert "Llama 3.1 8B" in result.error and "Llama 3.1 405B" in result.error
    resolved = parse("llama 3.1 at 405b please")
    assert resolved.matched_model == "llama-3.1-405b"
    assert resolved.request.params_b is None
    assert resolved.model_note == "Llama 3.1 405B (assumed from 'llama 3.1' and 405B)"


def test_mixtral_style_size_reads_the_registry_model():
    result = parse("8x7b at 4 bit")
    assert result.matched_model == "mixtral-8x7b"
    assert "8x7b read as Mixtral 8x7B" in result.request.assumed
    assert default_registry().get("mixtral-8x7b").params_b == pytest.approx(46.7)


def test_injected_registry_and_cards():
    registry = build_registry([
        {"id": "tiny-1b", "name": "Tiny 1B", "params_b": 1.1, "family": "tiny", "aliases": ["tinyllm 1b"]},
        {"id": "tiny-9b", "name": "Tiny 9B", "params_b": 9, "family": "tiny", "aliases": ["tinyllm 9b"]},
    ])

    class FakeCard:
        def __init__(self, id, name, aliases=(), regions=()):
            self.id, self.name, self.aliases, self.regions = id, name, aliases, regions

    cards = [FakeCard("zz-9000", "ZZ 9000", ("zz9k",), ("XYZ-2",))]
    result = parse("tinyllm 9b on 2x zz9k in xyz-2", registry=registry, cards=cards)
    assert result.matched_model == "tiny-9b"
    assert (result.request.card, result.request.gpu_count, result.request.region) == ("zz9k", 2, "XYZ-2")
    assert parse("tinyllm 9b on a H100", registry=registry, cards=cards).request.card is None
    assert parse("tinylm 9b", registry=registry, cards=cards).model_note == "Tiny 9B (assumed from 'tinylm 9b')"
    assert parse("llama 3.1 70b", registry=registry, cards=cards).matched_model is None


def test_default_cards_cover_both_catalogs():
    ids = {card.id for card in default_cards()}
    assert {"h100-sxm", "h100-80gb", "rtx-4090", "mi300x", "a100-80gb"} <= ids


# -- what it assumed and what it ignored -----------------------------------------------------------------------

def test_ignored_lists_meaningful_leftovers_only():
    result = parse("How much VRAM do I need to run a 70B model with frobnication on the gpu please?")
    assert result.request.ignored == ["frobnication"]
    result = parse("Wie viel VRAM brauche ich für ein 70B Modell mit Zauberei?")
    assert result.request.ignored == ["zauberei"]


def test_stop_words_are_not_ignored_entries():
    result = parse("how much vram do i need for the model to run 7b on a gpu")
    assert result.request.ignored == []
    result = parse("ich brauche wie viel vram für das modell mit 7b auf der gpu")
    assert result.request.ignored == []


def test_second_card_and_conflicting_precision_are_reported():
    result = parse("70B fp16 or int4 on H100 or A100")
    assert result.request.precision == "fp16"
    assert result.request.card == "h100"
    assert "int4" in result.request.ignored
    assert "a100" in result.request.ignored


def test_unknown_quantization_is_reported_not_guessed():
    result = parse("70B q5_k_m")
    assert result.request.precision is None
    assert result.request.ignored == ["q5_k_m"]


def test_kv_int4_is_reported_not_used():
    result = parse("70B kv cache int4")
    assert result.request.kv_precision is None
    assert result.request.precision is None
    assert any("KV cache" in entry for entry in result.request.ignored)


def test_unset_values_stay_none():
    request = parse("70B").request
    assert request == SizeRequest(params_b=70)


def test_fp4_is_sized_as_4_bit_with_a_note():
    request = parse("70B in MXFP4").request
    assert request.precision == "int4"
    assert any("MXFP4" in entry for entry in request.assumed)


def test_gib_budget_is_converted_and_noted():
    request = parse("13B in 24 GiB").request
    assert request.memory_budget_gb == pytest.approx(24 * 1.073741824)
    assert any("GiB" in entry for entry in request.assumed)


# -- numbers ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("written, tokens", [
    ("1k", 1024), ("8k", 8192), ("32k", 32768), ("128K", 131072), ("200k", 204800), ("1.5k", 1536),
    ("1M", 1048576), ("2m", 2 * 1048576),
])
def test_k_is_1024_tokens(written, tokens):
    assert TOKENS_PER_K == 1024
    assert parse(f"7B with {written} context").request.context_tokens == tokens


def test_k_that_is_not_a_power_of_two_is_noted():
    assert "200k read as 204,800 tokens (1k = 1,024 tokens)" in parse("7B 200k").request.assumed
    assert parse("7B 32k").request.assumed == []


@pytest.mark.parametrize("text, params", [
    ("1,5B", 1.5), ("1.5B", 1.5), ("0,5 Milliarden", 0.5), ("2,7B", 2.7), ("1,6T", 1600), ("1,500B", 1500),
])
def test_german_decimal_comma(text, params):
    assert parse(text).request.params_b == pytest.approx(params)


@pytest.mark.parametrize("text, tokens", [
    ("7B mit 8.192 Token", 8192), ("7B mit 32.768 Token", 32768), ("7B 32,768 tokens", 32768),
    ("7B mit 1.000.000 Token", 1_000_000),
])
def test_thousands_separators(text, tokens):
    assert parse(text).request.context_tokens == tokens


def test_size_precision_context_are_not_confused():
    request = parse("70B 4-bit 32k").request
    assert (request.params_b, request.precision, request.context_tokens) == (70, "int4", 32768)
    request = parse("32k 70B 8bit batch 4 in 48GB").request
    assert (request.params_b, request.precision, request.context_tokens, request.batch, request.memory_budget_gb) \
        == (70, "int8", 32768, 4, 48)


def test_a_number_before_a_unit_is_not_a_card():
    # "a 40 GB" is a budget, not the A40; "4090 tokens" is a context, not the RTX 4090
    request = parse("7B on a 40 GB card").request
    assert (request.card, request.memory_budget_gb) == (None, 40)
    request = parse("7B with 4090 tokens").request
    assert (request.card, request.context_tokens) == (None, 4090)


# -- not a question, never a crash ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "hello", "hi", "Danke!", "what is the weather", "thanks", "🙂", "", " ", "\x00\x01\x02", "ok cool",
    "¯\\_(ツ)_/¯", "https://example.com", "/start", "/help@CardfitBot", "1234", "!!!", "\u202e\u200b",
])
def test_not_a_sizing_question(text):
    result = parse(text)
    assert result.request is None
    assert result.error == NOT_A_QUESTION
    assert result.language in ("en", "de")


def test_language_detection():
    assert parse("Wie viel VRAM brauche ich für 70B?").language == "de"
    assert parse("How much VRAM do I need for 70B?").language == "en"
    assert parse("70B").language == "en"
    assert parse("70B für große Modelle").language == "de"  # an umlaut is a German marker
    assert parse("Hallo").language == "de"


@pytest.mark.parametrize("value", [None, 42, b"70B", ["70B"]])
def test_non_text_input_is_not_a_question(value):
    result = parse(value)  # type: ignore[arg-type]
    assert result.request is None and result.error == NOT_A_QUESTION


def test_errors_name_the_value():
    assert parse("0B").error == "0B is not a model size"
    assert parse("70b context 0").error.startswith("context 0 tokens is out of range")
    assert parse("70b batch 0").error.startswith("batch 0 is out of range")
    assert parse("70b batch 100000").error.startswith("batch 100000 is out of range")
    assert parse("1" * 5000 + "B").error.endswith("B is not a model size")
    assert len(parse("1" * 5000 + "B").error) < 80


# -- number words ----------------------------------------------------------------------------------------------

ENGLISH_NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
GERMAN_NUMBERS = ["eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf"]


@pytest.mark.parametrize("value", range(1, 13))
def test_number_words_as_batch_and_count(value):
    english, german = ENGLISH_NUMBERS[value - 1], GERMAN_NUMBERS[value - 1]
    request = parse(f"13B for {english} concurrent users on {english} H100").request
    assert (request.batch, request.gpu_count, request.card) == (value, value, "h100")
    request = parse(f"13B für {german} Nutzer auf {german} H100").request
    assert (request.batch, request.gpu_count, request.card) == (value, value, "h100")


@pytest.mark.parametrize("word", ["ein", "eine", "einer", "einem", "einen"])
def test_german_one(word):
    assert parse(f"13B auf {word} H100").request.gpu_count == 1
    assert parse(f"13B für {word} Nutzer").request.batch == 1


@pytest.mark.parametrize("text", ["fuenf Nutzer 7B", "zwoelf Nutzer 7B"])
def test_german_number_words_without_umlauts(text):
    assert parse(text).request.batch in (5, 12)


def test_million_parameters_is_a_size_and_million_tokens_a_context():
    assert parse("500 million parameters").request.params_b == pytest.approx(0.5)
    assert parse("7B with 1 million tokens").request.context_tokens == 1_000_000


def test_second_model_is_ignored_not_merged():
    result = parse("Llama 3.1 70B vs Qwen 2.5 72B")
    assert result.matched_model == "llama-3.1-70b"
    assert result.request.params_b is None
    assert result.request.ignored == ["Qwen 2.5 72B"]


def test_a_clear_model_wins_over_an_ambiguous_family():
    result = parse("mixtral or llama 3.1 70b?")
    assert result.matched_model == "llama-3.1-70b"
    assert result.request.ignored == ["mixtral"]


def test_ordinary_words_are_not_models():
    for text in ("I googled it, 7b", "command 7b", "the code for 7b"):
        result = parse(text)
        assert result.matched_model is None, text
        assert result.request.params_b == 7, text


def test_german_article_before_gpu_is_no_count():
    assert parse("Ich brauche eine GPU für 70B").request.gpu_count is None
    assert parse("70B auf einer einzigen GPU").request.gpu_count == 1
    assert parse("70B on one GPU").request.gpu_count == 1
    assert parse("70B on a single GPU").request.gpu_count == 1
