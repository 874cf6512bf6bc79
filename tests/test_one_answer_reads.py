"""One answer, read as the user wrote it: the card they name ("on the 4090"), the money they have ("Budget 500 $"),
a price unit ("per 1M tokens"), and no line after the verdict that says the opposite of it."""
from __future__ import annotations

import pytest

from bot.texts.render import plain, render_answer
from tests.support.asking import answer_of as _ask
from tests.support.botharness import Harness
from tests.test_bot_handlers import settings  # noqa: F401  (the harness's settings fixture)


@pytest.mark.parametrize(("text", "lang", "no"), [
    ("can I run qwen3 30b a3b in fp8 on the 4090?", "en", "❌ No — 1x RTX 4090 (24 GB)"),
    ("gemma 3 12b on the L4 at 32k", "en", "❌ No — 1x L4 (24 GB)"),
    ("Passt Qwen3 32B FP8 auf die 4090?", "de", "❌ Nein — 1x RTX 4090 (24 GB)"),
])
def test_the_card_after_the_definite_article_is_one_card(text, lang, no):
    """'on the 4090' names the user's one card, as 'my 4090' does: never answered for a 2x set they did not name."""
    answer = _ask(text)
    assert answer.resolved.card and answer.resolved.gpu_count == 1 and answer.fit.count == 1
    reply = plain(render_answer(answer, lang))
    assert no in reply and "2x RTX 4090" not in reply.split("\n\n")[1]


def test_a_count_of_cards_before_a_comma_and_a_speed_question_is_no_speed_target():
    answer = _ask("llama 3.1 8b q4 on 6x 3090, tokens per second?")
    assert answer.request.target_tok_s is None and answer.resolved.gpu_count == 6
    assert "3,090" not in plain(render_answer(answer, "en"))


@pytest.mark.parametrize("text", [
    "cost per 1M tokens for qwen3 32b fp8 on an h100 with 32 users",
    "Kosten pro 1M Tokens für Qwen3 32B FP8 auf einer H100 bei 32 Nutzern",
    "qwen3 32b fp8 on an h100, $ per million tokens?",
])
def test_per_million_tokens_is_the_unit_of_a_price_not_a_context(text):
    answer = _ask(text)
    assert answer.resolved.context_tokens == 8192
    assert answer.request.speed_asked


@pytest.mark.parametrize(("text", "lang", "within", "rule_line"), [
    ("Budget 500 $ im Monat für Qwen3 32B", "de", "💰 Im Budget von 500 $: 2x A40 für 456 $",
     "📏 Die Größenregel allein wählt 1x A100 SXM (990 $/Monat), über Ihrem Budget von 500 $"),
    ("qwen3 32b under $500 a month", "en", "💰 Within your budget of $500: 2x A40 for $456",
     "📏 The sizing rule alone picks 1x A100 SXM ($990/month), over your budget of $500"),
])
def test_a_money_budget_leads_with_a_layout_within_it_that_runs(text, lang, within, rule_line):
    """Never 'nothing within $500 runs it' above an alternative at $456 on which vLLM starts."""
    answer = _ask(text)
    assert answer.fit.label == "2x A40" and answer.serving.starts and answer.topup_amount_usd == 456
    reply = plain(render_answer(answer, lang))
    assert within in reply and rule_line in reply
    assert "💸" not in reply


def test_a_max_context_answer_shows_no_default_context():
    answer = _ask("max context for qwen3 32b awq on an h200")
    reply = plain(render_answer(answer, "en"))
    assert reply.splitlines()[0] == "Qwen3 32B · AWQ · batch 1 · inference"
    assert "8,192" not in reply and "(default); 8" not in reply
    german = plain(render_answer(_ask("maximaler Kontext für Llama 3.3 70B FP8 auf einer H200 für 8 Nutzer"), "de"))
    assert german.splitlines()[0] == "Llama 3.3 70B · FP8 · Batch 8 · Inferenz" and "8.192" not in german


@pytest.mark.parametrize(("text", "lang", "line"), [
    ("qwen3 32b fp8 on an h100 for 32 users", "en",
     "🚀 vLLM: starts on 1x H100 SXM — room for 142,864 tokens (17 users at 8k), not the 32 asked at once"),
    ("ollama qwen3:32b on an A5000", "en",
     "🚀 llama.cpp: starts on 1x RTX A5000 — room for 11,764 tokens (1 user at 8k), but the sizing rule above "
     "refuses this layout"),
    ("ollama qwen3:32b auf einer A5000", "de",
     "🚀 llama.cpp: startet auf 1x RTX A5000 — Platz für 11.764 Tokens (1 Nutzer bei 8k), aber die Größenregel "
     "oben lehnt diese Aufteilung ab"),
])
def test_starts_under_a_no_says_why_both_hold(text, lang, line):
    answer = _ask(text)
    assert not answer.fit.valid
    reply = plain(render_answer(answer, lang))
    assert reply.count("❌") == 1 and line in reply


def test_an_alternative_with_no_room_is_not_offered_after_a_no_for_no_room():
    """'0.0 GB spare is no room' on the A5000: the RTX 3090 with the same 24 GB and 0.0 GB spare is no option."""
    answer = _ask("ollama qwen3:32b on an A5000")
    assert all(a.card.name != "RTX 3090" for a in answer.selection.alternatives)


