"""A reverse question (longest context, requests at once) answered alone or followed only by lines that agree
with it; several users share the context; a layout that cannot be rented is refused everywhere in the answer.
In English and German, in the engine and through the real Application."""
from __future__ import annotations

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.parse import Vocabulary
from tests.test_followup_bot import settings  # noqa: F401  (the harness's settings, as a fixture)

CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)
# Sizing lines that answered another question (the default 8k context) and contradicted the reverse answer.
SIZING = ("✅", "❌", "vLLM would not start", "vLLM würde", "Instead", "Stattdessen", "Memory needed",
          "Benötigter Speicher", "Alternatives", "Alternativen", "🚀")


def reply(text: str, lang: str):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY)
    assert answer is not None and error is None, error
    return answer, plain(render_answer(answer, lang))


@pytest.mark.parametrize(("question", "lang", "figures"), [
    ("max ctx for qwen3 32b awq on a 4090", "en", "10,131 tokens by the rule · 3,776 tokens under vLLM"),
    ("max ctx für qwen3 32b awq auf einer 4090", "de", "10.131 Tokens nach der Regel · 3.776 Tokens unter vLLM"),
])
def test_max_context_on_a_4090_stands_alone_and_pays_for_the_4090(question, lang, figures):
    answer, text = reply(question, lang)
    assert figures in text
    assert not [word for word in SIZING if word in text], text
    assert answer.payable is not None and answer.payable.card.name == "RTX 4090" and answer.payable.count == 1
    assert "390" in text  # the 4090's month, and its top-up


@pytest.mark.parametrize(("question", "lang", "line"), [
    ("max context for llama 3.3 70b fp8 on an h200 for 8 users", "en",
     "Longest context on 1x H200 SXM for 8 users: 26,321 tokens each by the rule · 25,104 tokens each under vLLM"),
    ("maximaler Kontext für llama 3.3 70b fp8 auf einer h200 für 8 Nutzer", "de",
     "Längster Kontext auf 1x H200 SXM für 8 Nutzer: je 26.321 Tokens nach der Regel · je 25.104 Tokens unter vLLM"),
])
def test_users_divide_the_context(question, lang, line):
    answer, text = reply(question, lang)
    assert line in text and "131" not in text.split(line)[1]
    capacity = answer.capacity
    assert capacity is not None and capacity.batch == 8
    # (141 - 70 - 2) GB over 8 users at 327,680 bytes a token
    assert capacity.rule_value == (141 - 70 - 2) * 1e9 // 8 // 327_680
    assert capacity.serving_value is not None and capacity.serving_value < capacity.rule_value
    assert not [word for word in SIZING if word in text], text


@pytest.mark.parametrize(("question", "lang", "refusal", "starts"), [
    ("deepseek r1 671b on 16x h100", "en", "❌ No — 16x H100 SXM", "vLLM: starts"),
    ("deepseek r1 671b auf 16x h100", "de", "❌ Nein — 16x H100 SXM", "vLLM: startet"),
])
def test_a_layout_over_one_host_is_not_said_to_start(question, lang, refusal, starts):
    answer, text = reply(question, lang)
    assert refusal in text and starts not in text
    assert answer.to_json()["serving"] is None
    assert answer.payable is not None and answer.payable.count <= 8


@pytest.mark.parametrize(("question", "lang", "line"), [
    ("max context for deepseek r1 671b on 16x h100", "en",
     "Longest context on 16x H100 SXM: none — H100 SXM is rented in sets of 1, 2, 4, 8; more than one 8-GPU host"),
    ("maximaler Kontext für deepseek r1 671b auf 16x h100", "de",
     "Längster Kontext auf 16x H100 SXM: keiner — H100 SXM gibt es nur in Sets zu 1, 2, 4, 8; mehr als ein 8-GPU-Host"),
])
def test_max_context_over_one_host_is_refused(question, lang, line):
    answer, text = reply(question, lang)
    assert line in text and "vLLM ✓" in text  # the cheapest layout that runs it, said as one
    assert answer.capacity is not None and answer.capacity.rule_value is None and not answer.capacity.runs
    assert answer.to_json()["capacity"]["refused"]
    assert answer.payable is not None and answer.payable.count <= 8




@pytest.mark.parametrize(("first", "then", "lang", "line"), [
    ("max context for llama 3.3 70b fp8 on an h200", "and for 8 users?", "en",
     "for 8 users: 26,321 tokens each by the rule · 25,104 tokens each under vLLM"),
    ("maximaler Kontext für llama 3.3 70b fp8 auf einer h200", "und für 8 Nutzer?", "de",
     "für 8 Nutzer: je 26.321 Tokens nach der Regel · je 25.104 Tokens unter vLLM"),
])
async def test_a_follow_up_with_users_divides_the_context_through_the_bot(bot, first, then, lang, line):  # noqa: F811
    await bot.send(71, first, language_code=lang)
    assert "131" in bot.last_text(71)
    await bot.send(71, then, language_code=lang)
    text = bot.last_text(71)
    assert line in text and "✅" not in text and "🚀" not in text


async def test_max_context_on_a_4090_through_the_bot(bot):  # noqa: F811
    await bot.send(72, "max ctx for qwen3 32b awq on a 4090")
    text = bot.last_text(72)
    assert "10,131 tokens by the rule · 3,776 tokens under vLLM" in text
    assert "would not start" not in text and "Instead" not in text and "✅" not in text
    topup = [b for row in bot.replies(72)[-1].get("reply_markup", {}).get("inline_keyboard", []) for b in row
             if "url" in b]
    assert topup and "$390" in topup[0]["text"]
