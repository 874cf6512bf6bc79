"""What the user states is honoured or named as not honoured, never silently replaced: their own cards, their
budget and billing span, the runtime flags they paste."""
from __future__ import annotations

import pytest

from bot.texts.render import plain, render_answer
from tests.support.asking import answer_of as _ask
from tests.support.botharness import Harness
from tests.test_bot_handlers import settings  # noqa: F401  (the harness's settings fixture)


@pytest.mark.parametrize("text, language", [
    ("I have 2x 3090 (48gb total), can I run llama 3.3 70b q4?", "en"),
    ("Ich habe 2x 3090 (48 GB insgesamt), läuft llama 3.3 70b q4?", "de"),
])
def test_a_memory_in_total_is_the_cards_together_not_one_card(text, language):
    answer = _ask(text)
    assert (answer.request.gpu_count, answer.request.card_vram_gb) == (2, 24)
    shown = plain(render_answer(answer, language))
    assert "2x RTX 3090 (48 GB)" in shown
    assert "48GB" not in shown  # no RTX 3090 with 48 GB of its own, which the catalog would not rent


@pytest.mark.parametrize("text, language", [
    ("Passt Qwen3 32B auf der 4090?", "de"),
    ("Can I run Qwen3 32B on a 4090?", "en"),
])
def test_the_4090_is_one_card(text, language):
    answer = _ask(text)
    assert answer.request.gpu_count == 1
    assert "1x RTX 4090 (24 GB)" in plain(render_answer(answer, language))


# ---- money and time: a budget and a billing span


@pytest.mark.parametrize("text, budget, billing, span", [
    ("llama 3.3 70b q4 under $1000/mo", 1000, "month", None),
    ("Llama 3.3 70B Q4, Budget 500 $ im Monat", 500, "month", None),
    ("llama 3.1 8b for 800 USD a week", 800, "week", None),
    ("qwen3 32b for 2 weeks", None, "week", 2),
    ("Qwen3 32B für 3 Tage", None, "day", 3),
    ("qwen3 32b für drei Wochen bis 1.000 $", 1000, "week", 3),
])
def test_money_and_time_are_read_as_stated(text, budget, billing, span):
    request = _ask(text).request
    assert (request.budget_usd, request.billing, request.billing_span) == (budget, billing, span)
    assert request.ignored == []


@pytest.mark.parametrize("text, ignored", [
    ("70B int4 under $500/mo for 2 weeks", "for 2 weeks"),
    ("70B int4, Budget 500 $ im Monat, für 2 Wochen", "für 2 Wochen"),
])
def test_a_span_of_another_period_than_the_budgets_is_named_not_taken_as_months(text, ignored):
    request = _ask(text).request
    assert (request.budget_usd, request.billing, request.billing_span) == (500, "month", None)
    assert request.ignored == [ignored]


def test_a_number_of_hours_with_no_lead_is_no_billing_span():
    assert _ask("qwen3 32b, 8 hours of audio a day").request.billing_span is None


@pytest.mark.parametrize("text, language, line", [
    ("llama 3.3 70b q4 under $1000/mo", "en", "💰 Within your budget of $1,000: 1x A40 for $240 (one month)"),
    ("Llama 3.3 70B Q4, Budget 500 $ im Monat", "de", "💰 Im Budget von 500 $: 1x A40 für 240 $ (einen Monat)"),
])
def test_a_budget_the_lead_keeps_is_said_with_its_price(text, language, line):
    answer = _ask(text)
    assert answer.money() == {"budget_usd": answer.request.budget_usd, "billing": "month", "billing_span": 1,
                              "price_usd": 240, "within": True}
    assert line in plain(render_answer(answer, language))


@pytest.mark.parametrize("text, language, line", [
    ("llama 3.3 70b q4 under $200/mo", "en",
     "💸 Nothing within your budget of $200 runs it (one month): the cheapest that does is 1x A40 for $240"),
    ("Llama 3.3 70B Q4, Budget 200 $ im Monat", "de",
     "💸 Im Budget von 200 $ läuft es nirgends (einen Monat): am günstigsten läuft es auf 1x A40 für 240 $"),
])
def test_a_budget_nothing_runs_within_says_so_and_names_the_cheapest(text, language, line):
    answer = _ask(text)
    assert answer.money()["within"] is False and answer.topup_amount_usd == 240
    assert line in plain(render_answer(answer, language))
    assert answer.to_json()["money"]["within"] is False and answer.to_json()["request"]["budget_usd"] == 200


def test_a_named_card_over_the_budget_is_said_so():
    answer = _ask("llama 3.3 70b q4 on 1x H100 under $500/mo")
    assert "over your budget of $500" in plain(render_answer(answer, "en"))


@pytest.mark.parametrize("text, language, hours, period", [
    ("qwen3 32b for 2 weeks", "en", 336, "(2 weeks)"),
    ("Qwen3 32B für 2 Wochen", "de", 336, "(2 Wochen)"),
])
def test_the_top_up_pays_for_the_span(text, language, hours, period):
    answer = _ask(text)
    layout = answer.payable
    assert answer.topup_hours == hours and answer.topup_amount_usd == pytest.approx(layout.hourly_usd * 336)
    assert answer.to_json()["request"]["billing_span"] == 2
    assert period in plain(render_answer(answer, language)).splitlines()[-1]


