"""The declared memos of the ask path (issue #14): engine.parse's results per vocabulary, and the encoded lines of
one `cardfit ask --json -` run (bot/cli/ask_batch.py). A hit answers as a fresh computation would, no caller can change
what the next one gets, a new vocabulary starts empty, both stay bounded, and the uncached path answers the same."""
from __future__ import annotations

import gc
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml

import engine.parse as parse_module
from bot.cli.ask_batch import MEMO_LINES, AskBatch
from bot.cli.main import ask_batch, ask_json
from bot.features.hub_lookup import HubResult, hub_question
from catalog.loader import load_catalog
from engine.notes import Note
from engine.parse import (
    MEMO_ENTRIES,
    MEMO_MAX_CHARS,
    NOT_A_QUESTION,
    ParseResult,
    Vocabulary,
    _parse_strict,
    clear_parse_memo,
    default_vocabulary,
    parse,
)
from engine.sizing.rule import SizeRequest

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ("gpurenthub", "gpuwithcrypto")
TEXTS = [case["text"] for case in yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(
    encoding="utf-8"))["cases"] if case.get("text")]
SCALARS = (str, int, float, bool, type(None))


def vocabulary_of(catalog: str) -> Vocabulary:
    return Vocabulary.of_catalog(load_catalog(catalog).catalog)


def entries(vocabulary: Vocabulary) -> int:
    return parse_module._memo_of(vocabulary).cache_info().currsize


def snapshot(result: ParseResult) -> tuple[Any, ...]:
    """Every field, a Note error with its code and values, and whether partial is the request (as parsed)."""
    error = result.error
    note = (error.code, dict(error.values)) if isinstance(error, Note) else None
    return (result, type(error), note, result.partial is result.request and result.request is not None)


def assert_shares_nothing_mutable(one: ParseResult, other: ParseResult) -> None:
    assert one is not other
    for request, twin in ((one.request, other.request), (one.partial, other.partial)):
        if request is None:
            continue
        assert request is not twin
        for name in SizeRequest.__dataclass_fields__:
            value = getattr(request, name)
            assert isinstance(value, SCALARS) or (isinstance(value, list) and value is not getattr(twin, name)), name
    if isinstance(one.error, Note):
        assert one.error.values is not other.error.values  # type: ignore[union-attr]


@pytest.mark.parametrize("catalog", CATALOGS)
def test_a_hit_is_a_fresh_parse_field_for_field(catalog: str) -> None:
    vocabulary = vocabulary_of(catalog)
    for text in TEXTS:
        fresh = _parse_strict(text, vocabulary)
        first, hit = parse(text, vocabulary), parse(text, vocabulary)
        assert snapshot(first) == snapshot(fresh) == snapshot(hit), text
        assert_shares_nothing_mutable(hit, first)
    info = parse_module._memo_of(vocabulary).cache_info()
    assert info.currsize == len(set(TEXTS)) and info.hits >= len(TEXTS)


def test_the_default_vocabulary_has_a_memo_of_its_own() -> None:
    clear_parse_memo()
    catalog_vocabulary = vocabulary_of("gpurenthub")
    without_cards = parse("70B int4 on an H100")  # default_vocabulary(): no cards, so "h100" is not understood
    with_cards = parse("70B int4 on an H100", catalog_vocabulary)
    assert without_cards.request is not None and with_cards.request is not None
    assert with_cards.request.card is not None and without_cards.request.card is None
    assert parse("70B int4 on an H100") == without_cards
    assert entries(default_vocabulary()) == entries(catalog_vocabulary) == 1


def test_changing_a_result_does_not_change_the_next_hit() -> None:
    vocabulary = vocabulary_of("gpurenthub")
    texts = ["llama 3.1 70b int4 32k context on 2x H100, batch 4, whatever", "and in fp8?", "batch 0 7B",
             "hello there"]
    expected = [snapshot(_parse_strict(text, vocabulary)) for text in texts]
    for _ in range(3):
        for text in texts:
            result = parse(text, vocabulary)
            for request in (result.request, result.partial):
                if request is not None:
                    request.assumed.append("poison")
                    request.ignored.clear()
                    request.model, request.gpu_count = "poison", 99
            if isinstance(result.error, Note):
                result.error.values["written"] = "poison"
                result.error.code = "poison"
            result.language, result.hub_candidate = "xx", "poison/poison"
    assert [snapshot(parse(text, vocabulary)) for text in texts] == expected


