"""The uncached parser's shortcuts give what the long way gives: the fuzzy search's length bound, the lexer's
cheaper looks, the positional SizeRequest. tests/test_parser_equivalence.py compares whole results; these pin each
shortcut against its long way on its own, so a failure says which one."""
from __future__ import annotations

import dataclasses
import re

from rapidfuzz import fuzz, process

from engine.parse import default_vocabulary
from engine.parse.draft import Draft
from engine.parse.lexer import TOKEN_RE, Tokens, _glued_count
from engine.parse.models import FUZZY_CUTOFF
from engine.parse.read import detect_language
from engine.parse.words import DE_MARKERS, EN_MARKERS
from engine.sizing.rule import SizeRequest
from tests.support.parse_snapshot import varied_texts

_OLD_GLUED_RE = re.compile(r"(?<![^\W_])[0-9]{1,2}x(?:[^\W\d_]|[0-9]{3})")


def _queries() -> list[str]:
    """Joined windows of the varied texts' tokens, as the fuzzy search builds them, 1 to 5 tokens long."""
    seen: set[str] = set()
    for text in varied_texts()[:3000]:
        flat = [token.replace(".", "").replace(",", "").replace("_", "") for token in TOKEN_RE.findall(text.lower())]
        for i in range(len(flat)):
            for length in range(1, 6):
                seen.add("".join(flat[i:i + length]))
    return sorted(query for query in seen if query)


def test_the_length_bound_leaves_out_no_name_that_reaches_the_cutoff() -> None:
    models = default_vocabulary().models
    compared = 0
    for sizeless, everything in ((False, models.choices), (True, models.sizeless_choices)):
        for query in _queries()[:4000]:
            full = {(position, score) for _name, score, position in process.extract(
                query, everything, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None)}
            choices, places = models.reachable(len(query), sizeless, FUZZY_CUTOFF)
            bounded = {(places[position], score) for _name, score, position in process.extract(
                query, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None)}
            assert bounded == full, query
            compared += bool(full)
    assert compared > 50  # the queries do reach names: the comparison is not of empty sets


def test_the_length_bound_is_the_ratio_bound() -> None:
    """A name left out could not score the cutoff even if every character of the shorter one matched."""
    models = default_vocabulary().models
    for length in range(1, 80):
        choices, places = models.reachable(length, False, FUZZY_CUTOFF)
        assert [models.choices[place] for place in places] == choices
        left_out = set(range(len(models.choices))) - set(places)
        for place in left_out:
            other = len(models.choices[place])
            assert 200 * min(length, other) / (length + other) < FUZZY_CUTOFF
    assert models.reachable(9, False, FUZZY_CUTOFF) is models.reachable(9, False, FUZZY_CUTOFF)  # built once


def test_the_glued_count_look_is_the_look_behind_search() -> None:
    texts = [text.lower() for text in varied_texts()] + [
        "2x4090", "a2x4090", "12x4090", "112x4090", "x 2x h100", "_2xh100", "2x", "8x7b", "8x222", "é2xh100",
        "2x 2xh100", "a2xb 3xh", "10x100", "1x1", "٣2xh100"]
    hits = 0
    for lowered in texts:
        for offset in (0, 1, 3):
            expected = _OLD_GLUED_RE.search(lowered, offset) is not None
            assert _glued_count(lowered, offset) == expected, (lowered, offset)
            hits += expected
    assert hits > 30


def test_spans_from_lengths_are_the_spans_found_by_search() -> None:
    texts = ["llama 3.1 70b fp8", "70B int4?", "qwen2.5 coder 32b!", "a b c", "x", "Straße 70b", "  70b int4",
             "70b  int4", "70b\tint4"]
    for text in texts + varied_texts()[:4000]:
        tokens = Tokens(text, 0)
        if not tokens.n or tokens.low != TOKEN_RE.findall(text.lower()):
            continue
        assert [tokens.span_of(i) for i in range(tokens.n)] == \
            [match.span() for match in TOKEN_RE.finditer(text.lower())], text


def test_language_in_one_map_counts_as_the_two_sums() -> None:
    english_only = EN_MARKERS - DE_MARKERS
    for text in varied_texts()[:6000]:
        low = Tokens(text, 0).low
        umlaut = not text.isascii() and re.search("[äöüßÄÖÜ]", text) is not None
        german = sum(token in DE_MARKERS for token in low) + umlaut
        english = sum(token in english_only for token in low)
        assert detect_language(text, low) == (("de" if german > english else "en"), german != english), text


def test_request_passes_every_field_in_its_place() -> None:
    """Draft.request builds the SizeRequest positionally: each draft value lands in the field of its name."""
    draft = Draft()
    values: dict[str, object] = {}
    for index, field in enumerate(dataclasses.fields(SizeRequest)):
        if field.name in ("model", "followup"):
            continue
        value: object = [f"note {index}"] if field.name in ("assumed", "ignored") else \
            (index % 2 == 0) if field.type in ("bool", bool) else f"value {index}"
        setattr(draft, "budget_gb" if field.name == "memory_budget_gb" else field.name, value)
        values[field.name] = value
    request = draft.request()
    assert dataclasses.asdict(request) == {**values, "model": None, "followup": False}


def test_the_split_tokens_are_the_lexers_matches() -> None:
    """The common path's tokens (a split of ASCII words, or the expression's matches) are the expression's."""
    split = 0
    for text in varied_texts() + ["70B int4?", "llama 3.1 70b.", "a\x1fb", "x\tY\n", "q4_k_m 7b!", "7b?!", "..."]:
        tokens = Tokens(text, 0)
        if tokens._lowered is not None:  # the common path (no glued count, exponent or comma)
            assert tokens.low == TOKEN_RE.findall(text.lower()), text
            split += text.isascii() and all(map(str.isalnum, text.lower().rstrip("?!.").split()))
    assert split > 1_000
