"""How long one chart takes: matplotlib's import, the first render, then the median of N renders.

Usage: .venv/bin/python -m benchmarks.bench_chart [--renders 30] [--lang en]
Target: one chart under 300 ms on the 2-core dev machine (the bot renders it in a worker thread). The import cost
is measured in a fresh interpreter; the first render pays for loading the font once per process; wall time is
printed with CPU time, since other work on a shared machine stretches the one and not the other.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bot.features.chart import chart_data, render_png
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.sizing.rule import SizeRequest

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 300.0
QUESTIONS = {  # a single card with alternatives, and a set drawn per GPU beside single cards
    "70B int4": SizeRequest(model="llama-3.1-70b", precision="int4"),
    "70B bf16 on 1x H100": SizeRequest(params_b=70, precision="bf16", card="h100", gpu_count=1),
}
IMPORT_PROBE = ("import time; t = time.perf_counter(); "
                "from matplotlib.backends.backend_agg import FigureCanvasAgg; from matplotlib.figure import Figure; "
                "print((time.perf_counter() - t) * 1000)")


def import_ms() -> float:
    result = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, cwd=ROOT,
                            check=True)
    return float(result.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--renders", type=int, default=30)
    parser.add_argument("--lang", choices=("en", "de"), default="en")
    args = parser.parse_args()
    imports = sorted(import_ms() for _ in range(3))
    print(f"matplotlib import (fresh interpreter, median of 3): {imports[1]:.0f} ms")
    catalog = load_catalog("gpurenthub").catalog
    worst = 0.0
    rows: list[dict[str, object]] = [{"metric": "matplotlib import (median of 3)", "value": round(imports[1], 1),
                                      "unit": "ms", "target": "", "ok": None}]
    for name, request in QUESTIONS.items():
        answer = build_answer(request, catalog)
        start = time.perf_counter()
        data = chart_data(answer, args.lang)
        data_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        png = render_png(data)
        first_ms = (time.perf_counter() - start) * 1000
        times, cpu_times = [], []
        for _ in range(args.renders):
            start, cpu_start = time.perf_counter(), time.process_time()
            render_png(data)
            times.append((time.perf_counter() - start) * 1000)
            cpu_times.append((time.process_time() - cpu_start) * 1000)
        median = statistics.median(times)
        worst = max(worst, median)
        rows.append({"metric": f"render {name!r} (median of {args.renders}, wall)", "value": round(median, 1),
                     "unit": "ms", "target": f"< {TARGET_MS:.0f} ms", "ok": median < TARGET_MS})
        print(f"{name}: chart_data {data_ms:.2f} ms; first render {first_ms:.0f} ms; "
              f"median of {args.renders} renders {median:.0f} ms wall (min {min(times):.0f}, max {max(times):.0f}), "
              f"{statistics.median(cpu_times):.0f} ms CPU; PNG {len(png) / 1000:.1f} KB")
    verdict = "ok" if worst < TARGET_MS else "over"
    print(f"target: one chart < {TARGET_MS:.0f} ms -> {verdict} (worst median {worst:.0f} ms wall; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(json.dumps({"bench": "chart", "rows": rows}))  # the last line: benchmarks/run_all.py's table


if __name__ == "__main__":
    main()