def test_changing_a_results_notes_does_not_change_the_next_hit() -> None:
    """The error's list of names ('llama 3.1': which one?) and the fuzzy match's model note are the caller's own."""
    vocabulary = vocabulary_of("gpurenthub")
    texts = ["llama 3.1 at int4", "lama 3.1 70b int4"]
    expected = [snapshot(_parse_strict(text, vocabulary)) for text in texts]
    for _ in range(2):
        for text in texts:
            result = parse(text, vocabulary)
            for note in (result.error, result.model_note):
                if isinstance(note, Note):
                    for value in note.values.values():
                        if isinstance(value, list):
                            value.append("poison")
                    note.values["model"] = "poison"
    ambiguous, fuzzy = (parse(text, vocabulary) for text in texts)
    assert isinstance(ambiguous.error, Note) and isinstance(ambiguous.error.values["models"], list)
    assert isinstance(fuzzy.model_note, Note)
    assert [snapshot(parse(text, vocabulary)) for text in texts] == expected


def test_the_hub_lookup_changing_a_request_does_not_reach_the_memo() -> None:
    """bot.features.hub_lookup.hub_question puts its note into the parsed request's lists, in place."""
    vocabulary = vocabulary_of("gpurenthub")
    text = "someorg/Unknown-Model-7B int4"
    before = parse(text, vocabulary)
    assert before.hub_candidate == "someorg/Unknown-Model-7B" and before.request is not None
    changed = hub_question(text, before, HubResult("missing", "someorg/Unknown-Model-7B"), vocabulary)
    assert changed.request is not None and changed.request.assumed != []
    assert snapshot(parse(text, vocabulary)) == snapshot(_parse_strict(text, vocabulary))


def test_a_new_vocabulary_starts_empty_and_the_old_memo_goes_with_its_vocabulary() -> None:
    old = vocabulary_of("gpurenthub")
    for text in TEXTS[:50]:
        parse(text, old)
    assert entries(old) == 50
    new = vocabulary_of("gpurenthub")
    assert entries(new) == 0
    assert parse(TEXTS[0], new) == parse(TEXTS[0], old)
    assert parse_module._memo_of(new).cache_info().misses == 1
    gone = weakref.ref(old)
    old_id = id(old)
    del old
    gc.collect()
    assert gone() is None, "the memo keeps its vocabulary alive"
    assert old_id not in parse_module._MEMOS


def test_the_memo_stays_bounded() -> None:
    vocabulary = vocabulary_of("gpuwithcrypto")
    texts = [f"{size}B int4 {1 + size % 7}k context" for size in range(1, 4 * MEMO_ENTRIES)]
    parse(texts[0], vocabulary)  # the memo itself exists before tracing starts
    gc.collect()
    tracemalloc.start()  # before the entries are made: tracemalloc counts the frees of blocks it saw allocated
    try:
        start = tracemalloc.get_traced_memory()[0]
        for text in texts[:MEMO_ENTRIES]:
            parse(text, vocabulary)
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        assert entries(vocabulary) == MEMO_ENTRIES
        for text in texts[MEMO_ENTRIES:]:
            parse(text, vocabulary)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert entries(vocabulary) == MEMO_ENTRIES
    per_entry = (full - start) / MEMO_ENTRIES
    assert 200 < per_entry < 2_000, per_entry  # engine.parse says ~650 bytes for the corpus's texts
    # 3,071 more distinct texts would triple it if they were all kept: the memo holds as much as before (the rest,
    # ~26 KB, is the parser's own small per-word caches and the like)
    assert after - full < (full - start) / 10, (after - full, full - start)
    assert parse(texts[-1], vocabulary) == _parse_strict(texts[-1], vocabulary)


