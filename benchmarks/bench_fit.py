"""Fit selection per question on synthetic 15 / 150 / 1,500-card catalogs (target: a 1,500-card catalog costs at
most 5x the 15-card one per question).

Usage: .venv/bin/python -m benchmarks.bench_fit [--repeat 5] [--catalog gpurenthub]
The catalogs are made from the bundled catalog's cards (seeded random, the same every run): each synthetic card
is a bundled card (after the first copy of each: under a new id and name) with its price scaled by 0.6-1.8, a
random subset of the catalog's regions and, for half of them, a random stock per region; the 15-card catalog is
made the same way, so the three differ only in size. The questions are the parser corpus's
(tests/parser_corpus.yaml) that size something: each is parsed, resolved and sized once on the bundled catalog,
outside the clock; the clock runs over engine.fit.selection.select for every question (the policy's choice, its
alternatives, the reason), best of --repeat passes (the machine is shared and loaded).
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

import yaml

from catalog.loader import load_catalog
from catalog.schema import Catalog
from catalog.validation import validate_card, validate_catalog
from engine.fit.selection import select
from engine.parse import Vocabulary, parse
from engine.sizing.rule import Requirement, ResolvedRequest, SizingError, resolve, size

ROOT = Path(__file__).resolve().parents[1]
SIZES = (15, 150, 1_500)
TARGET_RATIO = 5.0


def synthetic(base: Catalog, cards: int, seed: int = 14) -> Catalog:
    """`cards` cards made from the base catalog's, with varied prices, regions and stock."""
    rng = random.Random(seed)
    regions = sorted({region for card in base.cards for region in card.regions}) or ["R-1"]
    made = []
    for i in range(cards):
        card = base.cards[i % len(base.cards)].model_dump()
        factor = rng.uniform(0.6, 1.8)
        for price in ("price_monthly_usd", "price_hourly_usd"):
            if card.get(price) is not None:
                card[price] = round(card[price] * factor, 2)
        offered = rng.sample(regions, rng.randint(1, len(regions)))
        card.update(regions=tuple(offered), stock={region: rng.choice((0, 1, 2, 4, 8, 16)) for region in offered}
                    if rng.random() < 0.5 else None)
        if i >= len(base.cards):  # the first copy of each keeps its id, name and aliases: named cards are found
            card.update(id=f"{card['id']}-s{i}", name=f"{card['name']} S{i}", aliases=())
        made.append(card)
    # Each card is validated; the catalog's own limit (200 cards, catalog/schema.py) is what a 1,500-card catalog
    # is here to go past, so the cards are set on a validated copy.
    data = base.model_dump()
    data["cards"] = made[:len(base.cards)]
    return validate_catalog(data).model_copy(update={"cards": tuple(validate_card(c) for c in made)})


def sized_questions(catalog: Catalog) -> list[tuple[Requirement, ResolvedRequest]]:
    corpus = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))["cases"]
    vocabulary = Vocabulary.of_catalog(catalog)
    sized = []
    for case in corpus:
        request = parse(case["text"], vocabulary).request if case.get("text") else None
        if request is None or request.intent in ("price", "biggest_model"):
            continue
        try:
            resolved = resolve(request, catalog.sizing)
            sized.append((size(resolved, catalog.sizing), resolved))
        except SizingError:
            continue
    return sized


def per_question_us(catalog: Catalog, questions: list[tuple[Requirement, ResolvedRequest]], repeat: int) -> float:
    for requirement, resolved in questions[:50]:  # warm: the catalog's ranking is built once, on first use
        select(requirement, resolved, catalog)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for requirement, resolved in questions:
            select(requirement, resolved, catalog)
        best = min(best, time.perf_counter() - start)
    return best / len(questions) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--catalog", default="gpurenthub")
    args = parser.parse_args()
    base = load_catalog(args.catalog).catalog
    questions = sized_questions(base)
    figures: dict[int, float] = {}
    for cards in SIZES:
        catalog = synthetic(base, cards)
        figures[cards] = per_question_us(catalog, questions, args.repeat)
        print(f"{cards:>5,} cards: {figures[cards]:8.1f} us per question (fit selection, {len(questions)} questions, "
              f"best of {args.repeat})")
    ratio = figures[SIZES[-1]] / figures[SIZES[0]]
    print(f"1,500 : 15 cards = {ratio:.2f}x (target <= {TARGET_RATIO:g}x)")
    rows: list[dict[str, Any]] = [
        {"metric": f"fit selection, {cards:,} cards", "value": round(figures[cards], 1), "unit": "us/question",
         "target": "", "ok": True} for cards in SIZES]
    rows.append({"metric": "fit selection 1,500:15 cards", "value": round(ratio, 2), "unit": "x",
                 "target": f"<= {TARGET_RATIO:g}x", "ok": ratio <= TARGET_RATIO})
    print(json.dumps({"bench": "bench_fit", "rows": rows}))


if __name__ == "__main__":
    main()
