"""The parser reads every text as it did before its speed-up: the corpus texts and about 17,000 varied
texts made from them (case, punctuation, German/English pieces, numbers and units, word order; see
tests/support/parse_snapshot.py), with the bundled vocabulary and both catalogs' -- every field of every result,
notes with their codes and values, compared with digests recorded from the parser at d4df705."""
from __future__ import annotations

import gzip
import json

from engine.parse import parse
from engine.parse.lexer import TOKEN_RE, Tokens
from tests.support.parse_snapshot import FIXTURE, digest, parse_or_crash, snapshot, varied_texts, vocabularies


def test_results_identical_to_the_recorded_ones() -> None:
    named = vocabularies()
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    assert len(rows) > 15_000
    differing = [(name, text) for name, text, expected in rows
                 if digest(parse_or_crash(text, named[name])) != expected]
    assert not differing, f"{len(differing)} results differ, e.g. {differing[:3]}"


def test_a_changed_field_changes_the_digest() -> None:
    vocabulary = vocabularies()["bundled"]
    one, other = parse("70B int4", vocabulary), parse("70B int8", vocabulary)
    assert digest(snapshot(one)) != digest(snapshot(other))


def test_token_spans_are_the_matches_spans() -> None:
    """The common case's spans, found by str.find after lexing, are the lexer's own matches' spans."""
    checked = 0
    for text in varied_texts():
        tokens = Tokens(text, 0)
        if tokens.n and tokens.low == TOKEN_RE.findall(text.lower()):
            matches = list(TOKEN_RE.finditer(text.lower()))
            assert [tokens.span_of(i) for i in range(tokens.n)] == [match.span() for match in matches], text
            checked += 1
    assert checked > 5_000
