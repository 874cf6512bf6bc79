"""Fit selection: which card or set holds a requirement, under the provider's selection policy, at what price."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from catalog.schema import TRAINING_INTERCONNECTS, Card, Catalog
from engine.registry import ModelShape
from engine.sizing import Requirement, ResolvedRequest, fmt_num

STANDARD_SET_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class PerGpu:
    weights_gb: float
    kv_cache_gb: float
    other_gb: float  # what else each card holds: runtime overhead, optimizer/gradient shards, headroom
    total_gb: float
    spare_gb: float

    def to_json(self) -> dict:
        return {"weights_gb": self.weights_gb, "kv_cache_gb": self.kv_cache_gb, "other_gb": self.other_gb,
                "total_gb": self.total_gb, "spare_gb": self.spare_gb}


@dataclass(frozen=True, slots=True)
class Layout:
    """One card x count, evaluated against a requirement."""

    card: Card
    count: int
    vram_gb: float
    spare_gb: float
    fits: bool
    tight: bool
    valid: bool
    problems: tuple[str, ...]
    hourly_usd: float
    monthly_usd: float
    decode_tokens_per_s: float | None
    per_gpu: PerGpu | None
    fits_total_not_per_gpu: bool = False

    @property
    def label(self) -> str:
        return f"{self.count}x {self.card.name}"

    def to_json(self, catalog: Catalog) -> dict:
        data = {
            "card": self.card.id,
            "card_name": self.card.name,
            "count": self.count,
            "vram_gb": self.vram_gb,
            "spare_gb": self.spare_gb,
            "tight": self.tight,
            "valid": self.valid,
            "price": {"hourly": self.hourly_usd, "monthly": self.monthly_usd, "currency": catalog.currency},
            "decode_tokens_per_s": self.decode_tokens_per_s,
            "usd_per_gb_month": self.monthly_usd / self.vram_gb,
            "gbps_per_usd_month": self.card.bandwidth_gbps / catalog.monthly_list_price_usd(self.card),
            "discount_percent": catalog.discount_percent(self.count),
        }
        if self.per_gpu is not None:
            data["per_gpu"] = self.per_gpu.to_json()
        if self.problems:
            data["reason"] = "; ".join(self.problems)
        return data


@dataclass(slots=True)
class Selection:
    fit: Layout | None
    reason: str
    alternatives: list[Layout] = field(default_factory=list)
    recommended: Layout | None = None  # the policy's choice (equals fit unless the user named a layout)


def tensor_parallel_problem(shape: ModelShape, count: int) -> str | None:
    """vLLM's rule: query heads divide by the TP size; KV heads divide by it, or it by them (replicated).

    We apply vLLM's check because that is the engine that refuses to start (seed 004 cites vLLM discussion
    #1041): with fewer KV heads than cards each card holds a copy of one KV head, which only works when the
    card count is a multiple of the KV head count; the replicated copies are counted in the per-GPU view.
    """
    if count <= 1 or shape.attention_heads is None:
        return None
    heads = shape.attention_heads
    if heads % count:
        return f"{heads} attention heads do not divide across {count} GPUs (tensor parallelism needs {_divisors(heads)})"
    kv = shape.kv_heads
    if kv and not shape.is_mla:
        if kv >= count and kv % count:
            return f"{kv} KV heads do not divide across {count} GPUs"
        if kv < count and count % kv:
            return f"{kv} KV heads cannot be replicated evenly on {count} GPUs"
    return None


def _divisors(heads: int) -> str:
    options = [str(n) for n in (2, 4, 8) if heads % n == 0]
    return " or ".join(options) + " GPUs" if options else "a single GPU"


def evaluate_layout(
    card: Card, count: int, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog
) -> Layout:
    """Does `count` x `card` hold the requirement, and may it be used? Every problem is named."""
    problems: list[str] = []
    allowed = [n for n in card.set_sizes if n <= catalog.selection.max_gpus_per_host]
    if count not in allowed:
        sizes = ", ".join(str(n) for n in allowed)
        problems.append(f"{card.name} is rented in sets of {sizes}")
    if count > catalog.selection.max_gpus_per_host:
        problems.append(f"more than one {catalog.selection.max_gpus_per_host}-GPU host")
    tp = tensor_parallel_problem(resolved.shape, count)
    if tp:
        problems.append(tp)
    if _needs_fp8_hardware(resolved) and not card.fp8:
        problems.append(f"{card.name} has no FP8 hardware for {resolved.precision.upper()} weights")
    if resolved.workload == "full" and count > 1 and card.interconnect not in TRAINING_INTERCONNECTS:
        problems.append(f"multi-GPU full fine-tuning needs NVLink/NVSwitch-class interconnect ({card.name}: "
                        f"{card.interconnect})")
    if resolved.region:
        if card.regions and resolved.region not in card.regions:
            problems.append(f"{card.name} is not offered in {resolved.region}")
        elif card.stock is not None and card.stock.get(resolved.region, 0) < count:
            problems.append(f"only {card.stock.get(resolved.region, 0)} {card.name} free in {resolved.region}")

    vram = card.vram_gb * count
    spare = vram - requirement.total_gb
    per_gpu = None
    fits_total = spare >= 0
    fits = fits_total
    if count > 1:
        need = requirement.per_gpu_gb(count, resolved.shape.kv_heads)
        kv_share = need - (requirement.weights_gb + requirement.scales_with_weights_gb) / count - requirement.per_process_gb
        per_gpu = PerGpu(
            weights_gb=requirement.weights_gb / count,
            kv_cache_gb=kv_share,
            other_gb=need - requirement.weights_gb / count - kv_share,
            total_gb=need,
            spare_gb=card.vram_gb - need,
        )
        fits = fits_total and per_gpu.spare_gb >= 0
        tight = per_gpu.spare_gb < catalog.selection.tight_per_card_gb
    else:
        tight = spare < catalog.selection.tight_single_gb
    if not fits_total:
        problems.append(f"needs {fmt_num(round(requirement.total_gb, 1))} GB, {count}x {card.name} has {fmt_num(vram)} GB")
    elif not fits:
        problems.append(
            f"fits in total but not per GPU: each card needs {per_gpu.total_gb:.1f} GB of {fmt_num(card.vram_gb)} GB"
        )
    hourly, monthly = catalog.set_price_usd(card, count)
    decode = None
    if resolved.workload == "inference" and requirement.active_weights_gb > 0:
        # Seed 000 section 07: bandwidth / resident weights read per token; a set adds bandwidth only under
        # tensor parallelism, which is how we lay out every set.
        decode = card.bandwidth_gbps * count / requirement.active_weights_gb
    return Layout(
        card=card, count=count, vram_gb=vram, spare_gb=spare, fits=fits, tight=tight and fits,
        valid=fits and not problems, problems=tuple(problems), hourly_usd=hourly, monthly_usd=monthly,
        decode_tokens_per_s=decode, per_gpu=per_gpu, fits_total_not_per_gpu=fits_total and not fits,
    )


def _needs_fp8_hardware(resolved: ResolvedRequest) -> bool:
    if resolved.workload not in ("inference",) and resolved.precision != "fp8":
        return False
    if resolved.weight_bytes is None:
        published = resolved.shape.published_weights
        return bool(published and published.needs_fp8_hardware)
    return resolved.precision == "fp8"


def candidate_layouts(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> list[Layout]:
    layouts = []
    for card in catalog.cards:
        for count in STANDARD_SET_SIZES:
            if count > catalog.selection.max_gpus_per_host:
                continue
            layouts.append(evaluate_layout(card, count, requirement, resolved, catalog))
    return layouts


def _price_key(layout: Layout) -> tuple:
    # Ties: more spare, then faster memory.
    return (round(layout.monthly_usd, 6), -layout.spare_gb, -layout.card.bandwidth_gbps * layout.count)


def select(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> Selection:
    """The policy's choice, the alternatives worth showing, and why."""
    layouts = candidate_layouts(requirement, resolved, catalog)
    valid = [layout for layout in layouts if layout.valid]
    policy = catalog.selection.policy
    if policy == "cheapest":
        singles = sorted((l for l in valid if l.count == 1), key=_price_key)
        ranked = singles + sorted((l for l in valid if l.count > 1), key=_price_key)
    else:
        ranked = sorted(valid, key=lambda l: (l.count, *_price_key(l)))
    recommended = ranked[0] if ranked else None

    if resolved.card:
        named = _named_layout(requirement, resolved, catalog)
        if isinstance(named, str):
            return Selection(fit=None, reason=named, alternatives=ranked[:1], recommended=recommended)
        alternatives = [recommended] if recommended and not _same(recommended, named) else []
        alternatives += _alternatives(named, ranked, exclude=alternatives)
        reason = _named_reason(named, resolved)
        return Selection(fit=named, reason=reason, alternatives=alternatives[:3], recommended=recommended)

    if recommended is None:
        return Selection(fit=None, reason=_no_fit_reason(requirement, resolved, catalog, layouts))
    return Selection(
        fit=recommended, reason=_policy_reason(recommended, requirement, catalog),
        alternatives=_alternatives(recommended, ranked), recommended=recommended,
    )


