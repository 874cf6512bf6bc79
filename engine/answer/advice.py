"""Advice beyond the answer itself, as plain data: the narrower precision that makes a named layout fit, and two
cards side by side for the same request (/compare)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from catalog.schema import Card, Catalog
from engine.fit.selection import Layout, evaluate_layout, has_room
from engine.serving.review import ServingOptions, ServingReview, engine_for
from engine.sizing.rule import PRECISION_BYTES, Requirement, ResolvedRequest, size

NARROWER_PRECISIONS = ("fp8", "int8", "int4")  # the order we suggest them in: least quality lost first


@dataclass(frozen=True, slots=True)
class PrecisionHint:
    """In `precision` the request needs `requirement` and fits `layout` (the same card and count it failed on)."""

    precision: str  # a PRECISION_BYTES key
    requirement: Requirement
    layout: Layout


def precision_hint(resolved: ResolvedRequest, fit: Layout | None, catalog: Catalog,
                   serving: ServingOptions | None = None) -> PrecisionHint | None:
    """For a named layout that fails an inference request: the widest narrower precision that runs on it -- the
    rule with room to spare, and the engine that would serve that precision starts there (a tip to tap INT4 on
    2x RTX 3090 where vLLM would not start at 16k is a second answer contradicting the first).

    Only the same card and count are tried (no catalog-wide search: this runs for every such reply); a request
    sized by its published weights has no precision to narrow.
    """
    if (fit is None or fit.valid or not resolved.card or resolved.workload != "inference"
            or resolved.weight_bytes is None):
        return None
    llama_cpp = engine_for(resolved, serving) == "llama.cpp"
    for precision in NARROWER_PRECISIONS:
        if PRECISION_BYTES[precision] >= resolved.weight_bytes:
            continue
        if llama_cpp and (precision == "fp8" or PRECISION_BYTES[precision] > 0.9 * resolved.weight_bytes):
            # llama.cpp loads no FP8 weights, and INT8 is no step down from its Q8_0 (8.5 bits): "In FP8 it fits
            # 2x RTX 4090" under a llama.cpp answer named a format its engine cannot run
            continue
        variant = dataclasses.replace(resolved, precision=precision, weight_bytes=PRECISION_BYTES[precision],
                                      quant=None)
        requirement = size(variant, catalog.sizing)
        layout = evaluate_layout(fit.card, fit.count, requirement, variant, catalog)
        if not layout.valid or not has_room(layout):
            continue
        review = ServingReview.of(variant, requirement, catalog, serving)
        check = review.check(fit.card, fit.count) if review is not None else None
        if check is None or review is not None and review.runs(check):
            return PrecisionHint(precision, requirement, layout)
    return None


@dataclass(frozen=True, slots=True)
class CardComparison:
    """One card of a comparison: its cheapest valid set for the request, else its largest rentable set (whose
    `problems` say why it does not work)."""

    card: Card
    layout: Layout

    @property
    def valid(self) -> bool:
        return self.layout.valid


def compare_cards(resolved: ResolvedRequest, requirement: Requirement, catalog: Catalog,
                  cards: tuple[Card, ...] | list[Card]) -> list[CardComparison]:
    """Each card's best set for the same requirement, in the order given."""
    result = []
    for card in cards:
        # A card rented only in sets bigger than one host is shown as its single card, which names why.
        counts = [n for n in card.set_sizes if n <= catalog.selection.max_gpus_per_host] or [1]
        layouts = [evaluate_layout(card, n, requirement, resolved, catalog) for n in counts]
        valid = [layout for layout in layouts if layout.valid]
        if valid:
            chosen = min(valid, key=lambda layout: layout.monthly_usd)
        else:
            chosen = max(layouts, key=lambda layout: layout.count)
        result.append(CardComparison(card, chosen))
    return result
