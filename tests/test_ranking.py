"""Fit selection along the ranking built once per catalog (engine/fit/ranking.py) chooses exactly what ranking every
valid card x count per request chose (engine/fit/selection.py at b3f22bc, kept below as the reference), on catalogs the
bundled two do not cover: 120 cards with more distinct VRAM sizes than the walk keeps floors for, varied prices,
FP8, interconnects, regions and stock, under both selection policies."""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from catalog.loader import load_catalog
from catalog.schema import Card, Catalog
from catalog.validation import validate_catalog
from engine.fit import ranking
from engine.fit.ranking import Candidate, Ranked
from engine.fit.selection import (
    FASTER_MARGIN,
    Layout,
    Selection,
    _decodes,
    _layout,
    _named_layout,
    _named_reason,
    _policy_reason,
    _price_key,
    _ranked,
    _Rules,
    candidate_layouts,
    card_alias_notes,
    expected_decode,
    same_layout,
    select,
    unknown_card_note,
)
from engine.formula import fmt_num
from engine.notes import Note
from engine.parse import Vocabulary, parse
from engine.sizing.rule import Requirement, ResolvedRequest, SizingError, resolve, size
from engine.speed.layout import layout_speed
from tests.test_answer_path import _sized

ROOT = Path(__file__).resolve().parents[1]


# ---- the reference: engine/fit/selection.py's selection at b3f22bc, every valid layout ranked per request

def _ref_valid(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, rules: _Rules) -> list[Candidate]:
    decode_base = requirement.active_weights_gb if _decodes(resolved) else 0
    tight_single, tight_card = catalog.selection.tight_single_gb, catalog.selection.tight_per_card_gb
    total, result = requirement.total_gb, []
    for count in ranking.STANDARD_SET_SIZES:
        if count > catalog.selection.max_gpus_per_host or count > 1 and rules.tensor_parallel(count) is not None:
            continue
        need = requirement.per_gpu_gb(count, resolved.shape.kv_heads) if count > 1 else total
        for card in catalog.cards:
            spare = card.vram_gb * count - total
            if spare < 0 or card.vram_gb < need or not rules.ok(card, count):
                continue
            tight = (card.vram_gb - need < tight_card) if count > 1 else spare < tight_single
            # The ceiling adds a set's bandwidth only under tensor parallelism (engine.speed), not llama.cpp's
            # layer split.
            speed = layout_speed(card, count, resolved, requirement) if decode_base > 0 else None
            decode = speed.ceiling_decode_tok_s if speed is not None else None
            result.append(Candidate(card, count, catalog.set_price_usd(card, count)[1], spare, tight, decode,
                                    estimate=lambda c, n: layout_speed(c, n, resolved, requirement)))
    return result


def _ref_alternatives(fit: Layout | Candidate, ranked: list[Candidate],
                      exclude: list[Candidate] | None = None) -> list[Candidate]:
    chosen: list[Candidate] = list(exclude or [])

    def add(option: Candidate | None) -> None:
        if option is not None and not same_layout(option, fit) and not any(same_layout(option, c) for c in chosen):
            chosen.append(option)

    others = [option for option in ranked if not same_layout(option, fit)]
    add(next(iter(others), None))
    if fit.count == 1:
        add(min((o for o in others if o.count > 1 and o.monthly_usd < fit.monthly_usd),
                key=lambda o: o.monthly_usd, default=None))
    fit_decode = fit.decode_tokens_per_s
    if fit_decode is not None:
        within = [(decode, o) for o in others
                  if o.monthly_usd <= 2 * fit.monthly_usd and (decode := o.decode_tokens_per_s)]
        fastest = max(within, key=lambda pair: (pair[0], -pair[1].monthly_usd), default=None)
        if fastest is not None and fastest[0] > fit_decode \
                and expected_decode(fastest[1]) > FASTER_MARGIN * expected_decode(fit):
            add(fastest[1])
    if fit.count > 1:
        add(next((o for o in others if o.count == 1), None))
    if fit.tight:
        add(next((o for o in others if not o.tight), None))
    return chosen[len(exclude or []):][:3]


def _ref_no_fit(requirement: Requirement, catalog: Catalog, layouts: list[Layout], kv_heads: int | None) -> Note:
    host = catalog.selection.max_gpus_per_host

    def node_gb(card: Card) -> float:
        sizes = [n for n in card.set_sizes if n <= host]
        return card.vram_gb * max(sizes) if sizes else 0.0

    biggest = max(catalog.cards, key=node_gb)
    biggest_count = max(n for n in biggest.set_sizes if n <= host)
    biggest_gb = node_gb(biggest)
    if requirement.total_gb <= biggest_gb and not any(layout.fits for layout in layouts):
        card_gb = requirement.per_gpu_gb(biggest_count, kv_heads)
        return Note(f"{requirement.total_gb:,.1f} GB fits in total on {biggest_count}x {biggest.name} "
                    f"({biggest_gb:,.0f} GB), but not per GPU: each card needs {card_gb:,.1f} GB of "
                    f"{fmt_num(biggest.vram_gb)} GB", "cluster_per_gpu")
    if requirement.total_gb > biggest_gb:
        nodes = math.ceil(requirement.total_gb / biggest_gb)
        return Note(f"more than one {host}-GPU host, ask sales: {requirement.total_gb:,.1f} GB is about {nodes} nodes "
                    f"of {biggest_count}x {biggest.name} ({biggest_gb:,.0f} GB each)", "cluster")
    problems = sorted({problem for layout in layouts if layout.fits for problem in layout.problems})
    return Note("no usable layout: " + "; ".join(problems[:4]), "unusable")


