"""Golden tests for fit selection and prices against the GPU Rent Hub seed (000), sections 05, 06, 07, 08."""
from __future__ import annotations

import pytest

from tests.support.seedmath import ask, catalog, half_up

RH = "gpurenthub"

# Section 05 lookup table: (size, column) -> (GB, count, card id, monthly $ as printed, knapp)
LOOKUP = {
    (7, "bf16"): (17, 1, "rtx-a5000", 190, False),
    (7, "fp8"): (10, 1, "l4", 250, False),
    (7, "int4"): (7, 1, "rtx-a5000", 190, False),
    (7, "qlora"): (10, 1, "rtx-a5000", 190, False),
    (7, "lora"): (21, 1, "rtx-a5000", 190, True),
    (7, "full"): (129, 1, "mi300x", 1590, False),
    (13, "bf16"): (35, 1, "a40", 240, False),
    (13, "fp8"): (22, 1, "l4", 250, True),
    (13, "int4"): (15, 1, "rtx-a5000", 190, False),
    (13, "qlora"): (14, 1, "rtx-a5000", 190, False),
    (13, "lora"): (33, 1, "a40", 240, False),
    (13, "full"): (239, 4, "a100-sxm", 3643, False),
    (34, "bf16"): (72, 1, "a100-sxm", 990, False),
    (34, "fp8"): (38, 1, "rtx-6000-ada", 460, False),
    (34, "int4"): (21, 1, "rtx-a5000", 190, True),
    (34, "qlora"): (28, 1, "a40", 240, False),
    (34, "lora"): (79, 1, "a100-sxm", 990, True),
    (34, "full"): (626, 8, "a100-sxm", 7130, True),
    (70, "bf16"): (145, 1, "mi300x", 1590, False),
    (70, "fp8"): (75, 1, "h100-pcie", 1490, False),
    (70, "int4"): (40, 1, "a40", 240, False),
    (70, "qlora"): (51, 1, "a100-sxm", 990, False),
    (70, "lora"): (156, 1, "mi300x", 1590, False),
    (70, "full"): (1288, 8, "mi300x", 11450, False),
    (405, "bf16"): (816, 8, "mi300x", 11450, False),
    (405, "fp8"): (411, 8, "mi300x", 11450, False),
    (405, "int4"): (209, 8, "a40", 1728, False),
    (405, "qlora"): (249, 8, "a40", 1728, False),
    (405, "lora"): (856, 8, "mi300x", 11450, False),
}
# Cells where the seed and our engine differ, each with its own named test below.
DEVIATIONS = {(13, "lora"), (34, "full"), (70, "full"), (405, "bf16"), (405, "fp8"), (405, "lora")}


def _ask_cell(size: int, column: str):
    if column in ("bf16", "fp8", "int4"):
        return ask(RH, params_b=size, precision=column)
    return ask(RH, params_b=size, workload=column)


@pytest.mark.parametrize("cell", sorted(set(LOOKUP) - DEVIATIONS), ids=lambda c: f"{c[0]}B-{c[1]}")
def test_05_lookup_cell(cell):
    gb, count, card, monthly, knapp = LOOKUP[cell]
    answer = _ask_cell(*cell)
    fit = answer.fit
    assert half_up(answer.requirement.total_gb) == gb
    assert (fit.count, fit.card.id) == (count, card)
    assert half_up(fit.monthly_usd) == monthly
    assert fit.tight is knapp
    assert fit.valid


def test_05_deviation_8_card_prices_rounded_to_tens():
    """The seed prints 8x MI300X as $11,450 and 8x A100 as $7,130: 1,590 x 8 x 0.90 = $11,448 and
    990 x 8 x 0.90 = $7,128 exactly (its own 8x A40 cell, $1,728, is exact). We print the exact price."""
    for size, column in ((70, "full"), (405, "bf16"), (405, "lora")):
        gb, count, card, _, knapp = LOOKUP[(size, column)]
        answer = _ask_cell(size, column)
        assert half_up(answer.requirement.total_gb) == gb
        assert (answer.fit.count, answer.fit.card.id, answer.fit.tight) == (count, card, knapp)
        assert answer.fit.monthly_usd == pytest.approx(11448)
    full_34 = _ask_cell(34, "full")
    assert (full_34.fit.count, full_34.fit.card.id, full_34.fit.tight) == (8, "a100-sxm", True)
    assert half_up(full_34.requirement.total_gb) == 626
    assert full_34.fit.monthly_usd == pytest.approx(7128)
    assert full_34.fit.per_gpu.spare_gb == pytest.approx(1.8)  # knapp: under 2 GB per card


