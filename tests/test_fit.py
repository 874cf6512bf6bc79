"""Fit selection rules and properties; the top-up link."""
from __future__ import annotations

import math
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.loader import load_catalog
from engine.answer.advice import compare_cards
from engine.answer.build import build_answer
from engine.fit.selection import candidate_layouts, evaluate_layout, select, tensor_parallel_problem
from engine.fit.topup import resolve_coin, topup_url, user_ref
from engine.models.registry import default_registry
from engine.sizing.rule import SizeRequest, resolve, size
from tests.support.seedmath import ask

CATALOGS = {name: load_catalog(name).catalog for name in ("gpurenthub", "gpuwithcrypto")}


def test_tensor_parallel_rule_heads_and_kv_heads():
    registry = default_registry()
    llama = registry.get("llama-3.1-70b")  # 64 heads, 8 KV heads
    assert tensor_parallel_problem(llama, 3) and not tensor_parallel_problem(llama, 8)
    qwen = registry.get("qwen2.5-32b")  # 40 heads, 8 KV heads
    assert tensor_parallel_problem(qwen, 8) is None
    gemma = registry.get("gemma-2-9b")  # 16 heads, 8 KV heads
    assert tensor_parallel_problem(gemma, 4) is None


def test_per_gpu_view_replicates_kv_heads_fewer_than_cards():
    answer = ask("gpurenthub", model="llama-3.1-70b", precision="fp8", context_tokens=131072,
                 card="h100-sxm", gpu_count=8)
    per = answer.fit.per_gpu
    kv = answer.requirement.kv_cache_gb
    assert per.kv_cache_gb == pytest.approx(kv / 8)  # 8 KV heads on 8 cards: one each
    assert per.weights_gb == pytest.approx(70 / 8)
    assert per.other_gb == pytest.approx(2.0)  # runtime overhead on every card


def test_mla_latent_is_replicated_on_every_rank():
    answer = ask("gpurenthub", model="deepseek-v3", context_tokens=131072, batch=8, card="h200-sxm", gpu_count=8)
    assert answer.fit.per_gpu.kv_cache_gb == pytest.approx(answer.requirement.kv_cache_gb)


def test_mla_fits_in_total_but_not_per_gpu():
    """DeepSeek V3, 1M tokens x 2: 671 + 140.5 + 2 GB fits 8x H200 (1,128 GB) in total, but the MLA latent
    sits whole on every card: 83.9 + 140.5 + 2 GB > 141 GB per card."""
    answer = ask("gpurenthub", model="deepseek-v3", context_tokens=1_000_000, batch=2, card="h200-sxm", gpu_count=8)
    fit = answer.fit
    assert fit.spare_gb > 0 and fit.fits_total_not_per_gpu and not fit.valid
    assert "fits in total but not per GPU" in fit.to_json(CATALOGS["gpurenthub"])["reason"]


def test_overhead_per_card_can_break_a_set():
    """70B BF16 with a 139 GB KV cache on 2x H200 SXM: 281 GB of 282 in total, 141.5 GB of 141 per card."""
    answer = ask("gpurenthub", params_b=70, context_tokens=424_194, card="h200-sxm", gpu_count=2)
    assert answer.fit.fits_total_not_per_gpu and answer.fit.per_gpu.total_gb > 141


def test_alternatives_at_most_three_and_distinct():
    answer = ask("gpurenthub", params_b=70, precision="int4", context_tokens=32768)
    alternatives = answer.selection.alternatives
    assert 1 <= len(alternatives) <= 3
    keys = {(a.card.id, a.count) for a in alternatives}
    assert len(keys) == len(alternatives) and (answer.fit.card.id, answer.fit.count) not in keys


def test_fastest_alternative_within_twice_the_price():
    answer = ask("gpurenthub", params_b=7, precision="bf16")
    limit = 2 * answer.fit.monthly_usd
    faster = [a for a in answer.selection.alternatives if a.decode_tokens_per_s > answer.fit.decode_tokens_per_s]
    assert faster and all(a.monthly_usd <= limit for a in faster)