def test_a_narrower_precision_is_suggested_only_where_its_engine_starts():
    """INT4 (AWQ under vLLM) at 16k would not start on 2x RTX 4090: no 'tap INT4' under the 'vLLM ✗' verdict."""
    answer = _ask("I have 2x 4090, can I run llama 3.3 70b in fp8 with 16k ctx?")
    assert answer.hint is None
    assert "💡" not in plain(render_answer(answer, "en"))


async def test_the_chat_reads_the_card_and_the_budget(settings):  # noqa: F811
    async with Harness(settings) as bot:
        await bot.send(1, "Passt Qwen3 32B FP8 auf die 4090?", language_code="de")
        text = bot.last_text(1)
        assert "❌ <b>Nein</b> — 1x RTX 4090 (24 GB) reicht nicht" in text
        await bot.send(2, "Budget 500 $ im Monat für Qwen3 32B", language_code="de")
        text = bot.last_text(2)
        assert "2x A40" in text and "amount=456.00" in text and "💸" not in text


def test_max_num_seqs_in_a_launch_line_is_the_requests_at_once():
    answer = _ask("vllm serve mistralai/Mistral-Small-3.2-24B-Instruct-2506 --max-model-len 32768 --max-num-seqs 16")
    assert answer.resolved.batch == 16 and answer.resolved.context_tokens == 32768
    assert "--max-num-seqs 16" not in answer.request.ignored


@pytest.mark.parametrize(("text", "tokens"), [
    ("full finetune llama 3.1 70b bf16, 1B tokens, how many GPU hours?", 1e9),
    ("pretrain a 1b model on 20B tokens on 8x h100", 20e9),
])
def test_a_billion_tokens_in_a_training_question_is_the_dataset_not_a_model_size(text, tokens):
    answer = _ask(text)
    assert answer.request.train_tokens == tokens and answer.job is not None
    assert not answer.request.ignored


def test_alternatives_for_several_users_show_each_users_speed_as_the_rule_line_does():
    """'📏 … at ≈ 18 tok/s each it misses ≥ 20' and the same layout below at '≈ 21 tok/s' (one stream) read as two
    figures for one thing: for several users each alternative shows each user's speed."""
    answer = _ask("llama 3.3 70b fp8 for 20 users at 20 tok/s with 32k")
    reply = plain(render_answer(answer, "en"))
    assert ("📏 By the sizing rule 8x RTX 6000 Ada holds it with 10.4 GB to spare, but at ≈ 18 tok/s each it misses "
            "≥ 20") in reply
    assert "• 8x RTX 6000 Ada (384 GB) — $3,312/month, $4.60/hour, ≈ 18 tok/s each · vLLM ✓" in reply
    german = plain(render_answer(_ask("llama 3.3 70b fp8 für 20 Nutzer mit mindestens 20 Token/s bei 32k"), "de"))
    assert "• 8x RTX 6000 Ada (384 GB) — 3.312 $/Monat, 4,60 $/Stunde, je ≈ 18 Tok./s · vLLM ✓" in german


def test_a_lead_holds_every_user_at_once():
    """'7B mit Batchgröße 16' led with 1x RTX 5090 above 'Platz für 122.896 Tokens (15 Nutzer bei 8k)': the rule's
    pick starts for one request but queues the 16th. The lead is a layout whose KV cache holds all 16, and the
    rule's pick says why it is not the lead."""
    answer = _ask("7B mit Batchgröße 16", "gpuwithcrypto")
    assert answer.serving is not None and answer.serving.max_concurrency is not None
    assert answer.serving.max_concurrency >= 16
    assert (answer.rule_fit.card.id, answer.rule_fit.count) == ("rtx-5090", 1)
    assert (answer.fit.card.id, answer.fit.count) != ("rtx-5090", 1)
    reply = plain(render_answer(answer, "de"))
    assert "📏 Nach der Größenregel fasst 1x RTX 5090 es mit 0,8 GB Reserve, aber vLLM hält dort nur 15 der 16 " \
           "Nutzer gleichzeitig" in reply
    english = plain(render_answer(answer, "en"))
    assert "but vLLM holds only 15 of the 16 users at once there" in english


@pytest.mark.parametrize(("text", "lang", "no"), [
    ("Mistral 7B auf einer L4 für 6 Nutzer", "de",
     "❌ Nein — 1x L4 (24 GB) reicht nicht: vLLM hält dort nur 5 der 6 Anfragen gleichzeitig"),
    ("Mistral 7B on an L4 for 6 users", "en",
     "❌ No — 1x L4 (24 GB) cannot run it: vLLM holds only 5 of the 6 requests at once there"),
])
def test_a_named_card_that_queues_some_users_is_a_no_with_what_holds_them(text, lang, no):
    """Was '✅ Ja — 1x L4' above 'Platz für 48.848 Tokens (5 Nutzer bei 8k)' and a speed line for 6 users."""
    answer = _ask(text)
    reply = plain(render_answer(answer, lang))
    assert no in reply
    assert answer.serving_fallback is not None
    fallback = answer.review.check_layout(answer.serving_fallback)
    assert fallback is not None and fallback.holds(6)
    assert "✓" in reply.split(answer.serving_fallback.card.name, 1)[1].split("\n")[0]


async def test_the_chat_refuses_a_card_that_queues_users(settings):  # noqa: F811
    async with Harness(settings) as bot:
        await bot.send(3, "Mistral 7B auf einer L4 für 6 Nutzer", language_code="de")
        text = bot.last_text(3)
        assert "❌ <b>Nein</b> — 1x L4 (24 GB) reicht nicht" in text and "nur 5 der 6 Anfragen" in text
