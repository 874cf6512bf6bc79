"""`cardfit ask --json -` answers byte for byte as recorded: every parser corpus text, both catalogs, so that a
refactor or a speed-up changes no answer.

The fixtures tests/data/ask_answers_<catalog>.jsonl.gz were written by `cardfit ask --json -`
(`python -m tests.test_answers_identical` writes them again: only do that for a deliberate change of an answer,
and say in the commit which answers changed and why). One line per corpus text:
[text, the JSON line `ask --json` printed for it]. The Hub lookup is off (CARDFIT_HF_LOOKUP=0) so that an org/name
the registry does not know answers the same without a network.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli.main import _ask_json
from catalog.loader import load_catalog
from engine.parse import Vocabulary

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ("gpurenthub", "gpuwithcrypto")


def corpus_texts() -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    return [case["text"] for case in data["cases"] if case.get("text")]


def fixture_path(catalog: str) -> Path:
    return ROOT / "tests" / "data" / f"ask_answers_{catalog}.jsonl.gz"


def read_fixture(catalog: str) -> dict[str, str]:
    with gzip.open(fixture_path(catalog), "rt", encoding="utf-8") as handle:
        return {text: line for text, line in (json.loads(row) for row in handle)}


def cli_answers(catalog: str, texts: list[str]) -> list[str]:
    """What `cardfit ask --catalog CATALOG --json -` prints for the texts, one line each."""
    assert all("\n" not in text for text in texts)
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--catalog", catalog, "--json", "-"],
                            input="".join(f"{text}\n" for text in texts), capture_output=True, text=True,
                            encoding="utf-8", cwd=ROOT, env=env, check=True)
    lines = result.stdout.splitlines()
    assert len(lines) == len(texts)
    return lines


@pytest.mark.parametrize("catalog", CATALOGS)
def test_stdin_answers_identical(catalog: str) -> None:
    expected = read_fixture(catalog)
    texts = corpus_texts()
    assert set(texts) <= set(expected), "corpus texts without a recorded answer: regenerate deliberately"
    got = cli_answers(catalog, texts)
    differing = [text for text, line in zip(texts, got, strict=True) if line != expected[text]]
    assert not differing, f"{len(differing)} answers differ, e.g. {differing[:3]}"


@pytest.mark.parametrize("catalog", CATALOGS)
def test_in_process_answers_identical(catalog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same through bot.cli.main._ask_json twice in a row: a second pass over the same texts (warm caches) answers
    the same as the first."""
    monkeypatch.setenv("CARDFIT_HF_LOOKUP", "0")
    monkeypatch.setattr("bot.cli.main._hub_lookup", _disabled_lookup)
    expected = read_fixture(catalog)
    loaded = load_catalog(catalog).catalog
    vocabulary = Vocabulary.of_catalog(loaded)
    for _ in range(2):
        differing = [text for text in corpus_texts()
                     if json.dumps(_ask_json(text, loaded, vocabulary), ensure_ascii=False, allow_nan=False)
                     != expected[text]]
        assert not differing, f"{len(differing)} answers differ, e.g. {differing[:3]}"


def _disabled_lookup() -> object:
    from bot.features.hub_lookup import HubLookup

    return HubLookup(None, enabled=False, timeout_s=5.0)


def _write_fixtures() -> None:
    texts = corpus_texts()
    for catalog in CATALOGS:
        lines = cli_answers(catalog, texts)
        with gzip.GzipFile(fixture_path(catalog), "wb", mtime=0) as handle:
            for text, line in zip(texts, lines, strict=True):
                handle.write((json.dumps([text, line], ensure_ascii=False) + "\n").encode("utf-8"))


if __name__ == "__main__":
    _write_fixtures()
