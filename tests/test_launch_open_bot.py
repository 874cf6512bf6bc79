"""What a renter states is honoured, through the real Application in English and German: a pasted launch line (its
engine, its flags, its tensor-parallel size), a GPU count with no card, full fine-tuning sharded by ZeRO-3 / FSDP,
a budget in euros, and open questions ("largest qwen that fits on a 3090") with their follow-ups."""
from __future__ import annotations

import re

import pytest

from bot.config import load_settings
from bot.features.ask import ask_blocking
from catalog.loader import load_catalog
from engine.parse import Vocabulary, parse
from tests.support.botharness import TOKEN, Harness, buttons, harness_settings

USER = 71



@pytest.fixture
def settings(tmp_path):
    return harness_settings(tmp_path, rate_limit_messages=30)


# ---- a pasted launch line


@pytest.mark.parametrize(("text", "engine"), [
    ("vllm serve Qwen/Qwen3-32B --max-model-len 32768 --tensor-parallel-size 2", "vllm"),
    ("python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct", "vllm"),
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99", "llama.cpp"),
    ("./llama-server -hf unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M -c 32768 -ngl 99", "llama.cpp"),
])
def test_a_launch_line_names_its_engine_and_no_launcher_word_is_lost(text, engine):
    result = parse(text)
    assert result.launch_engine == engine
    assert not [word for word in result.request.ignored if word in ("llama", "python", "openai", "entrypoints")]


@pytest.mark.parametrize(("text", "listed"), [
    ("CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen3-32B -tp 2 --max-model-len 32k", ["CUDA_VISIBLE_DEVICES=0,1"]),
    ("vllm serve Qwen/Qwen3-32B --max-model-len=32768 --host 0.0.0.0 --port 8000", ["--host 0.0.0.0", "--port 8000"]),
])
def test_what_a_launch_line_sets_beside_memory_is_listed_whole(text, listed):
    assert parse(text).request.ignored == listed


def test_a_gguf_launched_by_llama_server_is_checked_under_llama_cpp():
    catalog = load_catalog("gpurenthub").catalog
    asked = ask_blocking("llama-server -m gpt-oss-120b-mxfp4.gguf -c 131072 -ngl 99", catalog,
                         Vocabulary.of_catalog(catalog))
    assert asked.answer.review.engine == "llama.cpp"


async def test_a_launch_line_leads_with_its_tensor_parallel_size(bot):
    await bot.send(USER, "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 "
                         "--max-model-len 65536 --kv-cache-dtype fp8 --gpu-memory-utilization 0.9")
    text = bot.last_plain(USER)
    assert "✅ Fits on 4x" in text and "the layout above uses the 4 GPUs you gave" in text
    assert "The sizing rule alone picks 1x MI300X" in text and "KV cache FP16" not in text
    assert ("launch line read: vLLM with --tensor-parallel-size 4, --max-model-len 65536, --kv-cache-dtype fp8, "
            "--gpu-memory-utilization 0.9") in text
    await bot.send(USER, "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99 auf einer A40", language_code="de")
    text = bot.last_plain(USER)
    assert "Startzeile gelesen: llama.cpp mit -c 32768, -ngl 99" in text and "✅ Ja — 1x A40" in text
    assert "llama.cpp: startet auf 1x A40" in text
    await bot.send(USER, "Llama 3.3 70B auf 2 GPUs")
    text = bot.last_plain(USER)
    assert "✅ Passt auf 2x" in text and "die 2 GPUs, die Sie genannt haben" in text


@pytest.mark.parametrize(("text", "lang", "lead"), [
    ("vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --max-model-len 32768", "en",
     "✅ Fits on 4x"),
    ("Llama 3.3 70B mit 32k Kontext auf 4 GPUs", "de", "✅ Passt auf 4x"),
])
async def test_the_stated_gpu_count_survives_a_tapped_button(bot, text, lang, lead):
    await bot.send(USER, text, language_code=lang)
    fp8 = next(b for b in buttons(bot.replies(USER)[-1]) if b["text"] == "FP8")
    await bot.press(USER, fp8["callback_data"], language_code=lang)
    edited = re.sub(r"<[^>]+>", "", bot.request.sent("editMessageText")[-1].params["text"])
    assert lead in edited and "FP8" in edited


async def test_fewer_gpu_layers_are_said_not_sized_silently(bot):
    await bot.send(USER, "./llama-server -m models/Llama-3.3-70B-Instruct-Q4_K_M.gguf --ctx-size 16384 -ngl 40")
    text = bot.last_plain(USER)
    assert "-ngl 40 keeps the other layers on the CPU" in text and "16,384 tokens" in text
    await bot.send(USER, "llama-server -m Llama-3.3-70B-Instruct-Q4_K_M.gguf mit 16k Kontext -ngl 40 auf einer A100")
    assert "-ngl 40 lässt die übrigen Schichten auf der CPU" in bot.last_plain(USER)


# ---- full fine-tuning, sharded


async def test_full_fine_tuning_leads_with_the_cheaper_sharded_layout(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "c.sqlite3"), catalog="gpuwithcrypto",
                             rate_limit_messages=30, rate_limit_window_s=60)
    async with Harness(settings) as bot:
        await bot.send(USER, "full fine-tune qwen2.5 7b")
        text = bot.last_plain(USER)
        assert "✅ Fits on 2x A100 80GB" in text and "sharded with ZeRO-3 / FSDP" in text and "1x H200" in text
        await bot.send(USER, "volles Fine-Tuning Gemma 2 27B")
        text = bot.last_plain(USER)
        assert "✅ Passt auf 8x A100 80GB" in text and "mit ZeRO-3 / FSDP verteilt" in text


