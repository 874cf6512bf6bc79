"""Fit selection: which card or set holds a requirement, under the provider's selection policy, at what price."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from catalog.names import normalize_name
from catalog.schema import TRAINING_INTERCONNECTS, Card, Catalog
from engine.fit import ranking
from engine.fit.ranking import Candidate, Ranked, set_facts
from engine.formula import fmt_num
from engine.models.registry import ModelShape
from engine.notes import Note
from engine.sizing.rule import Requirement, ResolvedRequest
from engine.speed.estimate import SpeedEstimate
from engine.speed.layout import decodes, default_engine, layout_speed

STANDARD_SET_SIZES = ranking.STANDARD_SET_SIZES
# The smallest spare memory that counts as room, on one card or on each card of a set. The rule's total already
# holds about 2 GB of runtime overhead (CUDA context, allocator), but not what runs beside the model on a rented
# machine: a second CUDA context (nvidia-smi, a monitoring agent, a notebook kernel) takes 0.3-0.5 GB, and PyTorch's
# caching allocator leaves a few hundred MB fragmented once requests of different lengths come and go. Half a
# gigabyte is the least that covers those; below it ("0.0 GB spare") a layout fits on paper only, so it is no
# recommendation and a named layout gets no "Yes". "Tight" (the catalog's threshold) stays a warning above it.
ROOM_GB = 0.5
TP_CODES = ("tp_heads", "tp_kv", "tp_kv_replicate")  # the tensor-parallel rule's notes (tensor_parallel_problem)


# Layouts and their per-GPU view are built for every answer: not frozen (a frozen dataclass pays object.__setattr__
# per field, about 5x the construction), hashed and compared by value as before; nothing changes one once built.
@dataclass(slots=True, unsafe_hash=True)
class PerGpu:
    weights_gb: float
    kv_cache_gb: float
    other_gb: float  # what else each card holds: runtime overhead, optimizer/gradient shards, headroom
    total_gb: float
    spare_gb: float

    def to_json(self) -> dict[str, float]:
        return {"weights_gb": self.weights_gb, "kv_cache_gb": self.kv_cache_gb, "other_gb": self.other_gb,
                "total_gb": self.total_gb, "spare_gb": self.spare_gb}


@dataclass(slots=True, unsafe_hash=True)
class Layout:
    """One card x count, evaluated against a requirement."""

    card: Card
    count: int
    vram_gb: float
    spare_gb: float
    fits: bool
    tight: bool
    valid: bool
    problems: tuple[Note, ...]
    hourly_usd: float
    monthly_usd: float
    decode_tokens_per_s: float | None
    per_gpu: PerGpu | None
    fits_total_not_per_gpu: bool = False
    speed: SpeedEstimate | None = None  # the calibrated estimate; decode_tokens_per_s is its one-stream decode

    @property
    def label(self) -> str:
        return f"{self.count}x {self.card.name}"

    def to_json(self, catalog: Catalog) -> dict[str, object]:
        card = self.card
        facts = set_facts(catalog, card, self.count)
        data: dict[str, object] = {
            "card": card.id,
            "card_name": card.name,
            "count": self.count,
            "vram_gb": self.vram_gb,
            "spare_gb": self.spare_gb,
            "tight": self.tight,
            "valid": self.valid,
            "price": {"hourly": self.hourly_usd, "monthly": self.monthly_usd, "currency": catalog.currency},
            "decode_tokens_per_s": self.decode_tokens_per_s,
            "usd_per_gb_month": self.monthly_usd / self.vram_gb,
            "gbps_per_usd_month": facts.gbps_per_usd_month,
            "discount_percent": facts.discount_percent,
        }
        if self.per_gpu is not None:
            data["per_gpu"] = self.per_gpu.to_json()
        if self.problems:
            data["reason"] = "; ".join(self.problems)
        return data


@dataclass(slots=True)
class Selection:
    """The layout to show, why (an engine.notes.Note, or a plain English sentence for a named layout), what else
    is worth showing, and what selecting noted about the request (a card name read as another card's)."""

    fit: Layout | None
    reason: str
    alternatives: list[Layout] = field(default_factory=list)
    recommended: Layout | None = None  # the policy's choice (equals fit unless the user named a layout)
    notes: tuple[Note, ...] = ()


def tensor_parallel_problem(shape: ModelShape, count: int) -> Note | None:
    """vLLM's rule: query heads divide by the TP size; KV heads divide by it, or it by them (replicated).

    We apply vLLM's check because that is the engine that refuses to start (seed 004 cites vLLM discussion
    #1041): with fewer KV heads than cards each card holds a copy of one KV head, which only works when the
    card count is a multiple of the KV head count; the replicated copies are counted in the per-GPU view.
    """
    if count <= 1 or shape.attention_heads is None:
        return None
    heads = shape.attention_heads
    if heads % count:
        return Note(f"{heads} attention heads do not divide across {count} GPUs (tensor parallelism needs "
                    f"{_divisors(heads)})", "tp_heads", heads=heads, count=count,
                    options=[n for n in (2, 4, 8) if heads % n == 0] or [1])
    kv = shape.kv_heads
    if kv and not shape.is_mla:
        if kv >= count and kv % count:
            return Note(f"{kv} KV heads do not divide across {count} GPUs", "tp_kv", kv=kv, count=count)
        if kv < count and count % kv:
            return Note(f"{kv} KV heads cannot be replicated evenly on {count} GPUs", "tp_kv_replicate", kv=kv,
                        count=count)
    return None


def _divisors(heads: int) -> str:
    options = [str(n) for n in (2, 4, 8) if heads % n == 0]
    return " or ".join(options) + " GPUs" if options else "a single GPU"


_TP: dict[int, tuple[ModelShape, dict[int, Note | None]]] = {}


def _tp_verdicts(shape: ModelShape) -> dict[int, Note | None]:
    """The shape's tensor-parallel verdict per count, kept per shape object (the entry keeps it alive)."""
    entry = _TP.get(id(shape))
    if entry is None or entry[0] is not shape:
        if len(_TP) >= 4096:
            _TP.clear()
        entry = _TP[id(shape)] = (shape, {})
    return entry[1]


class _Rules:
    """The rules a layout must meet besides holding the memory, for one request.

    `ok` is the fast check used while ranking every card x count; `problems` names what is wrong for the few
    layouts that are shown. Both read the same per-request facts, and tests/test_fit.py checks they agree.
    """

    __slots__ = ("resolved", "catalog", "host", "needs_fp8", "full", "region", "_tp")

    def __init__(self, resolved: ResolvedRequest, catalog: Catalog) -> None:
        self.resolved = resolved
        self.catalog = catalog
        self.host = catalog.selection.max_gpus_per_host
        self.needs_fp8 = _needs_fp8_hardware(resolved)
        self.full = resolved.workload == "full"
        self.region = resolved.region
        self._tp = _tp_verdicts(resolved.shape)  # the tensor-parallel verdict depends on the shape and count only

    def tensor_parallel(self, count: int) -> Note | None:
        verdicts = self._tp
        if count not in verdicts:
            verdicts[count] = tensor_parallel_problem(self.resolved.shape, count)
        return verdicts[count]

    def ok(self, card: Card, count: int) -> bool:
        if count not in card.set_sizes or count > self.host:
            return False
        if count > 1 and (self.tensor_parallel(count) is not None
                          or self.full and card.interconnect not in TRAINING_INTERCONNECTS):
            return False
        if self.needs_fp8 and not card.fp8:
            return False
        return not self.region or self.in_region(card, count)

    def in_region(self, card: Card, count: int) -> bool:
        """Offered in the region asked for, with `count` free there."""
        region = self.region
        if region is None:
            return True
        if card.regions and region not in card.regions:
            return False
        return card.stock is None or card.stock.get(region, 0) >= count

    @staticmethod
    def rent_problems(card: Card, count: int, host: int) -> list[Note]:
        """Can `count` x `card` be rented at all (its set sizes, one host)?"""
        found: list[Note] = []
        if count not in card.set_sizes or count > host:
            allowed = ", ".join(str(n) for n in card.set_sizes if n <= host)
            found.append(Note(f"{card.name} is rented in sets of {allowed}", "set_sizes", card=card.name,
                              sizes=allowed))
        if count > host:
            found.append(Note(f"more than one {host}-GPU host", "host", host=host))
        return found

    def problems(self, card: Card, count: int) -> list[Note]:
        found = self.rent_problems(card, count, self.host)
        if count > 1:
            tp = self.tensor_parallel(count)
            if tp:
                found.append(tp)
            if self.full and card.interconnect not in TRAINING_INTERCONNECTS:
                found.append(Note(f"multi-GPU full fine-tuning needs NVLink/NVSwitch-class interconnect "
                                  f"({card.name}: {card.interconnect})", "interconnect", card=card.name,
                                  interconnect=card.interconnect))
        if self.needs_fp8 and not card.fp8:
            quant = self.resolved.quant
            weights = quant.label if quant is not None else self.resolved.precision.upper()
            found.append(Note(f"{card.name} has no FP8 hardware for {weights} weights", "fp8", card=card.name,
                              precision=weights))
        if self.region:
            if card.regions and self.region not in card.regions:
                found.append(Note(f"{card.name} is not offered in {self.region}", "region", card=card.name,
                                  region=self.region))
            elif card.stock is not None and card.stock.get(self.region, 0) < count:
                free = card.stock.get(self.region, 0)
                found.append(Note(f"only {free} {card.name} free in {self.region}", "stock", free=free,
                                  card=card.name, region=self.region))
        return found


Rules = _Rules  # one request's rules, for a search that evaluates many layouts (engine.serving.review)


def evaluate_layout(card: Card, count: int, requirement: Requirement, resolved: ResolvedRequest,
                    catalog: Catalog, rules: _Rules | None = None) -> Layout:
    """Does `count` x `card` hold the requirement, and may it be used? Every problem is named."""
    problems = (rules or _Rules(resolved, catalog)).problems(card, count)
    return _layout(card, count, requirement, resolved, catalog, problems)


def _layout(card: Card, count: int, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
            problems: list[Note]) -> Layout:
    """The layout with its memory and prices; `problems` are the rules it breaks besides memory (none for a
    candidate that already passed _Rules.ok), and a memory shortfall is added here."""
    problems = list(problems)
    vram = card.vram_gb * count
    spare = vram - requirement.total_gb
    per_gpu = None
    fits_total = spare >= 0
    fits = fits_total
    if count > 1:
        need = requirement.per_gpu_gb(count, resolved.shape.kv_heads)
        sharded = (requirement.weights_gb + requirement.scales_with_weights_gb) / count
        kv_share = need - sharded - requirement.per_process_gb
        per_gpu = PerGpu(
            weights_gb=requirement.weights_gb / count,
            kv_cache_gb=kv_share,
            other_gb=need - requirement.weights_gb / count - kv_share,
            total_gb=need,
            spare_gb=card.vram_gb - need,
        )
        fits = fits_total and per_gpu.spare_gb >= 0
        tight = per_gpu.spare_gb < catalog.selection.tight_per_card_gb
        if fits_total and not fits:
            problems.append(Note(
                f"fits in total but not per GPU: each card needs {per_gpu.total_gb:.1f} GB of "
                f"{fmt_num(card.vram_gb)} GB", "per_gpu", need_gb=per_gpu.total_gb, vram_gb=card.vram_gb,
            ))
    else:
        tight = spare < catalog.selection.tight_single_gb
    if not fits_total:
        problems.append(Note(f"needs {fmt_num(round(requirement.total_gb, 1))} GB, {count}x {card.name} has "
                             f"{fmt_num(vram)} GB", "short", need_gb=requirement.total_gb, missing_gb=-spare))
    facts = set_facts(catalog, card, count)
    hourly, monthly = facts.hourly_usd, facts.monthly_usd
    # decode_tokens_per_s is seed 000 section 07's ceiling, bandwidth / weights read per token (its golden tests),
    # with a set's bandwidth added only where its engine splits every matmul (vLLM's tensor parallelism, not
    # llama.cpp's layer split); what a renter gets is `speed`, the calibrated estimate (engine.speed).
    speed = layout_speed(card, count, resolved, requirement)
    return Layout(
        card=card, count=count, vram_gb=vram, spare_gb=spare, fits=fits, tight=tight and fits,
        valid=fits and not problems, problems=tuple(problems), hourly_usd=hourly, monthly_usd=monthly,
        decode_tokens_per_s=speed.ceiling_decode_tok_s if speed is not None else None, per_gpu=per_gpu,
        fits_total_not_per_gpu=fits_total and not fits, speed=speed,
    )


def has_room(layout: Layout) -> bool:
    """Spare memory that counts (ROOM_GB), in total and on each card of a set."""
    if layout.spare_gb < ROOM_GB:
        return False
    return layout.per_gpu is None or layout.per_gpu.spare_gb >= ROOM_GB


def without_tensor_parallel(layout: Layout) -> Layout:
    """The layout judged without the tensor-parallel head rule: a trainer that shards parameters (DeepSpeed ZeRO-3,
    FSDP) splits flat parameter shards over the GPUs, not attention heads, so any head count runs on any count
    (the provider's guide, section 04 of 000_d250fbe2b97c18c6.txt, names ZeRO stage 3 for multi-GPU training)."""
    problems = tuple(note for note in layout.problems if note.code not in TP_CODES)
    if len(problems) == len(layout.problems):
        return layout
    return dataclasses.replace(layout, problems=problems, valid=layout.fits and not problems)


def valid_layout(candidate: Candidate, requirement: Requirement, kv_heads: int | None, catalog: Catalog) -> Layout:
    """_layout of a candidate the walk found valid: no problem to name, and its spare memory, tightness and decode
    ceiling are the walk's, worked out with the same arithmetic (tests/test_answer_path.py compares the two)."""
    card, count = candidate.card, candidate.count
    per_gpu = None
    if count > 1:
        need = requirement.per_gpu_gb(count, kv_heads)
        weights = requirement.weights_gb / count
        kv_share = need - (requirement.weights_gb + requirement.scales_with_weights_gb) / count \
            - requirement.per_process_gb
        per_gpu = PerGpu(weights, kv_share, need - weights - kv_share, need, card.vram_gb - need)
    return Layout(card, count, card.vram_gb * count, candidate.spare_gb, True, candidate.tight, True, (),
                  set_facts(catalog, card, count).hourly_usd, candidate.monthly_usd, candidate.decode_tokens_per_s,
                  per_gpu, speed=candidate.speed)


def _decodes(resolved: ResolvedRequest) -> bool:
    """Token-by-token decoding (and so a decode ceiling) is an LLM inference thing; FLUX denoises instead (and a
    model whose layers are not read is not timed: engine.speed.layout.decodes)."""
    return decodes(resolved)


def _needs_fp8_hardware(resolved: ResolvedRequest) -> bool:
    if resolved.quant is not None:  # FP8 and FP4 formats (engine/formats/formats.yaml needs_fp8/fp4_hardware)
        return resolved.quant.needs_fp8_hardware or resolved.quant.needs_fp4_hardware
    if resolved.workload not in ("inference",) and resolved.precision != "fp8":
        return False
    if resolved.weight_bytes is None:
        # llama.cpp dequantizes MXFP4 in its own kernels on any CUDA card: gpt-oss runs on RTX 3090 and 3060 under
        # it (ollama/ollama#11688: 25 tok/s for the 120B on a 3090, 27 tok/s for the 20B on a 3060 12GB)
        published = resolved.shape.published_weights
        return bool(published and published.needs_fp8_hardware) and resolved.engine != "llama.cpp"
    return resolved.precision == "fp8"


class _Option(Protocol):
    """What ranking reads from a layout: a cheap Candidate and a full Layout both have it."""

    @property
    def card(self) -> Card: ...
    @property
    def count(self) -> int: ...
    @property
    def monthly_usd(self) -> float: ...
    @property
    def spare_gb(self) -> float: ...
    @property
    def tight(self) -> bool: ...
    @property
    def decode_tokens_per_s(self) -> float | None: ...


def _ranked(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, rules: _Rules) -> Ranked:
    def speed(card: Card, count: int) -> SpeedEstimate | None:
        return layout_speed(card, count, resolved, requirement)

    return Ranked(ranking.plan(catalog), requirement, resolved.shape.kv_heads, rules,
                  requirement.active_weights_gb if _decodes(resolved) else 0,
                  catalog.selection.tight_single_gb, catalog.selection.tight_per_card_gb, speed,
                  default_engine(resolved) == "llama.cpp")


def candidate_layouts(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> list[Layout]:
    """Every card x standard set size, fully evaluated (slow: for explanations and tests, not for ranking)."""
    layouts = []
    for card in catalog.cards:
        for count in STANDARD_SET_SIZES:
            if count > catalog.selection.max_gpus_per_host:
                continue
            layouts.append(evaluate_layout(card, count, requirement, resolved, catalog))
    return layouts


def _price_key(option: _Option) -> tuple[float, float, float]:
    # Ties: more spare, then faster memory.
    return (option.monthly_usd, -option.spare_gb, -option.card.bandwidth_gbps * option.count)


def select(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, *,
           cheapest: bool = False) -> Selection:
    """The policy's choice, the alternatives worth showing, and why.

    `cheapest`: the user asked for the cheapest layout ("cheapest card for 70B"): with no card named, the cheapest
    valid layout of any count leads, and a note says what the policy would have picked instead."""
    rules = _Rules(resolved, catalog)
    ranked = _ranked(requirement, resolved, catalog, rules)

    kv_heads = resolved.shape.kv_heads

    def build(candidate: Candidate) -> Layout:
        return valid_layout(candidate, requirement, kv_heads, catalog)

    best = ranked.first()
    recommended = build(best) if best is not None else None
    if resolved.card:
        return _select_named(requirement, resolved, catalog, ranked, best, recommended, build)
    if best is None or recommended is None:
        return Selection(fit=None, reason=_no_fit_reason(requirement, catalog, rules))
    if cheapest:
        # Each count's stream is in price order, so its first is its cheapest; ties: the ranking's order.
        firsts = [c for c in (stream.first() for stream in ranked.counts()) if c is not None]
        cheapest_any = min(firsts, key=lambda c: (*_price_key(c), c.position))
        if not same_layout(cheapest_any, best):
            return _select_cheapest(requirement, catalog, cheapest_any, recommended, ranked, build)
    return Selection(
        fit=recommended, reason=_policy_reason(recommended, requirement, catalog),
        alternatives=[build(c) for c in _alternatives(best, ranked)], recommended=recommended,
    )


def _select_cheapest(requirement: Requirement, catalog: Catalog, cheapest: Candidate, policy_choice: Layout,
                     ranked: Ranked, build: Callable[[Candidate], Layout]) -> Selection:
    """The cheapest layout of any count leads (the user asked for it); the policy's choice comes first among the
    alternatives, and a note says why the policy would pick it."""
    fit = build(cheapest)
    reason = Note(f"cheapest layout of any count that holds {requirement.total_gb:,.1f} GB (you asked for the "
                  "cheapest)", "cheapest_any", need_gb=requirement.total_gb)
    rule = _policy_reason(policy_choice, requirement, catalog)
    note = Note(f"{catalog.provider}'s rule ({rule}) would pick {policy_choice.label} at "
                f"${policy_choice.monthly_usd:,.0f}/month", "policy_pick", provider=catalog.provider, rule=rule,
                layout=policy_choice.label, monthly_usd=policy_choice.monthly_usd)
    others = [c for c in _alternatives(cheapest, ranked) if not same_layout(c, policy_choice)]
    alternatives = [policy_choice] + [build(c) for c in others[:2]]
    return Selection(fit=fit, reason=reason, alternatives=alternatives, recommended=fit, notes=(note,))


def price_layout(card: Card, count: int, catalog: Catalog) -> Layout:
    """A card or set with its prices and nothing to hold (a price question): valid when it can be rented so."""
    problems = _Rules.rent_problems(card, count, catalog.selection.max_gpus_per_host)
    hourly, monthly = catalog.set_price_usd(card, count)
    vram = card.vram_gb * count
    return Layout(card=card, count=count, vram_gb=vram, spare_gb=vram, fits=True, tight=False,
                  valid=not problems, problems=tuple(problems), hourly_usd=hourly, monthly_usd=monthly,
                  decode_tokens_per_s=None, per_gpu=None)


def smallest_set(card: Card, catalog: Catalog) -> int:
    """The smallest set a card is rented in on one host (1 for a card rented singly)."""
    return min((n for n in card.set_sizes if n <= catalog.selection.max_gpus_per_host), default=1)


def _select_named(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, ranked: Ranked,
                  best: Candidate | None, recommended: Layout | None,
                  build: Callable[[Candidate], Layout]) -> Selection:
    """The layout the user named, with the policy's choice first among the alternatives when it differs."""
    assert resolved.card is not None
    card = catalog.card(resolved.card)
    if card is None:
        reason = unknown_card_note(catalog, resolved.card)
        return Selection(fit=None, reason=reason, alternatives=[build(best)] if best else [],
                         recommended=recommended)
    notes = card_alias_notes(resolved.card, card)
    named = _named_layout(card, requirement, resolved, catalog)
    chosen = [best] if best is not None and not same_layout(best, named) else []
    chosen += _alternatives(named, ranked, exclude=chosen)
    alternatives = [build(c) for c in chosen[:3]]
    if recommended is not None and alternatives and same_layout(alternatives[0], recommended):
        alternatives[0] = recommended  # one object for the recommended layout, wherever it is shown
    return Selection(fit=named, reason=_named_reason(named), alternatives=alternatives, recommended=recommended,
                     notes=notes)


def unknown_card_note(catalog: Catalog, written: str) -> Note:
    names = ", ".join(c.name for c in catalog.cards)
    return Note(f"{catalog.provider} does not rent a {written!r} (cards: {names})", "unknown_card",
                provider=catalog.provider, card=written, cards=names)


def card_alias_notes(written: str, card: Card) -> tuple[Note, ...]:
    """A note when the card was named by an alias that could mean another card ('h100' read as H100 SXM)."""
    if _names_card(written, card):
        return ()
    return (Note(f"'{written}' read as {card.name}", "card_alias", written=written, card=card.name),)


def same_layout(a: _Option, b: _Option) -> bool:
    """The same card and count (candidates and full layouts compare alike)."""
    return a.card.id == b.card.id and a.count == b.count


def _alternatives(fit: _Option, ranked: Ranked, exclude: list[Candidate] | None = None) -> list[Candidate]:
    """Next cheapest; a cheaper set when the fit is one card; fastest within 2x the price; the single-card
    option when the fit is a set; the cheapest roomy option when the fit is tight.

    Each count's stream is in price order, so a search bounded by a price stops at the first dearer layout;
    among layouts from several counts, ties go to the earlier in the ranking, as in one ranked list."""
    chosen: list[Candidate] = list(exclude or [])

    def add(option: Candidate | None) -> None:
        if option is not None and not same_layout(option, fit) and not any(same_layout(option, c) for c in chosen):
            chosen.append(option)

    def others() -> Iterator[Candidate]:
        return (option for option in ranked if not same_layout(option, fit))

    streams = ranked.counts()
    add(next(others(), None))
    if fit.count == 1:
        # "Zwei günstige Karten, manchmal" (seed 000 section 07): a set that is cheaper than the single card.
        # Each set size's first valid layout is its cheapest; ties: the earlier ranked.
        price = fit.monthly_usd
        firsts = [c for c in (stream.first_below(price) for stream in streams if stream.count > 1) if c is not None]
        add(min(firsts, key=lambda o: (o.monthly_usd, o.position), default=None))
    fit_decode = fit.decode_tokens_per_s
    if fit_decode is not None:
        # The layout with the most bandwidth within twice the price, shown when it is faster: judged on the
        # calibrated estimate, so a set whose all-reduces eat its bandwidth is not offered as the faster one.
        fastest = _fastest_within(fit, ranked, 2 * fit.monthly_usd)
        if fastest is not None and fastest[0] > fit_decode \
                and expected_decode(fastest[1]) > FASTER_MARGIN * expected_decode(fit):
            add(fastest[1])
    if fit.count > 1:
        add(next((o for stream in streams if stream.count == 1 for o in stream), None))
    if fit.tight:
        # Seed 000 section 05: a tight fit (13B FP8 on an L4) points at the cheapest card with room to spare.
        add(next((o for o in others() if not o.tight), None))
    return chosen[len(exclude or []):][:3]


# A layout offered as the faster one must be faster by more than the estimate's own noise: 10 % is the median error
# of the calibration's multi-card runs and more than its single-card median (benchmarks/bench_speed.py). Below
# it, "2x RTX 4090" for gpt-oss-20b would be offered for a 1 % gain at twice the price.
FASTER_MARGIN = 1.1


def expected_decode(option: _Option | Layout) -> float:
    """One stream's calibrated decode (engine.speed), else the ceiling: what "faster" is judged on."""
    speed = getattr(option, "speed", None)
    return speed.decode_tok_s if speed is not None else (option.decode_tokens_per_s or 0.0)


def _fastest_within(fit: _Option, ranked: Ranked, price: float) -> tuple[float, Candidate] | None:
    """The fastest decode among the other valid layouts at most `price` a month (ties: the cheaper, then the
    earlier ranked)."""
    found = ranked.fastest(price, (fit.card.id, fit.count))
    decode = found.decode_tokens_per_s if found is not None else None
    return (decode, found) if found is not None and decode else None


def _named_layout(card: Card, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> Layout:
    if resolved.gpu_count is not None:
        return evaluate_layout(card, resolved.gpu_count, requirement, resolved, catalog)
    # "on a B200" without a count: the smallest set of that card that works. When none does and memory is all the
    # largest set lacks, that set, so the answer says by how much even one full host is short ("how many H100 for
    # DeepSeek V3": 8x is 33.6 GB short; 1x, 593.6 GB, said nothing about the count); else the smallest set, whose
    # other reason (no FP8 hardware) holds for every count.
    host = catalog.selection.max_gpus_per_host
    counts = sorted(n for n in card.set_sizes if n <= host) or [1]
    layouts = [evaluate_layout(card, n, requirement, resolved, catalog) for n in counts]
    found = next((layout for layout in layouts if layout.valid), None)
    if found is not None:
        return found
    # The largest set whose only problem is memory ("how many A5000 for phi 3 medium in fp32": 4x and 8x also break
    # the 10 KV heads, 2x is 10 GB short).
    memory_only = (layout for layout in reversed(layouts)
                   if all(note.code in ("short", "per_gpu") for note in layout.problems))
    return next(memory_only, layouts[0])


def _names_card(written: str, card: Card) -> bool:
    """Did the user write the card's own name or id (not an alias that could mean another model)?"""
    return normalize_name(written) in (normalize_name(card.name), normalize_name(card.id))


def _named_reason(layout: Layout) -> str:
    if layout.valid:
        return f"{layout.label} holds it with {layout.spare_gb:.1f} GB spare" + (" (tight)" if layout.tight else "")
    return f"{layout.label} does not work: " + "; ".join(layout.problems)


def _policy_reason(fit: Layout, requirement: Requirement, catalog: Catalog) -> Note:
    need = f"{requirement.total_gb:,.1f} GB"
    if catalog.selection.policy == "cheapest":
        if fit.count == 1:
            return Note(f"cheapest single card that holds {need}", "cheapest_single", need_gb=requirement.total_gb)
        return Note(f"no single card holds {need}; cheapest set that does", "cheapest_set",
                    need_gb=requirement.total_gb)
    return Note(f"fewest GPUs whose combined VRAM holds {need} ({fit.count}), then the cheapest", "fewest",
                need_gb=requirement.total_gb, count=fit.count)


def _biggest_node(catalog: Catalog) -> tuple[Card, int, float]:
    """The card whose largest set on one host has the most memory: (card, count, GB)."""
    host = catalog.selection.max_gpus_per_host

    def node_gb(card: Card) -> float:
        sizes = [n for n in card.set_sizes if n <= host]
        return card.vram_gb * max(sizes) if sizes else 0.0

    biggest = max(catalog.cards, key=node_gb)
    return biggest, max(n for n in biggest.set_sizes if n <= host), node_gb(biggest)


def _fitting(requirement: Requirement, catalog: Catalog, kv_heads: int | None) -> list[tuple[Card, int]]:
    """Every card x standard set size whose memory holds the requirement (in total and per card), rentable or
    not, in candidate_layouts' order -- what _layout calls `fits`."""
    total = requirement.total_gb
    counts = [n for n in STANDARD_SET_SIZES if n <= catalog.selection.max_gpus_per_host]
    need = {n: requirement.per_gpu_gb(n, kv_heads) for n in counts if n > 1}
    return [(card, n) for card in catalog.cards for n in counts
            if card.vram_gb * n - total >= 0 and (n == 1 or card.vram_gb - need[n] >= 0)]


def _no_fit_reason(requirement: Requirement, catalog: Catalog, rules: _Rules) -> Note:
    host = catalog.selection.max_gpus_per_host
    biggest, biggest_count, biggest_gb = _biggest_node(catalog)
    fitting = _fitting(requirement, catalog, rules.resolved.shape.kv_heads) if requirement.total_gb <= biggest_gb \
        else []
    if not fitting and requirement.total_gb <= biggest_gb:
        # the memory fits the largest host in total, but a cache held whole on every GPU (MLA's latent, a KV
        # head per card) does not fit each card: said so, never "more than one host ... about 1 nodes"
        card_gb = requirement.per_gpu_gb(biggest_count, rules.resolved.shape.kv_heads)
        return Note(f"{requirement.total_gb:,.1f} GB fits in total on {biggest_count}x {biggest.name} "
                    f"({biggest_gb:,.0f} GB), but not per GPU: each card needs {card_gb:,.1f} GB of "
                    f"{fmt_num(biggest.vram_gb)} GB", "cluster_per_gpu", need_gb=requirement.total_gb,
                    count=biggest_count, card=biggest.name, node_gb=biggest_gb, card_gb=card_gb,
                    vram_gb=biggest.vram_gb)
    if not fitting:
        nodes = math.ceil(requirement.total_gb / biggest_gb)
        return Note(f"more than one {host}-GPU host, ask sales: {requirement.total_gb:,.1f} GB is about {nodes} nodes "
                    f"of {biggest_count}x {biggest.name} ({biggest_gb:,.0f} GB each)", "cluster", host=host,
                    need_gb=requirement.total_gb, nodes=nodes, count=biggest_count, card=biggest.name,
                    node_gb=biggest_gb)
    # A layout that holds the memory has exactly the rules' problems (_layout adds only memory shortfalls).
    problems = sorted({problem for card, count in fitting for problem in rules.problems(card, count)})
    return Note("no usable layout: " + "; ".join(problems[:4]), "unusable", problems=problems[:4])
