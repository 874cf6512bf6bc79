"""A conversation, not a form: what a new user trying Cardfit asks, and the answer, question -> answer.

Figures are the catalogs' own (catalog/data/*.yaml) through the sizing policies the golden tests pin: 70B in FP8
needs 74.7 GB on GPU Rent Hub (weights 70 + KV 2.7 + overhead 2), an RTX 4090 has 24 GB, so it is short by 50.7.
"""
from __future__ import annotations

import pytest

from bot.texts.render import plain, render_answer, render_compact
from catalog.loader import load_catalog
from catalog.schema import Catalog
from engine.answer.build import Answer, build_answer
from engine.parse import Vocabulary, _parse_strict
from engine.sizing.payload import PayloadError, decode_request, encode_request
from engine.sizing.rule import SizeRequest


@pytest.fixture(scope="module")
def hub() -> tuple[Catalog, Vocabulary]:
    catalog = load_catalog("gpurenthub").catalog
    return catalog, Vocabulary.of_catalog(catalog)


@pytest.fixture(scope="module")
def gwc() -> tuple[Catalog, Vocabulary]:
    catalog = load_catalog("gpuwithcrypto").catalog
    return catalog, Vocabulary.of_catalog(catalog)


def ask(where: tuple[Catalog, Vocabulary], text: str, **kwargs: object) -> tuple[Answer, str]:
    """The answer and its plain reply text, in the language the question was asked in."""
    catalog, vocabulary = where
    result = _parse_strict(text, vocabulary)
    assert result.request is not None, (text, result.error)
    answer = build_answer(result.request, catalog, **kwargs)  # type: ignore[arg-type]
    return answer, plain(render_answer(answer, result.language))


# -- 1. "my 4090" is one card ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["70B fp8 on my 4090", "70B fp8 on a 4090", "70B fp8 auf einer 4090",
                                  "70B fp8 auf meiner 4090"])
def test_my_or_a_4090_is_one_card_short_by_50_7_gb(hub, text):
    answer, reply = ask(hub, text)
    fit = answer.fit
    assert fit is not None and fit.count == 1 and fit.card.id == "rtx-4090" and not fit.valid
    short = next(p for p in fit.problems if p.code == "short")
    assert short.values["missing_gb"] == pytest.approx(50.7, abs=0.05)
    assert "50.7 GB" in reply or "50,7 GB" in reply
    assert "4x RTX 4090" not in reply
    assert "Yes" not in reply and "Ja" not in reply
    assert answer.selection is not None and answer.selection.recommended is not None  # what to do instead
    assert "Instead" in reply or "Stattdessen" in reply


def test_my_card_is_exactly_one_even_where_sets_are_the_rule(hub):
    answer, reply = ask(hub, "70B on my B200")
    assert answer.fit is not None and answer.fit.count == 1 and not answer.fit.valid
    assert "sets of 2, 4, 8" in reply


# -- 2. the cheapest when asked -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["cheapest card for 70B", "günstigste Karte für 70B", "billigste GPU für 70B",
                                  "70B at the lowest price"])
def test_cheapest_leads_with_cheapest_layout_of_any_count(hub, text):
    answer, reply = ask(hub, text)
    fit = answer.fit
    assert fit is not None and fit.label == "4x A40" and fit.monthly_usd == pytest.approx(883.2)
    assert answer.selection is not None and answer.selection.reason.code == "cheapest_any"
    pick = next(note for note in answer.assumed if getattr(note, "code", "") == "policy_pick")
    assert pick.values["layout"] == "1x MI300X"
    lead = next(line for line in reply.splitlines() if line.startswith("✅"))
    assert "4x A40" in lead and "1x MI300X" in reply
    assert answer.payable is fit and "883.20" in (answer.topup_url or "")


def test_policy_still_decides_when_nobody_asks_for_the_cheapest(hub, gwc):
    answer, _ = ask(hub, "card for 70B")
    assert answer.fit is not None and answer.fit.label == "1x MI300X"
    answer, _ = ask(gwc, "70B")
    assert answer.fit is not None and answer.fit.label == "1x B200"
    cheapest, _ = ask(gwc, "cheapest setup for 70B")
    assert cheapest.fit is not None and cheapest.fit.label == "8x RTX 4090"
    assert cheapest.fit.monthly_usd < answer.fit.monthly_usd


# -- 3. a card named without a count takes its smallest set that works ------------------------------------------

@pytest.mark.parametrize("text", ["70B on a B200", "70B auf einer B200", "70B on B200", "70B on one B200"])
def test_article_takes_the_smallest_set_that_works(hub, text):
    answer, reply = ask(hub, text)
    assert answer.fit is not None and answer.fit.label == "2x B200" and answer.fit.valid
    assert "❌" not in reply and ("Yes" in reply or "Ja" in reply)
    said_one = text != "70B on B200"
    assert any(getattr(n, "code", "") == "article_set" for n in answer.assumed) == said_one


