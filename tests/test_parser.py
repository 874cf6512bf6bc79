"""Phrase parser: the corpus of real phrasings (tests/parser_corpus.yaml) plus focused unit tests."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from catalog.loader import DATA_DIR, LoadedCatalog, load_catalog
from catalog.names import normalize_name
from catalog.schema import Card, Catalog
from catalog.validation import validate_catalog
from engine.models.registry import build_registry, default_registry, load_entries
from engine.notes import Note
from engine.parse import (
    ERROR_CODES,
    NOT_A_QUESTION,
    TOKENS_PER_K,
    ParseResult,
    Vocabulary,
    _parse_strict,
    default_vocabulary,
    parse,
)
from engine.parse.lexer import flat, words_of
from engine.sizing.rule import SizeRequest
from tests.conftest import bundled_cards, bundled_region_names

CORPUS_PATH = Path(__file__).resolve().parent / "parser_corpus.yaml"
CORPUS = yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))["cases"]
REQUEST_FIELDS = (
    "model", "params_b", "precision", "kv_precision", "context_tokens", "batch", "workload", "card", "gpu_count",
    "memory_budget_gb", "region", "intent", "billing", "coin", "cheapest", "count_implied", "compare_card",
    "card_vram_gb", "quant", "rope_scaling", "budget_usd", "billing_span",
    "gpu_memory_utilization", "target_tok_s", "speed_asked", "train_tokens", "epochs", "engine", "ignored",
)
EXPECT_KEYS = set(REQUEST_FIELDS) | {"language", "error", "model_note", "notes", "error_code"}
# A case about a model the registry may list later: `expect` is the answer without it (an honest "unknown"),
# `expect_registered` the answer once the registry has the id in `when_registered`.
CASE_KEYS = {"text", "expect", "when_registered", "expect_registered"}


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
        assert set(case) <= CASE_KEYS and set(case["expect"]) <= EXPECT_KEYS, case
        assert ("when_registered" in case) == ("expect_registered" in case), case
        assert set(case.get("expect_registered", {})) <= EXPECT_KEYS, case


@pytest.mark.parametrize("case", CORPUS, ids=_ids(CORPUS))
def test_corpus(case, bundled_vocabulary):
    text, expect = case["text"], case["expect"]
    if "when_registered" in case and bundled_vocabulary.models.registry.get(case["when_registered"]) is not None:
        expect = case["expect_registered"]
    result = _parse_strict(text, bundled_vocabulary)  # no safety net: a crash is a failure here
    assert isinstance(result, ParseResult)
    if "language" in expect:
        assert result.language == expect["language"], result
    if "error" in expect or "error_code" in expect:
        assert result.request is None, result
        assert result.error is not None and expect.get("error", "") in result.error, result.error
        if "error_code" in expect:
            assert result.error.code == expect["error_code"], result.error
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
    if "notes" in expect:  # the codes of notes that must be in `assumed` ("unknown_model_sized")
        codes = [getattr(note, "code", None) for note in request.assumed]
        assert set(expect["notes"]) <= set(codes), request.assumed
    assert result.matched_model == request.model
    # whatever the parser could not use is listed, never silently dropped -- and nothing in this corpus is junk
    assert request.ignored == [], request.ignored


# -- model notes and matching ---------------------------------------------------------------------------------

def test_fuzzy_model_note_names_model_and_user_text(bundled_vocabulary):
    result = parse("llama3.1 70 b instruct, 4bit", bundled_vocabulary)
    assert result.matched_model == "llama-3.1-70b"
    result = parse("lama 3.1 70b", bundled_vocabulary)
    assert result.model_note == "Llama 3.1 70B (assumed from 'lama 3.1 70b')"
    assert result.model_note in result.request.assumed


def test_exact_alias_has_no_note(bundled_vocabulary):
    for text in ("Llama 3.1 70B", "llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", "LLAMA3.1 70B"):
        result = parse(text, bundled_vocabulary)
        assert result.matched_model == "llama-3.1-70b", text
        assert result.model_note is None, text
        assert result.request.assumed == [], text


def test_note_keeps_the_users_spelling(bundled_vocabulary):
    result = parse("Mistrall 7B please", bundled_vocabulary)
    assert result.matched_model == "mistral-7b"
    assert result.model_note == f"{default_registry().get('mistral-7b').name} (assumed from 'Mistrall 7B')"


def test_size_must_agree_with_model(bundled_vocabulary):
    # "Llama 70B" may become any Llama of 70B, never the 8B one
    for text in ("Llama 70B", "llama 70 b", "lama 70b", "Llama-70B-Instruct"):
        result = parse(text, bundled_vocabulary)
        assert result.matched_model is not None, text
        assert default_registry().get(result.matched_model).params_b == pytest.approx(70, rel=0.1), text
    # no Llama 3.1 of 13B: size it as a typical 13B
    assert parse("llama 3.1 13b", bundled_vocabulary).matched_model is None
    assert parse("llama 3.1 13b", bundled_vocabulary).request.params_b == 13


def test_no_version_named_is_the_newest_of_that_size(bundled_vocabulary):
    # "qwen27b" (Qwen2 7B) scores 6.6 points closer to "qwen7b" than "qwen257b" (Qwen2.5 7B): how a name scores
    # says nothing about the generation meant, so the newest of that size in the family is taken
    for text, model_id in (("qwen 7b", "qwen2.5-7b"), ("Qwen 7B", "qwen2.5-7b"), ("qwen 32b", "qwen3-32b"),
                           ("llama 70b", "llama-3.3-70b"), ("llama 8b", "llama-3.1-8b"), ("gemma 27b", "gemma-3-27b")):
        result = parse(text, bundled_vocabulary)
        assert result.matched_model == model_id, text
        assert result.model_note.code == "model_fuzzy", text
    # a version named: the best score decides, never a newer generation
    assert parse("quen 2 7b", bundled_vocabulary).matched_model == "qwen2-7b"
    assert parse("quen 2.5 7b", bundled_vocabulary).matched_model == "qwen2.5-7b"
    # a distinguishing word the text lacks is another model (Qwen2.5-VL 7B, Qwen2.5 Coder 7B), never the newest
    assert parse("qwen 7b", bundled_vocabulary).matched_model not in ("qwen2.5-vl-7b", "qwen2.5-coder-7b")


def test_a_name_word_is_no_typo_of_another_family(bundled_vocabulary):
    # "mistral" is a name word of its own: Magistral Small 24B is another model, not a Mistral of 24B
    for text in ("mistral 24b", "Mistral 24B on a 4090", "mistrall 24b"):
        result = parse(text, bundled_vocabulary)
        assert result.matched_model is None and result.request.params_b == 24, text
    assert parse("magistral 24b", bundled_vocabulary).matched_model == "magistral-small"
    assert parse("Mistrall 7B", bundled_vocabulary).matched_model == "mistral-7b"  # a typo still reads as its word
    assert parse("mixtrall 8x7b", bundled_vocabulary).matched_model == "mixtral-8x7b"


def test_ambiguous_family_asks_for_size(bundled_vocabulary):
    result = parse("llama 3.1", bundled_vocabulary)
    assert result.request is None
    assert "Llama 3.1 8B" in result.error and "Llama 3.1 405B" in result.error
    resolved = parse("llama 3.1 at 405b please", bundled_vocabulary)
    assert resolved.matched_model == "llama-3.1-405b"
    assert resolved.request.params_b is None
    assert resolved.model_note == "Llama 3.1 405B (assumed from 'llama 3.1' and 405B)"


def test_mixtral_style_size_reads_the_registry_model(bundled_vocabulary):
    result = parse("8x7b at 4 bit", bundled_vocabulary)
    assert result.matched_model == "mixtral-8x7b"
    assert "8x7b read as Mixtral 8x7B" in result.request.assumed
    assert default_registry().get("mixtral-8x7b").params_b == pytest.approx(46.7)


def _card(id: str, name: str, aliases: tuple[str, ...] = (), regions: tuple[str, ...] = ()) -> Card:
    """A card with only names and regions that mean anything to the parser."""
    return Card(id=id, name=name, aliases=aliases, regions=regions, vram_gb=24, bandwidth_gbps=1000, fp8=False,
                interconnect="pcie")


def test_injected_registry_and_cards():
    registry = build_registry([
        {"id": "tiny-1b", "name": "Tiny 1B", "params_b": 1.1, "family": "tiny", "aliases": ["tinyllm 1b"]},
        {"id": "tiny-9b", "name": "Tiny 9B", "params_b": 9, "family": "tiny", "aliases": ["tinyllm 9b"]},
    ])
    cards = [_card("zz-9000", "ZZ 9000", ("zz9k",), ("XYZ-2",))]
    vocabulary = Vocabulary.build(registry, cards)
    result = parse("tinyllm 9b on 2x zz9k in xyz-2", vocabulary)
    assert result.matched_model == "tiny-9b"
    assert (result.request.card, result.request.gpu_count, result.request.region) == ("zz9k", 2, "XYZ-2")
    assert parse("tinyllm 9b on a H100", vocabulary).request.card is None
    assert parse("tinylm 9b", vocabulary).model_note == "Tiny 9B (assumed from 'tinylm 9b')"
    assert parse("llama 3.1 70b", vocabulary).matched_model is None


def test_default_cards_cover_both_catalogs():
    ids = {card.id for card in bundled_cards()}
    assert {"h100-sxm", "h100-80gb", "rtx-4090", "mi300x", "a100-80gb"} <= ids


# -- what it assumed and what it ignored -----------------------------------------------------------------------

def test_ignored_lists_meaningful_leftovers_only(bundled_vocabulary):
    result = parse("How much VRAM do I need to run a 70B model with frobnication on the gpu please?",
                   bundled_vocabulary)
    assert result.request.ignored == ["frobnication"]
    result = parse("Wie viel VRAM brauche ich für ein 70B Modell mit Zauberei?", bundled_vocabulary)
    assert result.request.ignored == ["zauberei"]


def test_stop_words_are_not_ignored_entries(bundled_vocabulary):
    result = parse("how much vram do i need for the model to run 7b on a gpu", bundled_vocabulary)
    assert result.request.ignored == []
    result = parse("ich brauche wie viel vram für das modell mit 7b auf der gpu", bundled_vocabulary)
    assert result.request.ignored == []


def test_second_card_and_conflicting_precision_are_reported(bundled_vocabulary):
    result = parse("70B fp16 or int4 on H100 or A100", bundled_vocabulary)
    assert result.request.precision == "fp16"
    assert result.request.card == "h100"
    assert "int4" in result.request.ignored
    assert "a100" in result.request.ignored


def test_a_width_no_format_has_is_an_error_not_a_default(bundled_vocabulary):
    # q5_k_m is a format (test_named_formats_set_quant); a width nobody stores stays an error
    result = parse("70B 5bit", bundled_vocabulary)
    assert result.request is None
    assert result.error == "5bit is not a precision Cardfit sizes: use fp32, bf16, fp16, fp8, int8 or int4"
    assert (result.error.code, result.error.values) == ("parse_precision", {"written": "5bit"})


@pytest.mark.parametrize("text, written", [
    # 3-bit, 2 bit, 4.5bpw, 4.65 bpw, q3_k_s, q2_k, Q6_K, q5_0, iq2_xxs and 1.58 bit are formats now
    ("70B 5bit", "5bit"), ("70B 6 Bit", "6 Bit"), ("70B 4.5 bit", "4.5 bit"), ("70B fp6", "fp6"), ("70B FP6", "FP6"),
    ("70B int2", "int2"), ("70B mxfp6", "mxfp6"), ("70B float64", "float64"), ("70B int 3", "int 3"),
    ("70B w2a16", "w2a16"), ("Llama 3.1 70B in 5-bit", "5-bit"),
])
def test_unsized_precisions_are_errors(text, written, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is None, text
    assert result.error == f"{written} is not a precision Cardfit sizes: use fp32, bf16, fp16, fp8, int8 or int4"
    assert result.error.code == "parse_precision" and result.error.values == {"written": written}


@pytest.mark.parametrize("text, precision", [
    ("70B fp4", "int4"), ("70B MXFP4", "int4"), ("70B nvfp4", "int4"), ("70B fp-4", "int4"), ("70B 4bpw", "int4"),
    ("70B 8 bpw", "int8"), ("70B w8a16", "int8"), ("70B w4a16", "int4"), ("70B 16-bit", "bf16"),
    ("70B 32 bit", "fp32"), ("70B q4_k_m", "int4"), ("70B q8_0", "int8"), ("70B iq4_xs", "int4"),
    ("70B mxfp8", "fp8"), ("70B uint8", "int8"),
])
def test_sized_precisions_still_read(text, precision, bundled_vocabulary):
    assert parse(text, bundled_vocabulary).request.precision == precision


def test_wide_bit_counts_are_no_precision(bundled_vocabulary):
    # "64-bit" is a CPU or an OS, not a weight format: listed as ignored, not an error
    request = parse("70B on a 64-bit machine", bundled_vocabulary).request
    assert (request.precision, request.ignored) == (None, ["64", "bit"])


def test_fp4_words_keep_their_note(bundled_vocabulary):
    assert parse("70B fp-4", bundled_vocabulary).request.assumed == ["FP4 sized as 4-bit (0.5 B per parameter)"]


def test_kv_cache_in_an_unsized_precision_is_ignored_with_a_hint(bundled_vocabulary):
    request = parse("70B int4, kv cache in 3 bit", bundled_vocabulary).request
    assert (request.precision, request.kv_precision) == ("int4", None)
    assert request.ignored == ["KV cache 3 bit (use fp16, bf16, fp8 or int8)"]


def test_kv_int4_is_reported_not_used(bundled_vocabulary):
    result = parse("70B kv cache int4", bundled_vocabulary)
    assert result.request.kv_precision is None
    assert result.request.precision is None
    assert any("KV cache" in entry for entry in result.request.ignored)


def test_unset_values_stay_none(bundled_vocabulary):
    request = parse("70B", bundled_vocabulary).request
    assert request == SizeRequest(params_b=70)


def test_fp4_is_sized_as_4_bit_with_a_note(bundled_vocabulary):
    request = parse("70B in MXFP4", bundled_vocabulary).request
    assert request.precision == "int4"
    assert any("MXFP4" in entry for entry in request.assumed)
    assert request.quant == "mxfp4"  # and sized with its real 4.25 bits


@pytest.mark.parametrize("text, quant, precision", [
    # formats people write: none is refused or sized at a generic 0.5 B
    ("Llama 3.1 70B Q4_K_M", "q4_k_m", "int4"), ("70B q5_k_m", "q5_k_m", None), ("70B Q6_K", "q6_k", None),
    ("70B 2-bit", "q2_k", None), ("70B 3-bit", "q3_k_m", None), ("70B 3 bit", "q3_k_m", None),
    ("70B 1.58 bit", "iq1_s", None), ("70B 1.58-bit", "iq1_s", None), ("70B EXL2 4.65bpw", "exl2:4.65", None),
    ("70B 4.65 bpw", "exl2:4.65", None), ("70B 4.65bpw exl2", "exl2:4.65", None), ("70B exl2", "exl2:4.125", None),
    ("70B iq4_xs", "iq4_xs", "int4"), ("70B q3_k_s", "q3_k_s", None), ("70B q2_k", "q2_k", None),
    ("70B q5_0", "q5_0", None), ("70B iq2_xxs", "iq2_xxs", None), ("70B q8_0", "q8_0", "int8"),
    ("70B awq", "awq", "int4"), ("70B gptq", "gptq", "int4"), ("70B gptq int8", "gptq_int8", "int8"),
    ("70B nf4", "bnb_nf4", "int4"), ("70B bnb 4bit", "bnb_nf4", "int4"), ("70B bnb 8bit", "bnb_int8", "int8"),
    ("70B mxfp4", "mxfp4", "int4"), ("70B nvfp4", "nvfp4", "int4"), ("70B w4a16", "w4a16", "int4"),
    ("llama3.1:70b-instruct-q4_K_M", "q4_k_m", "int4"), ("qwen2.5:72b-instruct-q5_K_M", "q5_k_m", None),
])
def test_named_formats_set_quant(text, quant, precision, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is not None, result.error
    assert (result.request.quant, result.request.precision) == (quant, precision)
    assert result.request.ignored == []


@pytest.mark.parametrize("text, precision", [
    ("70B int4", "int4"), ("70B 4-bit", "int4"), ("70B 4bit", "int4"), ("70B q4", "int4"), ("70B q8", "int8"),
    ("70B 8-bit", "int8"), ("70B fp8", "fp8"), ("70B int8", "int8"), ("70B bf16", "bf16"), ("70B fp32", "fp32"),
    ("70B 4bpw", "int4"), ("70B 8.0 bpw", "int8"), ("70B 16-bit", "bf16"),
])
def test_seed_precisions_stay_precisions(text, precision, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request is not None and (request.precision, request.quant) == (precision, None)


def test_bnb_alone_is_still_the_coin(bundled_vocabulary):
    request = parse("70B, pay in BNB", bundled_vocabulary).request
    assert request is not None and request.coin == "BNB" and request.quant is None


def test_gib_budget_is_converted_and_noted(bundled_vocabulary):
    request = parse("13B in 24 GiB", bundled_vocabulary).request
    assert request.memory_budget_gb == pytest.approx(24 * 1.073741824)
    assert any("GiB" in entry for entry in request.assumed)


# -- numbers ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("written, tokens", [
    ("1k", 1024), ("8k", 8192), ("32k", 32768), ("128K", 131072), ("200k", 204800), ("1.5k", 1536),
    ("1M", 1048576), ("2m", 2 * 1048576),
])
def test_k_is_1024_tokens(written, tokens, bundled_vocabulary):
    assert TOKENS_PER_K == 1024
    assert parse(f"7B with {written} context", bundled_vocabulary).request.context_tokens == tokens


def test_k_that_is_not_a_power_of_two_is_noted(bundled_vocabulary):
    assert "200k read as 204,800 tokens (1k = 1,024 tokens)" in parse("7B 200k", bundled_vocabulary).request.assumed
    assert parse("7B 32k", bundled_vocabulary).request.assumed == []


@pytest.mark.parametrize("text, params", [
    ("1,5B", 1.5), ("1.5B", 1.5), ("0,5 Milliarden", 0.5), ("2,7B", 2.7), ("1,6T", 1600), ("1,500B", 1500),
])
def test_german_decimal_comma(text, params, bundled_vocabulary):
    assert parse(text, bundled_vocabulary).request.params_b == pytest.approx(params)


@pytest.mark.parametrize("text, tokens", [
    ("7B mit 8.192 Token", 8192), ("7B mit 32.768 Token", 32768), ("7B 32,768 tokens", 32768),
    ("7B mit 1.000.000 Token", 1_000_000),
])
def test_thousands_separators(text, tokens, bundled_vocabulary):
    assert parse(text, bundled_vocabulary).request.context_tokens == tokens


def test_size_precision_context_are_not_confused(bundled_vocabulary):
    request = parse("70B 4-bit 32k", bundled_vocabulary).request
    assert (request.params_b, request.precision, request.context_tokens) == (70, "int4", 32768)
    request = parse("32k 70B 8bit batch 4 in 48GB", bundled_vocabulary).request
    assert (request.params_b, request.precision, request.context_tokens, request.batch, request.memory_budget_gb) \
        == (70, "int8", 32768, 4, 48)


def test_a_number_before_a_unit_is_not_a_card(bundled_vocabulary):
    # "a 40 GB" is a budget, not the A40; "4090 tokens" is a context, not the RTX 4090
    request = parse("7B on a 40 GB card", bundled_vocabulary).request
    assert (request.card, request.memory_budget_gb) == (None, 40)
    request = parse("7B with 4090 tokens", bundled_vocabulary).request
    assert (request.card, request.context_tokens) == (None, 4090)


@pytest.mark.parametrize(("text", "params"), [
    ("0.124b", 0.124), ("0,124B", 0.124), ("0.124B in bf16", 0.124), ("a 0.5b model", 0.5), ("0,360B", 0.36),
    ("1.024b", 1024), ("1.5B", 1.5), ("0.9b", 0.9),
])
def test_a_leading_zero_group_is_never_thousands(text, params, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is not None and result.request.params_b == pytest.approx(params)


@pytest.mark.parametrize("text", ["8.192 Token für 7B", "32.768 tokens 7b", "1.000.000 Token 7b"])
def test_thousands_groups_stay(text, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is not None and result.request.context_tokens in (8192, 32768, 1_000_000)


# -- not a question, never a crash ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "hello", "hi", "Danke!", "what is the weather", "thanks", "🙂", "", " ", "\x00\x01\x02", "ok cool",
    "¯\\_(ツ)_/¯", "https://example.com", "/start", "/help@CardfitBot", "1234", "!!!", "\u202e\u200b",
])
def test_not_a_sizing_question(text, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is None
    assert result.error == NOT_A_QUESTION
    assert result.language in ("en", "de")


def test_language_detection(bundled_vocabulary):
    assert parse("Wie viel VRAM brauche ich für 70B?", bundled_vocabulary).language == "de"
    assert parse("How much VRAM do I need for 70B?", bundled_vocabulary).language == "en"
    assert parse("70B", bundled_vocabulary).language == "en"
    assert parse("70B für große Modelle", bundled_vocabulary).language == "de"  # an umlaut is a German marker
    assert parse("Hallo", bundled_vocabulary).language == "de"


@pytest.mark.parametrize("value", [None, 42, b"70B", ["70B"]])
def test_non_text_input_is_not_a_question(value, bundled_vocabulary):
    result = parse(value, bundled_vocabulary)  # type: ignore[arg-type]
    assert result.request is None and result.error == NOT_A_QUESTION


def test_errors_name_the_value(bundled_vocabulary):
    assert parse("0B", bundled_vocabulary).error == "0B is not a model size"
    assert parse("70b context 0", bundled_vocabulary).error == "context 0 is out of range (1 to 16,777,216 tokens)"
    assert parse("70b batch 0", bundled_vocabulary).error.startswith("batch 0 is out of range")
    assert parse("70b batch 100000", bundled_vocabulary).error.startswith("batch 100000 is out of range")
    assert parse("1" * 5000 + "B", bundled_vocabulary).error.endswith("B is not a model size")
    assert len(parse("1" * 5000 + "B", bundled_vocabulary).error) < 80


# -- number words ----------------------------------------------------------------------------------------------

ENGLISH_NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
GERMAN_NUMBERS = ["eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf"]


@pytest.mark.parametrize("value", range(1, 13))
def test_number_words_as_batch_and_count(value, bundled_vocabulary):
    english, german = ENGLISH_NUMBERS[value - 1], GERMAN_NUMBERS[value - 1]
    request = parse(f"13B for {english} concurrent users on {english} H100", bundled_vocabulary).request
    assert (request.batch, request.gpu_count, request.card) == (value, value, "h100")
    request = parse(f"13B für {german} Nutzer auf {german} H100", bundled_vocabulary).request
    assert (request.batch, request.gpu_count, request.card) == (value, value, "h100")


@pytest.mark.parametrize("word", ["ein", "eine", "einer", "einem", "einen"])
def test_german_one(word, bundled_vocabulary):
    assert parse(f"13B auf {word} H100", bundled_vocabulary).request.gpu_count == 1
    assert parse(f"13B für {word} Nutzer", bundled_vocabulary).request.batch == 1


@pytest.mark.parametrize("text", ["fuenf Nutzer 7B", "zwoelf Nutzer 7B"])
def test_german_number_words_without_umlauts(text, bundled_vocabulary):
    assert parse(text, bundled_vocabulary).request.batch in (5, 12)


def test_million_parameters_is_a_size_and_million_tokens_a_context(bundled_vocabulary):
    assert parse("500 million parameters", bundled_vocabulary).request.params_b == pytest.approx(0.5)
    assert parse("7B with 1 million tokens", bundled_vocabulary).request.context_tokens == 1_000_000


def test_second_model_is_ignored_not_merged(bundled_vocabulary):
    result = parse("Llama 3.1 70B vs Qwen 2.5 72B", bundled_vocabulary)
    assert result.matched_model == "llama-3.1-70b"
    assert result.request.params_b is None
    assert result.request.ignored == ["Qwen 2.5 72B"]


def test_a_clear_model_wins_over_an_ambiguous_family(bundled_vocabulary):
    result = parse("mixtral or llama 3.1 70b?", bundled_vocabulary)
    assert result.matched_model == "llama-3.1-70b"
    assert result.request.ignored == ["mixtral"]


def test_ordinary_words_are_not_models(bundled_vocabulary):
    for text in ("I googled it, 7b", "command 7b", "the code for 7b"):
        result = parse(text, bundled_vocabulary)
        assert result.matched_model is None, text
        assert result.request.params_b == 7, text


def test_german_article_before_gpu_is_no_count(bundled_vocabulary):
    assert parse("Ich brauche eine GPU für 70B", bundled_vocabulary).request.gpu_count is None
    assert parse("70B auf einer einzigen GPU", bundled_vocabulary).request.gpu_count == 1
    assert parse("70B on one GPU", bundled_vocabulary).request.gpu_count == 1
    assert parse("70B on a single GPU", bundled_vocabulary).request.gpu_count == 1


# -- minus signs -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, error", [
    ("-7B", "-7B is not a model size"),
    ("-0.5B in bf16", "-0.5B is not a model size"),
    ("size -70 billion", "-70B is not a model size"),
    ("\u22127B", "-7B is not a model size"),  # U+2212 MINUS SIGN
    ("-8x7b", "-8x7b is not a model size"),
    ("-8 x 7b", "-8 x 7b is not a model size"),
    ("70B batch -4", "batch -4 is out of range (1 to 4,096)"),
    ("70B bs=-4", "batch -4 is out of range (1 to 4,096)"),
    ("70B for -2 users", "batch -2 is out of range (1 to 4,096)"),
    ("70B with -32k context", "context -32k is out of range (1 to 16,777,216 tokens)"),
    ("70B context -32768", "context -32768 is out of range (1 to 16,777,216 tokens)"),
    ("70B with -1M context", "context -1M is out of range (1 to 16,777,216 tokens)"),
    ("70B with -32 000 tokens", "context -32 000 is out of range (1 to 16,777,216 tokens)"),
    ("70B on -2 H100", "GPU count -2 is out of range (1 to 64)"),
    ("70B on -4 GPUs", "GPU count -4 is out of range (1 to 64)"),
    ("70B in -24GB", "memory budget -24GB is out of range"),
])
def test_negative_numbers_are_errors(text, error, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is None, text
    assert result.error == error


@pytest.mark.parametrize("text, fields", [
    ("llama-3.1-70b", {"model": "llama-3.1-70b"}),
    ("gpt-oss-20b", {"model": "gpt-oss-20b"}),
    ("qwen3-235b-a22b", {"model": "qwen3-235b-a22b"}),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", {"model": "qwen2.5-72b", "precision": "int4"}),
    ("70B int-4", {"params_b": 70, "precision": "int4"}),
    ("70B - 4 bit", {"params_b": 70, "precision": "int4"}),
    ("70B -- 32k context", {"params_b": 70, "context_tokens": 32768}),
    ("70B, 4-bit, 2-4 users", {"params_b": 70, "precision": "int4", "batch": 4}),
    ("70B in DFW-1", {"params_b": 70, "region": "DFW-1"}),
    ("70b --context 32768 --batch 4", {"params_b": 70, "context_tokens": 32768, "batch": 4}),
])
def test_hyphens_inside_words_and_dashes_are_no_minus_signs(text, fields, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request is not None, text
    for field, value in fields.items():
        assert getattr(request, field) == value, (text, field)


def test_a_range_uses_the_first_value_and_lists_the_second(bundled_vocabulary):
    request = parse("7B-13B", bundled_vocabulary).request
    assert (request.params_b, request.ignored) == (7, ["13B"])
    request = parse("70B 8k-32k context", bundled_vocabulary).request
    assert (request.context_tokens, request.ignored) == (8192, ["32k"])


# -- exponent forms ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, error", [
    ("10^20 B", "10^20B is not a model size"),
    ("10^20B", "10^20B is not a model size"),
    ("10 ^ 20 B", "10^20B is not a model size"),
    ("10**20 B", "10^20B is not a model size"),
    ("1e20B", "1e20B is not a model size"),
    ("1E20 B", "1e20B is not a model size"),
    ("1e+20 billion", "1e20B is not a model size"),
    ("2.5e6B", "2.5e6B is not a model size"),
    ("10^999 B", "10^999B is not a model size"),
    ("0^-1 B", "0^-1B is not a model size"),
    ("70B with 1e9 tokens", "context 1e9 (1,000,000,000 tokens) is out of range: at most 16,777,216 tokens"),
    ("70B context 1e400", "context 1e400 is out of range (1 to 16,777,216 tokens)"),
    ("70B batch 1e6", "batch 1e6 is out of range (1 to 4,096)"),
    ("70B batch 10^9", "batch 10^9 is out of range (1 to 4,096)"),
])
def test_exponent_forms_are_read_as_numbers(text, error, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is None, text
    assert result.error == error


def test_exponent_forms_in_range_are_values(bundled_vocabulary):
    assert parse("7B with 1e4 tokens", bundled_vocabulary).request.context_tokens == 10_000
    assert parse("7B context 2^15", bundled_vocabulary).request.context_tokens == 32_768
    assert parse("7e1B", bundled_vocabulary).request.params_b == 70
    assert parse("7B batch 2^3", bundled_vocabulary).request.batch == 8


# -- a space between thousands -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, tokens", [
    ("70B, 4 bit, 32 000 tokens", 32_000), ("7B with 1 000 000 tokens", 1_000_000), ("7B mit 32 000 Token", 32_000),
    ("7B context 32 768", 32_768), ("7B, Kontext 128 000", 128_000), ("7B 4 096 tokens", 4_096),
    ("7B with 32\u202f000 tokens", 32_000), ("7B with 32\u00a0768 tokens", 32_768),
])
def test_space_as_thousands_separator(text, tokens, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request.context_tokens == tokens, text
    assert request.ignored == [], text


@pytest.mark.parametrize("text, fields", [
    ("70B batch 4 32k", {"batch": 4, "context_tokens": 32768}),
    ("70B batch 4 512 tokens", {"batch": 4, "context_tokens": 512}),
    ("70B on 2 x H100", {"card": "h100", "gpu_count": 2}),
    ("8 x 7b", {"model": "mixtral-8x7b"}),
    ("13B 2 x 24 GB", {"memory_budget_gb": 48}),
    ("70B for 8 users 128 000 tokens", {"batch": 8, "context_tokens": 128_000}),
    ("70B  32 000 tokens", {"context_tokens": 32_000}),
])
def test_space_grouping_leaves_other_numbers_alone(text, fields, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    for field, value in fields.items():
        assert getattr(request, field) == value, (text, field, request)


@pytest.mark.parametrize("text", ["7B 32 00 tokens", "7B 32  000 tokens", "7B 32 0000 tokens", "7B 32,000 00 tokens"])
def test_space_grouping_needs_one_space_and_groups_of_three_digits(text, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.request is None or result.request.context_tokens not in (3200, 32000, 320000, 3200000), text


# -- one value per field -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, field, value, ignored", [
    ("70B 8k or 32k context", "context_tokens", 8192, ["32k"]),
    ("70B with 8192 tokens, maybe 32768 tokens", "context_tokens", 8192, ["32768"]),
    ("70B mit 8k oder 32k Kontext", "context_tokens", 8192, ["32k"]),
    ("70B for 4 users, batch 8", "batch", 4, ["batch 8"]),
    ("70B für vier Nutzer oder acht Nutzer", "batch", 4, ["batch acht"]),
    ("70B in 24GB or 48GB", "memory_budget_gb", 24, ["48GB"]),
    ("70B on 4 GPUs or 8 GPUs", "gpu_count", 4, ["8 GPUs"]),
    ("70B in Dallas or Ashburn", "region", "DFW-1", ["Ashburn"]),
    ("70B in DFW-1 or IAD-1", "region", "DFW-1", ["IAD-1"]),
    ("70B or 13B", "params_b", 70, ["13B"]),
    ("70B fp16 or int4", "precision", "fp16", ["int4"]),
    ("70B or 16x3b", "params_b", 70, ["16x3b"]),
])
def test_a_second_value_for_a_field_is_listed_as_ignored(text, field, value, ignored, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert getattr(request, field) == value, (text, request)
    assert request.ignored == ignored, text


def test_the_same_value_twice_is_not_ignored(bundled_vocabulary):
    request = parse("70B 32k context, 32k tokens, in Dallas (DFW-1)", bundled_vocabulary).request
    assert (request.context_tokens, request.region, request.ignored) == (32768, "DFW-1", [])


# -- context limit messages ------------------------------------------------------------------------------------

def test_context_limit_says_what_was_written_and_the_limit(bundled_vocabulary):
    error = parse("70B 20M context", bundled_vocabulary).error
    assert error == "context 20M (20,971,520 tokens) is out of range: at most 16,777,216 tokens"
    assert (error.code, error.values) == (
        "parse_context_too_long", {"written": "20M", "tokens": 20_971_520, "max_tokens": 16_777_216}
    )
    assert parse("70B 10M context", bundled_vocabulary).request.context_tokens == 10_485_760  # Llama 4 Scout's window
    assert parse("70B with 16,777,216 tokens", bundled_vocabulary).request.context_tokens == 16_777_216
    assert parse("70B 9M context", bundled_vocabulary).request.context_tokens == 9 * 1024 * 1024


# -- number words as sizes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, params", [
    ("seven billion parameter model", 7), ("sieben Milliarden Parameter", 7), ("a seventy billion model", 70),
    ("seventy-two billion", 72), ("seventy two billion", 72), ("one hundred billion", 100),
    ("a hundred billion parameters", 100), ("four hundred and five billion", 405), ("four hundred five billion", 405),
    ("twelve billion", 12), ("thirteen billion", 13), ("ninety nine billion", 99), ("two trillion", 2000),
    ("a billion parameters", 1), ("one billion", 1), ("five hundred million parameters", 0.5),
    ("seven B model", 7), ("sieben Mrd. Parameter", 7), ("siebzig Milliarden", 70), ("zweiundsiebzig Milliarden", 72),
    ("einundzwanzig Milliarden", 21), ("vierhundertfünf Milliarden", 405), ("vierhundertfuenf Milliarden", 405),
    ("hundert Milliarden", 100), ("einhundertzwanzig Milliarden", 120), ("eine Milliarde Parameter", 1),
    ("dreißig Milliarden", 30), ("dreissig Milliarden", 30), ("zwölf Milliarden", 12),
])
def test_number_words_as_sizes(text, params, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request is not None, text
    assert request.params_b == pytest.approx(params), text
    assert request.ignored == [], (text, request.ignored)


def test_articles_are_no_sizes(bundled_vocabulary):
    # "a 70B", "ein 7B Modell", "auf einer B200": the article is no number
    assert parse("a 70B model", bundled_vocabulary).request.params_b == 70
    assert parse("ein 7B Modell", bundled_vocabulary).request.params_b == 7
    assert parse("70B auf einer B200", bundled_vocabulary).request.gpu_count == 1
    assert parse("a b c", bundled_vocabulary).error == NOT_A_QUESTION


@pytest.mark.parametrize("text, batch", [
    ("7B for twenty users", 20), ("7B for twenty four users", 24), ("7B for a hundred users", 100),
    ("7B für zweiundzwanzig Nutzer", 22), ("7B für hundert Nutzer", 100), ("7B batch twelve", 12),
])
def test_number_words_as_counts(text, batch, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request.batch == batch, text
    assert request.ignored == [], text


# -- region names ------------------------------------------------------------------------------------------------

def test_default_regions_come_from_the_catalogs():
    assert {"Dallas": "DFW-1", "Ashburn": "IAD-1", "Hillsboro": "PDX-1"}.items() <= bundled_region_names().items()


@pytest.mark.parametrize("text, region", [
    ("70B in Dallas", "DFW-1"), ("Ashburn, 70B", "IAD-1"), ("70B in hillsboro", "PDX-1"),
    ("70B auf einer H100 in Dallas", "DFW-1"), ("70B region Ashburn", "IAD-1"),
])
def test_region_names(text, region, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert request.region == region, text
    assert request.ignored == [], text


def test_region_names_only_where_the_cards_are_offered():
    hub = load_catalog("gpurenthub").catalog
    assert parse("70B in Dallas", Vocabulary.of_catalog(hub)).request.region == "DFW-1"

    ashburn_only = Vocabulary.build(default_registry(), [_card("zz-9000", "ZZ 9000", regions=("IAD-1",))],
                                    bundled_region_names())
    assert parse("70B in Ashburn", ashburn_only).request.region == "IAD-1"
    request = parse("70B in Dallas", ashburn_only).request  # not offered there: Dallas means nothing
    assert (request.region, request.ignored) == (None, ["dallas"])
    no_regions = Vocabulary.build(default_registry(), [_card("zz-9000", "ZZ 9000")])
    request = parse("70B in Dallas", no_regions).request  # a catalog without regions
    assert (request.region, request.ignored) == (None, ["dallas"])


def test_region_names_can_be_given():
    regions = {"Frankfurt am Main": "FRA-1", "Frankfurt": "fra-1", "Nürnberg": "NUE-1"}
    vocabulary = Vocabulary.build(default_registry(), regions=regions)
    assert parse("70B in Frankfurt am Main", vocabulary).request.region == "FRA-1"
    assert parse("70B in Frankfurt", vocabulary).request.region == "FRA-1"
    assert parse("70B in Nürnberg", vocabulary).request.region == "NUE-1"
    assert parse("70B in Dallas", vocabulary).request.region is None


# -- errors are Notes with a code and values ------------------------------------------------------------------

@pytest.mark.parametrize("text, code, values", [
    ("-7B", "parse_bad_size", {"written": "-7B"}),
    ("0 Milliarden Parameter", "parse_bad_size", {"written": "0B"}),
    ("0x7b", "parse_bad_size", {"written": "0x7b"}),
    ("llama 3.1", "parse_ambiguous",
     {"span": "llama 3.1", "models": ["Llama 3.1 8B", "Llama 3.1 70B", "Llama 3.1 405B"]}),
    ("70B with 0 context", "parse_context_range", {"written": "0", "max_tokens": 16_777_216}),
    ("70B 20M", "parse_context_too_long", {"written": "20M", "tokens": 20_971_520, "max_tokens": 16_777_216}),
    ("70b batch 100000", "parse_batch_range", {"written": "100000", "max_batch": 4096}),
    ("70B für 0 Nutzer", "parse_batch_range", {"written": "0", "max_batch": 4096}),
    ("70B on 0x H100", "parse_gpu_count_range", {"written": "0", "max_count": 64}),
    ("70B on 100 GPUs", "parse_gpu_count_range", {"written": "100", "max_count": 64}),
    ("70B on 1.5 GPUs", "parse_gpu_count_whole", {"written": "1.5"}),
    ("70B in 0 GB", "parse_budget_range", {"written": "0 GB"}),
    ("70B 5-bit", "parse_precision", {"written": "5-bit"}),
])
def test_errors_are_notes_with_codes_and_values(text, code, values, bundled_vocabulary):
    error = parse(text, bundled_vocabulary).error
    assert isinstance(error, Note), text
    assert error.code == code and error.code in ERROR_CODES, text
    assert error.values == values, text


def test_ambiguous_with_many_candidates_says_how_many_more():
    registry = build_registry([
        {"id": f"tiny-{size}b", "name": f"Tiny {size}B", "params_b": size, "family": "tiny"}
        for size in (1, 2, 3, 4, 5, 6, 7)
    ])
    error = parse("tiny", Vocabulary.build(registry)).error
    assert error == "'tiny' could be Tiny 1B, Tiny 2B, Tiny 3B, Tiny 4B, Tiny 5B and 2 more: add the size"
    assert (error.code, error.values) == (
        "parse_ambiguous_more", {"span": "tiny", "models": [f"Tiny {size}B" for size in (1, 2, 3, 4, 5)], "more": 2}
    )


def test_every_error_code_is_reachable_and_listed(bundled_vocabulary):
    texts = ["-7B", "llama 3.1", "70b context 0", "70B 20M", "70b batch 0", "70B on 0x H100", "70B on 1.5 GPUs",
             "70B in 0 GB", "70B 5-bit", "deepseek v2.5", "Baichuan 2", "Llama 5 17B-16E", "0.0000001B",
             "70B on an A100 2000000GB"]
    codes = {parse(text, bundled_vocabulary).error.code for text in texts}
    codes.add("parse_ambiguous_more")  # test_ambiguous_with_many_candidates_says_how_many_more
    assert codes == ERROR_CODES


def test_a_card_memory_no_number_can_hold_is_refused_not_carried_as_infinity(bundled_vocabulary):
    huge = "807" + "0" * 38
    for text in (f"an {huge}GB A100 for 70b", f"70b on an A100 {huge} GB", "70B on an A100 2000000GB"):
        result = parse(text, bundled_vocabulary)
        assert result.request is None and result.error.code == "parse_card_memory_range", text
        assert "out of range (at most 1,000,000 GB)" in str(result.error) and len(str(result.error)) < 80
    assert parse("an 80GB A100 for 70b", bundled_vocabulary).request.card_vram_gb == 80


def test_not_a_question_stays_a_plain_string(bundled_vocabulary):
    for text in ("hello", "", "32k context"):
        error = parse(text, bundled_vocabulary).error
        assert error == NOT_A_QUESTION and type(error) is str


# -- one vocabulary per catalog version --------------------------------------------------------------------------

def _frankfurt_catalog() -> Catalog:
    """GPU Rent Hub's cards, offered in Frankfurt only: a catalog none of the bundled ones is."""
    data = yaml.safe_load((DATA_DIR / "gpurenthub.yaml").read_text(encoding="utf-8"))
    data["id"] = "frankfurt-gpus"
    data["regions"] = [{"id": "FRA-1", "name": "Frankfurt"}]
    for card in data["cards"]:
        card["regions"] = ["FRA-1"]
        card.pop("stock", None)
    return validate_catalog(data)