async def test_zero3_on_a_set_whose_heads_do_not_divide_is_a_yes(bot):
    await bot.send(USER, "full sft qwen2.5 7b w/ deepspeed zero3 on 8x a100")
    assert "✅ Yes — 8x A100 SXM" in bot.last_plain(USER)
    await bot.send(USER, "volles Fine-Tuning Qwen2.5 7B mit DeepSpeed ZeRO-3 auf 8x H100")
    assert "✅ Ja — 8x H100 SXM" in bot.last_plain(USER)


# ---- a budget in euros


async def test_a_budget_in_euros_is_read_as_usd_and_said(bot):
    await bot.send(USER, "llama 3.1 70b q4 32k unter 800 € im Monat")
    text = bot.last_plain(USER)
    assert "Preise sind in USD: 800 € als Budget von 800 $ gelesen" in text and "Im Budget von 800 $" in text
    await bot.send(USER, "llama 3.1 70b q4 budget 500 EUR")
    text = bot.last_plain(USER)
    assert "prices are in USD: 500 € read as a budget of $500" in text and "Within your budget of $500" in text
    await bot.send(USER, "and under 200 euros?")  # a follow-up changes the budget, in euros too
    text = bot.last_plain(USER)
    assert "prices are in USD: 200 € read as a budget of $200" in text and "Nothing within your budget of $200" in text


# ---- open questions and their follow-ups


async def test_the_largest_of_a_family_on_a_card_and_its_follow_ups(bot):
    await bot.send(USER, "largest qwen that fits on a 3090")
    text = bot.last_plain(USER)
    assert "Largest models that run there" in text and "Qwen3" in text and "INT4" in text and "$230/month" in text
    first = text.split("• ")[1].split(" — ")[0]
    await bot.send(USER, "max context on it?")
    text = bot.last_plain(USER)  # asked of the model the answer before named first, on its card
    assert f"changed: model qwen → {first}" in text and "RTX 3090" in text and "INT4" in text and "tokens" in text
    await bot.send(USER, "largest qwen on a 3090")
    await bot.send(USER, "and on 2x 3090?")  # the open question again, on the new layout
    text = bot.last_plain(USER)
    assert "Biggest model on 2x RTX 3090" in text and "Largest models that run there" in text and "Qwen" in text
    await bot.send(USER, "größtes Qwen-Modell auf einer 3090")
    assert "Die größten Modelle, die dort laufen" in bot.last_plain(USER)
    await bot.send(USER, "und maximaler Kontext darauf?")
    assert f"geändert: Modell qwen → {first}" in bot.last_plain(USER) and "RTX 3090" in bot.last_plain(USER)


async def test_the_best_model_on_a_money_budget(bot):
    await bot.send(USER, "best model on a $300/month budget")
    text = bot.last_plain(USER)
    assert "The most memory $300 rents: 1x A40" in text
    assert "Largest models that run there" in text and "Top up $240" in text
    await bot.send(USER, "welches ist das beste Modell für 500 $ im Monat")
    text = bot.last_plain(USER)
    assert "Am meisten Speicher für 500 $" in text and "Die größten Modelle, die dort laufen" in text


async def test_the_biggest_model_on_a_set_and_in_a_memory_budget(bot):
    await bot.send(USER, "what's the biggest model I can run on 2x A100")
    text = bot.last_plain(USER)
    assert "Biggest model on 2x A100 SXM" in text and "Largest models that run there" in text
    await bot.send(USER, "Ich habe 48 GB VRAM – welches Modell passt am besten?")
    # the user's own 48 GB: the rule and the engine on one card of that memory, and the rental
    text = bot.last_plain(USER)
    assert "Größtes Modell auf 48 GB" in text and "Die größten Modelle, die dort laufen" in text
    assert "Kontext; zur Miete: 1x RTX A6000 für 290 $/Monat" in text
    await bot.send(USER, "I have 48 GB VRAM - which model fits best?")
    text = bot.last_plain(USER)
    assert "Biggest model on 48 GB" in text and "context; to rent: 1x RTX A6000 for $290/month" in text


# ---- a named layout the engine would not start on, for several users


async def test_a_named_layout_that_fails_for_many_users_says_what_each_user_gets(bot):
    await bot.send(USER, "llama 3.1 8b 32k for 64 users on an L4")
    text = bot.last_plain(USER)
    assert "❌ No — 1x L4" in text and "or 64 users with 480 tokens each" in text and "Instead: 8x A40" in text
    await bot.send(USER, "Llama 3.1 8B mit 32k Kontext für 64 Nutzer auf einer L4")
    text = bot.last_plain(USER)
    assert "❌ Nein — 1x L4" in text and "oder 64 Nutzer mit je 480 Tokens" in text and "Stattdessen: 8x A40" in text


async def test_a_money_budget_that_rents_nothing_shows_the_cheapest_and_says_so(bot):
    await bot.send(USER, "best model under 50 € a month")
    text = bot.last_plain(USER)
    assert "nothing at GPU Rent Hub rents within $50.00: the cheapest, 1x RTX A5000 ($190/month), is shown" in text
    assert "The most memory" not in text and "Largest models that run there" in text
    await bot.send(USER, "bestes Modell für 50 € im Monat")
    text = bot.last_plain(USER)
    assert "für 50,00 $ vermietet GPU Rent Hub nichts: die günstigste Aufteilung, 1x RTX A5000" in text


@pytest.mark.parametrize(("lang", "lead"), [("en", "✅ Fits on 4x"), ("de", "✅ Passt auf 4x")])
async def test_a_deep_link_with_a_count_and_no_card_leads_on_that_count(bot, lang, lead):
    await bot.send(USER, "/start Mllama-3_3-70bC32kN4", language_code=lang)
    assert lead in bot.last_plain(USER)
