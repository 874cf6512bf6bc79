"""An answer leads (✅, price, top-up) with a layout on which the workload really runs: the provider's rule, room to
spare and the serving check of the engine that would run it (DESIGN.md, "Beyond the seeds' arithmetic"). The rule's
own pick stays in the JSON (`rule_fit`) and, where it differs, in one line of the reply."""
from __future__ import annotations

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.fit.selection import ROOM_GB, has_room
from engine.parse import Vocabulary
from tests.support.asking import answer_of as _ask
from tests.support.botharness import Harness
from tests.test_answers_identical import CATALOGS, corpus_texts
from tests.test_bot_handlers import settings  # noqa: F401  (the harness's settings fixture)


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_no_corpus_answer_leads_with_a_layout_whose_serving_check_fails(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    failing, roomless, checked = [], [], 0
    for text in corpus_texts():
        answer, _, _ = ask_answer(text, catalog, vocabulary)
        if answer is None or answer.error:
            continue
        if answer.capacity_layout is not None:
            # a reverse answer leads with the layout it answered, at the context or users found there
            assert answer.capacity is not None and answer.capacity.runs, text
            continue
        data = answer.to_json()
        fit, serving = data["fit"], data["serving"]
        if isinstance(fit, dict) and fit["valid"] and isinstance(serving, dict):
            checked += 1
            concurrency = serving["max_concurrency"]
            if serving["starts"] is False or concurrency is not None and concurrency < answer.resolved.batch:
                failing.append(text)  # the lead starts and holds every user at once
        lead = answer.payable  # what the ✅ line, the price and the top-up link are for
        if lead is None or answer.intent == "price":
            continue
        check = answer.review.check_layout(lead) if answer.review is not None else None
        if check is not None and not check.holds(answer.resolved.batch) and text not in failing:
            failing.append(text)
        if not has_room(lead):
            roomless.append(text)
    assert checked > 300
    assert failing == []
    assert roomless == []


def test_deepseek_r1_qwen3_8b_at_32k_leads_with_the_a40_and_says_the_rules_a5000():
    answer = _ask("DeepSeek-R1-0528-Qwen3-8B with 32k context")
    assert (answer.rule_fit.label, answer.fit.label) == ("1x RTX A5000", "1x A40")
    data = answer.to_json()
    assert data["rule_fit"]["card"] == "rtx-a5000" and data["fit"]["card"] == "a40"
    assert data["serving"]["starts"] is True and "amount=240.00" in data["topup_url"]
    text = plain(render_answer(answer, "en"))
    assert "✅ Fits on 1x A40 (48 GB)" in text
    assert "📏 By the sizing rule 1x RTX A5000 holds it with 0.8 GB to spare, but vLLM would not start there at 32k" \
        in text
    assert "would not start at 32k on 1x A40" not in text and "runs on 1x A40" not in text
    german = plain(render_answer(_ask("DeepSeek-R1-0528-Qwen3-8B mit 32k Kontext"), "de"))
    assert "✅ Passt auf 1x A40 (48 GB)" in german
    assert "📏 Nach der Größenregel fasst 1x RTX A5000 es mit 0,8 GB Reserve, aber vLLM würde dort bei 32k nicht " \
        "starten" in german


@pytest.mark.parametrize(("english", "german", "rule", "lead", "context"), [
    ("mistral large 2411 q4 32k", "mistral large 2411 q4 mit 32k Kontext", "1x A100 SXM", "2x A40", "32k"),
    ("devstral small 2507 fp8 128k", "devstral small 2507 fp8 mit 128k Kontext", "1x RTX 6000 Ada",
     "2x RTX 6000 Ada", "128k"),
])
def test_the_rules_pick_that_vllm_would_not_start_is_one_line_not_the_lead(english, german, rule, lead, context):
    """Under the accounting of vLLM 0.20-0.33 (0.92 of the card, CUDA graphs subtracted): the newest release's
    measured KV cache starts Mistral Large 2411 at 32k on one A100."""
    answer = _ask(english, vllm_version="0.33")
    assert (answer.rule_fit.label, answer.fit.label) == (rule, lead)
    assert answer.serving.starts and not answer.review.check_layout(answer.rule_fit).starts
    text = plain(render_answer(answer, "en"))
    assert f"✅ Fits on {lead}" in text and f"vLLM: starts on {lead}" in text
    assert text.count("📏 By the sizing rule") == 1 and f"By the sizing rule {rule} holds it" in text
    assert f"vLLM would not start there at {context}" in text
    assert f"{rule} (" not in text.split("Alternatives")[-1]  # no alternative that points back
    text = plain(render_answer(_ask(german, vllm_version="0.33"), "de"))
    assert f"✅ Passt auf {lead}" in text
    assert f"📏 Nach der Größenregel fasst {rule} es" in text and f"würde dort bei {context} nicht starten" in text


@pytest.mark.parametrize(("text", "lang", "yes"), [
    ("full sft qwen2.5 7b w/ deepspeed zero3 on 8x a100", "en", "✅ Yes — 8x A100 SXM"),
    ("full sft qwen2.5 7b w/ deepspeed zero3 on 8x h100", "en", "✅ Yes — 8x H100 SXM"),
    ("volles Fine-Tuning qwen2.5 7b mit deepspeed zero3 auf 8x a100", "de", "✅ Ja — 8x A100 SXM"),
])
def test_full_fine_tuning_is_not_refused_for_attention_heads(text, lang, yes):
    """ZeRO-3 / FSDP shard flat parameters, not heads: 28 heads on 8 GPUs train; the rule's verdict keeps its
    tensor-parallel note in `rule_fit`."""
    answer = _ask(text)
    assert answer.fit.valid and answer.fit.count == 8
    assert not answer.rule_fit.valid and "attention heads" in answer.to_json()["rule_fit"]["reason"]
    reply = plain(render_answer(answer, lang))
    assert yes in reply and "attention" not in reply and "Attention" not in reply


def test_a_named_layout_the_engine_would_not_start_on_is_no_yes():
    answer = _ask("mistral large 2411 q4 32k on an a100", vllm_version="0.33")  # see the test above
    assert not answer.fit.valid and answer.rule_fit.valid
    assert answer.selection.recommended.label == "2x A40" and answer.payable.label == "2x A40"
    text = plain(render_answer(answer, "en"))
    assert "❌ No — 1x A100 SXM (80 GB) cannot run it: vLLM would not start there at 32,768 tokens" in text
    assert "or with --max-model-len 32080" in text  # what does run there
    assert "Instead: 2x A40 (96 GB) for $456/month, $0.63/hour · vLLM ✓" in text and "✅" not in text
    german = plain(render_answer(_ask("mistral large 2411 q4 mit 32k Kontext auf einer a100", vllm_version="0.33"),
                                 "de"))
    assert "❌ Nein — 1x A100 SXM (80 GB) reicht nicht: vLLM würde dort bei 32.768 Tokens nicht starten" in german
    assert "Stattdessen: 2x A40" in german


def test_no_yes_without_room():
    """0.0 GB spare fits on paper only: a named layout gets no ✅ below ROOM_GB, and the answer says why."""
    answer = _ask("ollama qwen3:32b on an a5000")
    assert answer.rule_fit.valid and answer.rule_fit.spare_gb < ROOM_GB and not answer.fit.valid
    text = plain(render_answer(answer, "en"))
    assert "✅" not in text and "❌ No — 1x RTX A5000" in text and "no room to run it (at least 0.5 GB)" in text
    assert has_room(answer.payable)


async def test_the_chat_leads_with_what_runs(settings):  # noqa: F811
    async with Harness(settings) as bot:
        await bot.send(1, "DeepSeek-R1-0528-Qwen3-8B mit 32k Kontext", language_code="de")
        text = bot.last_text(1)
        assert "✅ Passt auf <b>1x A40</b>" in text and "Nach der Größenregel fasst 1x RTX A5000" in text
        assert "240 $" in text
        await bot.send(2, "full sft qwen2.5 7b w/ deepspeed zero3 on 8x a100")
        text = bot.last_text(2)
        assert "✅ <b>Yes</b> — 8x A100 SXM" in text and "attention heads" not in text
