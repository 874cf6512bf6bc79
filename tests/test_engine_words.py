"""An engine named in plain words is honoured, in English and German: "with llama.cpp", "in LM Studio", "mit
KoboldCpp" run llama.cpp's check on the GGUF a bare width names (Q4_K_M for "q4"); "mit vLLM" runs vLLM's; an
engine Cardfit has no check for (SGLang, TensorRT-LLM, TGI) is named in a note with vLLM's check standing in. The
engine stays through a follow-up ("and with 32k?"); a button keeps it through the GGUF format it implies."""
from __future__ import annotations

import pytest

from bot.features.ask import ask_blocking
from catalog.loader import load_catalog
from engine.answer.followup import request_from_json, request_to_json
from engine.parse import Vocabulary, parse
from engine.sizing.payload import decode_request, encode_request
from tests.support.botharness import harness_settings

USER = 72


def codes(request) -> list[str]:
    return [getattr(note, "code", None) for note in request.assumed]


@pytest.mark.parametrize(("text", "engine", "quant", "code"), [
    ("qwen3 32b q4 with llama.cpp on 2x 3090", "llama.cpp", "q4_k_m", "runtime_width_engine"),
    ("qwen3 32b q4 mit llama.cpp auf 2x 3090", "llama.cpp", "q4_k_m", "runtime_width_engine"),
    ("qwen3 32b using llama.cpp on a 4090", "llama.cpp", "q4_k_m", "runtime_format_engine"),
    ("Qwen3 32B in LM Studio auf einer 4090", "llama.cpp", "q4_k_m", "runtime_format_engine"),
    ("qwen3 8b q8 with koboldcpp on a 3090", "llama.cpp", "q8_0", "runtime_width_engine"),
    ("llama 3.1 8b q4 via ollama", "llama.cpp", "q4_k_m", "runtime_width_engine"),
    ("qwen3 32b awq mit vLLM auf 2x 3090", "vllm", "awq", "engine_named"),
    ("qwen3 32b fp8 with SGLang on an H100", "vllm", None, "engine_unchecked"),
    ("Qwen3 32B fp8 mit TensorRT-LLM auf einer H100", "vllm", None, "engine_unchecked"),
])
def test_an_engine_word_is_read_and_never_listed_as_not_understood(text, engine, quant, code):
    request = parse(text).request
    assert request.engine == engine
    assert request.quant == quant
    assert code in codes(request)
    assert not {"llama", "cpp", "lm", "studio", "sglang", "tensorrt", "llm", "koboldcpp", "via"} & set(request.ignored)


def test_a_gguf_engine_keeps_a_named_format_and_a_training_job_drops_the_engine():
    assert parse("qwen3 32b q5_k_m with llama.cpp").request.quant == "q5_k_m"
    request = parse("qlora llama 3.1 8b with llama.cpp").request
    assert request.engine is None and "engine_training" in codes(request)


def test_a_launch_line_wins_over_an_engine_word():
    request = parse("vllm serve Qwen/Qwen3-32B --max-model-len 32768, not llama.cpp").request
    assert request.engine == "vllm" and "llama.cpp" in request.ignored


@pytest.mark.parametrize(("text", "lang", "said"), [
    ("qwen3 32b q4 with llama.cpp on 2x 3090", "en", "llama.cpp: starts on 2x RTX 3090"),
    ("qwen3 32b q4 mit llama.cpp auf 2x 3090", "de", "llama.cpp: startet auf 2x RTX 3090"),
])
def test_the_check_runs_under_the_engine_named(text, lang, said):
    catalog = load_catalog("gpurenthub").catalog
    asked = ask_blocking(text, catalog, Vocabulary.of_catalog(catalog))
    assert asked.answer.review.engine == "llama.cpp"
    assert asked.answer.request.quant == "q4_k_m"


def test_the_engine_is_kept_with_the_question_and_a_gguf_button_implies_it():
    request = parse("qwen3 32b q4 with llama.cpp on 2x 3090").request
    assert request_from_json(request_to_json(request)).engine == "llama.cpp"
    tapped = decode_request(encode_request(request))  # no payload letter is free: the GGUF format carries it
    assert tapped.quant == "q4_k_m" and tapped.engine is None


# ---- through the real Application

@pytest.fixture
def settings(tmp_path):
    return harness_settings(tmp_path, rate_limit_messages=30)



async def test_an_engine_stays_through_a_follow_up(bot):
    await bot.send(USER, "qwen3 32b fp16 with llama.cpp on 2x a100")
    text = bot.last_plain(USER)
    assert "llama.cpp named: its serving check runs" in text and "llama.cpp: starts on" in text
    assert "Not understood" not in text
    await bot.send(USER, "and with 32k?")
    text = bot.last_plain(USER)
    assert "llama.cpp: starts on" in text and "🚀 vLLM" not in text
    await bot.send(USER, "Qwen3 32B fp16 mit llama.cpp auf 2x A100", language_code="de")
    text = bot.last_plain(USER)
    assert "llama.cpp genannt: seine Startprüfung läuft" in text and "llama.cpp: startet auf" in text
    await bot.send(USER, "und mit 32k?", language_code="de")
    text = bot.last_plain(USER)
    assert "llama.cpp: startet auf" in text and "🚀 vLLM" not in text


async def test_an_unchecked_engine_is_named_in_both_languages(bot):
    await bot.send(USER, "qwen3 32b fp8 with SGLang on an H100")
    assert "SGLang is not checked by Cardfit: vLLM's check stands in" in bot.last_plain(USER)
    await bot.send(USER, "Qwen3 32B fp8 mit SGLang auf einer H100", language_code="de")
    assert "SGLang prüft Cardfit nicht: die Prüfung von vLLM steht dafür" in bot.last_plain(USER)


# ---- llama-server's slots: --parallel / -np split -c


@pytest.mark.parametrize(("text", "each", "users", "code"), [
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf --parallel 4 -c 32768 -ngl 99", 8192, 4, "slots_split"),
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32k -np 4", 8192, 4, "slots_split"),
    # 32768 / 3 = 10922, padded up to 256 cells: 11008 (src/llama-context.cpp, GGML_PAD(n_ctx_seq, 256))
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -np 3", 11008, 3, "slots_split"),
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -np 4 --kv-unified", 8192, 4, "slots_unified"),
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -np 4", None, 4, "slots_split_bare"),
])
def test_llama_server_slots_are_users_with_their_share_of_the_context(text, each, users, code):
    request = parse(text).request
    assert request.engine == "llama.cpp"
    assert (request.context_tokens, request.batch) == (each, users)
    assert code in codes(request) and not request.ignored


async def test_the_answer_says_what_each_slot_gets(bot):
    await bot.send(USER, "llama-server -m Qwen3-32B-Q4_K_M.gguf --parallel 4 -c 32768 -ngl 99 on an A40")
    text = bot.last_plain(USER)
    assert "--parallel 4: llama.cpp splits -c 32,768 over 4 slots: each user gets 8,192 tokens" in text
    assert "8,192 tokens · batch 4" in text and "Not understood" not in text
    await bot.send(USER, "llama-server -m Qwen3-32B-Q4_K_M.gguf -np 4 -c 32768 auf einer A40", language_code="de")
    text = bot.last_plain(USER)
    assert "-np 4: llama.cpp teilt -c 32.768 auf 4 Slots auf: jeder Nutzer bekommt 8.192 Token" in text


def test_ollama_on_a_training_job_is_said_and_drops_the_engine():
    request = parse("QLoRA Qwen3 32B mit Ollama").request
    assert request.engine is None and "engine_training" in codes(request)
