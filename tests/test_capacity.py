"""The reverse questions: the largest context, requests at once and the biggest model on a layout, by the
seeds' rule and by the serving check, in English and German, with the JSON `capacity` of Contract v2."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.parse import Vocabulary
from engine.serving import Gpu, max_concurrency_at, max_context_for_layout, serving_check
from engine.serving.reverse import MAX_PARAMS_B, PARAMS_STEP_B, biggest_model_params_b, typical_model
from engine.sizing.rule import PRECISION_BYTES, SizeRequest, resolve, size

CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)
CAPACITY_KEYS = {"kind", "card", "count", "context_tokens", "batch", "rule_value", "serving_value", "models", "refused",
                 "picks", "budget_usd"}


def ask(text: str):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY)
    assert answer is not None and error is None, error
    return answer


def test_max_context_for_70b_fp8_on_an_h100():
    answer = ask("What is the max context for 70B FP8 on an H100?")
    data = answer.to_json()
    capacity = data["capacity"]
    assert set(capacity) == CAPACITY_KEYS and capacity["kind"] == "max_context"
    assert (capacity["card"], capacity["count"]) == ("H100 SXM", 1)
    # The rule: weights + overhead + KV per token x tokens <= 80 GB, solved for the tokens.
    requirement = answer.requirement
    per_token = requirement.kv_cache_gb / requirement_context(answer)
    fixed = requirement.total_gb - requirement.kv_cache_gb
    assert capacity["rule_value"] == int((80 - fixed) / per_token)
    # The engine: vLLM's largest single request on the same card.
    card = CATALOG.card("h100")
    expected = max_context_for_layout(answer.review.model(), Gpu.from_card(card), tp=1)
    assert capacity["serving_value"] == expected and expected < capacity["rule_value"]
    text = plain(render_answer(answer, "en"))
    assert f"Longest context on 1x H100 SXM: {int(capacity['rule_value']):,} tokens by the rule" in text
    json.dumps(data, allow_nan=False)


def requirement_context(answer) -> int:
    return answer.resolved.context_tokens * answer.resolved.batch


def test_max_context_is_capped_at_the_models_maximum_and_says_so():
    answer = ask("max context for Llama 3.1 8B on an A100")
    assert answer.capacity.serving_value == 131072 and answer.capacity.rule_value == 131072
    assert "capped at the model's maximum" in plain(render_answer(answer, "en"))


def test_how_many_users_on_an_l40s_with_llama_8b_at_8k():
    answer = ask("how many users can I serve on an L40S with Llama 3.1 8B at 8k?")
    capacity = answer.capacity
    assert capacity.kind == "max_batch" and capacity.card == "L40S" and capacity.context_tokens == 8192
    card = CATALOG.card("l40s")
    concurrency = max_concurrency_at(answer.review.model(), Gpu.from_card(card), 8192)
    assert capacity.serving_value == int(concurrency)
    fixed = answer.requirement.total_gb - answer.requirement.kv_cache_gb
    assert capacity.rule_value == int((card.vram_gb - fixed) / answer.requirement.kv_cache_gb)
    german = plain(render_answer(ask("Wie viele Nutzer gleichzeitig auf einer L40S mit Llama 3.1 8B bei 8k?"), "de"))
    assert "Gleichzeitige Anfragen bei 8k auf 1x L40S" in german


@pytest.mark.parametrize("text,label", [("what is the biggest model I can run on a 4090?", "RTX 4090"),
                                        ("Welches ist das größte Modell für 48 GB?", "48 GB")])
def test_biggest_model_on_a_card_or_in_a_budget(text, label):
    answer = ask(text)
    capacity = answer.capacity
    assert capacity.kind == "biggest_model" and capacity.card == label
    assert capacity.rule_value is not None and capacity.serving_value is not None
    vram = CATALOG.card("4090").vram_gb if label == "RTX 4090" else 48
    # The rule's value is the largest size (0.1 B steps) whose requirement fits; 0.1 B more does not.
    def total(params_b: float) -> float:
        return size(resolve(SizeRequest(params_b=params_b), CATALOG.sizing), CATALOG.sizing).total_gb
    assert total(capacity.rule_value) <= vram < total(capacity.rule_value + 0.1)
    assert capacity.models and answer.to_json()["capacity"]["models"] == list(capacity.models)
    assert answer.to_json()["fit"] is None
    assert capacity.card in plain(render_answer(answer, "en"))


def test_a_size_question_has_no_capacity():
    assert ask("70B at 4-bit, 32k").to_json()["capacity"] is None


def test_no_context_fits_when_the_weights_alone_do_not():
    """Llama 2 70B in BF16 (140 GB) on one H100: no context at all fits. It read "none tokens by the rule · none
    tokens under vLLM" (German "keins Tokens")."""
    answer = ask("max context on an H100 for llama 2 70b")
    capacity = answer.to_json()["capacity"]
    assert capacity["rule_value"] is None and capacity["serving_value"] is None
    english = plain(render_answer(answer, "en"))
    assert "📏 Longest context on 1x H100 SXM: none — the model itself does not fit" in english
    german = plain(render_answer(answer, "de"))
    assert "📏 Längster Kontext auf 1x H100 SXM: keiner — das Modell selbst passt nicht" in german
    assert "Tokens" not in german.split("📏")[1].split("\n")[0]


