"""Follow-ups in the engine: the parser tells a change from a question, engine.answer.followup applies it."""
from __future__ import annotations

import json

import pytest

from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.answer.followup import apply_followup, delta_of, request_from_json, request_to_json, shown_of
from engine.parse import Vocabulary, parse
from engine.sizing.rule import SizeRequest

CATALOG = load_catalog("catalog/data/gpurenthub.yaml").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)


def read(text: str):
    return parse(text, VOCABULARY)


def set_fields(request: SizeRequest) -> dict[str, object]:
    names = ("model", "params_b", "precision", "context_tokens", "batch", "workload", "card", "gpu_count",
             "billing", "coin", "count_implied")
    return {name: getattr(request, name) for name in names if getattr(request, name) not in (None, False)}


# -- the parser: partial and cue ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "fields", "cue"), [
    ("and in fp8?", {"precision": "fp8"}, True),
    ("what about 2 cards?", {"gpu_count": 2}, True),
    ("with 128k?", {"context_tokens": 131072}, True),
    ("und auf einer H100?", {"card": "h100", "gpu_count": 1, "count_implied": True}, True),
    ("for 10 users", {"batch": 10}, False),
    ("how much per day?", {"billing": "day"}, False),
    ("on 2x H100", {"card": "h100", "gpu_count": 2}, False),
    ("und mit QLoRA?", {"workload": "qlora"}, True),
])
def test_a_change_is_no_question_but_its_fields_are_read(text, fields, cue):
    result = read(text)
    assert result.request is None and result.error == "not a sizing question"
    assert result.partial is not None and set_fields(result.partial) == fields
    assert result.followup_cue is cue
    assert delta_of(result) is result.partial


def test_a_whole_question_is_a_change_only_with_a_cue():
    cued = read("what about Qwen 72B?")
    assert cued.request is not None and cued.followup_cue and delta_of(cued) is cued.partial
    assert set_fields(cued.partial) == {"model": "qwen2.5-72b"}
    fresh = read("Qwen 72B fp8")
    assert fresh.request is not None and not fresh.followup_cue and delta_of(fresh) is None


def test_a_text_that_sets_nothing_has_no_partial():
    for text in ("hello", "thanks!", "", "and?"):
        result = read(text)
        assert result.partial is None and delta_of(result) is None


def test_a_bad_value_has_no_partial():
    result = read("and with batch 0")
    assert result.request is None and result.partial is None and result.error != "not a sizing question"


def test_told_language_only_when_the_text_tells():
    assert read("70B int4").told_language is None
    assert read("how much memory for 70B int4?").told_language == "en"
    assert read("wie viel Speicher für 70B int4?").told_language == "de"


# -- the delta rule ---------------------------------------------------------------------------------------------

def previous() -> SizeRequest:
    return SizeRequest(params_b=70, precision="int4", context_tokens=32768)


def test_a_field_replaces_and_the_change_is_named_as_the_user_saw_it():
    kept = SizeRequest(params_b=70, context_tokens=32768)  # precision not said: the answer used a default
    shown = shown_of(build_answer(kept, CATALOG))
    followup = apply_followup(kept, read("and in fp8?").partial, shown)
    assert set_fields(followup.request) == {"params_b": 70, "precision": "fp8", "context_tokens": 32768}
    assert followup.request.followup and not followup.needs_card
    [change] = followup.changes
    assert change.code == "followup_changed" and str(change) == "changed: precision BF16 -> FP8"
    assert followup.request.assumed[0] is change
    assert kept.precision is None  # the kept request is not changed


def test_a_new_model_replaces_model_and_size_and_keeps_the_rest():
    followup = apply_followup(previous(), read("what about Qwen 72B?").partial)
    assert set_fields(followup.request) == {"model": "qwen2.5-72b", "precision": "int4", "context_tokens": 32768}
    assert followup.request.params_b is None
    assert str(followup.changes[0]) == "changed: model 70B -> Qwen2.5 72B"


def test_a_count_goes_on_the_kept_card_else_the_shown_card_else_asks():
    on_card = SizeRequest(params_b=70, precision="int4", card="h100")
    followup = apply_followup(on_card, read("what about 2 cards?").partial)
    assert (followup.request.card, followup.request.gpu_count) == ("h100", 2)
    shown = shown_of(build_answer(previous(), CATALOG))
    assert shown.card == "A40" and shown.count == 2  # vLLM would not start at 32k on the rule's 1x A40
    followup = apply_followup(previous(), read("what about 4 cards?").partial, shown)
    assert (followup.request.card, followup.request.gpu_count) == ("A40", 4)
    assert [str(change) for change in followup.changes] == ["changed: gpu count 2 -> 4"]
    assert apply_followup(previous(), read("what about 2 cards?").partial).needs_card


def test_a_card_replaces_card_and_count_and_names_it_from_the_catalog():
    kept = SizeRequest(params_b=70, precision="int4", card="a40", gpu_count=2)
    followup = apply_followup(kept, read("und auf einer H100?").partial, catalog=CATALOG)
    request = followup.request
    assert (request.card, request.gpu_count, request.count_implied, request.intent) == ("h100", 1, True, None)
    assert [str(change) for change in followup.changes] == ["changed: card A40 -> H100 SXM"]