def test_named_set_gets_single_card_alternative():
    answer = ask("gpurenthub", params_b=7, card="a40", gpu_count=2)
    assert any(a.count == 1 for a in answer.selection.alternatives)


def test_unknown_named_card():
    answer = ask("gpurenthub", params_b=7, card="voodoo 3")
    assert answer.fit is None and "does not rent" in answer.selection.reason


def _requests():
    return st.builds(
        dict,
        params_b=st.floats(0.5, 2000),
        precision=st.sampled_from(["bf16", "fp8", "int4", "int8"]),
        context_tokens=st.sampled_from([None, 2048, 8192, 32768, 131072]),
        batch=st.sampled_from([None, 1, 4, 32]),
        workload=st.sampled_from(["inference", "full", "lora", "qlora"]),
    )


@settings(max_examples=80, deadline=None)
@given(_requests(), st.sampled_from(sorted(CATALOGS)))
def test_chosen_fit_holds_and_nothing_better_exists(fields, name):
    catalog = CATALOGS[name]
    resolved = resolve(SizeRequest(**fields), catalog.sizing)
    requirement = size(resolved, catalog.sizing)
    answer = build_answer(SizeRequest(**fields), catalog)
    fit = answer.rule_fit  # the policy's own pick (the recommendation may move on: engine.answer.lead)
    valid = [lay for lay in candidate_layouts(requirement, resolved, catalog) if lay.valid]
    if fit is None:
        assert not valid
        return
    assert fit.valid and fit.vram_gb >= requirement.total_gb - 1e-9
    if fit.per_gpu:
        assert fit.per_gpu.total_gb <= fit.card.vram_gb + 1e-9
    if catalog.selection.policy == "cheapest":
        singles = [lay for lay in valid if lay.count == 1]
        pool = singles or valid
        assert (fit.count == 1) == bool(singles)
        assert fit.monthly_usd <= min(lay.monthly_usd for lay in pool) + 1e-6
    else:
        fewest = min(lay.count for lay in valid)
        assert fit.count == fewest
        assert fit.monthly_usd <= min(lay.monthly_usd for lay in valid if lay.count == fewest) + 1e-6


# -- top-up link ------------------------------------------------------------------------------------------------

def test_topup_defaults_month_for_monthly_and_day_for_hourly():
    rh = build_answer(SizeRequest(params_b=70, precision="int4"), CATALOGS["gpurenthub"])
    assert rh.topup_amount_usd == 240
    wc = build_answer(SizeRequest(params_b=70, precision="int4"), CATALOGS["gpuwithcrypto"])
    assert wc.topup_amount_usd == pytest.approx(0.82 * 24)


def test_topup_never_below_minimum_term():
    rh = build_answer(SizeRequest(params_b=7), CATALOGS["gpurenthub"], billing="hour")
    assert rh.topup_amount_usd == pytest.approx(190 / 720 * 168)


def test_topup_ref_is_hmac_not_raw_id_and_values_encoded():
    url = topup_url(CATALOGS["gpurenthub"], 1234.5, "xmr", user_id=987654321, secret="s3cret")
    query = parse_qs(urlsplit(url).query)
    assert query == {"amount": ["1234.50"], "coin": ["XMR"], "ref": [user_ref(987654321, "s3cret")]}
    assert "987654321" not in url and len(query["ref"][0]) == 16
    assert user_ref(1, "a") != user_ref(1, "b")


def test_topup_without_user_has_no_ref_and_unknown_coin_falls_back():
    url = topup_url(CATALOGS["gpurenthub"], 10, "DOGE")
    assert "ref" not in url and "coin=USDT" in url


def test_topup_uses_users_coin():
    answer = build_answer(SizeRequest(params_b=7), CATALOGS["gpurenthub"], coin="btc", user_id=5, topup_secret="k")
    assert "coin=BTC" in answer.topup_url and "ref=" in answer.topup_url


