"""Questions per second through the whole ask path (parse + size + fit + JSON), in-process and via the CLI.

Usage: .venv/bin/python -m benchmarks.bench_ask [--lines 20000] [--catalog gpurenthub]
The corpus (tests/parser_corpus.yaml) is repeated to --lines questions. Target: >= 5,000 questions/s in-process
on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from bot.cli import _ask_json
from catalog.loader import load_catalog
from engine.parse import Vocabulary

ROOT = Path(__file__).resolve().parents[1]


def corpus_lines(count: int) -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    cases = data["cases"] if isinstance(data, dict) else data
    texts = [case["text"].replace("\n", " ") for case in cases if case.get("text")]
    return [texts[i % len(texts)] for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--catalog", default="gpurenthub")
    args = parser.parse_args()
    lines = corpus_lines(args.lines)
    catalog = load_catalog(args.catalog).catalog
    vocabulary = Vocabulary.of_catalog(catalog)

    for text in lines[:200]:  # warm up caches (registry, alias index, regexes)
        _ask_json(text, catalog, vocabulary)
    start = time.perf_counter()
    answered = 0
    for text in lines:
        out = json.dumps(_ask_json(text, catalog, vocabulary), ensure_ascii=False)
        answered += out.startswith("{")
    in_process = time.perf_counter() - start
    print(f"in-process: {answered:,} questions in {in_process:.2f} s = {answered / in_process:,.0f} questions/s")

    cardfit = ROOT / ".venv" / "bin" / "cardfit"
    command = [str(cardfit)] if cardfit.exists() else [sys.executable, "-m", "bot.cli"]
    payload = "\n".join(lines) + "\n"
    start = time.perf_counter()
    result = subprocess.run([*command, "ask", "--catalog", args.catalog, "--json", "-"], input=payload,
                            capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), check=True)
    via_cli = time.perf_counter() - start
    out_lines = result.stdout.splitlines()
    assert len(out_lines) == len(lines), (len(out_lines), len(lines))
    print(f"cardfit ask --json -: {len(out_lines):,} lines in {via_cli:.2f} s = {len(out_lines) / via_cli:,.0f} "
          f"questions/s (process start included)")
    errors = sum(1 for line in out_lines if json.loads(line)["error"])
    print(f"answers with error set (non-questions and nonsense in the corpus): {errors:,}")


if __name__ == "__main__":
    main()
