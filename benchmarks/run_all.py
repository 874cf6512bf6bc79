"""`make bench`: every benchmarks/bench_*.py in its own interpreter, then one table of their figures.

Each script prints its figures in words and, as its last stdout line, one JSON object
{"bench": NAME, "rows": [{"metric", "value", "unit", "target", "ok"}]} (the benchmarks' common convention). A script
without that line shows as "no figures"; the table prints whatever happened, and the exit status is non-zero
only when a script crashed (a missed target is a figure, not a failure).
Usage: .venv/bin/python -m benchmarks.run_all [--only coldstart,ask] [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("bench", "metric", "value", "unit", "target", "ok")


@dataclass(frozen=True)
class Outcome:
    bench: str
    returncode: int
    stdout: str
    seconds: float


def discover(directory: Path = ROOT / "benchmarks") -> list[str]:
    """The benchmark modules' names ("bench_ask", ...), in name order."""
    return sorted(path.stem for path in directory.glob("bench_*.py"))


def figures_line(stdout: str) -> dict[str, Any] | None:
    """The last non-empty stdout line as the figures object, or None when it is not one."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        data = json.loads(lines[-1])
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        return None
    return data


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.1f}"
    return str(value)


def table_rows(outcomes: list[Outcome]) -> list[tuple[str, ...]]:
    """One row per figure; a script without figures, or one that crashed, gets one row saying so."""
    rows: list[tuple[str, ...]] = []
    for outcome in outcomes:
        name = outcome.bench.removeprefix("bench_")
        data = figures_line(outcome.stdout)
        if outcome.returncode != 0:
            rows.append((name, f"crashed (exit {outcome.returncode})", "-", "", "", "NO"))
        if data is None:
            if outcome.returncode == 0:
                rows.append((name, "no figures", "-", "", "", "-"))
            continue
        for row in data["rows"]:
            if not isinstance(row, dict):
                continue
            rows.append((str(data.get("bench") or name), str(row.get("metric", "?")), _cell(row.get("value")),
                         str(row.get("unit") or ""), str(row.get("target") or ""), _cell(row.get("ok"))))
    return rows


def format_table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(str(row[i])) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(COLUMNS, widths, strict=True))]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def run(bench: str, timeout_s: float) -> Outcome:
    start = time.perf_counter()
    print(f"== {bench}", flush=True)
    try:
        result = subprocess.run([sys.executable, "-m", f"benchmarks.{bench}"], cwd=ROOT, capture_output=True,
                                text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        print(out, end="")
        print(f"(timed out after {timeout_s:.0f} s)")
        return Outcome(bench, 124, out, time.perf_counter() - start)
    print(result.stdout, end="")
    if result.returncode != 0:
        print(result.stderr[-2000:], end="", file=sys.stderr)
    return Outcome(bench, result.returncode, result.stdout, time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="comma-separated names (coldstart,ask,...)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per script")
    args = parser.parse_args()
    names = discover()
    if args.only:
        wanted = {f"bench_{name.strip().removeprefix('bench_')}" for name in args.only.split(",")}
        names = [name for name in names if name in wanted]
    outcomes = [run(name, args.timeout) for name in names]
    print()
    print(format_table(table_rows(outcomes)))
    print(f"{len(outcomes)} benchmarks in {sum(outcome.seconds for outcome in outcomes):.0f} s")
    return 1 if any(outcome.returncode != 0 for outcome in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