@settings(max_examples=60, deadline=None)
@given(_requests(), st.sampled_from(sorted(CATALOGS)), st.sampled_from([None, "DFW-1", "IAD-1"]))
def test_fast_rule_check_agrees_with_the_described_problems(fields, name, region):
    from engine.fit.selection import _Rules

    catalog = CATALOGS[name]
    resolved = resolve(SizeRequest(region=region, **fields), catalog.sizing)
    rules = _Rules(resolved, catalog)
    for card in catalog.cards:
        for count in (1, 2, 3, 4, 8, 16):
            assert rules.ok(card, count) == (not rules.problems(card, count)), (card.id, count)


def test_topup_link_quotes_the_coin_and_needs_no_quoting_of_the_amount() -> None:
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


# -- engine functions return their notes, never write into what they were given --------------------------------

def test_resolving_sizing_and_selecting_leave_their_inputs_alone():
    """A card alias and a missing KV cache are noted in the results; the request and the resolved request
    stay as they were, so selecting twice says the alias once."""
    catalog = CATALOGS["gpurenthub"]
    request = SizeRequest(model="deepseek-v4-flash", card="h100", gpu_count=8, assumed=["from the parser"])
    resolved = resolve(request, catalog.sizing)
    requirement = size(resolved, catalog.sizing)
    assert request.assumed == ["from the parser"]
    notes_before = resolved.notes
    first, second = select(requirement, resolved, catalog), select(requirement, resolved, catalog)
    assert resolved.notes == notes_before and request.assumed == ["from the parser"]
    assert [n.code for n in first.notes] == [n.code for n in second.notes] == ["card_alias"]
    assert [n.code for n in requirement.notes] == ["kv_unmodelled_compressed"]
    answer = build_answer(request, catalog)
    assert answer.assumed == ["from the parser", *resolved.notes, *requirement.notes, *first.notes]
    assert answer.to_json()["request"]["assumed"] == answer.assumed


# -- advice: the narrower precision that fits, two cards compared ------------------------------------------------

def test_precision_hint_is_the_widest_narrower_precision_on_the_same_layout():
    answer = ask("gpurenthub", params_b=13, card="rtx-4090", gpu_count=1)  # 26 GB of BF16 weights on 24 GB
    hint = answer.hint
    assert not answer.fit.valid and hint is not None
    assert hint.precision == "fp8" and hint.layout.label == "1x RTX 4090" and hint.layout.valid
    assert hint.requirement.component("weights").gb == pytest.approx(13)
    assert ask("gpurenthub", params_b=70, card="rtx-4090", gpu_count=1).hint is None  # not even INT4 fits
    assert ask("gpurenthub", params_b=13, card="h100-sxm", gpu_count=1).hint is None  # it fits as asked
    assert ask("gpurenthub", params_b=13, workload="full", card="rtx-4090", gpu_count=1).hint is None


def test_compare_cards_takes_the_cheapest_valid_set_else_the_largest_with_its_problems():
    catalog = CATALOGS["gpurenthub"]
    resolved = resolve(SizeRequest(params_b=70, precision="fp8"), catalog.sizing)
    requirement = size(resolved, catalog.sizing)
    l40s, a100 = catalog.card("l40s"), catalog.card("a100")
    rows = compare_cards(resolved, requirement, catalog, (l40s, a100))
    assert [row.card for row in rows] == [l40s, a100]
    layouts = [evaluate_layout(l40s, n, requirement, resolved, catalog) for n in l40s.set_sizes]
    assert rows[0].valid and rows[0].layout.monthly_usd == min(lay.monthly_usd for lay in layouts if lay.valid)
    assert rows[0].layout.count == 2  # 74.7 GB: one 48 GB card is short, two hold it
    assert not rows[1].valid and rows[1].layout.count == max(a100.set_sizes)  # A100: no FP8 hardware
    assert any(problem.code == "fp8" for problem in rows[1].layout.problems)
