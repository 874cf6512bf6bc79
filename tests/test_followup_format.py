"""A follow-up keeps the weight format it names ("and in awq?") and the one asked before, and replaces both together:
the kept request carried the precision alone, so "Yi 34B" + "and in awq?" was sized as the seed's INT4 (17.0 GB)
while "Yi 34B AWQ" asked whole is AWQ's real 19.0 GB."""
from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.answer.followup import apply_followup, request_from_json, request_to_json, shown_of
from engine.parse import Vocabulary, parse
from engine.sizing.rule import SizeRequest
from tests.support.botharness import TOKEN, Harness

CATALOG = load_catalog("catalog/data/gpurenthub.yaml").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)
USER = 71


def delta(text: str) -> SizeRequest:
    partial = parse(text, VOCABULARY).partial
    assert partial is not None, text
    return partial


def weights_gb(request: SizeRequest) -> float:
    return build_answer(request, CATALOG).requirement.weights_gb


def test_a_named_format_in_a_follow_up_is_sized_as_asked_whole():
    kept = SizeRequest(model="yi-34b")
    followup = apply_followup(kept, delta("and in awq?"), shown_of(build_answer(kept, CATALOG)))
    assert (followup.request.precision, followup.request.quant) == ("int4", "awq")
    [change] = followup.changes
    assert str(change) == "changed: precision BF16 -> AWQ"
    whole = parse("yi 34b awq", VOCABULARY).request
    assert whole is not None
    assert weights_gb(followup.request) == pytest.approx(weights_gb(whole))
    assert round(weights_gb(followup.request), 1) == 19.0


def test_a_follow_up_that_names_no_format_keeps_the_named_one():
    kept = SizeRequest(model="yi-34b", precision="int4", quant="awq")
    followup = apply_followup(kept, delta("for 4 users"))
    assert (followup.request.precision, followup.request.quant, followup.request.batch) == ("int4", "awq", 4)
    assert [str(change) for change in followup.changes] == ["changed: batch default -> 4"]  # no answer shown


@pytest.mark.parametrize(("text", "precision", "quant", "said"), [
    ("and in fp8?", "fp8", None, "changed: precision AWQ -> FP8"),  # the AWQ is not kept under FP8
    ("and at 4-bit?", "int4", None, "changed: precision AWQ -> INT4"),
    ("what about q4_k_m?", "int4", "q4_k_m", "changed: precision AWQ -> Q4_K_M"),
])
def test_a_new_precision_or_format_replaces_both(text, precision, quant, said):
    kept = SizeRequest(model="yi-34b", precision="int4", quant="awq")
    followup = apply_followup(kept, delta(text))
    assert (followup.request.precision, followup.request.quant) == (precision, quant)
    assert [str(change) for change in followup.changes] == [said]


def test_the_same_format_again_changes_nothing_to_say():
    kept = SizeRequest(model="yi-34b", precision="int4", quant="awq")
    assert apply_followup(kept, delta("und in AWQ?")).changes == []


def test_the_kept_request_keeps_its_format_through_the_store():
    kept = SizeRequest(model="yi-34b", precision="int4", quant="awq", batch=2)
    back = request_from_json(request_to_json(kept))
    assert back is not None and (back.precision, back.quant, back.batch) == ("int4", "awq", 2)
    assert request_from_json('{"model": "yi-34b", "quant": "no-such-format"}') is None
    assert request_from_json('{"model": "yi-34b", "quant": 4}') is None


@pytest.fixture
async def bot(tmp_path):
    from bot.config import load_settings
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), topup_secret="topup-key-for-tests",
                             rate_limit_messages=8, rate_limit_window_s=60)
    async with Harness(settings) as harness:
        yield harness


async def test_the_bot_keeps_the_format_of_a_follow_up_and_after_it(bot):
    await bot.send(USER, "yi 34b")
    assert "weights 68.0 GB" in bot.last_text(USER)
    await bot.send(USER, "and in awq?")
    text = bot.last_text(USER)
    assert "Yi 34B</b> · AWQ" in text and "weights 19.0 GB" in text and "changed: precision BF16 → AWQ" in text
    await bot.send(USER, "for 4 users")  # the kept request (the store's JSON) still has the AWQ
    text = bot.last_text(USER)
    assert "Yi 34B</b> · AWQ" in text and "weights 19.0 GB" in text and "INT4" not in text
    await bot.send(USER, "und in FP8?")
    text = bot.last_text(USER)
    assert "Yi 34B</b> · FP8" in text and "geändert: Präzision AWQ → FP8" in text