def test_article_keeps_one_card_where_it_is_rented_singly(gwc):
    answer, _ = ask(gwc, "70B on a B200")
    assert answer.fit is not None and answer.fit.label == "1x B200"


# -- 4. price questions --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "label", "billing"), [
    ("how much is an H100 per hour?", "1x H100 SXM", "hour"),
    ("Was kostet eine H200 pro Monat?", "1x H200 SXM", "month"),
    ("price of 4x A100 per day", "4x A100 SXM", "day"),
    ("what does an L40S cost per week", "1x L40S", "week"),
])
def test_price_question_names_the_card_with_its_prices(hub, text, label, billing):
    answer, reply = ask(hub, text)
    data = answer.to_json()
    assert data["request"]["intent"] == "price" and data["request"]["billing"] == billing
    assert data["requirement"] is None and data["error"] is None
    fit = data["fit"]
    assert f"{fit['count']}x {fit['card_name']}" == label
    prices = fit["prices"]
    assert set(prices) == {"hour", "day", "week", "month"}
    assert prices["day"] == pytest.approx(prices["hour"] * 24) and prices["week"] == pytest.approx(prices["hour"] * 168)
    assert prices["month"] == pytest.approx(fit["price"]["monthly"])
    assert label in reply
    # GPU Rent Hub's shortest term is a week (seed 08): a top-up never pays for less
    assert answer.topup_hours == max(168, {"hour": 1, "day": 24, "week": 168, "month": 720}[billing])
    assert answer.topup_amount_usd == pytest.approx(prices[billing] if billing in ("week", "month")
                                                    else prices["week"])


def test_price_of_a_set_has_the_volume_discount(hub):
    answer, reply = ask(hub, "price of 4x A100 per day")
    assert answer.fit is not None and answer.fit.monthly_usd == pytest.approx(990 * 4 * 0.92)
    assert "8 % volume discount" in reply and "$121.44" in reply


def test_price_of_a_card_rented_in_sets_is_its_smallest_set(hub):
    answer, reply = ask(hub, "what does a B200 cost per month")
    assert answer.fit is not None and answer.fit.label == "2x B200" and answer.fit.valid
    assert "B200 is rented in sets of 2, 4, 8" in reply


def test_price_in_german_and_of_a_set_not_rented(hub, gwc):
    _, reply = ask(hub, "Was kostet eine H200 pro Monat?")
    assert "pro Monat: 2.290 $" in reply and "bei GPU Rent Hub" in reply
    answer, reply = ask(gwc, "price of 3x H100 per hour")
    assert answer.fit is not None and not answer.fit.valid and answer.topup_url is None
    assert "sets of 1, 2, 4, 8" in reply


def test_price_of_a_card_not_rented(hub):
    answer, reply = ask(hub, "what does a T4 cost per hour")
    assert answer.fit is None and answer.selection is not None and answer.selection.reason.code == "unknown_card"
    assert "does not rent" in reply and answer.topup_url is None


def test_price_compact_reply(hub):
    answer, _ = ask(hub, "how much is an H100 per hour?")
    assert "per hour: $2.35" in plain(render_compact(answer, "en"))


# -- 5. comparisons ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "labels"), [
    ("compare H100 vs A100 for 70B", ["2x H100 SXM", "2x A100 SXM"]),
    ("H100 oder A100 für 70B", ["2x H100 SXM", "2x A100 SXM"]),
    ("A40 vs RTX 4090 for llama 3.1 8b", ["1x A40", "1x RTX 4090"]),
])
def test_compare_shows_both_layouts_side_by_side(hub, text, labels):
    answer, reply = ask(hub, text)
    data = answer.to_json()
    assert data["request"]["intent"] == "compare"
    compared = data["compare"]
    assert [f"{item['count']}x {item['card_name']}" for item in compared] == labels
    for item in compared:
        assert {"spare_gb", "price", "decode_tokens_per_s", "valid"} <= set(item)
    for label in labels:
        assert label in reply
    cheaper = min(answer.compare or [], key=lambda item: item.layout.monthly_usd)
    assert answer.fit is cheaper.layout and answer.payable is cheaper.layout


def test_compare_with_a_card_that_does_not_hold_it(hub):
    answer, reply = ask(hub, "RTX 4090 vs H200 for 405B")
    assert answer.compare is not None and [c.valid for c in answer.compare] == [False, True]
    assert "does not fit" in reply and "8x H200 SXM" in reply


def test_compare_card_not_rented_is_noted(hub):
    answer, reply = ask(hub, "H100 vs T4 for 7B")
    assert answer.compare is not None and [c.card.id for c in answer.compare] == ["h100-sxm"]
    assert "does not rent" in reply