def test_a_catalogs_own_region_names_are_recognised_and_no_other_catalogs():
    frankfurt = Vocabulary.of_catalog(_frankfurt_catalog())
    assert parse("70B in Frankfurt", frankfurt).request.region == "FRA-1"
    assert parse("70B in FRA-1", frankfurt).request.region == "FRA-1"
    request = parse("70B in Dallas", frankfurt).request  # GPU Rent Hub's region, not this catalog's
    assert (request.region, request.ignored) == (None, ["dallas"])
    hub = Vocabulary.of_catalog(load_catalog("gpurenthub").catalog)
    assert parse("70B in Dallas", hub).request.region == "DFW-1"
    request = parse("70B in Frankfurt", hub).request
    assert (request.region, request.ignored) == (None, ["frankfurt"])


def test_a_catalogs_own_cards_are_recognised_and_no_other_catalogs():
    hub = Vocabulary.of_catalog(load_catalog("gpurenthub").catalog)
    crypto = Vocabulary.of_catalog(load_catalog("gpuwithcrypto").catalog)
    assert (parse("70B on 8x MI300X", hub).request.card, parse("70B on 8x MI300X", hub).request.gpu_count) == (
        "mi300x", 8)
    request = parse("70B on 8x MI300X", crypto).request  # GPUwithCrypto rents no MI300X
    assert (request.card, request.gpu_count, request.ignored) == (None, None, ["8x", "mi300x"])


