"""The reverse questions: the largest context, the requests at once, the biggest model on a layout --
each by the seeds' rule (the sizing formula solved for that value) and by the serving check; JSON `capacity`."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from catalog.schema import Card, Catalog
from engine.answer.open_question import ModelPick
from engine.models.registry import Registry, default_registry
from engine.notes import Note
from engine.serving import Gpu, biggest_model_params_b
from engine.serving.constants import MIB
from engine.serving.reverse import max_context_for_users, serving_check
from engine.serving.review import ServingOptions, ServingReview, engine_for
from engine.sizing.rule import (
    MAX_PARAMS_B,
    MIN_PARAMS_B,
    PRECISION_BYTES,
    Requirement,
    ResolvedRequest,
    SizeRequest,
    SizingError,
    resolve,
    size,
)
from engine.sizing.sequence import MAX_CONTEXT_TOKENS

KINDS = ("max_context", "max_batch", "biggest_model")
MODELS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Capacity:
    """DESIGN.md "Contract v2" `capacity`; `capped`: the serving value is the model's own maximum context.

    max_context with `batch` > 1 ("for 8 users"): both values are each user's context (the users share the memory).
    `refused`: why the layout cannot be rented so (sets, one host): then there is no value to give.
    """

    kind: str
    card: str
    count: int
    context_tokens: int | None
    batch: int | None
    rule_value: float | None
    serving_value: float | None
    engine: str
    models: tuple[str, ...] = ()
    capped: bool = False
    weights_fit: bool = True  # max_context/max_batch: the weights and overhead alone fit the layout by the rule
    precision: str | None = None  # biggest_model: the precision the sizes are for (the user's or the default)
    budget_gb: float | None = None  # biggest_model "in 48 GB": a memory budget, no card
    refused: tuple[Note, ...] = ()
    serving_checked: bool = False  # the engine's check was made (serving_value None then: nothing starts)
    picks: tuple[ModelPick, ...] = ()  # biggest_model on a card: the registry's largest models that run there
    budget_usd: float | None = None  # biggest_model "on a $300/month budget": the money that chose the layout

    @property
    def runs(self) -> bool:
        """The layout holds the model with some context or requests: the engine's value when it was checked,
        else the rule's."""
        if self.refused:
            return False
        value = self.serving_value if self.serving_checked else self.rule_value
        return value is not None and value >= 1

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "card": self.card, "count": self.count, "context_tokens": self.context_tokens,
                "batch": self.batch, "rule_value": self.rule_value, "serving_value": self.serving_value,
                "models": list(self.models), "refused": [str(note) for note in self.refused],
                "picks": [pick.to_json() for pick in self.picks], "budget_usd": self.budget_usd}


def _fixed_and_kv(requirement: Requirement) -> tuple[float, float]:
    return requirement.total_gb - requirement.kv_cache_gb, requirement.kv_cache_gb


def sequence_capacity(kind: str, resolved: ResolvedRequest, requirement: Requirement, review: ServingReview | None,
                      card: Card, count: int, refused: tuple[Note, ...] = ()) -> Capacity:
    """max_context / max_batch on `count` x `card`: the rule's memory (weights + KV + overhead <= the set's
    memory) solved for the context or the batch, and the engine's answer for the same layout. max_context for
    `batch` users: each user's context (the memory left after the weights, divided among them). A layout that
    cannot be rented (`refused`) has neither value."""
    fixed, kv = _fixed_and_kv(requirement)
    room = card.vram_gb * count - fixed
    context, batch = resolved.context_tokens, resolved.batch
    cap = resolved.shape.context_max
    rule: float | None = None
    serving: float | None = None
    capped = checked = False
    engine = review.engine if review is not None else engine_for(resolved)
    if refused:
        pass
    elif kind == "max_context":
        per_token = kv / (context * batch) if kv > 0 else 0.0  # one token of one request
        if per_token > 0 and room > 0:
            rule = float(min(math.floor(room / per_token / batch), cap or MAX_TOKENS))
        model = review.model_on(card) if review is not None else None
        if review is not None and model is not None and card.memory_mib is not None:
            vllm, llama_cpp = review.settings()
            try:
                best = max_context_for_users(model, Gpu.from_card(card), batch, engine=review.engine, tp=count,
                                             vllm=vllm, llama_cpp=llama_cpp)
                checked = True
            except ValueError:  # ServingShapeError included: the serving value stays null
                best = None
            serving = float(best) if best is not None else None
            capped = best is not None and cap is not None and best >= cap
    else:
        per_request = kv / batch if kv > 0 else 0.0
        if per_request > 0 and room > 0:
            rule = float(math.floor(room / per_request))
        check = review.check(card, count) if review is not None else None
        if check is not None:
            checked = True
            if check.max_concurrency is not None:
                serving = float(math.floor(check.max_concurrency))
    return Capacity(kind, card.name, count, context, batch if kind == "max_context" else None, rule, serving,
                    engine, capped=capped, weights_fit=room > 0, refused=refused, serving_checked=checked)


