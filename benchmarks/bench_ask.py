"""Questions per second through the whole ask path (parse, resolve, size, fit, the serving check of #9/#11, JSON),
in-process and through `cardfit ask --json -` (issue #14).

Usage: .venv/bin/python -m benchmarks.bench_ask [--lines 20000] [--catalog gpurenthub] [--repeat 3] [--parse-only]
The questions are the parser corpus's texts (tests/parser_corpus.yaml, 764 of them) repeated to --lines: the same
text comes back every 764 lines, and nothing caches an answer by its text, so every line is parsed, sized, fitted
and checked again (what is kept between questions is per catalog or per model: rankings, registries, formats).
In-process: bot.cli._ask_json and the CLI's own JSON encoding, best of --repeat passes (the machine is shared).
Via the CLI: one `cardfit ask --catalog C --json -` process over all lines, its start included. The Hugging Face
lookup is off (CARDFIT_HF_LOOKUP=0) so that no line waits on a network. Targets: 15,000 questions/s in-process,
10,000/s via the CLI. --parse-only: engine.parse.parse alone over the same lines (µs of CPU time per question,
best of --repeat), nothing else.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bot.cli import _ask_json
from catalog.loader import load_catalog
from engine.parse import Vocabulary, parse

ROOT = Path(__file__).resolve().parents[1]
TARGET_IN_PROCESS = 15_000
TARGET_CLI = 10_000


def corpus_lines(count: int) -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    cases = data["cases"] if isinstance(data, dict) else data
    texts = [case["text"].replace("\n", " ") for case in cases if case.get("text")]
    return [texts[i % len(texts)] for i in range(count)]


def in_process(lines: list[str], catalog_id: str, repeat: int) -> float:
    catalog = load_catalog(catalog_id).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    for text in lines[:800]:  # warm: the registry, alias index, regexes and the catalog's ranking, built once
        _ask_json(text, catalog, vocabulary)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        answered = 0
        for text in lines:
            answered += json.dumps(_ask_json(text, catalog, vocabulary), ensure_ascii=False,
                                   allow_nan=False).startswith("{")
        best = min(best, time.perf_counter() - start)
        assert answered == len(lines)
    return len(lines) / best


def parse_only(lines: list[str], catalog_id: str, repeat: int) -> tuple[float, float]:
    """engine.parse.parse over the lines: (µs of CPU time, µs of wall time) per question, each the best pass."""
    vocabulary = Vocabulary.of_catalog(load_catalog(catalog_id).catalog)
    for text in lines[:800]:
        parse(text, vocabulary)
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        for text in lines:
            parse(text, vocabulary)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu / len(lines) * 1e6, best_wall / len(lines) * 1e6


def via_cli(lines: list[str], catalog_id: str) -> tuple[float, int]:
    cardfit = ROOT / ".venv" / "bin" / "cardfit"
    command = [str(cardfit)] if cardfit.exists() else [sys.executable, "-m", "bot.cli"]
    payload = "".join(f"{line}\n" for line in lines)
    start = time.perf_counter()
    result = subprocess.run([*command, "ask", "--catalog", catalog_id, "--json", "-"], input=payload,
                            capture_output=True, text=True, encoding="utf-8", cwd=ROOT,
                            env=dict(os.environ, CARDFIT_HF_LOOKUP="0"), check=True)
    elapsed = time.perf_counter() - start
    out_lines = result.stdout.splitlines()
    assert len(out_lines) == len(lines), (len(out_lines), len(lines))
    return len(out_lines) / elapsed, sum(1 for line in out_lines if json.loads(line)["error"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--catalog", default="gpurenthub")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--parse-only", action="store_true", help="time engine.parse.parse alone")
    args = parser.parse_args()
    os.environ["CARDFIT_HF_LOOKUP"] = "0"
    lines = corpus_lines(args.lines)
    if args.parse_only:
        cpu_us, wall_us = parse_only(lines, args.catalog, args.repeat)
        print(f"parse only: {len(lines):,} questions at {cpu_us:.1f} µs of CPU time ({wall_us:.1f} µs wall) per "
              f"question (best of {args.repeat})")
        row = {"metric": f"parse only ({args.catalog}), CPU time", "value": round(cpu_us, 1), "unit": "µs/question",
               "target": "none of its own (part of the ask path's)", "ok": True}
        print(json.dumps({"bench": "bench_ask", "rows": [row]}))
        return
    rate = in_process(lines, args.catalog, args.repeat)
    print(f"in-process: {len(lines):,} questions (the corpus repeated) at {rate:,.0f} questions/s "
          f"(best of {args.repeat}; target {TARGET_IN_PROCESS:,})")
    cli_rate, errors = via_cli(lines, args.catalog)
    print(f"cardfit ask --json -: {len(lines):,} lines at {cli_rate:,.0f} questions/s, process start included "
          f"(target {TARGET_CLI:,})")
    print(f"answers with error set (non-questions and nonsense in the corpus): {errors:,}")
    rows: list[dict[str, Any]] = [
        {"metric": f"ask path in-process ({args.catalog})", "value": round(rate), "unit": "questions/s",
         "target": f">= {TARGET_IN_PROCESS:,}", "ok": rate >= TARGET_IN_PROCESS},
        {"metric": f"cardfit ask --json - ({args.catalog}, {len(lines):,} lines)", "value": round(cli_rate),
         "unit": "questions/s", "target": f">= {TARGET_CLI:,}", "ok": cli_rate >= TARGET_CLI},
    ]
    print(json.dumps({"bench": "bench_ask", "rows": rows}))


if __name__ == "__main__":
    main()
