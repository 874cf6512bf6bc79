"""Phrase parser under hypothesis: any text is safe, and phrases built from parts read back their values."""
from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.notes import Note
from engine.parse import ERROR_CODES, NOT_A_QUESTION, ParseResult, _parse_strict, parse

# CARDFIT_FUZZ_EXAMPLES=20000 for a long hunt; the default keeps the suite fast.
SETTINGS = settings(
    max_examples=int(os.environ.get("CARDFIT_FUZZ_EXAMPLES", "200")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _check(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    assert result.language in ("en", "de")
    if result.request is None:
        assert result.error
        # "not a sizing question" stays a plain string; every other error is a Note the bot can translate
        if result.error != NOT_A_QUESTION:
            assert isinstance(result.error, Note) and result.error.code in ERROR_CODES, result.error
            assert isinstance(result.error.values, dict)
    else:
        assert result.error is None
        assert isinstance(result.request.assumed, list) and isinstance(result.request.ignored, list)


@SETTINGS
@given(st.text(max_size=10_000))
def test_any_text_never_raises(bundled_vocabulary, text):
    _check(_parse_strict(text, bundled_vocabulary))  # without the safety net of parse(): a crash here is a bug


# Hypothesis rarely draws a long string from st.text on its own, and drawing one char by char is slow: repeat
# a random piece up to 10,000 characters instead.
LONG_TEXT = st.text(min_size=1, max_size=300).map(lambda piece: (piece * (10_000 // len(piece) + 1))[:10_000])


@SETTINGS
@given(LONG_TEXT)
def test_long_text_never_raises(bundled_vocabulary, text):
    _check(_parse_strict(text, bundled_vocabulary))


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_unicode_including_control_characters(bundled_vocabulary, text):
    _check(_parse_strict(text, bundled_vocabulary))


WORDS = st.sampled_from([
    "70b", "8x7b", "llama", "3.1", "qwen2,5", "k", "32k", "4", "bit", "int-4", "kv", "cache", "fp8", "batch", "bs",
    "0", "1e9", "x", "2x", "h100", "a", "40", "gb", "users", "vier", "nutzer", "context", "ctx", "=", "/size",
    "lora", "qlora", "fine", "tune", "in", "auf", "einer", "DFW-1", "1,5", "8.192", "token", "million", "🚀",
    "mixtral", "1.6t", "0b", "100000000000000000000b", "gemma", "deepseek", "v3", "-", ",", ".", "bs=0",
    "²", "٣", "١٠b", "x²", "int", "q", "gib", "tb", "million", "parameters", "m", "region", "xyz-9", "8x",
    "single", "an", "dual", "80gb", "rtx", "4090", "4090s", "users", "concurrent", "full", "precision", "half",
    "volle", "genauigkeit", "Milliarden", "mrd", "1.000.000", "9" * 60, "q4" + "a" * 40 + "ä", "İ",
    "-7b", "\u2212", "-", "--", "^", "**", "e", "1e20b", "10^20", "1e+", "1e-5", "0^-1", "10**999", "32 000",
    "1 000 000", "000", "\u202f", "seventy", "two", "hundred", "and", "zweiundsiebzig", "billion", "Dallas",
    "ashburn", "q5_k_m", "3-bit", "4.5bpw", "bpw", "fp6", "w8a16", "int-3", "10M", "-32k", "batch", "-4",
])


@SETTINGS
@given(st.lists(WORDS, max_size=30), st.sampled_from([" ", "", "-", ", ", "  "]))
def test_word_salad_of_keywords_never_raises(bundled_vocabulary, words, separator):
    _check(_parse_strict(separator.join(words), bundled_vocabulary))


def test_ten_thousand_chars_is_fast(bundled_vocabulary):
    samples = [
        ("llama 3.1 70b 4 bit 32k context on 2x h100 with 8 users " * 200)[:10_000],
        ("lama qwen mistrall gema deepsek " * 400)[:10_000],
        "1 " * 5_000,
        "🚀" * 10_000,
        ("x" * 9_999) + "b",
        "7" * 10_000 + "B",
        "70b q4" + "a" * 9_000 + "ä",  # a regex with nested repetition would backtrack for ever here
        "llama3" + "a" * 9_990,
        "dfw-1 " * 1_600,
        "000 " * 2_500,  # thousands groups: each must not scan all the groups after it
        "1 000 " * 1_700,
        "10^" * 3_300,
        "1e+" * 3_300,
        "-1 " * 3_300,
        "seventy two " * 900,
        "four hundred and " * 600,
        "zweiundsiebzig Dallas " * 500,
        "3-bit " * 1_700,
    ]
    for text in samples:
        started = time.perf_counter()
        result = parse(text, bundled_vocabulary)
        elapsed = time.perf_counter() - started
        assert elapsed < 1.0, (text[:40], elapsed)
        _check(result)


# -- composed phrases round-trip ---------------------------------------------------------------------------------

SIZES = st.sampled_from([1, 3, 7, 13, 34, 70, 120, 405, 1.5, 0.5, 2.7])
PRECISIONS = {
    "int4": ["4-bit", "int4", "4 bit", "q4_k_m", "awq", "in 4-bit", "mit 4 Bit", "nf4"],
    "int8": ["8-bit", "int8", "8 bit", "in 8 Bit"],
    "fp8": ["fp8", "FP8", "in fp8"],
    "bf16": ["bf16", "16-bit", "16 bit"],
    "fp16": ["fp16", "half precision", "halbe Genauigkeit"],
    "fp32": ["fp32", "full precision", "voller Genauigkeit"],
}
CONTEXTS = st.sampled_from([1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 204800, 1048576])
BATCHES = st.integers(min_value=1, max_value=4096)


def _size_text(size: float, style: int) -> str:
    number = f"{size:g}"
    return [f"{number}B", f"{number}b", f"{number} billion", f"{number.replace('.', ',')} Milliarden",
            f"a {number}B model", f"{number.replace('.', ',')}B"][style]


def _context_text(tokens: int, style: int) -> str:
    if tokens % 1024 == 0 and tokens < 1_048_576:
        k = tokens // 1024
        return [f"{k}k context", f"ctx={k}k", f"{k}K", f"mit {k}k Kontext", f"{tokens} tokens", f"context {k}k"][style]
    if tokens == 1_048_576:
        return ["1M context", "1M ctx", "1M", "mit 1M Kontext", f"{tokens} tokens", "context 1M"][style]
    return f"{tokens} tokens"


def _batch_text(batch: int, style: int) -> str:
    return [f"batch {batch}", f"bs{batch}", f"bs={batch}", f"{batch} concurrent users", f"für {batch} Nutzer",
            f"batch size {batch}"][style]


@SETTINGS
@given(
    size=SIZES,
    precision=st.sampled_from(sorted(PRECISIONS)),
    precision_style=st.integers(0, 100),
    context=CONTEXTS,
    batch=BATCHES,
    styles=st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)),
    order=st.permutations(range(4)),
    separator=st.sampled_from([" ", ", ", " / ", " und ", " and ", "  "]),
    command=st.sampled_from(["", "/size ", "/size@CardfitBot "]),
)
def test_composed_phrases_round_trip(bundled_vocabulary, size, precision, precision_style, context, batch, styles,
                                     order, separator, command):
    words = PRECISIONS[precision]
    parts = [
        _size_text(size, styles[0]),
        words[precision_style % len(words)],
        _context_text(context, styles[1]),
        _batch_text(batch, styles[2]),
    ]
    text = command + separator.join(parts[index] for index in order)
    result = _parse_strict(text, bundled_vocabulary)
    assert result.request is not None, (text, result.error)
    request = result.request
    assert request.params_b == size, text
    assert request.precision == precision, text
    assert request.context_tokens == context, text
    assert request.batch == batch, text
    assert request.model is None and request.kv_precision is None and request.card is None, text
    assert request.ignored == [], (text, request.ignored)


@SETTINGS
@given(
    kv=st.sampled_from(["fp8", "int8", "fp16", "bf16"]),
    weights=st.sampled_from(["int4", "fp8", "bf16"]),
    style=st.integers(0, 4),
)
def test_kv_precision_never_leaks_into_weights(bundled_vocabulary, kv, weights, style):
    kv_text = [f"{kv} kv cache", f"kv cache {kv}", f"KV-Cache in {kv.upper()}", f"kv={kv}", f"{kv} KV"][style]
    request = _parse_strict(f"70B {weights}, {kv_text}", bundled_vocabulary).request
    assert (request.precision, request.kv_precision) == (weights, kv)
    request = _parse_strict(f"70B {kv_text}", bundled_vocabulary).request
    assert (request.precision, request.kv_precision) == (None, kv)


# -- the bug classes of the QA run, as properties --------------------------------------------------------------

@SETTINGS
@given(size=st.integers(min_value=1, max_value=100_000), minus=st.sampled_from(["-", "\u2212"]),
       unit=st.sampled_from(["B", "b", " B", " billion", " Milliarden"]),
       before=st.sampled_from(["", "size ", "a ", "70B or ", "wie viel für "]))
def test_a_negative_size_is_never_read_as_positive(bundled_vocabulary, size, minus, unit, before):
    result = _parse_strict(f"{before}{minus}{size}{unit}", bundled_vocabulary)
    assert result.request is None, (before, size, unit)
    assert result.error.code == "parse_bad_size"
    assert result.error.values["written"].startswith(f"-{size}")


@SETTINGS
@given(value=st.integers(min_value=1, max_value=4096), keyword=st.sampled_from(["batch ", "bs=", "batch size "]))
def test_a_negative_batch_is_never_read_as_positive(bundled_vocabulary, value, keyword):
    result = _parse_strict(f"70B {keyword}-{value}", bundled_vocabulary)
    assert result.request is None
    assert result.error == f"batch -{value} is out of range (1 to 4,096)"


@SETTINGS
@given(tokens=st.integers(min_value=1_000, max_value=10_000_000),
       separator=st.sampled_from([" ", "\u202f", "\u00a0"]),
       word=st.sampled_from(["tokens", "Token", "tokens of context", "ctx"]),
       before=st.sampled_from(["70B, 4 bit, ", "7B mit ", "13B batch 4, ", "7B for 8 users with "]))
def test_space_grouped_thousands_read_back(bundled_vocabulary, tokens, separator, word, before):
    written = f"{tokens:,}".replace(",", separator)
    request = _parse_strict(f"{before}{written} {word}", bundled_vocabulary).request
    assert request is not None
    assert request.context_tokens == tokens, written
    assert request.ignored == [], (written, request.ignored)


@pytest.mark.parametrize("written, tokens", [("3 090 001", 3_090_001), ("4\u202f090\u202f000", 4_090_000),
                                             ("5 090 512", 5_090_512), ("3 090", 3_090)])
def test_space_grouped_number_is_not_a_card(bundled_vocabulary, written, tokens):
    """Found by the property above: '3 090 001 tokens' read '3 090' as an RTX 3090 and the context as 1 token."""
    request = _parse_strict(f"70B, 4 bit, {written} tokens", bundled_vocabulary).request
    assert request is not None
    assert (request.context_tokens, request.card, request.ignored) == (tokens, None, [])


@pytest.mark.parametrize("text", ["70B on a 3090", "70B on 2x 3090", "70B on an RTX 3090 32k tokens"])
def test_a_card_number_still_reads_as_a_card(bundled_vocabulary, text):
    request = _parse_strict(text, bundled_vocabulary).request
    assert request is not None and request.card is not None, text


@SETTINGS
@given(mantissa=st.integers(min_value=1, max_value=9), exponent=st.integers(min_value=6, max_value=400),
       style=st.sampled_from(["{m}e{e}B", "{m}e{e} B", "{m}e+{e}B", "{m}0^{e}B", "{m}0 ^ {e} B", "{m}0**{e}B"]))
def test_exponent_sizes_are_never_read_as_their_digits(bundled_vocabulary, mantissa, exponent, style):
    result = _parse_strict(style.format(m=mantissa, e=exponent), bundled_vocabulary)
    assert result.request is None  # at least a million billion parameters: never a size, never "20B"
    assert result.error.code == "parse_bad_size"