def _same(a: Layout, b: Layout) -> bool:
    return a.card.id == b.card.id and a.count == b.count


def _alternatives(fit: Layout, ranked: list[Layout], exclude: list[Layout] | None = None) -> list[Layout]:
    """Next cheapest; fastest within 2x the price; the single-card option when the fit is a set; the
    cheapest roomy option when the fit is tight."""
    chosen: list[Layout] = list(exclude or [])

    def add(layout: Layout | None) -> None:
        if layout is not None and not _same(layout, fit) and not any(_same(layout, c) for c in chosen):
            chosen.append(layout)

    others = [l for l in ranked if not _same(l, fit)]
    add(next(iter(others), None))
    if fit.decode_tokens_per_s is not None:
        within = [l for l in others if l.monthly_usd <= 2 * fit.monthly_usd and l.decode_tokens_per_s]
        fastest = max(within, key=lambda l: (l.decode_tokens_per_s, -l.monthly_usd), default=None)
        if fastest and fastest.decode_tokens_per_s > fit.decode_tokens_per_s:
            add(fastest)
    if fit.count > 1:
        add(next((l for l in others if l.count == 1), None))
    if fit.tight:
        # Seed 000 section 05: a tight fit (13B FP8 on an L4) points at the cheapest card with room to spare.
        add(next((l for l in others if not l.tight), None))
    return [c for c in chosen if not exclude or c not in exclude][:3]


