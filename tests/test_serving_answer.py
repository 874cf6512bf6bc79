"""The serving check in every sizing answer, its JSON, the reply line, the CLI flags, the
Launch button and /set engine."""
from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import pytest

from bot.cli.main import ask_answer, main
from bot.features.callbacks import LaunchButton
from bot.texts.i18n import placeholders, texts
from bot.texts.render import localize, plain, render_answer, render_compact
from catalog.loader import load_catalog
from engine import serving as serving_package
from engine.answer.build import build_answer
from engine.fit.ranking import plan
from engine.fit.selection import Layout, Rules, candidate_layouts, evaluate_layout, has_room
from engine.parse import Vocabulary, parse
from engine.serving.review import ServingOptions, ServingReview, engine_for
from engine.sizing.rule import SizeRequest, resolve
from tests.support.botharness import Harness, copied_catalog_settings
from tests.test_answers_identical import corpus_texts

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)
SERVING_KEYS = {"engine", "tp", "weights_gb", "weights_gb_per_gpu", "kv_bytes_per_token_per_gpu", "kv_gb_per_gpu",
                "runtime_overhead_gb_per_gpu", "usable_gb_per_gpu", "gpu_memory_utilization",
                "max_num_batched_tokens", "starts", "max_context_tokens", "max_concurrency", "command", "notes"}


def ask(text: str, vllm_version: str | None = None):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY, vllm_version)
    assert answer is not None and error is None, error
    return answer


def assert_cheapest_passing(answer, fallback=None) -> None:
    """The lead (or `fallback`) passes the rule and the engine, and every valid layout cheaper than it fails the
    engine or has no room to spare."""
    review, fallback = answer.review, fallback or answer.fit
    assert review is not None and fallback is not None and fallback.valid
    assert review.check_layout(fallback).starts
    for layout in candidate_layouts(answer.requirement, answer.resolved, CATALOG):
        if layout.valid and layout.monthly_usd < fallback.monthly_usd:
            check = review.check_layout(layout)
            assert check is None or not check.starts or not has_room(layout), layout.label


# -- everyday examples -----------------------------------------------------------------------------------------

def test_70b_4bit_32k_leads_with_what_starts_and_says_the_rules_pick_in_one_line():
    answer = ask("70B at 4-bit, 32k")
    assert answer.rule_fit is not None and answer.rule_fit.label == "1x A40"  # the rule's choice, kept
    assert answer.fit is not None and answer.fit.label == "2x A40"  # the cheapest that starts leads
    assert answer.serving is not None and answer.serving.starts
    assert_cheapest_passing(answer)
    text = plain(render_answer(answer, "en"))
    assert text.index("✅ Fits on 2x A40") < text.index("vLLM: starts on 2x A40") < text.index(
        "📏 By the sizing rule 1x A40 holds it with 0.3 GB to spare, but vLLM would not start there at 32k")
    assert "Top up $456" in text and "1x A40 (48 GB) —" not in text  # the rule's pick is no alternative
    german = plain(render_answer(answer, "de"))
    assert "📏 Nach der Größenregel fasst 1x A40 es mit 0,3 GB Reserve, aber vLLM würde dort bei 32k nicht starten" \
        in german


def test_70b_4bit_32k_on_one_a40_would_not_start_and_names_the_cheapest_that_does():
    answer = ask("70B at 4-bit, 32k on one A40", "0.33")  # the figures of the 0.20-0.33 accounting
    assert answer.fit is not None and answer.fit.label == "1x A40" and not answer.fit.valid
    assert answer.selection.recommended.label == "2x A40"
    serving = answer.serving
    assert serving is not None and serving.engine == "vllm" and not serving.starts
    # docs/serving.md's table of everyday questions: the check's prediction, not a log (17,600 with the earlier dense
    # activation formula; 16,464 with the sampler term measured on dense and MoE peaks, tests/serving_datapoints.py
    # DENSE_H100_ROWS / moe_activation_rows: 256 requests x 128 256 logits x 38.3 B = 1.17 GiB on the A40).
    assert serving.max_context_tokens == 16464
    assert_cheapest_passing(answer, answer.serving_fallback)
    text = plain(render_answer(answer, "en"))
    verdict, engine = text.index("No — 1x A40"), text.index("vLLM would not start at 32k on 1x A40")
    assert verdict < engine and "✅" not in text  # the verdict first: no Yes where the engine does not start
    assert f"runs on {answer.serving_fallback.label} ($456/month)" in text
    assert "or with --max-model-len 16464" in text
    german = plain(render_answer(answer, "de"))
    assert "vLLM würde bei 32k auf 1x A40 nicht starten" in german and "oder mit --max-model-len 16464" in german