def test_05_contradiction_405b_fp8_is_4x_h200_not_8x_mi300x():
    """Seed 05 prints 405B FP8 (411 GB) -> 8x MI300X for $11,450. Under the seed's own rules (cheapest set,
    4-card discount 8 %, FP8 on Hopper, 128 heads / 4) 4x H200 SXM = 564 GB holds it for 2,290 x 4 x 0.92 =
    $8,427.20 — cheaper. The rule wins; 8x MI300X stays a valid, dearer layout."""
    answer = _ask_cell(405, "fp8")
    assert half_up(answer.requirement.total_gb) == 411
    assert (answer.fit.count, answer.fit.card.id) == (4, "h200-sxm")
    assert answer.fit.monthly_usd == pytest.approx(8427.2)
    mi300x = ask(RH, params_b=405, precision="fp8", card="mi300x", gpu_count=8)
    assert mi300x.fit.valid and mi300x.fit.monthly_usd == pytest.approx(11448)
    assert mi300x.fit.monthly_usd > answer.fit.monthly_usd


def test_05_deviation_13b_lora_same_card():
    answer = _ask_cell(13, "lora")
    assert (answer.fit.card.id, answer.fit.monthly_usd, answer.fit.tight) == ("a40", 240, False)


def test_05_405b_full_fine_tuning_is_five_nodes_on_request():
    """7,452 GB: "fünf Knoten, auf Anfrage" -> no fit, more than one 8-GPU host; 5 nodes of 8x MI300X."""
    answer = _ask_cell(405, "full")
    assert half_up(answer.requirement.total_gb) == 7452
    assert answer.fit is None
    assert "more than one 8-GPU host, ask sales" in answer.selection.reason
    assert "5 nodes of 8x MI300X" in answer.selection.reason


def test_05_full_fine_tuning_sets_need_nvlink_class():
    """13B full FT: 8x A40 (384 GB, $1,728) would be cheaper than 4x A100, but A40 pairs only have a bridge."""
    answer = ask(RH, params_b=13, workload="full", card="a40", gpu_count=8)
    assert not answer.fit.valid
    assert "NVLink/NVSwitch-class" in answer.fit.to_json(catalog(RH))["reason"]


def test_05_13b_fp8_alternative_is_faster_rtx_6000_ada():
    """The seed names the RTX 6000 Ada ($460) as the alternative to the tight L4: the cheapest roomy option."""
    answer = _ask_cell(13, "fp8")
    faster = [a for a in answer.selection.alternatives if a.card.id == "rtx-6000-ada"]
    assert faster and faster[0].monthly_usd == 460


def test_05_mi300x_only_1_or_8_and_only_in_dfw1():
    two = ask(RH, params_b=405, precision="int4", card="mi300x", gpu_count=2)
    assert not two.fit.valid and "sets of 1, 8" in two.fit.to_json(catalog(RH))["reason"]
    in_iad = ask(RH, params_b=70, card="mi300x", gpu_count=1, region="IAD-1")
    assert not in_iad.fit.valid
    in_dfw = ask(RH, params_b=70, region="DFW-1")
    assert in_dfw.fit.card.id == "mi300x"
    elsewhere = ask(RH, params_b=70, region="PDX-1")
    assert elsewhere.fit.card.id != "mi300x"


def test_05_b200_from_two_cards():
    single = ask(RH, params_b=70, card="b200", gpu_count=1)
    assert not single.fit.valid
    pair = ask(RH, params_b=70, card="b200", gpu_count=2)
    assert pair.fit.valid and pair.fit.monthly_usd == pytest.approx(7391)


# -- 06 Speicherkosten -----------------------------------------------------------------------------------------

TABLE_06 = [  # card, VRAM, bandwidth GB/s, monthly, $/GB-month, GB/s per $, per GPU-hour
    ("mi300x", 192, 5300, 1590, 8.28, 3.33, 2.21),
    ("b200", 180, 8000, 3890, 21.61, 2.06, 5.40),
    ("h200-sxm", 141, 4800, 2290, 16.24, 2.10, 3.18),
    ("h100-sxm", 80, 3350, 1690, 21.13, 1.98, 2.35),
    ("h100-pcie", 80, 2000, 1490, 18.63, 1.34, 2.07),
    ("a100-sxm", 80, 2040, 990, 12.38, 2.06, 1.38),
    ("l40s", 48, 864, 520, 10.83, 1.66, 0.72),
    ("rtx-6000-ada", 48, 960, 460, 9.58, 2.09, 0.64),
    ("rtx-a6000", 48, 768, 290, 6.04, 2.65, 0.40),
    ("a40", 48, 696, 240, 5.00, 2.90, 0.33),
    ("rtx-5090", 32, 1790, 540, 16.88, 3.31, 0.75),
    ("rtx-4090", 24, 1010, 390, 16.25, 2.59, 0.54),
    ("l4", 24, 300, 250, 10.42, 1.20, 0.35),
    ("rtx-3090", 24, 936, 230, 9.58, 4.07, 0.32),
    ("rtx-a5000", 24, 768, 190, 7.92, 4.04, 0.26),
]


def test_06_all_fifteen_cards_in_order():
    assert [card.id for card in catalog(RH).cards] == [row[0] for row in TABLE_06]


