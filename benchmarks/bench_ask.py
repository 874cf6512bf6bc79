"""Questions per second through the whole ask path (parse, resolve, size, fit, the serving check of #9/#11, JSON),
in-process and through `cardfit ask --json -` (issue #14), with the memos on (as shipped) and bypassed (cold).

Usage: .venv/bin/python -m benchmarks.bench_ask [--lines 20000] [--catalog gpurenthub] [--repeat 3]
       [--cold-repeat 1] [--parse-only]
The questions are the parser corpus's texts (tests/parser_corpus.yaml, 763 of them) repeated to --lines: the same
text comes back every 763 lines. Two memos answer a repeat (issue #14, declared): the CLI batch keeps the JSON
line it printed per question line (bot/cli/ask_batch.py, 1,024 lines per run), and engine.parse keeps parse results
per vocabulary (1,024 texts). So the figure the issue asks for ("memos on") measures each distinct text once and
19,237 memo hits; the cold figure beside it ("memos off") measures every line parsed, sized, fitted,
serving-checked and encoded again (ask_batch(memo=False), CARDFIT_ASK_MEMO=0 for the CLI: neither memo is read or
filled). What is kept per catalog or per model (rankings, registries, formats) is warm in both.
In-process: bot.cli.main.ask_batch(...).line, exactly what the CLI calls per line, best of --repeat passes (memos on:
each pass with a new batch and engine.parse's memo cleared, as a new CLI run starts) or --cold-repeat (memos off,
one pass by default: 20,000 computed lines, and the script stays near a minute);
wall clock and µs of CPU time per question. Via the CLI: one `cardfit ask --catalog C --json -` process over all
lines, its start included, once each way (wall clock, and the process's CPU time per question). The Hugging Face
lookup is off (CARDFIT_HF_LOOKUP=0) so that no line waits on a network. Targets (memos-on rows only): 15,000
questions/s in-process, 10,000/s via the CLI.
--parse-only: engine.parse.parse alone over the same lines with its memo bypassed (µs of CPU time per question,
best of --repeat), and a memo hit's cost beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bot.cli.main import ask_batch
from catalog.loader import load_catalog
from engine.parse import Vocabulary, clear_parse_memo, parse

ROOT = Path(__file__).resolve().parents[1]
TARGET_IN_PROCESS = 15_000
TARGET_CLI = 10_000
NO_TARGET = "none: the uncached path, beside the row above"


def corpus_lines(count: int) -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    cases = data["cases"] if isinstance(data, dict) else data
    texts = [case["text"].replace("\n", " ") for case in cases if case.get("text")]
    return [texts[i % len(texts)] for i in range(count)]


def in_process(lines: list[str], catalog_id: str, repeat: int, memo: bool) -> tuple[float, float, int]:
    """(questions/s by wall clock, µs of CPU time per question, memo hits), each the best of `repeat` passes."""
    catalog = load_catalog(catalog_id).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    warm = ask_batch(catalog, vocabulary, memo=False)
    for text in lines[:800]:  # warm: the registry, alias index, regexes and the catalog's ranking, built once
        warm.line(text)
    best_wall = best_cpu = float("inf")
    hits = 0
    for _ in range(repeat):
        clear_parse_memo()  # memos on: each pass starts as a new `cardfit ask --json -` run does, empty
        batch = ask_batch(catalog, vocabulary, memo=memo)
        wall, cpu = time.perf_counter(), time.process_time()
        answered = 0
        for text in lines:
            answered += batch.line(text).startswith(b"{")
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        assert answered == len(lines)
        hits = batch.hits
    return len(lines) / best_wall, best_cpu / len(lines) * 1e6, hits


def parse_only(lines: list[str], catalog_id: str, repeat: int) -> tuple[float, float, float]:
    """engine.parse.parse over the lines: (µs of CPU time, µs of wall time) per question with the memo bypassed,
    and µs of CPU time per memo hit; each the best pass."""
    vocabulary = Vocabulary.of_catalog(load_catalog(catalog_id).catalog)
    for text in lines[:800]:
        parse(text, vocabulary)  # fills the memo for the hit timing; the uncached passes neither read nor fill it
    best_cpu = best_wall = best_hit = float("inf")
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        for text in lines:
            parse(text, vocabulary, memo=False)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
        cpu = time.process_time()
        for text in lines:
            parse(text, vocabulary)
        best_hit = min(best_hit, time.process_time() - cpu)
    return best_cpu / len(lines) * 1e6, best_wall / len(lines) * 1e6, best_hit / len(lines) * 1e6


def via_cli(lines: list[str], catalog_id: str, memo: bool) -> tuple[float, float, int]:
    """(questions/s by wall clock, µs of the process's CPU time per question, answers with error set)."""
    cardfit = ROOT / ".venv" / "bin" / "cardfit"
    command = [str(cardfit)] if cardfit.exists() else [sys.executable, "-m", "bot.cli"]
    payload = "".join(f"{line}\n" for line in lines)
    env = dict(os.environ, CARDFIT_HF_LOOKUP="0", CARDFIT_ASK_MEMO="1" if memo else "0")
    start, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([*command, "ask", "--catalog", catalog_id, "--json", "-"], input=payload,
                            capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env, check=True)
    elapsed = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
    out_lines = result.stdout.splitlines()
    assert len(out_lines) == len(lines), (len(out_lines), len(lines))
    return len(out_lines) / elapsed, cpu_s / len(lines) * 1e6, sum(1 for line in out_lines if json.loads(line)["error"])


def print_parse_only(lines: list[str], args: argparse.Namespace) -> None:
    cpu_us, wall_us, hit_us = parse_only(lines, args.catalog, args.repeat)
    print(f"parse only, memo bypassed: {len(lines):,} questions at {cpu_us:.1f} µs of CPU time ({wall_us:.1f} µs "
          f"wall) per question (best of {args.repeat}); a memo hit {hit_us:.1f} µs (a copy of the result)")
    rows = [{"metric": f"parse only ({args.catalog}), uncached, CPU time", "value": round(cpu_us, 1),
             "unit": "µs/question", "target": "none of its own (part of the ask path's)", "ok": True},
            {"metric": f"parse memo hit ({args.catalog}), CPU time", "value": round(hit_us, 1),
             "unit": "µs/question", "target": "none: the memoized parse, beside the row above", "ok": True}]
    print(json.dumps({"bench": "bench_ask", "rows": rows}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--catalog", default="gpurenthub")
    parser.add_argument("--repeat", type=int, default=3, help="passes with the memos on (best counts)")
    parser.add_argument("--cold-repeat", type=int, default=1, help="passes with the memos off (best counts)")
    parser.add_argument("--parse-only", action="store_true", help="time engine.parse.parse alone, uncached")
    args = parser.parse_args()
    os.environ["CARDFIT_HF_LOOKUP"] = "0"
    lines = corpus_lines(args.lines)
    if args.parse_only:
        print_parse_only(lines, args)
        return
    distinct = len(set(lines))
    rate, cpu_us, hits = in_process(lines, args.catalog, args.repeat, memo=True)
    print(f"in-process, memos on: {len(lines):,} questions ({distinct:,} distinct, {hits:,} answered by the line "
          f"memo) at {rate:,.0f} questions/s, {cpu_us:.1f} µs of CPU time each (best of {args.repeat}; target "
          f"{TARGET_IN_PROCESS:,})")
    cold_rate, cold_cpu_us, _ = in_process(lines, args.catalog, args.cold_repeat, memo=False)
    print(f"in-process, memos off (cold: every line computed): {cold_rate:,.0f} questions/s, {cold_cpu_us:.1f} µs "
          f"of CPU time each (best of {args.cold_repeat})")
    cli_rate, cli_cpu_us, errors = via_cli(lines, args.catalog, memo=True)
    print(f"cardfit ask --json -, memos on: {len(lines):,} lines at {cli_rate:,.0f} questions/s, process start "
          f"included, {cli_cpu_us:.1f} µs of its CPU time each (target {TARGET_CLI:,})")
    cold_cli_rate, cold_cli_cpu_us, cold_errors = via_cli(lines, args.catalog, memo=False)
    print(f"cardfit ask --json -, memos off (CARDFIT_ASK_MEMO=0, cold): {cold_cli_rate:,.0f} questions/s, "
          f"{cold_cli_cpu_us:.1f} µs of its CPU time each")
    assert errors == cold_errors, (errors, cold_errors)
    print(f"answers with error set (non-questions and nonsense in the corpus): {errors:,}")
    where = f"{args.catalog}, {len(lines):,} lines"
    rows: list[dict[str, Any]] = [
        {"metric": f"ask path in-process ({args.catalog}), memos on", "value": round(rate), "unit": "questions/s",
         "target": f">= {TARGET_IN_PROCESS:,}", "ok": rate >= TARGET_IN_PROCESS},
        {"metric": f"ask path in-process ({args.catalog}), memos off (cold)", "value": round(cold_rate),
         "unit": "questions/s", "target": NO_TARGET, "ok": True},
        {"metric": f"ask path in-process ({args.catalog}), memos off (cold), CPU time", "value": round(cold_cpu_us, 1),
         "unit": "µs/question", "target": NO_TARGET, "ok": True},
        {"metric": f"cardfit ask --json - ({where}), memos on", "value": round(cli_rate),
         "unit": "questions/s", "target": f">= {TARGET_CLI:,}", "ok": cli_rate >= TARGET_CLI},
        {"metric": f"cardfit ask --json - ({where}), memos off (cold)", "value": round(cold_cli_rate),
         "unit": "questions/s", "target": NO_TARGET, "ok": True},
    ]
    print(json.dumps({"bench": "bench_ask", "rows": rows}))


if __name__ == "__main__":
    main()