def test_llama_70b_awq_128k_on_one_a100_would_not_start_and_names_the_cheapest_that_does():
    # The seed's rule gives 0.5 B for every 4-bit word; with AWQ's real bits (engine/formats/table.py) the
    # rule itself no longer picks the A100, so the seed precision reproduces the premise.
    assert ask("Llama 3.1 70B AWQ at 128k").fit.label != "1x A100 SXM"
    answer = ask("Llama 3.1 70B int4 at 128k on an A100")
    assert answer.fit is not None and answer.fit.label == "1x A100 SXM" and not answer.fit.valid
    assert answer.serving is not None and not answer.serving.starts
    assert_cheapest_passing(answer, answer.serving_fallback)
    text = plain(render_answer(answer, "en"))
    assert "vLLM would not start at 128k on 1x A100 SXM" in text
    assert f"runs on {answer.serving_fallback.label}" in text


def test_a_layout_that_starts_says_how_much_room_it_has():
    answer = ask("Llama 3.1 8B at 8k")
    serving = answer.serving
    assert serving is not None and serving.starts and answer.serving_fallback is None
    users = int(serving.max_concurrency)
    tokens = int(serving.max_concurrency * 8192)
    line = f"vLLM: starts on {answer.fit.label} — room for {tokens:,} tokens ({users} users at 8k)"
    assert line in plain(render_answer(answer, "en"))
    assert line in plain(render_compact(answer, "en"))  # /quote and inline answers carry it too
    assert "Platz für" in plain(render_answer(answer, "de"))


def test_a_named_layout_gets_the_engine_line_after_the_rule():
    answer = ask("70B int4 32k on 2x A40")
    text = plain(render_answer(answer, "en"))
    assert answer.serving is not None and answer.serving.tp == 2
    assert text.index("2x A40") < text.index("vLLM: starts on 2x A40")


def test_details_show_the_launch_command_as_code_and_the_checks_notes():
    answer = ask("Llama 3.1 8B at 8k")
    html_text = render_answer(answer, "en", details=True)
    assert f"<code>{html.escape(answer.serving.command)}</code>" in html_text
    assert "Engine check:" in html_text and "vllm 0.34.0 rules" in html_text


def test_alternatives_carry_their_engine_mark():
    text = plain(render_answer(ask("DeepSeek-R1-0528-Qwen3-8B with 32k context"), "en", max_alternatives=3))
    alternatives = text.split("Alternatives")[1]
    assert "vLLM ✓" in alternatives and "vLLM ✗" in alternatives


# -- JSON --------------------------------------------------------------------------------------------------------

def test_json_serving_describes_the_fit_with_the_contract_keys():
    data = ask("70B at 4-bit, 32k on an A40").to_json()
    assert set(data["serving"]) == SERVING_KEYS
    assert data["serving"]["tp"] == data["fit"]["count"] and data["serving"]["starts"] is False
    assert data["fit"]["valid"] is False and data["rule_fit"]["valid"] is True  # the rule alone says Yes
    assert data["serving_fallback"]["valid"] is True
    json.dumps(data, allow_nan=False)


def test_kv_precision_maps_to_the_engines_cache_dtype():
    assert "--kv-cache-dtype fp8" in ask("Llama 3.1 8B at 8k, fp8 kv cache").serving.command
    assert "--kv-cache-dtype" not in ask("Llama 3.1 8B at 8k").serving.command


