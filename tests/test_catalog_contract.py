"""The catalog contract: any catalog that passes the check can be served. Hypothesis mutates the bundled catalogs
(numbers at and past their limits, booleans, infinities, top-up templates, coins, names); whatever validates
must answer a few requests, as JSON without Infinity/NaN and rendered in both languages, without an exception."""
from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bot.texts.render import render_answer, render_card, render_cards, render_compact
from catalog.diff import diff_catalogs
from catalog.loader import CatalogError, parse_catalog_bytes
from catalog.schema import LIMITS, Catalog
from catalog.validation import validate_catalog
from engine.answer.build import build_answer
from engine.parse import Vocabulary, parse
from engine.sizing.rule import SizeRequest

DATA = Path(__file__).resolve().parents[1] / "catalog" / "data"
BASES = {name: yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
         for name in ("gpurenthub", "gpuwithcrypto")}
BASE_CATALOGS = {name: validate_catalog(data) for name, data in BASES.items()}

EXTREMES = st.sampled_from([0, -1, 1e-300, 5e-324, 1e300, math.inf, -math.inf, math.nan, True, False, 10**30, "7"])


def _number(limit: str, *, whole: bool = False) -> st.SearchStrategy[object]:
    """Mostly values the schema accepts (its ends included), sometimes ones it must refuse."""
    low, high = LIMITS[limit]
    inside: st.SearchStrategy[object] = (
        st.integers(math.ceil(low), math.floor(high)) if whole
        else st.one_of(st.floats(low, high), st.integers(math.ceil(low), math.floor(high)))
    )
    return st.one_of(inside, inside, st.sampled_from([low, high]), EXTREMES)


_TEXT = st.text(alphabet="aZ09 -_.{}<>&\"'/:%€ü", min_size=0, max_size=12)
_PLACEHOLDER = st.sampled_from(["{amount}", "{coin}", "{ref}", "{amount:d}", "{amount!r}", "{}", "{amount.real}",
                                "{{", "}}", "%7B", "&"])
_TEMPLATE = st.builds(
    lambda host, parts: f"https://{host}/?" + "".join(parts),
    st.sampled_from(["pay.example.com", "x.example.com/top-up", "ex.example.com:8443/a/b"]),
    st.lists(st.one_of(_PLACEHOLDER, st.sampled_from(["amount=", "&coin=", "&ref=", "x="]), _TEXT), max_size=8),
)
_COIN = st.one_of(st.sampled_from(["BTC", "USDT", "XMR", "USDT-TRC20", "A", "btc", "TOOLONGCOIN1"]), _TEXT)

# (where, value): `where` is a path into the catalog dict; "card" picks one card.
_CARD_FIELDS = {
    "vram_gb": _number("vram_gb"),
    "bandwidth_gbps": _number("bandwidth_gbps"),
    "price_monthly_usd": _number("price_monthly_usd"),
    "price_hourly_usd": _number("price_hourly_usd"),
    "interconnect_gbps": _number("interconnect_gbps"),
    "stock": st.dictionaries(st.sampled_from(["DFW-1", "IAD-1", "PDX-1", "X"]), _number("stock", whole=True),
                             max_size=3),
    "set_sizes": st.lists(st.one_of(st.integers(0, 70), st.just(True)), max_size=5),
    "fp8": st.one_of(st.booleans(), st.just(1)),
    "name": _TEXT,
    "aliases": st.lists(_TEXT, max_size=3),
    "notes": _TEXT,
}
_TOP_FIELDS = {
    ("hours_per_month",): _number("hours_per_month", whole=True),
    ("minimum_term_hours",): _number("minimum_term_hours", whole=True),
    ("default_billing",): st.sampled_from(["hour", "day", "week", "month", "year"]),
    ("updated",): st.sampled_from(["2026-02-29", "2028-02-29", "", "2026-09-01", "yesterday"]),
    ("sizing", "policy"): st.sampled_from(["breakdown", "headroom"]),
    ("sizing", "overhead_gb"): _number("overhead_gb"),
    ("sizing", "headroom_factor"): _number("headroom_factor"),
    ("sizing", "default_context_tokens"): _number("context_tokens", whole=True),
    ("sizing", "training_context_tokens"): _number("context_tokens", whole=True),
    ("sizing", "default_batch"): _number("batch", whole=True),
    ("sizing", "default_precision"): st.sampled_from(["fp32", "bf16", "fp8", "int4", "fp4", "q4"]),
    ("sizing", "default_kv_precision"): st.sampled_from(["fp32", "fp16", "fp8", "int8", "int4"]),
    ("selection", "policy"): st.sampled_from(["cheapest", "fewest"]),
    ("selection", "max_gpus_per_host"): _number("set_size", whole=True),
    ("selection", "tight_single_gb"): _number("tight_gb"),
    ("selection", "tight_per_card_gb"): _number("tight_gb"),
    ("volume_discounts",): st.lists(st.fixed_dictionaries({"min_gpus": st.integers(0, 70),
                                                           "percent": _number("discount_percent")}), max_size=3),
    ("topup", "url_template"): _TEMPLATE,
    ("coins",): st.lists(_COIN, min_size=1, max_size=4),
    ("default_coin",): _COIN,
}


