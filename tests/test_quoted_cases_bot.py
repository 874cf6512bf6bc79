"""Every case a renter quoted about answers that said two things at once, asked through the real Application in
English and German: the lead (✅, price, top-up) is a layout the engine starts on, the rule's own pick is one line,
no "Instead:" points back at the layout just answered, reverse answers stand alone, and a tapped button keeps
all of it."""
from __future__ import annotations

import re

import pytest

from tests.support.botharness import buttons, harness_settings

USER = 81
LEAD_RE = re.compile(r"^✅ (?:Fits on|Passt auf) (\d+x [^(]+?) \(", re.M)
STARTS_RE = re.compile(r"^🚀 [\w.]+: (?:starts on|startet auf) (\d+x [^—]+?) —", re.M)


@pytest.fixture
def settings(tmp_path):
    return harness_settings(tmp_path, rate_limit_messages=60)


def plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&#x27;", "'").replace("&amp;", "&")


def assert_one_answer(text: str, lead: str | None) -> None:
    """The lead is `lead` and the engine starts there; no line says it would not; no circular "Instead"."""
    found = LEAD_RE.search(text)
    if lead is None:
        assert found is None, text
    else:
        assert found is not None and found.group(1).strip() == lead, text
        assert [m.strip() for m in STARTS_RE.findall(text)][:1] == [lead], text
        assert not re.search(rf"(?:would not start|nicht starten)[^\n]*on {re.escape(lead)}\b", text), text
    for line in text.splitlines():
        instead = re.match(r"(?:Instead|Stattdessen|Cheaper|Günstiger): (\d+x [^(]+?) \(", line)
        if instead is not None:
            assert f"runs on {instead.group(1).strip()} " not in line and "läuft auf " + instead.group(1) not in line


LEADS = [
    ("DeepSeek-R1-0528-Qwen3-8B with 32k context", "DeepSeek-R1-0528-Qwen3-8B mit 32k Kontext", "1x A40",
     "1x RTX A5000"),
    ("mistral large 2411 q4 48k", "Mistral Large 2411 Q4 mit 48k Kontext", "2x A40", "1x MI300X"),
    ("devstral small 2507 fp8 128k", "Devstral Small 2507 FP8 mit 128k Kontext", "2x RTX 6000 Ada",
     "1x RTX 6000 Ada"),
    ("Qwen3-Coder-480B-A35B fp8 with 256k", "Qwen3-Coder-480B-A35B FP8 mit 256k Kontext", "8x H100 PCIe",
     "4x H200 SXM"),
    ("lamma 3.3 70b q4 with 16k context, is 48gb enough?", "Lamma 3.3 70B Q4 mit 16k Kontext, reichen 48 GB?",
     "1x RTX A6000", "1x A40"),
    ("gpt oss 120b at the full 128k ctx", "gpt oss 120b mit den vollen 128k Kontext", "2x RTX 6000 Ada",
     "1x H100 PCIe"),
]


@pytest.mark.parametrize(("english", "german", "lead", "rule"), LEADS)
async def test_the_lead_is_what_runs_and_the_rule_is_one_line(bot, english, german, lead, rule):
    await bot.send(USER, english)
    text = plain(bot.last_text(USER))
    assert_one_answer(text, lead)
    assert f"📏 By the sizing rule {rule} holds it" in text and text.count("✅") == 1
    await bot.send(USER, german, language_code="de")
    text = plain(bot.last_text(USER))
    assert_one_answer(text, lead)
    assert f"📏 Nach der Größenregel fasst {rule} es" in text and text.count("✅") == 1


async def test_is_48gb_enough_says_the_rule_and_the_engine_in_one_line(bot):
    await bot.send(USER, "lamma 3.3 70b q4 with 16k context, is 48gb enough?")
    assert ("💾 By the sizing rule 48 GB holds it with 5.6 GB to spare; vLLM starts at 16k on 1x RTX 6000 Ada, "
            "1x RTX A6000, not on 1x L40S, 1x A40") in plain(bot.last_text(USER))
    await bot.send(USER, "Lamma 3.3 70B Q4 mit 16k Kontext, reichen 48 GB?", language_code="de")
    assert "💾 Nach der Größenregel fassen 48 GB es mit 5,6 GB Reserve; vLLM startet bei 16k auf 1x RTX 6000 Ada" \
        in plain(bot.last_text(USER))


async def test_a_tapped_precision_keeps_the_lead_on_what_runs(bot):
    await bot.send(USER, "mistral large 2411 q4 32k")
    answer = bot.replies(USER)[-1]
    fp8 = next(b for b in buttons(answer) if b["text"] == "FP8")
    await bot.press(USER, fp8["callback_data"])
    text = plain(bot.request.sent("editMessageText")[-1].params["text"])
    lead = LEAD_RE.search(text)
    assert lead is not None and "FP8" in text
    assert_one_answer(text, lead.group(1).strip())


@pytest.mark.parametrize(("text", "lang", "no", "instead"), [
    ("ollama qwen3:32b on an A5000", "en", "❌ No — 1x RTX A5000", "Instead: 1x A40"),
    ("ollama qwen3:32b auf einer RTX A5000", "de", "❌ Nein — 1x RTX A5000", "Stattdessen: 1x A40"),
    ("deepseek r1 671b on 16x h100", "en", "❌ No — 16x H100 SXM", "Instead: 8x MI300X"),
    ("DeepSeek R1 671B auf 16x H100", "de", "❌ Nein — 16x H100 SXM", "Stattdessen: 8x MI300X"),
])
async def test_a_named_layout_without_room_or_over_a_host_is_no_yes(bot, text, lang, no, instead):
    await bot.send(USER, text, language_code=lang)
    shown = plain(bot.last_text(USER))
    assert no in shown and instead in shown and "✅" not in shown
    assert "starts on 16x" not in shown and "startet auf 16x" not in shown
    assert_one_answer(shown, None)