def test_no_serving_check_for_training_or_an_unknown_kv_shape():
    assert ask("QLoRA Llama 3.1 70B").to_json()["serving"] is None
    answer = build_answer(SizeRequest(model="deepseek-v4-flash"), CATALOG)
    assert answer.error is None and answer.to_json()["serving"] is None


def test_a_card_without_runtime_memory_gives_serving_null_and_a_note():
    cards = tuple(card.model_copy(update={"memory_mib": None}) for card in CATALOG.cards)
    catalog = CATALOG.model_copy(update={"cards": cards})
    answer = build_answer(SizeRequest(params_b=7, precision="bf16"), catalog)
    data = answer.to_json()
    assert data["serving"] is None and data["fit"] is not None
    assert any(note.code == "serving_unavailable" for note in answer.assumed)
    assert "no serving check" in plain(render_answer(answer, "en"))


def test_engine_choice_follows_the_format_and_the_option():
    resolved = resolve(SizeRequest(params_b=8, precision="int4"), CATALOG.sizing)
    assert engine_for(resolved) == "vllm"
    assert engine_for(dataclasses.replace(resolved, precision="fp8")) == "vllm"
    assert engine_for(dataclasses.replace(resolved, precision="q4_k_m")) == "llama.cpp"
    assert engine_for(resolved, ServingOptions(engine="llama.cpp")) == "llama.cpp"
    with pytest.raises(ValueError):
        ServingOptions(engine="tgi")


# -- every note the serving package emits has its words ---------------------------------------------------------

def serving_note_codes() -> set[str]:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "engine" / "serving").glob("*.py"))
    return set(re.findall(r'"(serving_[a-z_]+)"', source)) - set(serving_package.__all__)  # codes, not exported names


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_serving_note_code_is_in_the_locale(lang):
    codes = serving_note_codes() | {"serving_unavailable"}
    assert len(codes) >= 19
    missing = sorted(code for code in codes if f"note.{code}" not in texts(lang))
    assert missing == []


@pytest.mark.parametrize("text", ["70B at 4-bit, 32k", "Llama 3.1 70B AWQ at 128k", "gemma 3 27b at 128k",
                                  "Llama 3.1 8B at 8k, batch 64", "DeepSeek V3 on 8x H200"])
@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_checks_notes_localize_with_their_values(text, lang):
    answer = ask(text)
    for note in answer.serving.notes if answer.serving else ():
        template = texts(lang)[f"note.{note.code}"]
        assert placeholders(template) <= set(note.values), note.code
        assert localize(lang, note)


# -- CLI ---------------------------------------------------------------------------------------------------------

