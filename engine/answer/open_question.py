"""Open questions: "largest qwen that fits on a 3090", "biggest model on 2x A100", "best model on a $300/month
budget" -- the registry's largest models that run on the layout (the provider's rule with room to spare and the
serving check, each judged as a full answer for that model on that layout), with the format, context and price
they run at. A money budget picks the layout first: the most memory the budget rents.

"Newest": the registry lists each family's releases oldest first (engine/models/data/*.yaml), so of two models
of one size the later entry is named first; the registry carries no release dates."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from catalog.schema import Card, Catalog
from engine.fit.ranking import plan
from engine.fit.selection import Layout
from engine.fit.topup import topup_amount_usd
from engine.models.registry import ModelShape
from engine.sizing.rule import PRECISION_BYTES, SizeRequest

PICKS_SHOWN = 3
# Tried in this order when the question names no precision: the widest that runs is the one named
TRIED_PRECISIONS = ("bf16", "fp8", "int4")


@dataclass(frozen=True, slots=True)
class ModelPick:
    """A registry model that runs on the layout: at which precision and context, for what price."""

    model: str  # registry id
    name: str
    precision: str
    context_tokens: int
    monthly_usd: float | None  # on the card named: its price; in a memory budget: the cheapest rental that runs it
    hourly_usd: float | None
    layout: str | None = None  # in a memory budget: that rental ("1x A40"); None on the card named

    def to_json(self) -> dict[str, object]:
        return {"model": self.model, "name": self.name, "precision": self.precision,
                "context_tokens": self.context_tokens, "monthly_usd": self.monthly_usd,
                "hourly_usd": self.hourly_usd, "layout": self.layout}


def largest_models(request: SizeRequest, place: tuple[Card, int] | float, shapes: Iterable[ModelShape],
                   answer_one: Callable[[SizeRequest], tuple[Layout | None, int] | None],
                   family: tuple[str, ...] = ()) -> tuple[ModelPick, ...]:
    """The largest models (then the newest) that run on `place` -- `count` x `card`, or a memory budget in GB (the
    user's own card): each tried at the question's precision, else at BF16, FP8, INT4 in turn, sized and checked as
    a question of its own naming that layout or memory (`answer_one`: the layout it is priced on and the context it
    was sized at when it runs; None when it does not)."""
    order = list(shapes)
    candidates = [(position, shape) for position, shape in enumerate(order)
                  if shape.kind == "llm" and not shape.typical and (not family or shape.id in family)]
    candidates.sort(key=lambda item: (-item[1].params_b, -item[0]))
    precisions = (request.precision,) if request.precision else TRIED_PRECISIONS
    card_id: str | None = None
    count: int | None = None
    budget_gb: float | None = None
    if isinstance(place, tuple):
        card_id, count, vram_gb = place[0].id, place[1], place[0].vram_gb * place[1]
    else:
        vram_gb = budget_gb = place
    picks: list[ModelPick] = []
    for _, shape in candidates:
        for precision in precisions:
            if precision in PRECISION_BYTES and shape.params_b * PRECISION_BYTES[precision] > vram_gb:
                continue  # the weights alone are more than the layout's memory
            asked = dataclasses.replace(request, model=shape.id, params_b=None, precision=precision, intent=None,
                                        assumed=[], ignored=[], budget_usd=None, card=card_id, gpu_count=count,
                                        memory_budget_gb=budget_gb)
            found = answer_one(asked)
            if found is None:
                continue
            fit, context = found
            picks.append(ModelPick(shape.id, shape.name, precision, context,
                                   fit.monthly_usd if fit is not None else None,
                                   fit.hourly_usd if fit is not None else None,
                                   fit.label if fit is not None and not isinstance(place, tuple) else None))
            break
        if len(picks) == PICKS_SHOWN:
            break
    return tuple(picks)


def layout_for_money(catalog: Catalog, budget_usd: float, billing: str, span: int = 1) -> tuple[Card, int] | None:
    """The layout a money budget rents with the most memory (then the cheaper): what holds the largest model."""
    best: tuple[float, float, Card, int] | None = None
    for _, count, _, card in plan(catalog).by_price:
        if count not in card.set_sizes:
            continue
        hourly, monthly = catalog.set_price_usd(card, count)
        price = topup_amount_usd(catalog, hourly, monthly, billing, span)
        if price > budget_usd + 0.005:
            continue
        key = (card.vram_gb * count, -monthly)
        if best is None or key > best[:2]:
            best = (key[0], key[1], card, count)
    return (best[2], best[3]) if best is not None else None


def family_ids(word: str | None, shapes: Iterable[ModelShape]) -> tuple[str, ...]:
    """The registry ids an open question's family word names: 'qwen' -> every id starting with 'qwen' (so not
    DeepSeek's distill of a Qwen), 'qwen3' -> the Qwen3 releases; () for no word (any model)."""
    if not word:
        return ()
    key = "".join(word.lower().split())
    return tuple(shape.id for shape in shapes if shape.id.replace("-", "").startswith(key.replace("-", ""))
                 or shape.id.startswith(key))


def cheapest_layout(catalog: Catalog) -> tuple[Card, int]:
    """The catalog's cheapest layout that can be rented (a money budget that rents nothing is shown it)."""
    return next((card, count) for _, count, _, card in plan(catalog).by_price if count in card.set_sizes)
