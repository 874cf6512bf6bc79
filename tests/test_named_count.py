"""A card named without a count ("how many H100 for ..."): the smallest set that works, and where none does, the
answer about the count (engine/fit/selection.py _named_layout)."""
from __future__ import annotations

import pytest

from bot.texts.render import plain, render_answer
from engine.answer.build import build_answer
from engine.sizing.rule import SizeRequest
from tests.support.seedmath import ask, catalog


@pytest.mark.parametrize("catalog, card", [("gpurenthub", "H100 SXM"), ("gpuwithcrypto", "H100 80GB")])
def test_when_no_set_of_the_card_holds_it_the_full_host_says_by_how_much(catalog, card):
    answer = ask(catalog, model="deepseek-v3", card="h100")
    assert answer.fit is not None and answer.fit.count == 8 and not answer.fit.valid
    text = plain(render_answer(answer, "en"))
    assert f"❌ No — 8x {card} (640 GB) cannot run it: short by" in text  # was "1x ... short by 593.6 GB"


def test_a_count_the_user_wrote_is_kept_and_the_smallest_working_set_is_still_chosen():
    assert ask("gpurenthub", model="deepseek-v3", card="h100", gpu_count=1).fit.count == 1
    assert ask("gpurenthub", model="llama-3.1-70b", card="a100").fit.count == 2


def test_a_reason_that_holds_for_every_count_is_said_on_the_smallest_set():
    answer = ask("gpurenthub", model="llama-3.1-70b", precision="fp8", card="a100")  # no FP8 hardware
    assert answer.fit is not None and answer.fit.count == 1 and not answer.fit.valid


def test_the_largest_set_whose_only_problem_is_memory_is_answered():
    """4x and 8x RTX A5000 also break Phi-3 Medium's 10 KV heads: 2x, 10 GB short, is the answer about the count
    (review: it fell back to 1x, 34 GB short)."""
    answer = ask("gpurenthub", model="phi-3-medium-4k", precision="fp32", card="rtx-a5000")
    assert answer.fit is not None and answer.fit.count == 2 and not answer.fit.valid
    assert {note.code for note in answer.fit.problems} <= {"short", "per_gpu"}


def test_the_cheaper_layout_after_yes_is_one_the_engine_starts_on():
    """The rule's cheapest card (1x A40) would not start vLLM: the cheaper layout named is the one that does, with
    no "runs on" that points elsewhere; after "Ja" German says "Günstiger:", not "Stattdessen:"."""
    answer = build_answer(SizeRequest(model="qwen2.5-72b", precision="int4", quant="awq", card="h100"),
                          catalog("gpurenthub"))
    text = plain(render_answer(answer, "en"))
    assert "Cheaper: 1x RTX A6000 (48 GB) for $290/month, $0.40/hour · vLLM ✓\n" in text
    assert "runs on" not in text
    german = plain(render_answer(answer, "de"))
    assert "Günstiger: 1x RTX A6000 (48 GB) für 290 $/Monat, 0,40 $/Stunde · vLLM ✓\n" in german
    assert "Stattdessen" not in german and "läuft auf" not in german
