"""Questions a renter asks about this year's models, read and answered as asked: the model named (a distill in
German or as 'distilled', never its teacher), the 'Pro' of a model name kept when a billing period follows."""
from __future__ import annotations

import dataclasses

import pytest

from bot.texts.render import plain, render_answer
from engine.speed.layout import decodes
from tests.support.asking import answer_of as _ask


@pytest.mark.parametrize(("text", "lang", "said"), [
    ("deepseek r1 distilled qwen 32b q4 on a 4090", "en", "assumed from 'deepseek r1 distilled qwen 32b'"),
    ("DeepSeek R1 Destillat Qwen 32B Q4 auf einer 4090", "de", "erkannt aus 'DeepSeek R1 Destillat Qwen 32B'"),
    ("DeepSeek R1 destilliert Qwen 32B auf einer 4090", "de", "erkannt aus 'DeepSeek R1 destilliert Qwen 32B'"),
])
def test_a_distill_named_in_other_words_is_the_distill_not_its_teacher(text, lang, said):
    """'Destillat' and 'distilled' name the 32B distill (one card), never the 671B DeepSeek-R1 on 8 cards."""
    answer = _ask(text)
    assert answer.resolved.model == "deepseek-r1-distill-qwen-32b"
    reply = plain(render_answer(answer, lang))
    assert said in reply and "DeepSeek-R1 ·" not in reply
    assert answer.request.ignored == []


@pytest.mark.parametrize(("text", "lang"), [
    ("Was kostet DeepSeek V4 Pro im Monat?", "de"),
    ("DeepSeek V4 Pro pro Monat", "de"),
])
def test_pro_in_a_model_name_before_a_billing_period_stays_the_models(text, lang):
    """'V4 Pro im Monat': 'im' leads the period, 'Pro' is the model's; never 'DeepSeek V4 could be Flash or Pro'."""
    answer = _ask(text)
    assert answer.resolved.model == "deepseek-v4-pro" and answer.billing == "month"
    assert "DeepSeek V4 Pro" in plain(render_answer(answer, lang)).split("\n")[0]


@pytest.mark.parametrize(("text", "billing"), [
    ("qwen3 32b for a week", "week"),
    ("Qwen3 32B für eine Woche", "week"),
    ("qwen3 32b im Monat", "month"),
])
def test_a_preposition_and_an_article_still_lead_a_billing_period(text, billing):
    answer = _ask(text)
    assert answer.resolved.model == "qwen3-32b" and answer.billing == billing


@pytest.mark.parametrize(("text", "lang", "speed"), [
    ("gpt-oss-120b with llama.cpp on an H100", "en", "calibrated, llama.cpp)"),
    ("gpt-oss-20b mit llama.cpp auf einer L4", "de", "kalibriert, llama.cpp)"),
])
def test_a_named_engine_is_the_engine_of_the_speed_line_too(text, lang, speed):
    """'with llama.cpp' and MXFP4 weights: the ⚡ line is llama.cpp's as the 🚀 line is, never 'calibrated, vLLM'."""
    answer = _ask(text)
    reply = plain(render_answer(answer, lang))
    assert speed in reply and "vLLM)" not in reply
    assert answer.fit.speed is not None and answer.fit.speed.engine == "llama.cpp"


def test_mxfp4_weights_under_llama_cpp_need_no_fp8_card_and_load_a_gguf():
    """llama.cpp runs gpt-oss's MXFP4 on Ampere cards: no 'no FP8 hardware' refusal for the 3090, and its
    launch names a GGUF repo (a placeholder), never the safetensors release openai/gpt-oss-120b."""
    answer = _ask("gpt-oss 120b with llama.cpp on 2x 3090")
    reply = plain(render_answer(answer, "en", details=True))
    assert "no FP8 hardware" not in reply
    assert "llama-server -hf <MXFP4 GGUF repo of gpt-oss-120b>" in reply
    assert "-hf openai/gpt-oss-120b" not in reply
    small = _ask("gpt-oss-20b with llama.cpp, cheapest card")
    assert not small.fit.card.fp8  # an Ampere card holds 16 GB for less than the L4