def _named_layout(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> Layout | str:
    assert resolved.card is not None
    card = catalog.card(resolved.card) or _card_by_name(catalog, resolved.card)
    if card is None:
        names = ", ".join(c.name for c in catalog.cards)
        return f"{catalog.provider} does not rent a {resolved.card!r} (cards: {names})"
    return evaluate_layout(card, resolved.gpu_count or 1, requirement, resolved, catalog)


def _card_by_name(catalog: Catalog, text: str) -> Card | None:
    from engine.registry import normalize_name

    wanted = normalize_name(text)
    for card in catalog.cards:
        if wanted in {normalize_name(card.id), normalize_name(card.name), *map(normalize_name, card.aliases)}:
            return card
    return None


def _named_reason(layout: Layout, resolved: ResolvedRequest) -> str:
    if layout.valid:
        return f"{layout.label} holds it with {layout.spare_gb:.1f} GB spare" + (" (tight)" if layout.tight else "")
    return f"{layout.label} does not work: " + "; ".join(layout.problems)


def _policy_reason(fit: Layout, requirement: Requirement, catalog: Catalog) -> str:
    need = f"{requirement.total_gb:,.1f} GB"
    if catalog.selection.policy == "cheapest":
        if fit.count == 1:
            return f"cheapest single card that holds {need}"
        return f"no single card holds {need}; cheapest set that does"
    return f"fewest GPUs whose combined VRAM holds {need} ({fit.count}), then the cheapest"


def _no_fit_reason(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, layouts: list[Layout]) -> str:
    host = catalog.selection.max_gpus_per_host
    biggest = max(catalog.cards, key=lambda c: c.vram_gb * max(n for n in c.set_sizes if n <= host) if any(n <= host for n in c.set_sizes) else 0)
    biggest_count = max(n for n in biggest.set_sizes if n <= host)
    node_gb = biggest.vram_gb * biggest_count
    if requirement.total_gb > node_gb or not any(l.fits for l in layouts):
        nodes = math.ceil(requirement.total_gb / node_gb)
        return (f"more than one {host}-GPU host, ask sales: {requirement.total_gb:,.1f} GB is about {nodes} nodes of "
                f"{biggest_count}x {biggest.name} ({node_gb:,.0f} GB each)")
    fitting = [l for l in layouts if l.fits]
    problems = sorted({p for l in fitting for p in l.problems})
    return "no usable layout: " + "; ".join(problems[:4])