def size_json(capsys, *argv):
    code = main(["size", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_cli_engine_tp_and_vllm_flags(capsys):
    base = ("--params", "70", "--precision", "int4", "--context", "32768")
    code, data = size_json(capsys, *base, "--engine", "llama.cpp")
    assert code == 0 and data["serving"]["engine"] == "llama.cpp"
    assert data["serving"]["command"].startswith("llama-server")
    code, data = size_json(capsys, *base, "--tp", "2")
    assert code == 0 and data["serving"]["tp"] == 2 and data["fit"]["card"] == "a40" and data["fit"]["count"] == 1
    assert data["serving"]["starts"] is True and data["serving_fallback"] is None
    code, data = size_json(capsys, *base, "--max-num-batched-tokens", "4096", "--gpu-memory-utilization", "0.85")
    serving = data["serving"]
    assert code == 0 and serving["max_num_batched_tokens"] == 4096 and serving["gpu_memory_utilization"] == 0.85
    assert "--max-num-batched-tokens 4096" in serving["command"]
    assert "--gpu-memory-utilization 0.85" in serving["command"]


@pytest.mark.parametrize("argv,needle", [
    (["--tp", "2", "--card", "a40"], "--tp applies to the fit's card"),
    (["--gpu-memory-utilization", "1.5"], "gpu_memory_utilization"),
    (["--tp", "0"], "--tp 0"),
    (["--engine", "tgi"], "invalid choice"),
])
def test_cli_bad_serving_flags_exit_2(capsys, argv, needle):
    code = main(["size", "--json", "--params", "7", *argv])
    captured = capsys.readouterr()
    assert code == 2 and needle in json.loads(captured.out)["error"] and needle in captured.err


# -- the bot: Launch button and /set engine ----------------------------------------------------------------------

def test_launch_button_encoding():
    assert LaunchButton("en", "S7").encode() == "l:en:S7"
    assert LaunchButton.decode("l:de:S70Pi4") == LaunchButton("de", "S70Pi4")
    assert LaunchButton.decode("l:fr:S7") is None and LaunchButton.decode("l:en:") is None


@pytest.fixture
def settings(tmp_path):
    return copied_catalog_settings(tmp_path)


def _buttons(params: dict) -> list[dict]:
    return [b for row in (params.get("reply_markup") or {}).get("inline_keyboard", []) for b in row]


async def test_launch_button_shows_the_command_as_pre(settings):
    async with Harness(settings) as bot:
        await bot.send(44, "Llama 3.1 8B at 8k")
        reply = bot.replies(44)[-1]
        assert "vLLM: starts on" in reply["text"]
        launch = [b for b in _buttons(reply) if b.get("callback_data", "").startswith("l:")]
        assert launch and launch[0]["text"] == "🚀 Launch"
        await bot.press(44, launch[0]["callback_data"])
        edited = bot.request.sent("editMessageText")[-1].params
        assert "<pre>vllm serve" in edited["text"] and "--max-model-len 8192" in edited["text"]
        assert any(b.get("callback_data", "").startswith("f:") for b in _buttons(edited))  # back to the answer


async def test_set_engine_changes_the_engine_of_later_answers(settings):
    async with Harness(settings) as bot:
        await bot.send(44, "/set engine llama.cpp")
        assert "engine" in bot.last_text(44)
        await bot.send(44, "Llama 3.1 8B at 8k")
        assert "llama.cpp: starts on" in bot.last_text(44)
        await bot.send(44, "/set engine tgi")
        assert "vllm or llama.cpp" in bot.last_text(44)


def test_room_for_one_user_is_said_in_the_singular():
    answer = ask("70B at 4-bit, 64k context", "0.33")  # one user under the 0.20-0.33 accounting
    serving = answer.serving
    assert serving is not None and serving.starts and int(serving.max_concurrency) == 1
    text = plain(render_answer(answer, "en"))
    assert "(1 user at 64k)" in text and "1 users" not in text
    assert "(1 Nutzer bei 64k)" in plain(render_answer(answer, "de"))


# -- the search for the cheapest layout that starts, against the long way -------------------------------------------

CATALOG_IDS = ("gpurenthub", "gpuwithcrypto")


def _cheapest_passing_long_way(review: ServingReview, lower_bound_gb: float) -> Layout | None:
    """The search as it was: each layout evaluated in full, then checked."""
    catalog, requirement, resolved = review.catalog, review.requirement, review.resolved
    rules = Rules(resolved, catalog)
    for _, count, _, card in plan(catalog).by_price:
        if card.vram_gb * count < requirement.total_gb or review._share_gb(card) * count < lower_bound_gb:
            continue
        if not rules.ok(card, count) or count > 1 and card.vram_gb < requirement.per_gpu_gb(
                count, resolved.shape.kv_heads):
            continue
        layout = evaluate_layout(card, count, requirement, resolved, catalog, rules)
        if not layout.valid or not has_room(layout):
            continue
        found = review.check(card, count)
        if found is None or review.runs(found):
            return layout
    return None


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_fallback_search_checks_first_and_finds_the_same(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    searched = 0
    for text in corpus_texts():
        request = parse(text, vocabulary).request
        if request is None:
            continue
        answer = build_answer(request, catalog)
        review, fit = answer.review, answer.rule_fit  # where the rule's pick fails, the search finds the lead
        check = review.check_layout(fit) if review is not None else None
        if review is None or fit is None or check is None or check.starts:
            continue
        for bound in (0.0, review._lower_bound_gb(check, fit.count)):
            quick = review._cheapest_passing(bound)
            slow = _cheapest_passing_long_way(build_answer(request, catalog).review or review, bound)
            assert quick == slow and repr(quick) == repr(slow)
            searched += 1
    assert searched > 100