def test_a_span_shorter_than_the_minimum_term_pays_the_minimum_term():
    answer = _ask("Qwen3 32B für 3 Tage")
    assert answer.topup_hours == 168 and answer.topup_minimum_applied
    assert "(eine Woche — die Mindestlaufzeit)" in plain(render_answer(answer, "de"))


def test_two_months_are_two_monthly_prices():
    answer = _ask("qwen3 32b for 2 months")
    assert answer.topup_amount_usd == pytest.approx(2 * answer.payable.monthly_usd)


def test_budget_and_span_survive_the_buttons():
    from engine.sizing.payload import decode_request, encode_request
    from engine.sizing.rule import SizeRequest

    request = SizeRequest(model="qwen3-32b", billing="week", billing_span=2, budget_usd=499.5)
    decoded = decode_request(encode_request(request))
    assert (decoded.billing, decoded.billing_span, decoded.budget_usd) == ("week", 2, 499.5)


async def test_a_budget_through_the_real_application(settings):  # noqa: F811
    async with Harness(settings) as bot:
        await bot.send(1, "llama 3.3 70b q4 under $200/mo")
        assert "Nothing within your budget of $200 runs it" in bot.last_text(1)
        await bot.send(2, "Llama 3.3 70B Q4, Budget 500 $ im Monat", language_code="de")
        assert "Im Budget von 500 $: 1x A40 für 240 $" in bot.last_text(2)


# ---- runtime flags pasted into the question


@pytest.mark.parametrize("text, field, value", [
    ("qwen3 32b --max-model-len 65536", "context_tokens", 65536),
    ("Qwen3 32B mit --max-model-len=32k", "context_tokens", 32768),
    ("llama 3.1 8b q4 -c 32768", "context_tokens", 32768),
    ("Llama 3.1 8B Q4 mit --ctx-size 16384", "context_tokens", 16384),
    ("llama 3.3 70b fp8 --tensor-parallel-size 2", "gpu_count", 2),
    ("Llama 3.3 70B FP8 mit -tp 4", "gpu_count", 4),
    ("qwen3 32b --kv-cache-dtype fp8", "kv_precision", "fp8"),
    ("Qwen3 32B mit --kv-cache-dtype fp8_e5m2", "kv_precision", "fp8"),
    ("qwen3 32b --gpu-memory-utilization 0.85", "gpu_memory_utilization", 0.85),
    ("Qwen3 32B auf einer H100 mit --gpu-memory-utilization 0.8", "gpu_memory_utilization", 0.8),
])
def test_a_runtime_flag_is_honoured(text, field, value):
    request = _ask(text).request
    assert getattr(request, field) == value
    assert request.ignored == []


@pytest.mark.parametrize("text, listed", [
    ("qwen3 32b on an H100 --enforce-eager", ["--enforce-eager"]),
    ("Qwen3 32B FP8 auf einer H100 mit -tp 2", ["-tp 2"]),  # one card named: its count is kept
    ("qwen3 32b --max-num-seqs 8 --swap-space 4", ["--swap-space 4"]),  # --max-num-seqs 8 is the batch
])
def test_a_flag_not_honoured_is_named_whole(text, listed):
    answer = _ask(text)
    assert answer.request.ignored == listed
    shown = plain(render_answer(answer, "en"))
    assert all(f"'{flag}'" in shown for flag in listed)


def test_every_layer_on_the_gpu_is_what_is_sized():
    assert _ask("qwen3 32b gguf -ngl 99").request.ignored == []


@pytest.mark.parametrize(("lang", "said"), [("en", "-ngl 20 keeps the other layers on the CPU"),
                                            ("de", "-ngl 20 lässt die übrigen Schichten auf der CPU")])
def test_fewer_gpu_layers_are_said_and_sized_with_every_layer_on_the_gpu(lang, said):
    answer = _ask("Qwen3 32B gguf mit -ngl 20")
    assert answer.request.ignored == [] and any(getattr(note, "code", "") == "ngl_partial"
                                                for note in answer.request.assumed)
    assert said in plain(render_answer(answer, lang))


def test_the_serving_check_uses_the_stated_utilization():
    data = _ask("qwen3 32b on an H100 --gpu-memory-utilization 0.85").to_json()
    assert data["serving"]["gpu_memory_utilization"] == 0.85
    assert data["request"]["gpu_memory_utilization"] == 0.85
    assert "--gpu-memory-utilization 0.85" in data["serving"]["command"]


def test_the_stated_utilization_survives_the_buttons():
    from engine.sizing.payload import decode_request, encode_request
    from engine.sizing.rule import SizeRequest

    decoded = decode_request(encode_request(SizeRequest(model="qwen3-32b", gpu_memory_utilization=0.85)))
    assert decoded.gpu_memory_utilization == 0.85


def test_cli_style_words_stay_read_as_before():
    request = _ask("70b --context 32768 --batch 4 --precision int4").request
    assert (request.context_tokens, request.batch, request.precision, request.ignored) == (32768, 4, "int4", [])