@pytest.mark.parametrize(("text", "lang", "said"), [
    ("Kimi K2.5 INT4 for 32 users at 128k", "en",
     "❌ Nothing in the catalog holds it: 891.7 GB fits in total on 8x MI300X (1,536 GB), but not per GPU: "
     "each card needs 371.1 GB of 192 GB"),
    ("Kimi K2.5 INT4 für 32 Nutzer bei 128k", "de",
     "❌ Nichts im Katalog fasst das: 891,7 GB passen insgesamt auf 8x MI300X (1.536 GB), aber nicht pro GPU: "
     "jede Karte braucht 371,1 GB von 192 GB"),
])
def test_memory_one_host_holds_in_total_but_no_card_holds_is_said_per_gpu(text, lang, said):
    """The MLA latent cache is held whole on every GPU: 'more than one host ... about 1 nodes' contradicted itself.
    The weights are the published INT4 checkpoint (595 GB, 74.4 GB per GPU at TP 8)."""
    reply = plain(render_answer(_ask(text), lang))
    assert said in reply and "1 nodes" not in reply and "1 Knoten" not in reply


@pytest.mark.parametrize(("text", "lang", "header"), [
    ("DeepSeek-V4-Flash with 1M context", "en",
     "DeepSeek V4 Flash · as published (FP4+FP8) · 1,048,576 tokens · batch 1 · inference"),
    ("DeepSeek V4 Flash FP8 mit 256k Kontext auf 4x H200", "de",
     "DeepSeek V4 Flash · FP8 · 262.144 Token · Batch 1 · Inferenz"),
])
def test_a_context_asked_stays_in_the_header_where_the_kv_cache_is_not_sized(text, lang, header):
    """The context asked is the one answered, also for a model whose attention shape is not published (the KV
    cache is said to be left out); the header never drops it while the prompt line times 1M tokens."""
    reply = plain(render_answer(_ask(text), lang))
    assert reply.split("\n")[0] == header


@pytest.mark.parametrize(("text", "lang"), [
    ("qwen3.5-122b-a10b awq on 2x H100", "en"),
    ("Hunyuan A13B auf einer H100", "de"),
])
def test_no_speed_figure_for_a_mixture_of_experts_whose_layer_count_is_not_read(text, lang):
    """Without its layers the estimate misses the per-layer cost that dominates a mixture of experts: it put
    Qwen3.5-122B-A10B at '≈ 1,032 tokens/s for one stream' before its config was read. Both entries have their
    layers now (a Hub lookup of a new MoE may not): the same request without them gets no figure, with them one."""
    answer = _ask(text)
    speed = answer.speed()
    assert answer.resolved.shape.layers and speed is not None and speed.decode_tok_s < 200
    unread = dataclasses.replace(answer.resolved, shape=dataclasses.replace(answer.resolved.shape, layers=None))
    assert not decodes(unread)
    assert decodes(dataclasses.replace(unread, shape=dataclasses.replace(  # a dense model is timed without them
        unread.shape, active_params_b=unread.shape.params_b)))


@pytest.mark.parametrize(("text", "lang", "command"), [
    ("Gemma 4 12B Q4 mit llama.cpp auf einer 3090", "de", "llama-server -hf <GGUF-Repo von Gemma 4 12B>:Q4_K_M"),
    ("Ein 70B Modell in 4 bit für 16 Nutzer", "de", "vllm serve <AWQ- oder GPTQ-Checkpoint eines 70B-Modells>"),
    ("Qwen3.8 27B AWQ auf einer 3090 mit 32k", "de", "vllm serve <AWQ-Checkpoint von Qwen3.8 27B>"),
    ("a 70b model in 4 bit for 16 users", "en", "vllm serve <AWQ or GPTQ checkpoint of a 70B model>"),
])
def test_a_launch_placeholder_is_said_in_the_answers_language(text, lang, command):
    """The words to replace in a launch command are German in a German answer, in the ⚡ reply and the 🚀 Launch
    view alike; nothing else of the command changes."""
    from bot.texts.render_serving import launch_reply

    answer = _ask(text)
    assert command in plain(render_answer(answer, lang, details=True))
    launch = plain(launch_reply(answer, lang))
    assert command in launch
    if lang == "de":
        assert " of " not in launch and "checkpoint" not in launch


