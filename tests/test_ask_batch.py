"""`cardfit ask --json -` (bot/cli/ask_batch.py): every line answered as the recorded single answers, a line that
failed inside says so and the run goes on, the same text to any stream, undecodable bytes back as they came."""
from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli.main import _ask_json, ask_batch
from catalog.loader import load_catalog
from engine.parse import Vocabulary

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ("gpurenthub", "gpuwithcrypto")
TEXTS = [case["text"] for case in yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(
    encoding="utf-8"))["cases"] if case.get("text")]


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
def test_a_batch_answers_as_the_recorded_single_answers(catalog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: every line, repeats included, byte for byte the recorded answer (tests/test_answers_identical's
    fixtures)."""
    monkeypatch.setattr("bot.cli.main._hub_lookup", disabled_lookup)
    expected = fixture_lines(catalog)
    loaded = load_catalog(catalog).catalog
    batch = ask_batch(loaded, Vocabulary.of_catalog(loaded))
    differing = [text for text in batch_texts() if batch.line(text) != f"{expected[text]}\n".encode()]
    assert not differing, f"{len(differing)} answers differ, e.g. {differing[:3]}"


def test_the_cli_prints_one_line_per_question() -> None:
    expected = fixture_lines("gpurenthub")
    texts = batch_texts()[:300]
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--catalog", "gpurenthub", "--json", "-"],
                            input="".join(f"{text}\n" for text in texts), capture_output=True, text=True,
                            encoding="utf-8", cwd=ROOT, env=env, check=True)
    assert result.stdout.splitlines() == [expected[text] for text in texts]


def test_a_line_that_failed_inside_says_so_and_the_next_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_catalog("gpurenthub").catalog
    batch = ask_batch(loaded, Vocabulary.of_catalog(loaded))

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr("bot.features.ask.build_answer", broken)
    assert json.loads(batch.line("70B int4"))["error"] == "internal error: RuntimeError"
    monkeypatch.undo()
    assert json.loads(batch.line("70B int4"))["error"] is None


def test_a_card_memory_of_forty_digits_is_that_lines_error_and_the_run_goes_on() -> None:
    huge = f"an 807{'0' * 38}GB A100 for 70b"
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--catalog", "gpurenthub", "--json", "-"],
                            input=f"{huge}\n70B int4\n", capture_output=True, text=True, encoding="utf-8", cwd=ROOT,
                            env=env, check=True)
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["error"].startswith("card memory 807") and "out of range" in first["error"]
    assert second["error"] is None and second["request"]["params_b"] == 70


def test_an_answer_strict_json_cannot_hold_is_that_lines_error(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_catalog("gpurenthub").catalog
    batch = ask_batch(loaded, Vocabulary.of_catalog(loaded))
    monkeypatch.setattr("bot.cli.main._ask_json", lambda *args: {"request": {"card_vram_gb": float("inf")}})
    failed = json.loads(batch.line("70B int4"))
    assert failed["error"] == "internal error: the answer cannot be written as JSON" and failed["request"] is None
    monkeypatch.undo()
    assert json.loads(batch.line("70B int4"))["error"] is None


def test_run_writes_the_same_text_to_a_utf8_stream_and_to_any_other() -> None:
    loaded = load_catalog("gpuwithcrypto").catalog
    vocabulary = Vocabulary.of_catalog(loaded)
    texts = ["70B int4 in München\n", "hallo\n", "70B int4 in München\n", "8B fp16, 8k Kontext ≈ 16 GB?\n"]
    raw = io.BytesIO()
    utf8 = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    ask_batch(loaded, vocabulary).run(texts, utf8)  # through its byte buffer
    other = io.StringIO()  # no buffer: the text itself
    ask_batch(loaded, vocabulary).run(texts, other)
    one_by_one = "".join(json.dumps(_ask_json(text.rstrip("\n"), loaded, vocabulary), ensure_ascii=False,
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
    """A UTF-8 locale other than C reads stdin strictly: that line is answered as the C locale answers it, and the
    run goes on."""
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0", PYTHONIOENCODING=io_encoding)
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--json", "-"],
                            input=b"70B int4\n\xff\xfe 7B\n13B fp16\n", capture_output=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and b"Traceback" not in result.stderr
    assert [json.loads(line.decode("utf-8", "surrogateescape"))["request"]["params_b"] for line in lines] \
        == [70.0, 7.0, 13.0]