def test_billing_batch_workload_and_price_questions():
    followup = apply_followup(previous(), read("for 10 users").partial)
    assert followup.request.batch == 10 and str(followup.changes[0]) == "changed: batch default -> 10"
    followup = apply_followup(previous(), read("how much per day?").partial, shown_of(build_answer(previous(),
                                                                                                     CATALOG)))
    assert followup.request.billing == "day" and str(followup.changes[0]) == "changed: billing per month -> per day"
    followup = apply_followup(previous(), read("und mit QLoRA?").partial)
    assert followup.request.workload == "qlora"
    price = read("how much is an H100 per hour?").request
    assert price is not None and price.intent == "price"
    sized = apply_followup(price, read("what about 70B int4?").partial)
    assert sized.request.intent is None and (sized.request.card, sized.request.params_b) == ("h100", 70)
    other_card = apply_followup(price, read("and an A40?").partial)
    assert other_card.request.intent == "price" and other_card.request.card == "a40"


def test_nothing_changed_names_no_change():
    followup = apply_followup(previous(), read("and in int4?").partial)
    assert followup.changes == [] and set_fields(followup.request) == set_fields(previous())


# -- a follow-up that names only the card count ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "count"), [
    ("what about 2 of them", 2), ("and 2 of those?", 2), ("two of them", 2), ("on 4 of them", 4), ("2x", 2),
    ("and on 2 of them?", 2), ("und auf zwei?", 2), ("und auf 2?", 2), ("zwei davon", 2), ("mit 4 davon", 4),
    ("x2", 2), ("4x?", 4), ("on two", 2), ("and on 8?", 8), ("und auf acht", 8), ("what about 3 of these", 3),
    ("how about two of them", 2), ("und 2x?", 2), ("und mit zwei davon?", 2), ("on 2 please", 2),
    ("what about 2 cards?", 2),
])
def test_a_count_alone_is_read(text, count):
    result = read(text)
    assert result.request is None and result.partial is not None
    assert result.partial.gpu_count == count and result.partial.card is None
    assert not result.partial.ignored


@pytest.mark.parametrize("text", ["auf 0?", "on 99", "und auf einer?", "and at 4k?", "and on 2 users?", "hello 2"])
def test_no_count_where_none_is_said(text):
    result = read(text)
    assert result.partial is None or result.partial.gpu_count is None


@pytest.mark.parametrize("text", ["what about 2 of them", "und auf zwei?", "2x", "on 4 of them", "and 2 of those?"])
def test_the_count_goes_on_the_card_of_the_question_before(text):
    first = read("llama 3.1 70b fp8 on an h100")
    assert first.request is not None
    answer = build_answer(first.request, CATALOG)
    delta = delta_of(read(text))
    assert delta is not None
    merged = apply_followup(first.request, delta, shown_of(answer), catalog=CATALOG).request
    assert CATALOG.card(merged.card).name == CATALOG.card(first.request.card).name
    assert merged.gpu_count == read(text).partial.gpu_count
    assert merged.model == "llama-3.1-70b" and merged.precision == "fp8"


# -- the kept request as JSON ---------------------------------------------------------------------------------

def test_request_json_round_trip_and_rejects_what_is_not_one():
    request = SizeRequest(model="llama-3.1-70b", precision="fp8", context_tokens=131072, card="h100",
                          gpu_count=2, billing="day", coin="BTC", cheapest=True, assumed=["x"], ignored=["y"])
    back = request_from_json(request_to_json(request))
    assert back is not None and set_fields(back) == set_fields(request) and back.cheapest
    assert back.assumed == [] and back.ignored == []
    for bad in ("", "[]", "{", json.dumps({"batch": "8"}), json.dumps({"batch": True}),
                json.dumps({"context_tokens": 10**12}), json.dumps({"secret": 1}), json.dumps({"workload": "x"})):
        assert request_from_json(bad) is None


def test_json_request_says_whether_it_was_a_follow_up():
    fresh = build_answer(previous(), CATALOG).to_json()
    assert fresh["request"]["followup"] is False
    merged = apply_followup(previous(), read("and in fp8?").partial).request
    data = build_answer(merged, CATALOG).to_json()
    assert data["request"]["followup"] is True and data["request"]["precision"] == "fp8"
    assert "changed: precision INT4 -> FP8" in data["request"]["assumed"]


def test_request_to_json_writes_what_json_dumps_wrote(bundled_vocabulary):
    """request_to_json keeps one encoder; the kept text is the one json.dumps(sort_keys=True) wrote
    before, for every request of the parser corpus (a change would make old stored contexts read differently)."""
    from pathlib import Path

    import yaml

    from engine.answer.followup import _KEPT

    corpus = Path(__file__).resolve().parent / "parser_corpus.yaml"
    cases = yaml.safe_load(corpus.read_text(encoding="utf-8"))["cases"]
    compared = 0
    for case in cases:
        request = parse(case["text"], bundled_vocabulary).request if case.get("text") else None
        if request is None:
            continue
        data = {name: getattr(request, name) for name in _KEPT if getattr(request, name) not in (None, False)}
        assert request_to_json(request) == json.dumps(data, sort_keys=True, allow_nan=False)
        compared += 1
    assert compared > 500
