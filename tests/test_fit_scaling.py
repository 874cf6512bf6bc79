"""Fit selection's work grows slower than the catalog (1,500 cards at most 5x the 15-card catalog's cost).
Counted, not timed: the layouts the walk checks against the rules (`Ranked.valid`) for the corpus's sized
questions, on bench_fit's synthetic catalogs. For 100x the cards the walk checks 7.4x the layouts (2,844 ->
20,952); reading every count's stream to its first valid layout would check 24x (3,405 -> 82,266)."""
from __future__ import annotations

import pytest

from benchmarks.bench_fit import sized_questions, synthetic
from catalog.loader import load_catalog
from engine.fit import ranking
from engine.fit.selection import select


@pytest.fixture(scope="module")
def checked_per_size() -> dict[int, int]:
    base = load_catalog("gpurenthub").catalog
    questions = sized_questions(base)
    checked: dict[int, int] = {}
    original = ranking.Ranked.valid
    for cards in (15, 1_500):
        catalog = synthetic(base, cards)
        count = 0

        def counting(self, entries, need, _original=original):  # type: ignore[no-untyped-def]
            nonlocal count
            count += len(entries)
            return _original(self, entries, need)

        ranking.Ranked.valid = counting  # type: ignore[method-assign]
        try:
            for requirement, resolved in questions:
                select(requirement, resolved, catalog)
        finally:
            ranking.Ranked.valid = original  # type: ignore[method-assign]
        checked[cards] = count
    return checked


def test_layouts_checked_grow_slower_than_the_catalog(checked_per_size: dict[int, int]) -> None:
    small, big = checked_per_size[15], checked_per_size[1_500]
    assert small > 1_000  # the walk really ran
    assert big <= 10 * small, (small, big)