def _ref_cheapest(requirement: Requirement, catalog: Catalog, cheapest: Candidate, policy_choice: Layout,
                  ranked: list[Candidate], build: Callable[[Candidate], Layout]) -> Selection:
    fit = build(cheapest)
    reason = Note(f"cheapest layout of any count that holds {requirement.total_gb:,.1f} GB (you asked for the "
                  "cheapest)", "cheapest_any")
    rule = _policy_reason(policy_choice, requirement, catalog)
    note = Note(f"{catalog.provider}'s rule ({rule}) would pick {policy_choice.label} at "
                f"${policy_choice.monthly_usd:,.0f}/month", "policy_pick")
    others = [c for c in _ref_alternatives(cheapest, ranked) if not same_layout(c, policy_choice)]
    return Selection(fit=fit, reason=reason, alternatives=[policy_choice] + [build(c) for c in others[:2]],
                     recommended=fit, notes=(note,))


def reference_select(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, *,
                     cheapest: bool = False) -> Selection:
    rules = _Rules(resolved, catalog)
    valid = _ref_valid(requirement, resolved, catalog, rules)
    if catalog.selection.policy == "cheapest":
        ranked = sorted((c for c in valid if c.count == 1), key=_price_key) + sorted(
            (c for c in valid if c.count > 1), key=_price_key)
    else:
        ranked = sorted(valid, key=lambda c: (c.count, *_price_key(c)))

    def build(candidate: Candidate) -> Layout:
        return _layout(candidate.card, candidate.count, requirement, resolved, catalog, [])

    best = ranked[0] if ranked else None
    recommended = build(best) if best is not None else None
    if resolved.card:
        return _ref_named(requirement, resolved, catalog, ranked, best, recommended, build)
    if best is None or recommended is None:
        return Selection(fit=None, reason=_ref_no_fit(requirement, catalog,
                                                      candidate_layouts(requirement, resolved, catalog),
                                                      resolved.shape.kv_heads))
    if cheapest:
        cheapest_any = min(ranked, key=_price_key)
        if not same_layout(cheapest_any, best):
            return _ref_cheapest(requirement, catalog, cheapest_any, recommended, ranked, build)
    return Selection(fit=recommended, reason=_policy_reason(recommended, requirement, catalog),
                     alternatives=[build(c) for c in _ref_alternatives(best, ranked)], recommended=recommended)


def _ref_named(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog, ranked: list[Candidate],
               best: Candidate | None, recommended: Layout | None,
               build: Callable[[Candidate], Layout]) -> Selection:
    assert resolved.card is not None
    card = catalog.card(resolved.card)
    if card is None:
        return Selection(fit=None, reason=unknown_card_note(catalog, resolved.card),
                         alternatives=[build(c) for c in ranked[:1]], recommended=recommended)
    named = _named_layout(card, requirement, resolved, catalog)
    chosen = [best] if best is not None and not same_layout(best, named) else []
    chosen += _ref_alternatives(named, ranked, exclude=chosen)
    return Selection(fit=named, reason=_named_reason(named), alternatives=[build(c) for c in chosen[:3]],
                     recommended=recommended, notes=card_alias_notes(resolved.card, card))


# ---- catalogs and questions

def varied_catalog(base: Catalog, cards: int, seed: int) -> Catalog:
    """`cards` cards from the base catalog's, each with its VRAM, price, bandwidth, FP8, interconnect, regions and
    stock varied (the first copy of each keeps its id, name and aliases, so named cards are found)."""
    rng = random.Random(seed)
    regions = sorted({region for card in base.cards for region in card.regions}) or ["R-1"]
    interconnects = sorted({card.interconnect for card in base.cards})
    made = []
    for i in range(cards):
        card = base.cards[i % len(base.cards)].model_dump()
        for price in ("price_monthly_usd", "price_hourly_usd"):
            if card.get(price) is not None:
                card[price] = round(card[price] * rng.choice((0.5, 0.8, 1.0, 1.0, 1.3, 2.0)), 2)
        offered = rng.sample(regions, rng.randint(1, len(regions)))
        card.update(vram_gb=rng.choice((card["vram_gb"], round(card["vram_gb"] * rng.uniform(0.5, 1.6), 1))),
                    bandwidth_gbps=rng.choice((card["bandwidth_gbps"], 1000.0, 3350.0)), fp8=rng.random() < 0.5,
                    interconnect=rng.choice(interconnects), regions=tuple(offered), memory_mib=None,
                    stock={region: rng.choice((0, 1, 2, 8)) for region in offered} if rng.random() < 0.4 else None)
        if i >= len(base.cards):
            card.update(id=f"{card['id']}-v{i}", name=f"{card['name']} V{i}", aliases=())
        made.append(card)
    data = base.model_dump()
    data["cards"] = made
    return validate_catalog(data)


