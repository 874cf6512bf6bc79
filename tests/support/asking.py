"""Asking Cardfit in tests as a user does: a question through the CLI's ask path (the Answer object), or
`cardfit ask --json` (the JSON a user reads), and what to look for in that JSON."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import ask_answer, main
from catalog.loader import load_catalog
from engine.answer.build import Answer
from engine.parse import Vocabulary


def answer_of(text: str, catalog_id: str = "gpurenthub", vllm_version: str | None = None) -> Answer:
    """The answer `cardfit ask` builds for `text` (parsed against the catalog's own cards)."""
    catalog = load_catalog(catalog_id).catalog
    answer, error, _ = ask_answer(text, catalog, Vocabulary.of_catalog(catalog), vllm_version)
    assert answer is not None and error is None, error
    return answer


def cli_answer(capsys: pytest.CaptureFixture[str], text: str, lang: str = "en", catalog_id: str | None = None) -> dict:
    """`cardfit ask --json` as a user runs it."""
    args = ["ask", "--json", "--lang", lang, *(["--catalog", catalog_id] if catalog_id else []), text]
    assert main(args) == 0, text
    result: dict = json.loads(capsys.readouterr().out)
    return result


def launch_commands(data: object) -> list[str]:
    """Every launch command (`vllm serve ...`, `llama-server ...`) anywhere in a JSON answer."""
    if isinstance(data, dict):
        return [found for value in data.values() for found in launch_commands(value)]
    if isinstance(data, list):
        return [found for value in data for found in launch_commands(value)]
    return [data] if isinstance(data, str) and data.startswith(("vllm serve", "llama-server")) else []


def said(data: dict) -> str:
    """Every note the JSON answer carries, as one text."""
    return json.dumps(data, ensure_ascii=False)