@pytest.mark.parametrize(("text", "lang", "line"), [
    ("max ctx for qwen3 32b awq on a 4090", "en",
     "📏 Longest context on 1x RTX 4090: 10,131 tokens by the rule · 3,776 tokens under vLLM"),
    ("maximaler Kontext für Qwen3 32B AWQ auf einer 4090", "de",
     "📏 Längster Kontext auf 1x RTX 4090: 10.131 Tokens nach der Regel · 3.776 Tokens unter vLLM"),
    ("max context for llama 3.3 70b fp8 on an h200 for 8 users", "en",
     "for 8 users: 26,321 tokens each by the rule · 25,104 tokens each under vLLM"),
    ("maximaler Kontext für Llama 3.3 70B FP8 auf einer H200 für 8 Nutzer", "de",
     "für 8 Nutzer: je 26.321 Tokens nach der Regel · je 25.104 Tokens unter vLLM"),
])
async def test_a_reverse_answer_stands_alone(bot, text, lang, line):
    await bot.send(USER, text, language_code=lang)
    shown = plain(bot.last_text(USER))
    assert line in shown and "✅" not in shown and "❌" not in shown and "Instead" not in shown


@pytest.mark.parametrize(("first", "then", "lang", "line"), [
    ("max context for llama 3.3 70b fp8 on an h200", "and for 8 users?", "en", "25,104 tokens each under vLLM"),
    ("maximaler Kontext für Llama 3.3 70B FP8 auf einer H200", "und für 8 Nutzer?", "de",
     "je 25.104 Tokens unter vLLM"),
])
async def test_users_divide_the_context_as_a_follow_up(bot, first, then, lang, line):
    await bot.send(USER, first, language_code=lang)
    await bot.send(USER, then, language_code=lang)
    assert line in plain(bot.last_text(USER))


@pytest.mark.parametrize(("text", "lang", "yes"), [
    ("full sft qwen2.5 7b w/ deepspeed zero3 on 8x a100", "en", "✅ Yes — 8x A100 SXM"),
    ("full sft qwen2.5 7b w/ deepspeed zero3 on 8x h100", "en", "✅ Yes — 8x H100 SXM"),
    ("volles Fine-Tuning Qwen2.5 7B mit DeepSpeed ZeRO-3 auf 8x A100", "de", "✅ Ja — 8x A100 SXM"),
])
async def test_zero3_is_not_refused_for_attention_heads(bot, text, lang, yes):
    await bot.send(USER, text, language_code=lang)
    shown = plain(bot.last_text(USER))
    assert yes in shown and "attention heads" not in shown and "Köpfe" not in shown


@pytest.mark.parametrize(("text", "lang", "lines"), [
    ("I have 2x 3090 (48gb total), can I run qwen3 32b awq with 32k?", "en",
     ["✅ Yes — 2x RTX 3090 (48 GB)", "Cheaper: 1x A40"]),
    ("Ich habe 2x 3090 (48gb insgesamt), läuft Qwen3 32B AWQ mit 32k?", "de",
     ["✅ Ja — 2x RTX 3090 (48 GB)", "Günstiger: 1x A40"]),
    ("Läuft Qwen3 32B AWQ mit 32k auf der 4090?", "de", ["❌ Nein — 1x RTX 4090", "Stattdessen: 1x A40"]),
    ("can qwen3 32b awq with 32k run on my 4090?", "en", ["❌ No — 1x RTX 4090", "Instead: 1x A40"]),
])
async def test_the_users_own_cards(bot, text, lang, lines):
    await bot.send(USER, text, language_code=lang)
    shown = plain(bot.last_text(USER))
    assert all(line in shown for line in lines), shown
    assert "Stattdessen" not in shown or "✅" not in shown


@pytest.mark.parametrize(("text", "lang", "lines"), [
    ("llama 3.3 70b q4 under $1000/mo", "en", ["💰 Within your budget of $1,000: 1x A40 for $240"]),
    ("Llama 3.3 70B Q4, Budget 500 $ im Monat", "de", ["💰 Im Budget von 500 $: 1x A40 für 240 $"]),
    ("llama 3.3 70b q4 for 2 weeks", "en", ["Top up $112 in USDT (2 weeks)"]),
    ("Llama 3.3 70B Q4 für 3 Tage", "de", ["56,00 $ in USDT aufladen (eine Woche — die Mindestlaufzeit)"]),
])
async def test_money_and_time_as_stated(bot, text, lang, lines):
    await bot.send(USER, text, language_code=lang)
    shown = plain(bot.last_text(USER))
    assert all(line in shown for line in lines), shown


async def test_the_open_question_follow_up_on_another_quant(bot):
    await bot.send(USER, "largest qwen that fits on a 3090")
    first = plain(bot.last_text(USER)).split("• ")[1].split(" — ")[0]
    await bot.send(USER, "what about the UD-IQ1_S quant?")
    shown = plain(bot.last_text(USER))
    assert first in shown and "UD-IQ1_S" in shown and "RTX 3090" in shown
    await bot.send(USER, "größtes Qwen-Modell auf einer 3090", language_code="de")
    await bot.send(USER, "und mit UD-IQ1_S?", language_code="de")
    shown = plain(bot.last_text(USER))
    assert first in shown and "UD-IQ1_S" in shown and "RTX 3090" in shown