@pytest.mark.parametrize("catalog_name, text, expected", [
    # a KV cache the formula cannot size (GLM-5's indexer keys, their dtype not read): not "none", the model fits
    ("gpurenthub", "max context for glm-5 on 8x MI300X",
     "📏 Longest context on 8x MI300X: not known — no KV cache is sized for this model"),
    # a model the engine no longer serves (vLLM removed Llama 3.2 Vision): the rule's figure, not known under vLLM
    ("gpurenthub", "max context for llama 3.2 11b vision on an A100",
     "📏 Longest context on 1x A100 SXM: 131,072 tokens by the rule · not known under vLLM"),
    # the headroom rule counts no context: the engine's figure alone, and why
    ("gpuwithcrypto", "max context for llama 3.1 8b on an h100",
     "📏 Longest context on 1x H100 80GB: 131,072 tokens (capped at the model's maximum, 131,072) under vLLM "
     "(this provider's rule does not count the context)"),
])
def test_a_longest_context_the_rule_cannot_count_is_never_called_none(catalog_name, text, expected):
    hub = load_catalog(catalog_name).catalog
    answer, error, _ = ask_answer(text, hub, Vocabulary.of_catalog(hub))
    assert answer is not None and error is None
    rendered = plain(render_answer(answer, "en"))
    assert expected in rendered and "does not fit" not in rendered.split("📏")[1].split("\n")[0]


@pytest.mark.parametrize("catalog_name, text, expected", [
    ("gpurenthub", "how many users whisper large v3 on a 4090",
     "👥 Requests at once at 448 tokens on 1x RTX 4090: not known — no KV cache is sized for this model"),
    ("gpurenthub", "how many users for llama 2 70b on a 4090",
     "👥 Requests at once at 4k on 1x RTX 4090: none — the model itself does not fit"),
    # 5, the check's prediction under vLLM 0.34 (4 under the 0.20-0.33 accounting, which kept 8 % of the card; 0.34
    # keeps a margin of max(1 GiB, 0.75 x the activation peak) below the memory free at start)
    ("gpuwithcrypto", "how many users for llama 3.1 8b on a 4090",
     "👥 Requests at once at 8k on 1x RTX 4090: 5 under vLLM (this provider's rule does not count the context)"),
])
def test_requests_at_once_the_rule_cannot_count_are_never_called_none(catalog_name, text, expected):
    """They read "none by the rule · none under vLLM" (Whisper: "at 448", no unit) and, under the headroom rule,
    "none by the rule · 4 under vLLM" for a model that fits."""
    hub = load_catalog(catalog_name).catalog
    answer, error, _ = ask_answer(text, hub, Vocabulary.of_catalog(hub))
    assert answer is not None and error is None
    assert expected in plain(render_answer(answer, "en"))


# -- the biggest model's bisection skips only probes that cannot start ----------------------------------------------

CATALOG_IDS = ("gpurenthub", "gpuwithcrypto")


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


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
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


# -- gpt-oss: the capacity questions read the weights the forward check loads on that card ---------------------------

@pytest.mark.parametrize("card", ["H100", "H200", "A100 80GB"])
def test_gpt_oss_max_context_is_the_forward_checks_on_the_same_card(card):
    """Before: 'max context for gpt-oss-120b on an H100' answered 67,856 tokens from the published 65.3 GB while the
    forward check, with the 64.38 GiB vLLM keeps on Hopper (Triton; issue 33155), refused 64k on that card."""
    answer = ask(f"max context for gpt-oss-120b on an {card}")
    capacity, review = answer.capacity, answer.review
    assert capacity is not None and review is not None and capacity.kind == "max_context"
    layout = next(layout for layout in [answer.fit, answer.rule_fit] if layout is not None)
    on_card = review.model_on(layout.card)
    assert on_card is not None and on_card.weights.body_bytes != review.model().weights.body_bytes
    forward = ask(f"gpt-oss-120b at 131072 tokens on one {card}").review.check(layout.card, 1)
    assert forward is not None
    assert capacity.serving_value == (float(forward.max_context_tokens) if forward.max_context_tokens else None)


def test_gpt_oss_users_at_a_context_and_context_for_users_agree_on_two_h100():
    users = ask("how many users for gpt-oss-120b at 32k on 2 H100").capacity
    assert users is not None and users.serving_value is not None and users.serving_value >= 4
    per_user = ask(f"max context for {int(users.serving_value)} users of gpt-oss-120b on 2 H100").capacity
    assert per_user is not None and per_user.serving_value is not None and per_user.serving_value >= 32768