@pytest.mark.parametrize("row", TABLE_06, ids=lambda r: r[0])
def test_06_memory_cost_row(row):
    card_id, vram, bandwidth, monthly, per_gb, gbps_per_usd, hourly = row
    cat = catalog(RH)
    card = cat.card(card_id)
    assert (card.vram_gb, card.bandwidth_gbps, cat.monthly_list_price_usd(card)) == (vram, bandwidth, monthly)
    assert half_up(monthly / vram, 2) == per_gb
    assert half_up(bandwidth / monthly, 2) == gbps_per_usd
    assert half_up(cat.hourly_list_price_usd(card), 2) == hourly
    # The same figures through a fit's JSON (what the bot and CLI print).
    fit = ask(RH, params_b=1, card=card_id, gpu_count=card.set_sizes[0]).fit.to_json(cat)
    assert half_up(fit["gbps_per_usd_month"], 2) == gbps_per_usd


def test_06_b200_smallest_order_two_cards():
    cat = catalog(RH)
    card = cat.card("b200")
    assert card.set_sizes[0] == 2
    assert cat.monthly_list_price_usd(card) * 2 == 7780
    assert cat.set_price_usd(card, 2)[1] == pytest.approx(7391)


def test_06_fp8_support_as_section_01():
    no_fp8 = {"a100-sxm", "a40", "rtx-a6000", "rtx-3090", "rtx-a5000"}
    assert {c.id for c in catalog(RH).cards if not c.fp8} == no_fp8


# -- 07 Gegenargument ----------------------------------------------------------------------------------------------

def test_07_decode_ceiling_7b_bf16_a40_50_rtx5090_128_a5000_55():
    for card, ceiling in (("a40", 50), ("rtx-5090", 128), ("rtx-a5000", 55)):
        fit = ask(RH, params_b=7, precision="bf16", card=card).fit
        assert half_up(fit.decode_tokens_per_s) == ceiling


def test_07_34b_bf16_a100_30_vs_int4_rtx4090_59_and_61_percent_cheaper():
    bf16 = ask(RH, params_b=34, precision="bf16")
    assert (bf16.fit.card.id, half_up(bf16.requirement.total_gb)) == ("a100-sxm", 72)
    assert half_up(bf16.fit.decode_tokens_per_s) == 30
    int4 = ask(RH, params_b=34, precision="int4", card="rtx-4090")
    assert int4.fit.valid and half_up(int4.requirement.total_gb) == 21
    assert half_up(int4.fit.decode_tokens_per_s) == 59
    assert half_up((1 - int4.fit.monthly_usd / bf16.fit.monthly_usd) * 100) == 61


def test_07_two_a40_96_gb_for_456():
    fit = ask(RH, params_b=7, card="a40", gpu_count=2).fit
    assert (fit.vram_gb, fit.monthly_usd) == (96, pytest.approx(456))


def test_07_two_rtx5090_64_gb_3_58_tbs_1026():
    fit = ask(RH, params_b=7, card="rtx-5090", gpu_count=2).fit
    assert fit.vram_gb == 64 and fit.monthly_usd == pytest.approx(1026)
    assert fit.card.bandwidth_gbps * 2 == 3580


def test_07_interconnect_figures():
    cat = catalog(RH)
    assert cat.card("h100-sxm").interconnect_gbps == 900
    assert cat.card("a40").interconnect_gbps == cat.card("rtx-a6000").interconnect_gbps == 112
    assert cat.card("l40s").interconnect_gbps == 32
    assert cat.card("rtx-5090").interconnect_gbps == 63


# -- 08 / TL;DR ---------------------------------------------------------------------------------------------------

def test_08_minimum_term_seven_days():
    assert catalog(RH).minimum_term_hours == 168


def test_08_deviation_minimum_week_on_a5000_is_44_33_not_55():
    """Seed 08: "die Mindestwoche von 55 $ auf einer RTX A5000". Its own hourly rule (monthly / 720) gives
    190 / 720 x 168 h = $44.33; $55 does not follow from any published price, so we quote $44.33."""
    from engine.fit.topup import topup_amount_usd

    cat = catalog(RH)
    card = cat.card("rtx-a5000")
    hourly, monthly = cat.set_price_usd(card, 1)
    assert half_up(topup_amount_usd(cat, hourly, monthly, "week"), 2) == 44.33
    assert topup_amount_usd(cat, hourly, monthly, "hour") == pytest.approx(hourly * 168)  # never below 7 days


def test_tldr_cards():
    assert ask(RH, params_b=70, precision="int4").fit.card.id == "a40"
    assert ask(RH, params_b=70, precision="bf16").fit.card.id == "mi300x"
    cheapest = min(catalog(RH).cards, key=lambda c: c.price_monthly_usd)
    assert (cheapest.id, cheapest.price_monthly_usd) == ("rtx-a5000", 190)
    per_gb = min(catalog(RH).cards, key=lambda c: c.price_monthly_usd / c.vram_gb)
    assert per_gb.id == "a40" and per_gb.price_monthly_usd / per_gb.vram_gb == 5.0
