"""The uncached answer path's wave-K shortcuts (issue #14) give what the long way gives, over every corpus question
that sizes in both bundled catalogs: the next layout and the cheaper set read off the per-count streams without the
merge, the fastest layout from the rule classes read cheapest first, the fallback search that checks before it
evaluates, the biggest-model bisection that skips probes past the GPUs' memory, the top-up link that quotes only
the coin."""
from __future__ import annotations

import math
from urllib.parse import quote

import pytest

from catalog.loader import load_catalog
from catalog.schema import Catalog
from engine.answer.build import build_answer
from engine.fit.ranking import Candidate, Ranked, plan
from engine.fit.selection import Layout, Rules, _ranked, _Rules, evaluate_layout
from engine.fit.topup import resolve_coin, topup_url
from engine.parse import Vocabulary, parse
from engine.serving import Gpu, serving_check
from engine.serving.reverse import MAX_PARAMS_B, PARAMS_STEP_B, biggest_model_params_b, typical_model
from engine.serving.review import ServingReview
from engine.sizing.rule import PRECISION_BYTES, Requirement, ResolvedRequest
from tests.test_answer_path import _sized
from tests.test_answers_identical import corpus_texts

CATALOGS = ("gpurenthub", "gpuwithcrypto")


def _fresh(resolved: ResolvedRequest, requirement: Requirement, catalog: Catalog) -> Ranked:
    return _ranked(requirement, resolved, catalog, _Rules(resolved, catalog))


@pytest.mark.parametrize("catalog_id", CATALOGS)
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
    """Every valid layout at most `price` a month but the one left out: the most bandwidth, then the cheapest,
    then the earliest ranked."""
    options = [option for option in ranked if option.monthly_usd <= price
               and (option.card.id, option.count) != other_than]
    return min(options, key=lambda o: (-o.card.bandwidth_gbps * o.count, o.monthly_usd, o.position), default=None)


@pytest.mark.parametrize("catalog_id", CATALOGS)
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


def _cheapest_passing_long_way(review: ServingReview, lower_bound_gb: float) -> Layout | None:
    """The search as it was: each layout evaluated in full, then checked."""
    catalog, requirement, resolved = review.catalog, review.requirement, review.resolved
    rules = Rules(resolved, catalog)
    for _, count, _, card in plan(catalog).by_price:
        if card.vram_gb * count < requirement.total_gb or review._share_gb(card) * count < lower_bound_gb:
            continue
        if not rules.ok(card, count) or count > 1 and card.vram_gb < requirement.per_gpu_gb(
                count, resolved.shape.kv_heads):
            continue
        layout = evaluate_layout(card, count, requirement, resolved, catalog, rules)
        if not layout.valid:
            continue
        found = review.check(card, count)
        if found is not None and found.starts:
            return layout
    return None


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_fallback_search_checks_first_and_finds_the_same(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    searched = 0
    for text in corpus_texts():
        request = parse(text, vocabulary).request
        if request is None:
            continue
        answer = build_answer(request, catalog)
        review, fit = answer.review, answer.fit
        check = review.check_layout(fit) if review is not None else None
        if review is None or fit is None or check is None or check.starts:
            continue
        for bound in (0.0, review._lower_bound_gb(check, fit.count)):
            quick = review._cheapest_passing(bound)
            slow = _cheapest_passing_long_way(build_answer(request, catalog).review or review, bound)
            assert quick == slow and repr(quick) == repr(slow)
            searched += 1
    assert searched > 100


def _biggest_long_way(gpu: Gpu, bytes_per_param: float, context: int, engine: str, tp: int) -> float | None:
    """The bisection with every probe checked."""
    def starts(steps: int) -> bool:
        model = typical_model(steps * PARAMS_STEP_B, bytes_per_param)
        return serving_check(model, gpu, context, engine=engine, tp=tp).starts

    low, high = 1, round(MAX_PARAMS_B / PARAMS_STEP_B)
    if not starts(1):
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if starts(middle):
            low = middle
        else:
            high = middle - 1
    return round(low * PARAMS_STEP_B, 1)


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_biggest_model_skips_only_probes_that_cannot_start(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    gpus = [Gpu.from_card(card) for card in catalog.cards if card.memory_mib is not None]
    gpus.append(Gpu("48 GB", int(48e9 / 2**20)))
    found = 0
    for gpu in gpus:
        for bytes_per_param in (PRECISION_BYTES["bf16"], PRECISION_BYTES["int4"]):
            for engine, tp in (("vllm", 1), ("vllm", 2), ("llama.cpp", 1), ("llama.cpp", 4)):
                context = 8192 if tp == 1 else 32768
                quick = biggest_model_params_b(gpu, bytes_per_param=bytes_per_param, context_tokens=context,
                                               engine=engine, tp=tp)
                assert quick == _biggest_long_way(gpu, bytes_per_param, context, engine, tp)
                found += quick is not None
    assert found > 20


def test_topup_link_quotes_as_before() -> None:
    catalog = load_catalog("gpurenthub").catalog
    template = catalog.topup.url_template
    for amount in (0.0, -0.0, 0.004, 0.005, 1.5, 1234.5, 1e9, 1e22, -3.25, math.inf, -math.inf, math.nan):
        assert quote(f"{amount:.2f}", safe="") == f"{amount:.2f}"
        for coin in (None, "btc", "XMR", "DOGE"):
            for user, secret in ((None, None), (42, "s3cret"), ("u/1 ?&", "k")):
                url = topup_url(catalog, amount, coin, user, secret)
                used = resolve_coin(catalog, coin)
                assert f"coin={quote(used, safe='')}" in url
                assert f"amount={quote(f'{amount:.2f}', safe='')}" in url
                assert ("ref=" in url) == (user is not None and "{ref}" in template)