def test_long_texts_memo_false_and_clearing() -> None:
    vocabulary = vocabulary_of("gpurenthub")
    long_text = "70B int4 " + "please " * (MEMO_MAX_CHARS // 7 + 1)
    assert len(long_text) > MEMO_MAX_CHARS
    assert parse(long_text, vocabulary) == _parse_strict(long_text, vocabulary)
    assert entries(vocabulary) == 0
    assert parse("70B int4", vocabulary, memo=False) == _parse_strict("70B int4", vocabulary)
    assert entries(vocabulary) == 0  # memo=False neither reads nor fills it
    parse("70B int4", vocabulary)
    assert entries(vocabulary) == 1
    clear_parse_memo()
    assert entries(vocabulary) == 0


def test_the_safety_net_stays_and_a_failure_is_not_memoized(monkeypatch: pytest.MonkeyPatch) -> None:
    vocabulary = vocabulary_of("gpurenthub")
    assert parse(None, vocabulary).error == NOT_A_QUESTION  # type: ignore[arg-type]
    assert parse(b"70B int4", vocabulary).error == NOT_A_QUESTION  # type: ignore[arg-type]

    def broken(text: str, vocabulary: Vocabulary) -> ParseResult:
        raise RuntimeError("a parser bug")

    monkeypatch.setattr(parse_module, "read_question", broken)
    for memo in (True, False):
        result = parse("70B int4", vocabulary, memo=memo)
        assert result.request is None and result.error == NOT_A_QUESTION
    assert entries(vocabulary) == 0
    monkeypatch.undo()
    assert parse("70B int4", vocabulary).request is not None


def fixture_lines(catalog: str) -> dict[str, str]:
    with gzip.open(ROOT / "tests" / "data" / f"ask_answers_{catalog}.jsonl.gz", "rt", encoding="utf-8") as handle:
        return {text: line for text, line in (json.loads(row) for row in handle)}


def batch_texts() -> list[str]:
    texts = [text for text in TEXTS if "\n" not in text] * 2
    random.Random(14).shuffle(texts)
    return texts


def disabled_lookup() -> object:
    from bot.features.hub_lookup import HubLookup

    return HubLookup(None, enabled=False, timeout_s=5.0)


@pytest.mark.parametrize("catalog", CATALOGS)
def test_a_batch_answers_repeats_as_the_recorded_single_answers(catalog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, memos on and off: every line byte for byte the recorded answer (tests/test_answers_identical's
    fixtures), the memos-off batch computing every line (the uncached path) and the memos-on one each text once."""
    monkeypatch.setattr("bot.cli.main._hub_lookup", disabled_lookup)
    expected = fixture_lines(catalog)
    loaded = load_catalog(catalog).catalog
    texts = batch_texts()
    for memo in (False, True):
        clear_parse_memo()
        vocabulary = Vocabulary.of_catalog(loaded)
        batch = ask_batch(loaded, vocabulary, memo=memo)
        differing = [text for text in texts if batch.line(text) != f"{expected[text]}\n".encode()]
        assert not differing, f"{len(differing)} answers differ (memo={memo}), e.g. {differing[:3]}"
        assert batch.hits == (len(texts) - len(set(texts)) if memo else 0)
        assert len(batch) == (len(set(texts)) if memo else 0)
        assert entries(vocabulary) == (len(set(texts)) if memo else 0)


def run_cli(catalog: str, texts: list[str], memo: bool) -> list[str]:
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0", CARDFIT_ASK_MEMO="1" if memo else "0")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--catalog", catalog, "--json", "-"],
                            input="".join(f"{text}\n" for text in texts), capture_output=True, text=True,
                            encoding="utf-8", cwd=ROOT, env=env, check=True)
    return result.stdout.splitlines()


def test_the_cli_prints_repeated_lines_as_one_line_at_a_time() -> None:
    expected = fixture_lines("gpurenthub")
    texts = batch_texts()
    want = [expected[text] for text in texts]
    assert run_cli("gpurenthub", texts, memo=True) == want
    assert run_cli("gpurenthub", texts[:200], memo=False) == want[:200]


def test_the_line_memo_is_bounded_and_keeps_the_latest() -> None:
    loaded = load_catalog("gpurenthub").catalog
    vocabulary = Vocabulary.of_catalog(loaded)
    batch = AskBatch(lambda text: ask_json(text, loaded, vocabulary), max_lines=3)
    for text in ("70B int4", "8B fp16", "13B fp8", "70B int4", "1B", "8B fp16"):
        batch.line(text)
    assert len(batch) == 3 and batch.hits == 1  # "70B int4" again; "8B fp16" had been dropped by then
    assert MEMO_LINES >= len(set(TEXTS))  # the whole corpus fits: bench_ask's figure as designed


class CountingLookup:
    """An enabled Hub lookup that has nothing: each call counted."""

    enabled = True

    def __init__(self) -> None:
        self.calls = 0

    def lookup_sync(self, repo_id: str) -> HubResult:
        self.calls += 1
        return HubResult("missing", repo_id)


def test_lines_that_asked_the_hub_are_answered_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    lookup = CountingLookup()
    monkeypatch.setattr("bot.cli.main._hub_lookup", lambda: lookup)
    loaded = load_catalog("gpurenthub").catalog
    batch = ask_batch(loaded, Vocabulary.of_catalog(loaded))
    lines = [batch.line("someorg/Unknown-Model-7B int4").decode() for _ in range(3)]
    assert lookup.calls == 3 and batch.hits == 0 and len(batch) == 0
    assert len(set(lines)) == 1 and "someorg/Unknown-Model-7B" in lines[0]
    assert json.loads(lines[0])["request"]["assumed"].count(json.loads(lines[0])["request"]["assumed"][0]) == 1
    batch.line("70B int4")
    batch.line("70B int4")
    assert batch.hits == 1 and lookup.calls == 3  # a line without a repository id is memoized as before


def test_a_line_that_failed_inside_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_catalog("gpurenthub").catalog
    batch = ask_batch(loaded, Vocabulary.of_catalog(loaded))

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr("bot.features.ask.build_answer", broken)
    assert json.loads(batch.line("70B int4"))["error"] == "internal error: RuntimeError"
    monkeypatch.undo()
    assert json.loads(batch.line("70B int4"))["error"] is None and batch.hits == 0


def test_run_writes_the_same_text_to_a_utf8_stream_and_to_any_other() -> None:
    loaded = load_catalog("gpuwithcrypto").catalog
    vocabulary = Vocabulary.of_catalog(loaded)
    texts = ["70B int4 in München\n", "hallo\n", "70B int4 in München\n", "8B fp16, 8k Kontext ≈ 16 GB?\n"]
    raw = io.BytesIO()
    utf8 = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    ask_batch(loaded, vocabulary).run(texts, utf8)  # through its byte buffer
    other = io.StringIO()  # no buffer: the text itself
    ask_batch(loaded, vocabulary).run(texts, other)
    one_by_one = "".join(json.dumps(ask_json(text.rstrip("\n"), loaded, vocabulary)[0], ensure_ascii=False,
                                    allow_nan=False) + "\n" for text in texts)
    assert raw.getvalue().decode("utf-8") == other.getvalue() == one_by_one


def test_bytes_stdin_could_not_decode_come_back_out_as_they_came() -> None:
    """A C locale's stdin hands undecodable bytes over as surrogates: the batch writes them back, no exception."""
    loaded = load_catalog("gpurenthub").catalog
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")  # kept: a TextIOWrapper closes its buffer when it goes
    ask_batch(loaded, Vocabulary.of_catalog(loaded)).run(["70B int4 \udcff\n"], out)
    assert raw.getvalue().endswith(b"\n") and json.loads(raw.getvalue().decode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("io_encoding", ["utf-8:strict", "utf-8:surrogateescape"])
def test_an_undecodable_line_does_not_end_the_run(io_encoding: str) -> None:
    """A UTF-8 locale other than C reads stdin strictly: an invalid byte used to end `ask --json -` with a
    traceback after the lines before it. Now that line is answered as the C locale answers it, and the run goes on."""
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0", PYTHONIOENCODING=io_encoding)
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--json", "-"],
                            input=b"70B int4\n\xff\xfe 7B\n13B fp16\n", capture_output=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and b"Traceback" not in result.stderr
    assert [json.loads(line.decode("utf-8", "surrogateescape"))["request"]["params_b"] for line in lines] \
        == [70.0, 7.0, 13.0]