@pytest.mark.parametrize(("text", "lang"), [
    ("gemma 4 31b q8_0 gguf on 2x 4090 with llama.cpp at 128k", "en"),
    ("Gemma 4 31B Q8_0 mit llama.cpp auf 2x 4090 bei 128k", "de"),
])
def test_a_precision_tip_under_llama_cpp_names_no_format_it_cannot_run(text, lang):
    """llama.cpp loads no FP8 weights: the tip under a llama.cpp answer is never 'In FP8 it ... fits'."""
    answer = _ask(text)
    assert answer.hint is None or answer.hint.precision not in ("fp8", "int8")
    assert "FP8" not in plain(render_answer(answer, lang)).split("\n\n")[1]


@pytest.mark.parametrize(("text", "lang", "header", "said"), [
    ("qwen2.5-vl-7b at 128k on an A100", "en", "Qwen2.5-VL 7B · BF16 · 128,000 tokens",
     "131,072 tokens read as Qwen2.5-VL 7B's whole context window, 128,000 tokens"),
    ("GLM-4.7 auf 8x H200 mit 200k Kontext", "de", "GLM-4.7 (355B-A32B) · BF16 · 202.752 Token",
     "204.800 Token gelesen als das ganze Kontextfenster von GLM-4.7 (355B-A32B), 202.752 Token"),
    ("qwen2.5 7b instruct 1m with 1M tokens context", "en", "Qwen2.5 7B Instruct 1M · BF16 · 1,010,000 tokens",
     "1,048,576 tokens read as Qwen2.5 7B Instruct 1M's whole context window, 1,010,000 tokens"),
])
def test_a_round_context_just_above_the_window_is_the_whole_window(text, lang, header, said):
    """'128k' on a 128,000-token model is its window (k = 1,024 puts it 2.4 % above): answered at the window, on a
    layout that runs, never 'No: vLLM would not start ... exceeds the model's maximum'."""
    answer = _ask(text)
    reply = plain(render_answer(answer, lang))
    assert reply.startswith(header) and said in reply
    assert answer.fit is not None and answer.serving is not None and answer.serving.starts
    assert "exceed" not in reply and "übersteigen" not in reply


def test_a_context_well_beyond_the_window_is_still_sized_as_asked():
    answer = _ask("qwen2.5-vl-7b at 256k on an A100")
    assert answer.resolved.context_tokens == 262144
    assert "sized as asked" in plain(render_answer(answer, "en"))


@pytest.mark.parametrize(("text", "model"), [
    ("mistral small 3.2 vision on an L4", "mistral-small-3.2"),
    ("Mistral Small 3.2 Vision auf einer L40S", "mistral-small-3.2"),
    ("llama 3.2 11b vision on a 3090", "llama-3.2-11b-vision"),
])
def test_vision_after_a_vision_language_models_name_is_that_model(text, model):
    """'vision' says what a vision-language model is: never "I don't know the model 'mistral small 3.2 vision'"."""
    answer = _ask(text)
    assert answer.resolved.model == model and "vision" not in [word.lower() for word in answer.request.ignored]


def test_vision_after_a_text_models_name_is_still_not_understood():
    answer = _ask("llama 3.1 8b vision")
    assert answer.resolved.model == "llama-3.1-8b" and answer.request.ignored == ["vision"]