# -- 6. billing and coin words ----------------------------------------------------------------------------------

def test_for_a_week_bills_a_week(hub):
    answer, reply = ask(hub, "70B int4 on an H100 for a week")
    assert answer.billing == "week" and answer.topup_hours == 168 and not answer.topup_minimum_applied
    assert "$394.33 per week" in reply and "(one week)" in reply


def test_billing_words_win_over_the_user_setting(gwc):
    answer, reply = ask(gwc, "13B pro Tag", billing="month")
    assert answer.billing == "day" and answer.topup_hours == 24
    assert "pro Tag" in reply


@pytest.mark.parametrize(("text", "coin"), [("70B int4, pay with BTC", "BTC"), ("13B in Monero", "XMR"),
                                            ("13B fp8, mit ETH zahlen", "ETH"), ("8B, USDC", "USDC")])
def test_coin_words_set_the_coin(hub, text, coin):
    answer, _ = ask(hub, text, coin="USDT")
    assert answer.coin == coin and f"coin={coin}" in (answer.topup_url or "")


def test_a_coin_the_catalog_does_not_take_is_noted(hub):
    answer, reply = ask(hub, "13B in DOGE")
    assert answer.coin == "USDT"
    assert any(getattr(note, "code", "") == "coin_not_taken" for note in answer.assumed)
    assert "does not take DOGE" in reply


# -- 7. a memory size after a card is the card's -----------------------------------------------------------------

def test_memory_after_a_card_is_part_of_its_name(hub):
    answer, reply = ask(hub, "70B on 2x 3060 12gb")
    assert answer.request.memory_budget_gb is None and answer.budget() is None
    assert answer.selection is not None and answer.selection.reason.code == "unknown_card"
    assert "does not rent" in reply and "12 GB budget" not in reply


def test_card_memory_must_agree_with_the_catalog(hub):
    answer, _ = ask(hub, "70B on an A100 40gb")
    assert answer.fit is None and answer.selection is not None and answer.selection.reason.code == "unknown_card"
    answer, _ = ask(hub, "70B int4 on an A100 80GB")
    assert answer.fit is not None and answer.fit.card.id == "a100-sxm" and answer.fit.valid


# -- 8. "Memory needed" is the asked precision's ------------------------------------------------------------------

def test_memory_needed_is_the_asked_precision_not_the_hints(hub):
    answer, reply = ask(hub, "can I run 13B on an RTX 4090?")
    assert answer.hint is not None and answer.hint.precision == "fp8"
    assert "Memory needed: 34.7 GB" in reply
    assert "In FP8 it needs 21.7 GB" in reply


# -- 9. language detection says whether it knows -----------------------------------------------------------------

@pytest.mark.parametrize(("text", "language", "confident"), [
    ("70B int4", "en", False), ("H100", "en", False), ("how much VRAM for 70B", "en", True),
    ("Wie viel VRAM für 70B?", "de", True), ("what does an L40S cost per week", "en", True),
])
def test_language_says_whether_the_text_told(hub, text, language, confident):
    result = _parse_strict(text, hub[1])
    assert (result.language, result.language_confident) == (language, confident)


# -- payloads carry the new fields ---------------------------------------------------------------------------------

@pytest.mark.parametrize("request_", [
    SizeRequest(card="h100", gpu_count=1, count_implied=True, intent="price", billing="hour", coin="BTC"),
    SizeRequest(params_b=70, card="h100", compare_card="a100", intent="compare"),
    SizeRequest(model="llama-3.1-70b", precision="int4", cheapest=True, billing="week", coin="XMR"),
    SizeRequest(params_b=70, card="a100", gpu_count=1, card_vram_gb=40),
])
def test_payload_round_trip_of_the_new_fields(request_):
    payload = encode_request(request_)
    assert len(payload) <= 64
    assert decode_request(payload) == request_


def test_old_payloads_still_decode_and_bad_new_ones_do_not():
    assert decode_request("Mllama-3_1-70bPi4C32k") == SizeRequest(model="llama-3.1-70b", precision="int4",
                                                                  context_tokens=32768)
    for bad in ("S70Iq", "S70Tyear", "S70Q2", "S70A1", "S70Xa100", "Rh100", "S70Y-btc", "S70E40"):
        with pytest.raises(PayloadError):
            decode_request(bad)
    assert decode_request("Rh100IpTh").intent == "price"


def test_a_parsed_price_question_survives_its_payload(hub):
    catalog, vocabulary = hub
    result = _parse_strict("what does an L40S cost per week, in BTC", vocabulary)
    assert result.request is not None
    again = decode_request(encode_request(result.request))
    answer = build_answer(again, catalog)
    assert answer.intent == "price" and answer.billing == "week" and answer.coin == "BTC"