def test_parse_without_a_vocabulary_knows_the_registry_but_no_cards_or_regions():
    result = parse("Llama 3.1 70B on 2x H100 in Dallas")
    assert result.matched_model == "llama-3.1-70b"
    assert (result.request.card, result.request.gpu_count, result.request.region) == (None, None, None)
    assert result.request.ignored == ["2x", "h100", "dallas"]
    assert default_vocabulary() is default_vocabulary()  # built once
    assert default_vocabulary().card_keys == frozenset() and dict(default_vocabulary().region_names) == {}


def test_the_catalog_holder_swaps_the_vocabulary_with_the_catalog():
    from bot.features.core import CatalogHolder

    holder = CatalogHolder(load_catalog("gpurenthub"))
    first = holder.vocabulary
    assert parse("70B in Dallas", holder.vocabulary).request.region == "DFW-1"
    custom = _frankfurt_catalog()
    holder.loaded = LoadedCatalog(custom, DATA_DIR / "frankfurt.yaml", "0" * 64)
    assert holder.catalog is custom and holder.vocabulary is not first
    assert parse("70B in Frankfurt", holder.vocabulary).request.region == "FRA-1"
    assert parse("70B in Dallas", holder.vocabulary).request.region is None


def test_the_engine_never_loads_a_catalog():
    """engine/ imports catalog.schema types (and catalog.names) only, anywhere in a module, a function included:
    the catalog in service comes from the caller."""
    engine_dir = Path(__file__).resolve().parents[1] / "engine"
    for path in sorted(engine_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert name not in ("catalog", "catalog.loader") and not name.startswith(("catalog.loader", "bot")), (
                    path, name)


# -- one normalize_name ------------------------------------------------------------------------------------------

def test_one_normalize_name_for_models_cards_and_the_lexer():
    registry = default_registry()
    for model in registry.models:
        for raw in (model.id, model.name, *model.aliases):
            assert registry.get(raw) is model, raw
            for token in words_of(raw):
                assert flat(token) == normalize_name(token), token  # the parser's view of a token is the same
    for name in ("gpurenthub", "gpuwithcrypto"):
        catalog = load_catalog(name).catalog
        for card in catalog.cards:
            for raw in (card.id, card.name, *card.aliases):
                found = catalog.card(raw)
                assert found is not None and normalize_name(raw) in {
                    normalize_name(key) for key in (found.id, found.name, *found.aliases)}, raw
    assert normalize_name("Llama-3.1 70B") == normalize_name("llama3.1:70b") == "llama3170b"
    assert normalize_name("H100 (SXM)") == "h100sxm" and normalize_name("command-r+") == "commandr+"


# -- the right model or an honest answer --------------------------------------------------------------------

# Cases tagged `when_registered` were written before the registry listed their model: `expect` is the honest
# answer without the entry ("unknown model, add the size", a generic size), `expect_registered` the answer with it.
# The bundled registry lists them all now (test_corpus checks `expect_registered`). The registry those cases were
# written against (the 54 ids of engine/models/data.yaml at commit 6c1199f, today's entries for them) keeps the
# honest answers checked: listing a model was the change, not a rule.
_REGISTERED = [case for case in CORPUS if "when_registered" in case]
_SMALL_REGISTRY_IDS = frozenset("""
    llama-2-7b llama-2-13b llama-2-70b llama-3-8b llama-3.1-8b llama-3-70b llama-3.1-70b llama-3.1-405b llama-3.2-1b
    llama-3.2-3b llama-3.3-70b codellama-34b mistral-7b mistral-7b-v0.2 mistral-7b-v0.3 mistral-nemo-12b
    mistral-small-24b mistral-large-2 mixtral-8x7b mixtral-8x22b qwen2.5-0.5b qwen2.5-7b qwen2.5-14b qwen2.5-32b
    qwen2.5-72b qwen2.5-coder-32b qwen3-4b qwen3-8b qwen3-14b qwen3-32b qwen3-30b-a3b qwen3-235b-a22b gemma-2-2b
    gemma-2-9b gemma-2-27b gemma-3-1b gemma-3-4b gemma-3-12b gemma-3-27b phi-3-mini-4k phi-3-mini-128k phi-4
    deepseek-v3 deepseek-r1 deepseek-v4-flash deepseek-v4-pro deepseek-r1-distill-llama-70b gpt-oss-120b gpt-oss-20b
    falcon-40b falcon-180b yi-34b command-r-plus flux.1-dev
""".split())


@pytest.fixture(scope="module")
def small_vocabulary() -> Vocabulary:
    """The bundled entries of the 54 models the registry had when the `when_registered` cases were written."""
    entries = [entry for entry in load_entries() if entry["id"] in _SMALL_REGISTRY_IDS]
    assert len(entries) == len(_SMALL_REGISTRY_IDS)
    return Vocabulary.build(build_registry(entries), bundled_cards(), bundled_region_names())


def test_every_registered_case_names_a_registry_entry():
    assert len(_REGISTERED) >= 30
    ids = {model.id for model in default_registry().models}
    assert {case["when_registered"] for case in _REGISTERED} <= ids - _SMALL_REGISTRY_IDS


@pytest.mark.parametrize("case", _REGISTERED, ids=_ids(_REGISTERED))
def test_corpus_before_the_registry_lists_the_model(case, small_vocabulary):
    """Without its entry the phrasing gets the honest answer, never another model."""
    expect = case["expect"]
    result = _parse_strict(case["text"], small_vocabulary)
    if "error" in expect or "error_code" in expect:
        assert result.request is None and result.error is not None, result
        assert expect.get("error", "") in result.error, result.error
        assert result.error.code == expect.get("error_code", result.error.code), result.error
        return
    assert result.request is not None, result.error
    for field in REQUEST_FIELDS:
        if field in expect:
            assert getattr(result.request, field) == expect[field], (field, result.request)
    if "notes" in expect:
        codes = [getattr(note, "code", None) for note in result.request.assumed]
        assert set(expect["notes"]) <= set(codes), result.request.assumed


def test_a_name_is_never_a_bigger_or_other_model(bundled_vocabulary, small_vocabulary):
    """A size or a distinguishing word in the name wins over a fuzzy match. Without
    the entry (the 54-model registry) the name is no other model; with it, it is that entry."""
    small = small_vocabulary.models.registry
    for text, size, model_id in (
        ("deepseek r1 distill qwen 7b", 7, "deepseek-r1-distill-qwen-7b"),
        ("DeepSeek-R1-Distill-Qwen-32B q4", 32, "deepseek-r1-distill-qwen-32b"),
        ("Qwen3-Coder-30B-A3B-Instruct", 30, "qwen3-coder-30b-a3b"), ("qwen2.5 vl 7b", 7, "qwen2.5-vl-7b"),
        ("llama guard 3 8b", 8, "llama-guard-3-8b"),
    ):
        result = parse(text, small_vocabulary)
        model = small.get(result.matched_model) if result.matched_model else None
        assert model is None or model.params_b == pytest.approx(size, rel=0.1), text
        assert result.request.params_b == size or model is not None, text
        assert parse(text, bundled_vocabulary).matched_model == model_id, text
    for text, model_id in (("whisper large v3", "whisper-large-v3"), ("Phi-3-medium-128k", "phi-3-medium-128k"),
                           ("Llama 4 Scout 17B-16E int4", "llama-4-scout"), ("Kimi K2", "kimi-k2-instruct"),
                           ("GLM-4.5-Air", "glm-4.5-air")):
        result = parse(text, small_vocabulary)
        assert result.matched_model is None and result.request is None, text
        assert result.error.code in ("parse_unknown_model", "parse_unknown_model_plain", "parse_moe_total"), text
        assert parse(text, bundled_vocabulary).matched_model == model_id, text


def test_unknown_model_notes_carry_the_typed_name(bundled_vocabulary):
    result = parse("Baichuan 2 13B 128k", bundled_vocabulary)
    assert result.matched_model is None and result.request.params_b == 13
    note = next(note for note in result.request.assumed if note.code == "unknown_model_sized")
    assert note == "I don't know Baichuan 2 13B; sized as a generic 13B model"
    assert note.values == {"name": "Baichuan 2 13B", "params": 13.0}
    error = parse("deepseek v2.5", bundled_vocabulary).error  # DeepSeek-V2.5 (236B) is not in the registry
    assert error.code == "parse_unknown_model" and error.values["name"] == "deepseek v2.5"
    assert 1 <= len(error.values["models"]) <= 3 and "DeepSeek-V2-Lite" in error.values["models"]
    assert all(name.startswith("DeepSeek") for name in error.values["models"])
    moe = parse("Llama 5 17B-16E int4", bundled_vocabulary).error
    assert moe.values == {"name": "Llama 5 17B-16E", "written": "17B-16E", "active": 17.0, "experts": 16}
    assert "17B-16E is a mixture of experts" in moe


def test_did_you_mean_stays_in_the_family_and_its_variant_words(bundled_vocabulary, small_vocabulary):
    models = bundled_vocabulary.models
    assert small_vocabulary.models.similar("r1 distill") == ["DeepSeek-R1-Distill-Llama-70B"]
    distills = models.similar("r1 distill")
    assert len(distills) == 3 and all(name.startswith("DeepSeek-R1-Distill-") for name in distills)
    assert models.similar("llama 3.4") and all("llama" in name.lower() for name in models.similar("llama 3.4"))
    assert models.similar("Baichuan 2") == []  # a family the registry does not list: nothing of it to suggest
    assert small_vocabulary.models.similar("Kimi K2") == []
    assert models.similar("phi 3 large") == []  # no Phi "large" in the registry
    assert small_vocabulary.models.similar("phi 3 small") == []


def test_same_shape_release_is_sized_as_its_shape_with_a_note(bundled_vocabulary):
    # A registry that lists DeepSeek-V3 but not V3.1, with V3.1 as a same-shape release of it (as the 54-model
    # registry did: V3.1's config.json has V3's architecture; the bundled registry lists V3.1 as its own entry).
    entries = [entry for entry in load_entries() if entry["id"] in _SMALL_REGISTRY_IDS]
    for entry in entries:
        if entry["id"] == "deepseek-v3":
            entry["variants"] = ["DeepSeek-V3.1", "DeepSeek-V3.1-Terminus"]
    registry = build_registry(entries)
    vocabulary = Vocabulary.build(registry, bundled_cards(), bundled_region_names())
    result = parse("DeepSeek-V3.1 fp8", vocabulary)
    assert result.matched_model == "deepseek-v3"
    note = result.request.assumed[0]
    assert note.code == "model_variant" and note.values["variant"] == "DeepSeek-V3.1"
    assert note.values["model"] == "DeepSeek-V3"
    assert registry.get("deepseek-v3.1") is None  # a variant is not an alias of the entry
    assert parse("DeepSeek V3.1 Terminus 4-bit", vocabulary).model_note == (
        "DeepSeek-V3.1-Terminus sized as DeepSeek-V3 (same architecture)")
    assert parse("DeepSeek-V3.1 fp8", bundled_vocabulary).matched_model == "deepseek-v3.1"  # its own entry


def test_variant_may_not_be_another_models_name():
    entries = [{"id": "a-7b", "name": "A 7B", "params_b": 7, "layers": 1, "attention_heads": 1, "kv_heads": 1,
                "head_dim": 1, "variants": ["B 7B"]},
               {"id": "b-7b", "name": "B 7B", "params_b": 7, "layers": 1, "attention_heads": 1, "kv_heads": 1,
                "head_dim": 1}]
    with pytest.raises(ValueError, match="variant"):
        build_registry(entries)


def test_ordinary_words_after_a_family_word_are_no_model(bundled_vocabulary):
    for text in ("the command line says 7b", "whisper 70b please"):
        result = parse(text, bundled_vocabulary)
        assert result.request is not None and result.request.params_b is not None, text
    assert not [note for note in parse("the command line says 7b", bundled_vocabulary).request.assumed
                if note.code == "unknown_model_sized"]
    # a count after a model name is a count, not a version
    result = parse("deepseek r1 8 h200", bundled_vocabulary)
    assert result.matched_model == "deepseek-r1" and result.request.gpu_count == 8


@pytest.mark.parametrize("text, precision, quant, ignored", [
    # a format and a precision are one value: the first one named wins, the other is listed
    ("70B bf16 q5_k_m", "bf16", None, ["q5_k_m"]), ("70B q5_k_m bf16", None, "q5_k_m", ["bf16"]),
    ("70B q4_k_m q5_k_m", "int4", "q4_k_m", ["q5_k_m"]), ("70B int4 awq", "int4", "awq", []),
    ("70B awq bf16", "int4", "awq", ["bf16"]),
])
def test_format_and_precision_first_one_wins(text, precision, quant, ignored, bundled_vocabulary):
    request = parse(text, bundled_vocabulary).request
    assert (request.precision, request.quant, request.ignored) == (precision, quant, ignored)


def test_feintuning_is_german():
    """"qlora feintuning llama 2 70b" was answered in English."""
    result = parse("qlora feintuning llama 2 70b", default_vocabulary())
    assert (result.language, result.language_confident) == ("de", True)


def test_characters_that_show_as_nothing_are_read_as_not_there(bundled_vocabulary):
    for text in ("7\u200b0B int4", "7\u200c0B int4", "70\u2060B int4", "\ufeff70B int4", "7\u00ad0B int4"):
        result = parse(text, bundled_vocabulary)
        assert result.request is not None and result.request.params_b == 70 and result.request.precision == "int4", \
            text


def test_a_huge_context_is_not_echoed_digit_by_digit(bundled_vocabulary):
    error = parse("70b 1e308 tokens", bundled_vocabulary).error
    assert error.code == "parse_context_range" and len(str(error)) < 80
    too_long = parse("70b 100000m", bundled_vocabulary).error  # a count still short enough to read is told
    assert too_long.code == "parse_context_too_long" and "104,857,600,000 tokens" in str(too_long)