def sized_questions(catalog: Catalog) -> list[tuple[Requirement, ResolvedRequest, bool]]:
    corpus = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))["cases"]
    vocabulary = Vocabulary.of_catalog(catalog)
    found = []
    for case in corpus:
        request = parse(case["text"], vocabulary).request if case.get("text") else None
        if request is None or request.intent in ("price", "biggest_model"):
            continue
        try:
            resolved = resolve(request, catalog.sizing)
            found.append((size(resolved, catalog.sizing), resolved, request.cheapest and not resolved.card))
        except SizingError:
            continue
    return found


def _shown(selection: Selection, catalog: Catalog) -> tuple[object, ...]:
    def layout(item: Layout | None) -> object:
        return item.to_json(catalog) if item is not None else None

    return (layout(selection.fit), str(selection.reason), [layout(item) for item in selection.alternatives],
            layout(selection.recommended), [str(note) for note in selection.notes])


@pytest.mark.parametrize("catalog_id", ["gpurenthub", "gpuwithcrypto"])
@pytest.mark.parametrize("seed", [1, 2])
def test_selection_as_ranked_per_request(catalog_id: str, seed: int) -> None:
    base = load_catalog(catalog_id).catalog
    catalog = varied_catalog(base, 120, seed)
    assert len({card.vram_gb for card in catalog.cards}) > ranking.MAX_LEVELS  # the coarse VRAM floors are used
    questions = sized_questions(base)
    assert len(questions) > 500
    differing = []
    for requirement, resolved, cheapest in questions:
        got = select(requirement, resolved, catalog, cheapest=cheapest)
        want = reference_select(requirement, resolved, catalog, cheapest=cheapest)
        if _shown(got, catalog) != _shown(want, catalog):
            differing.append(resolved)
    assert not differing, f"{len(differing)} selections differ, e.g. {differing[:1]}"


def test_regions_and_counts_restrict_the_walk() -> None:
    """The ranking of a catalog is built once and read by every request (the same object)."""
    catalog = varied_catalog(load_catalog("gpurenthub").catalog, 30, 3)
    assert ranking.plan(catalog) is ranking.plan(catalog)
    plan = ranking.plan(catalog)
    for walk in plan.walks:
        assert [entry.position for entry in walk.entries] == sorted(entry.position for entry in walk.entries)
        assert all(walk.count in entry.card.set_sizes for entry in walk.entries)


# -- a ranking's per-count streams and its fastest layout within a price, against the long way ----------------------

CATALOG_IDS = ("gpurenthub", "gpuwithcrypto")


def _fresh(resolved: ResolvedRequest, requirement: Requirement, catalog: Catalog) -> Ranked:
    return _ranked(requirement, resolved, catalog, _Rules(resolved, catalog))


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_first_below_is_first_when_cheaper(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    compared = 0
    for resolved, requirement in _sized(catalog):
        every = list(_fresh(resolved, requirement, catalog))
        for price in sorted({option.monthly_usd for option in every[:2]} | {math.inf}):
            quick, slow = _fresh(resolved, requirement, catalog), _fresh(resolved, requirement, catalog)
            for stream, reference in zip(quick.counts(), slow.counts(), strict=True):
                first = reference.first()
                expected = first if first is not None and first.monthly_usd < price else None
                assert stream.first_below(price) == expected
                assert list(stream) == list(reference)
                compared += 1
    assert compared > 1000


def _fastest_long_way(ranked: Ranked, price: float, other_than: tuple[str, int]) -> Candidate | None:
    """Every valid layout at most `price` a month but the one left out: the most bandwidth (one card's under
    llama.cpp's layer split), then the cheapest, then the earliest ranked."""
    options = [option for option in ranked if option.monthly_usd <= price
               and (option.card.id, option.count) != other_than]
    width = (lambda o: o.card.bandwidth_gbps) if ranked.layer_split else (lambda o: o.card.bandwidth_gbps * o.count)
    return min(options, key=lambda o: (-width(o), o.monthly_usd, o.position), default=None)


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_fastest_within_a_price_is_the_brute_force_one(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    compared = 0
    for resolved, requirement in _sized(catalog):
        every = list(_fresh(resolved, requirement, catalog))
        for fit in every[:3]:
            for price in (2 * fit.monthly_usd, math.inf):
                quick = _fresh(resolved, requirement, catalog).fastest(price, (fit.card.id, fit.count))
                slow = _fastest_long_way(_fresh(resolved, requirement, catalog), price, (fit.card.id, fit.count))
                assert quick == slow
                compared += 1
    assert compared > 1000
