"""Cold start: wall time of `cardfit ask "70B int4"` (text and --json) against a bare interpreter.

Usage: .venv/bin/python -m benchmarks.bench_coldstart [--runs 21] [--question "70B int4"] [--compare CHECKOUT]
       [--instructions]
Each round starts the three commands once, in turn (interleaved, so a burst of load on this shared machine
stretches all three alike); the figures are medians with the min-max spread. The bare interpreter is this one
(`sys.executable -c pass`: the virtual environment's Python, as `cardfit` runs, not a pyenv shim that adds a
shell script's start). Target: `cardfit ask` within 150 ms of it. With --compare, the other checkout's commands and
its own `python -c pass` (its editable install may cost every start of its Python more) run in the same rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 150.0


def commands(question: str, other: Path | None = None) -> dict[str, list[str]]:
    """The commands of one round; with `other` (another checkout with its own .venv, e.g. main's), its
    `cardfit ask` too, so that before and after are measured in the same rounds."""
    cardfit = ROOT / ".venv" / "bin" / "cardfit"
    ask = [str(cardfit)] if cardfit.exists() else [sys.executable, "-m", "bot.cli"]
    named = {
        "python -c pass": [sys.executable, "-c", "pass"],
        f"cardfit ask {question!r}": [*ask, "ask", question],
        f"cardfit ask --json {question!r}": [*ask, "ask", "--json", question],
    }
    if other is not None:  # its own interpreter too: each checkout's figures are over its own `python -c pass`
        named[f"{other.name}: python -c pass"] = [str(other / ".venv" / "bin" / "python"), "-c", "pass"]
        named[f"{other.name}: cardfit ask {question!r}"] = [str(other / ".venv" / "bin" / "cardfit"), "ask", question]
        named[f"{other.name}: cardfit ask --json {question!r}"] = [str(other / ".venv" / "bin" / "cardfit"), "ask",
                                                                     "--json", question]
    return named


def timed_ms(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one run; CPU (user + system of the child) is what load on a shared machine
    stretches least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def measure(runs: int, question: str, other: Path | None = None) -> tuple[dict[str, list[float]],
                                                                          dict[str, list[float]]]:
    named = commands(question, other)
    for command in named.values():  # once each first: compiled copies and the page cache are warm for all
        timed_ms(command)
    walls: dict[str, list[float]] = {name: [] for name in named}
    cpus: dict[str, list[float]] = {name: [] for name in named}
    for _ in range(runs):
        for name, command in named.items():
            wall, cpu = timed_ms(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return walls, cpus


def instructions_m(command: list[str]) -> float | None:
    """Millions of instructions of one run under valgrind's callgrind (None without valgrind): what load on a shared
    machine does not change at all, so a before/after difference shows even while wall and CPU time are noise."""
    if shutil.which("valgrind") is None:
        return None
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    found = re.search(r"Collected : (\d+)", result.stderr)
    return int(found.group(1)) / 1e6 if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--question", default="70B int4")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="another checkout (with its .venv) to time in the same rounds, e.g. main's")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions once under valgrind (~10 s each)")
    args = parser.parse_args()
    times, cpus = measure(max(args.runs, 1), args.question, args.compare)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base_name = next(iter(times))
    rows = []
    for name, values in times.items():
        own_base = name.split(": ", 1)[0] + ": python -c pass" if ": " in name else base_name
        over = medians[name] - medians[own_base]
        cpu = cpus[name]
        cpu_over = statistics.median(cpu) - statistics.median(cpus[own_base])
        line = (f"{name}: median {medians[name]:.0f} ms wall (min {min(values):.0f}, max {max(values):.0f}), "
                f"{statistics.median(cpu):.0f} ms CPU (min {min(cpu):.0f}, max {max(cpu):.0f})")
        print(line if name == own_base else f"{line}; {over:+.0f} ms wall, {cpu_over:+.0f} ms CPU over {own_base}")
        if name.startswith("cardfit"):  # this checkout's; a --compare checkout's are printed only
            rows.append({"metric": f"{name}, wall over python -c pass", "value": round(over, 1), "unit": "ms",
                         "target": f"<= {TARGET_MS:.0f} ms over python -c pass", "ok": over <= TARGET_MS})
            rows.append({"metric": f"{name}, CPU over python -c pass", "value": round(cpu_over, 1), "unit": "ms",
                         "target": "", "ok": None})
    rows.append({"metric": "python -c pass", "value": round(medians[base_name], 1), "unit": "ms", "target": "",
                 "ok": None})
    if args.instructions:
        named = commands(args.question, args.compare)
        counted = {name: instructions_m(command) for name, command in named.items()}
        for name, count in counted.items():
            own_base = name.split(": ", 1)[0] + ": python -c pass" if ": " in name else base_name
            base_count = counted[own_base]
            if count is None or base_count is None:
                print(f"{name}: no instruction count (valgrind not installed)")
                continue
            print(f"{name}: {count:.1f} M instructions" + ("" if name == own_base else
                                                            f"; {count - base_count:+.1f} M over {own_base}"))
            if name.startswith("cardfit"):
                rows.append({"metric": f"{name}, instructions over python -c pass",
                             "value": round(count - base_count, 1), "unit": "M", "target": "", "ok": None})
    print(f"{args.runs} interleaved rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(json.dumps({"bench": "coldstart", "rows": rows}))


if __name__ == "__main__":
    main()
