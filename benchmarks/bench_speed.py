"""The speed estimate (engine/speed) against public measured runs (tests/data/speed_calibration.yaml): the error
of each point, then the median error and spread of single-card decode, multi-card decode and prefill.

Usage: .venv/bin/python -m benchmarks.bench_speed [--points]
Error = estimate / measured - 1. The last line is the figures as JSON for `make bench` (benchmarks/run_all.py).
"""
from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from catalog.loader import load_catalog
from catalog.schema import Card
from engine.speed.estimate import Hardware, Workload, estimate

ROOT = Path(__file__).resolve().parents[1]
POINTS = ROOT / "tests" / "data" / "speed_calibration.yaml"
QUANTIZED = ("q", "iq", "mxfp4", "nvfp4", "awq", "gptq", "fp8")


@dataclass(frozen=True)
class Point:
    id: str
    kind: str
    count: int
    measured: float
    estimated: float
    url: str
    excluded: str | None

    @property
    def error(self) -> float:
        return self.estimated / self.measured - 1


def cards() -> dict[str, Card]:
    found: dict[str, Card] = {}
    for name in ("gpurenthub", "gpuwithcrypto"):
        for card in load_catalog(name).catalog.cards:
            found.setdefault(card.id, card)
    return found


def hardware(card: Card) -> Hardware:
    return Hardware(card.bandwidth_gbps, card.fp16_tflops, card.fp8_tflops, card.interconnect)


def evaluate(raw: dict[str, Any], models: dict[str, Any], by_id: dict[str, Card]) -> Point:
    model = models[raw["model"]]
    fmt = str(raw.get("format") or "")
    work = Workload(engine=raw["engine"], count=raw["count"], weights_gb=raw["weights_gb"],
                    active_params_b=model["active_params_b"], layers=model["layers"], moe=model["moe"],
                    kv_bytes_per_token=model["kv_bytes_per_token"], context_tokens=raw["context"],
                    users=raw.get("users", 1), prompt_tokens=raw.get("prompt"), weight_format=fmt or None,
                    quantized=fmt.startswith(QUANTIZED))
    spec = raw.get("card_spec")  # a card no bundled catalog rents, with its figures' source in the data file
    hw = Hardware(spec["bandwidth_gbps"], spec.get("fp16_tflops"), spec.get("fp8_tflops"), spec["interconnect"]) \
        if spec else hardware(by_id[raw["card"]])
    speed = estimate(hw, work)
    estimated = speed.prefill_tok_s if raw["kind"] == "prefill" else speed.aggregate_tok_s
    return Point(raw["id"], raw["kind"], raw["count"], float(raw["measured"]), float(estimated or 0.0),
                 raw["url"], raw.get("excluded"))


def points(path: Path = POINTS) -> list[Point]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    by_id = cards()
    return [evaluate(raw, data["models"], by_id) for raw in data["points"]]


def summary(found: list[Point]) -> dict[str, dict[str, float]]:
    """Median error, spread (min..max) and share within 25 % per group."""
    groups = {"single-card decode": [p for p in found if p.kind == "decode" and p.count == 1],
              "multi-card decode": [p for p in found if p.kind == "decode" and p.count > 1],
              "prefill": [p for p in found if p.kind == "prefill"]}
    out: dict[str, dict[str, float]] = {}
    for name, group in groups.items():
        errors = [p.error for p in group if not p.excluded]
        if not errors:
            continue
        out[name] = {"points": len(errors), "median_error": statistics.median(errors),
                     "min_error": min(errors), "max_error": max(errors),
                     "within_25": sum(abs(e) <= 0.25 for e in errors) / len(errors),
                     "max_ratio": max(p.estimated / p.measured for p in group if not p.excluded)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", action="store_true", help="print every point")
    args = parser.parse_args()
    found = points()
    if args.points:
        for p in found:
            flag = f"  (excluded: {p.excluded})" if p.excluded else ""
            print(f"{p.id:32} {p.kind:8} measured {p.measured:9.1f} estimated {p.estimated:9.1f} "
                  f"{p.error:+6.0%}{flag}")
    rows = []
    for name, s in summary(found).items():
        print(f"{name}: {s['points']:.0f} points, median error {s['median_error']:+.0%} "
              f"(spread {s['min_error']:+.0%} to {s['max_error']:+.0%}), {s['within_25']:.0%} within ±25 %, "
              f"worst {s['max_ratio']:.2f}x")
        rows.append({"metric": f"{name}: median error", "value": round(100 * s["median_error"], 1), "unit": "%",
                     "target": "within ±25 %", "ok": abs(s["median_error"]) <= 0.25})
    print(json.dumps({"bench": "speed", "rows": rows}))


if __name__ == "__main__":
    main()
