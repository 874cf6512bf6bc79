"""The terminal chat answers as recorded: every parser corpus text, its buttons and the everyday commands, both
catalogs, through the real Conversation (`cardfit chat` on stdin, a fresh store).

The JSON fixture (tests/test_answers_identical.py) holds what the engine decides; this one holds what a person
reads: the rendered replies in English and German, the buttons under them, follow-ups that change the question
before, and what a button press answers. A refactor of the bot must leave every byte of it as it was.

`python -m tests.test_chat_transcript_identical` writes the fixtures again: only for a deliberate change of what a
reply says, named in the commit.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ("gpurenthub", "gpuwithcrypto")
COMMANDS = ("/start", "/help", "/settings", "/set lang de", "/settings", "/set lang en", "/set coin BTC",
            "/set billing week", "/cards", "/card H100", "/card nothing", "/compare H100 A100", "/compare",
            "/subscribe H100", "/subscriptions", "/unsubscribe H100", "/size 70B int4", "/nonsense",
            "/set region DFW-1", "/set batch 4", "/settings", "/set reset")
PRESS_EVERY = 25  # every 25th question also presses each of its buttons but the chart (a PNG file, not text)


def session_lines() -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    texts = [case["text"] for case in data["cases"] if case.get("text") and "\n" not in case["text"]]
    lines = list(COMMANDS)
    for index, text in enumerate(texts):
        lines.append(text)
        if index % PRESS_EVERY == 0:
            # Button numbers as the chat lists them under the reply just printed; a number past the list is read
            # as a question, which is part of the transcript too. 9 is the chart on an answer: left out.
            lines.extend(f"{number}\n{text}" for number in (1, 2, 3, 5, 7, 8, 10))
    return [part for line in lines for part in line.split("\n")]


def fixture_path(catalog: str) -> Path:
    return ROOT / "tests" / "data" / f"chat_transcript_{catalog}.txt.gz"


def transcript(catalog: str, tmp: Path) -> str:
    env = {name: value for name, value in os.environ.items() if not name.startswith("CARDFIT_")}
    env.update(CARDFIT_HF_LOOKUP="0", CARDFIT_CATALOG=catalog, CARDFIT_DB=str(tmp / "chat.sqlite3"),
               CARDFIT_CHART_DIR=str(tmp / "charts"))
    result = subprocess.run([sys.executable, "-m", "bot.cli", "chat"], input="\n".join(session_lines()) + "\n",
                            capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env, check=True,
                            timeout=600)
    # a button that happens to be a chart writes a PNG under the temporary directory: its path is not the answer
    return result.stdout.replace(str(tmp), "<tmp>")


def read_fixture(catalog: str) -> str:
    with gzip.open(fixture_path(catalog), "rt", encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("catalog", CATALOGS)
def test_chat_transcript_identical(catalog: str, tmp_path: Path) -> None:
    expected = read_fixture(catalog).split("\n\n")
    got = transcript(catalog, tmp_path).split("\n\n")
    differing = [(index, want, have) for index, (want, have) in enumerate(zip(expected, got, strict=False))
                 if want != have]
    assert len(got) == len(expected), f"{len(got)} replies, recorded {len(expected)}"
    assert not differing, f"{len(differing)} replies differ, the first: {differing[0]}"


def _write_fixtures() -> None:
    import tempfile

    for catalog in CATALOGS:
        with tempfile.TemporaryDirectory() as tmp:
            text = transcript(catalog, Path(tmp))
        with gzip.GzipFile(fixture_path(catalog), "wb", mtime=0) as handle:
            handle.write(text.encode("utf-8"))


if __name__ == "__main__":
    _write_fixtures()