MAX_TOKENS = MAX_CONTEXT_TOKENS  # a model without a published maximum


def _fits_rule(params_b: float, request: SizeRequest, catalog: Catalog, vram_gb: float) -> bool:
    asked = dataclasses.replace(request, params_b=params_b, model=None, card=None, gpu_count=None,
                                memory_budget_gb=None, intent=None, assumed=[], ignored=[])
    try:
        return size(resolve(asked, catalog.sizing), catalog.sizing).total_gb <= vram_gb
    except SizingError:
        return False


def _largest(fits: Callable[[float], bool], low: float, high: float) -> float | None:
    """The most parameters (0.1 B steps) for which the monotone fits(params_b) holds."""
    steps_low, steps_high = round(low * 10), round(high * 10)
    if not fits(steps_low / 10):
        return None
    while steps_low < steps_high:
        middle = (steps_low + steps_high + 1) // 2
        if fits(middle / 10):
            steps_low = middle
        else:
            steps_high = middle - 1
    return steps_low / 10


def biggest_model(request: SizeRequest, catalog: Catalog, card: Card | None, count: int,
                  options: ServingOptions | None = None, registry: Registry | None = None) -> Capacity:
    """The biggest model on `count` x `card` (or in the memory budget): the rule's parameters whose requirement
    fits, the engine's (a typical shape at the precision) that starts, and the registry's largest models below."""
    precision = request.precision or catalog.sizing.default_precision
    if precision not in PRECISION_BYTES:
        raise SizingError(f"the biggest model needs a plain precision, not {precision}")
    context = request.context_tokens or catalog.sizing.default_context_tokens
    if card is not None:
        vram_gb, label = card.vram_gb * count, card.name
        gpu = Gpu.from_card(card) if card.memory_mib is not None else None
    else:
        assert request.memory_budget_gb is not None
        vram_gb, label, count = request.memory_budget_gb, f"{request.memory_budget_gb:g} GB", 1
        gpu = Gpu(label, int(vram_gb * 1e9 / MIB))
    rule = _largest(lambda p: _fits_rule(p, request, catalog, vram_gb), MIN_PARAMS_B * 10, MAX_PARAMS_B)
    engine = (options.engine if options is not None else None) or "vllm"
    serving = None
    if gpu is not None:
        serving = biggest_model_params_b(gpu, bytes_per_param=PRECISION_BYTES[precision], context_tokens=context,
                                         engine=engine, tp=count)
    limit = serving if serving is not None else rule
    shapes = sorted((shape for shape in (registry or default_registry()) if shape.kind == "llm"
                     and limit is not None and shape.params_b <= limit), key=lambda shape: -shape.params_b)
    return Capacity("biggest_model", label, count, context, None, rule, serving, engine,
                    tuple(shape.name for shape in shapes[:MODELS_SHOWN]), precision=precision,
                    budget_gb=None if card is not None else vram_gb)


def users_context(review: ServingReview | None, card: Card, count: int, users: int) -> int | None:
    """The longest context each of `users` requests gets at once on `count` x `card` under the review's engine (what
    runs there when the context asked for does not): None when not one token each starts, or it cannot be read."""
    model = review.model_on(card) if review is not None else None
    if review is None or model is None or card.memory_mib is None or users < 1:
        return None
    vllm, llama_cpp = review.settings()
    try:
        return max_context_for_users(model, Gpu.from_card(card), users, engine=review.engine, tp=count, vllm=vllm,
                                     llama_cpp=llama_cpp)
    except ValueError:
        return None


def budget_starts(review: ServingReview | None, budget_gb: float, context_tokens: int, batch: int) -> bool | None:
    """Whether the engine starts the request on one card of `budget_gb` ("is 48 GB enough?" asks of the user's own
    card): None when there is no check (training, no model shape)."""
    model = review.model() if review is not None else None
    if review is None or model is None or budget_gb <= 0:
        return None
    vllm, llama_cpp = review.settings()
    try:
        gpu = Gpu(f"{budget_gb:g} GB", int(budget_gb * 1e9 / MIB))  # under 1 MiB: no card (ValueError)
        return serving_check(model, gpu, context_tokens, engine=review.engine, batch=batch, vllm=vllm,
                             llama_cpp=llama_cpp).starts
    except ValueError:
        return None