@st.composite
def mutated_catalogs(draw: st.DrawFn) -> tuple[str, dict]:
    name = draw(st.sampled_from(sorted(BASES)))
    data = copy.deepcopy(BASES[name])
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            card = data["cards"][draw(st.integers(0, len(data["cards"]) - 1))]
            field = draw(st.sampled_from(sorted(_CARD_FIELDS)))
            card[field] = draw(_CARD_FIELDS[field])
        else:
            path = draw(st.sampled_from(sorted(_TOP_FIELDS)))
            target = data
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = draw(_TOP_FIELDS[path])
    return name, data


def _requests(catalog: Catalog) -> list[SizeRequest]:
    card = catalog.cards[0]
    region = catalog.regions[0].id if catalog.regions else None
    return [
        SizeRequest(params_b=70, precision="int4", context_tokens=32768),
        SizeRequest(params_b=0.01),
        SizeRequest(params_b=100_000),
        SizeRequest(params_b=405, workload="full"),
        SizeRequest(model="llama-3.1-70b", workload="qlora", batch=8),
        SizeRequest(model="deepseek-v3", card=card.id, gpu_count=card.set_sizes[0]),
        SizeRequest(params_b=7, memory_budget_gb=24, region=region),
    ]


def _serve(catalog: Catalog, base: Catalog) -> None:
    for request in _requests(catalog):
        for billing, coin in ((None, None), ("hour", catalog.coins[-1]), ("month", "xmr")):
            answer = build_answer(request, catalog, user_id=7, topup_secret="k" * 16, billing=billing, coin=coin)
            json.dumps(answer.to_json(), allow_nan=False)
            if answer.topup_url is not None:
                assert answer.topup_url.startswith("https://") and len(answer.topup_url) < 600
            for lang in ("en", "de"):
                assert render_answer(answer, lang, details=True, max_alternatives=3)
                assert render_compact(answer, lang)
    for lang in ("en", "de"):
        assert render_cards(catalog, lang)
        for card in catalog.cards:
            assert render_card(catalog, card, lang)
    for change in diff_catalogs(base, catalog).prices:
        assert math.isfinite(change.percent)
    vocabulary = Vocabulary.of_catalog(catalog)
    result = parse(f"70B int4 on {catalog.cards[0].name}", vocabulary)
    if result.request is not None:
        json.dumps(build_answer(result.request, catalog).to_json(), allow_nan=False)


@given(case=mutated_catalogs())
@settings(max_examples=int(os.environ.get("CARDFIT_FUZZ_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_any_catalog_that_validates_is_served(case):
    name, data = case
    raw = yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode("utf-8")
    try:
        catalog = parse_catalog_bytes(raw, "mutated.yaml")  # only CatalogError may come out of the check
    except CatalogError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("mutated.yaml: ")
        event("refused")
        return
    event("served")
    _serve(catalog, BASE_CATALOGS[name])


@pytest.mark.parametrize("name", sorted(BASES))
def test_the_limits_themselves_are_served(name):
    """Every bounded number at its low and at its high end at once (the corners hypothesis may not draw)."""
    for end in (0, 1):
        data = copy.deepcopy(BASES[name])
        for card in data["cards"]:
            for field in ("vram_gb", "bandwidth_gbps", "interconnect_gbps"):
                card[field] = LIMITS[field][end]
            price = "price_monthly_usd" if data["price_unit"] == "month" else "price_hourly_usd"
            card[price] = LIMITS[price][end]
        data["hours_per_month"] = int(LIMITS["hours_per_month"][end])
        data["minimum_term_hours"] = int(LIMITS["minimum_term_hours"][end])
        data["sizing"].update(overhead_gb=LIMITS["overhead_gb"][end], headroom_factor=LIMITS["headroom_factor"][end],
                              default_context_tokens=int(LIMITS["context_tokens"][end]),
                              default_batch=int(LIMITS["batch"][end]))
        data["volume_discounts"] = [{"min_gpus": 2, "percent": LIMITS["discount_percent"][1]}]
        catalog = parse_catalog_bytes(yaml.safe_dump(data).encode("utf-8"), f"{name}-{end}.yaml")
        _serve(catalog, BASE_CATALOGS[name])
