"""The launch command names a checkpoint in the format the answer sized (engine/serving/checkpoint.py), the serving
check sizes that checkpoint, and FP8 weights on a card without FP8 hardware are said to run weight-only.

Before: "Yi 34B AWQ" launched `vllm serve 01-ai/Yi-34B-Chat` (the 68 GB BF16 checkpoint) on a 24 GB RTX A5000,
every GGUF question was checked and launched under vLLM with the BF16 repo, and "Llama 3.1 70B FP8 on an A100"
said "no FP8 hardware" and then "vLLM: starts" without a word on how."""
from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.formats.quant import find_format
from engine.models.registry import default_registry
from engine.serving.checkpoint import card_notes, checkpoint_for
from engine.serving.weights import ResidentWeights
from engine.sizing.rule import GB, SizeRequest
from tests.support.botharness import Harness, copied_catalog_settings

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = {name: load_catalog(name).catalog for name in ("gpurenthub", "gpuwithcrypto")}
CATALOG = CATALOGS["gpurenthub"]
REGISTRY = default_registry()


def ask(text: str, catalog=CATALOG):
    from engine.parse import Vocabulary
    answer, error, _ = ask_answer(text, catalog, Vocabulary.of_catalog(catalog))
    assert answer is not None and error is None, error
    return answer


def command(text: str) -> str:
    serving = ask(text).serving
    assert serving is not None, text
    return serving.command


def repo_of(cmd: str) -> str:
    """The model argument: `vllm serve X ...` / `llama-server -hf X ...` (placeholders hold spaces)."""
    rest = cmd.split(" ", 2)[2]
    if rest.startswith("<"):
        return rest[:rest.index(">") + 1] + rest[rest.index(">") + 1:].split(" ")[0]
    return rest.split(" ")[0]


# -- the checkpoint named is in the format sized ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "repo", "flags"), [
    # no AWQ checkpoint of Yi 34B in the registry -> a placeholder, never the BF16 repo
    ("yi 34b awq", "<AWQ checkpoint of Yi 34B>", ()),
    ("yi 34b gptq", "<GPTQ checkpoint of Yi 34B>", ()),
    # the registry's published repos in the format asked
    ("llama 3.1 70b awq", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", ()),
    ("llama 3.1 8b gptq", "hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4", ()),
    ("llama 3.1 70b w4a16", "RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16", ()),
    ("qwen2.5 72b awq", "Qwen/Qwen2.5-72B-Instruct-AWQ", ()),
    # a plain "4-bit": the registry's 4-bit checkpoint, else vLLM's in-flight NF4 of the 16-bit release
    ("llama 3.1 70b int4", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", ()),
    ("yi 34b 4-bit", "01-ai/Yi-34B-Chat", ("--quantization bitsandbytes",)),
    ("70B int4", "<AWQ or GPTQ checkpoint of a 70B model>", ()),
    # no INT8 made while loading in vLLM: the registry's GPTQ-Int8, else a placeholder
    ("qwen2.5 7b int8", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", ()),
    ("llama 3.1 70b int8", "<INT8 checkpoint of Llama 3.1 70B>", ()),
    # FP8: the registry's published FP8 checkpoint (scales calibrated), else made while loading from the BF16
    # release; a native FP8 release is loaded as it is
    ("llama 3.1 70b fp8", "RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8", ()),
    ("qwen3 32b fp8", "Qwen/Qwen3-32B-FP8", ()),
    ("yi 34b fp8", "01-ai/Yi-34B-Chat", ("--quantization fp8",)),
    ("deepseek v3.1 in fp8 on 8x h200", "deepseek-ai/DeepSeek-V3.1", ()),
    ("deepseek v3 bf16", "<BF16 checkpoint of DeepSeek-V3>", ()),
    # FP32: vLLM's "auto" would load the FP32 config in 16 bit
    ("phi-4 in voller Genauigkeit", "microsoft/phi-4", ("--dtype float32",)),
    # GGUF types: llama.cpp with the registry's GGUF repo and the type as -hf tag
    ("llama 3.1 70b q4_k_m", "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF:Q4_K_M", ()),
    ("yi 34b q4_k_m", "<GGUF repo of Yi 34B>:Q4_K_M", ()),
])
def test_the_command_names_a_checkpoint_in_the_format_sized(text, repo, flags):
    cmd = command(text)
    assert repo_of(cmd) == repo, cmd
    for flag in flags:
        assert flag in cmd
    if "--quantization" not in " ".join(flags):
        assert "--quantization" not in cmd


@pytest.mark.parametrize("text", ["yi 34b awq", "yi 34b int4", "llama 3.1 70b awq", "llama 3.1 70b q4_k_m",
                                  "llama 3.1 70b int8", "qwen2.5 72b gptq", "mixtral 8x7b in 4 bit"])
def test_a_quantized_answer_never_launches_the_16_bit_repo_as_it_is(text):
    answer = ask(text)
    cmd = answer.serving.command
    shape = answer.resolved.shape
    assert repo_of(cmd).split(":")[0] != shape.hf_id or "--quantization" in cmd, cmd


def test_gguf_types_are_checked_and_launched_under_llama_cpp():
    answer = ask("llama 3.1 70b q4_k_m")
    assert answer.review.engine == "llama.cpp" and answer.serving.engine == "llama.cpp"
    assert answer.serving.command.startswith("llama-server -hf bartowski/Meta-Llama-3.1-70B-Instruct-GGUF:Q4_K_M ")


# -- the serving check sizes the checkpoint the command names ---------------------------------------------------

def test_a_registry_checkpoint_is_sized_at_its_published_size():
    answer = ask("llama 3.1 70b awq")
    assert answer.serving.weights_gb == pytest.approx(39.77 + 0.0, abs=0.05)  # the repo's 39.77 GB, padded vocab
    int4 = ask("llama 3.1 70b int4")
    assert int4.requirement.weights_gb == pytest.approx(35.0)  # the seed's 0.5 B per parameter stays the rule's
    assert int4.serving.weights_gb == pytest.approx(answer.serving.weights_gb)  # the AWQ repo it names


def test_the_in_flight_nf4_is_sized_as_nf4():
    answer = ask("yi 34b 4-bit")
    shape = answer.resolved.shape
    nf4 = ResidentWeights.from_precision(answer.resolved.params_b, find_format("bnb_nf4").bits_per_weight / 8,
                                         vocab_size=shape.vocab_size, hidden_size=shape.hidden_size)
    assert answer.serving.weights_gb == pytest.approx(nf4.total_bytes / GB, rel=0.01)
    assert answer.serving.weights_gb > answer.requirement.weights_gb  # more than the seed's 0.5 B


def test_a_placeholder_is_sized_at_the_answers_format():
    answer = ask("yi 34b awq")
    assert answer.serving.weights_gb == pytest.approx(answer.requirement.weights_gb, rel=0.01)  # AWQ's 19.0 GB


# -- FP8 weights on cards without FP8 hardware --------------------------------------------------------------------

def fp8_answer(catalog, card):
    return build_answer(SizeRequest(model="llama-3.1-8b", precision="fp8", card=card.id), catalog)


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_fp8_on_every_card_without_fp8_hardware_runs_weight_only(name):
    catalog = CATALOGS[name]
    without = [card for card in catalog.cards if not card.fp8]
    assert {card.architecture for card in without} == {"Ampere"} and without  # A100, A40, A6000, 3090, A5000
    for card in without:
        answer = fp8_answer(catalog, card)
        assert answer.fit is not None and not answer.fit.valid  # the seed's verdict stays: no FP8 hardware
        serving = answer.serving
        assert serving is not None and serving.starts, card.id
        assert "serving_fp8_weight_only" in {note.code for note in serving.notes}, card.id
        text = plain(render_answer(answer, "en"))
        assert "has no FP8 hardware for FP8 weights" in text
        assert f"vLLM: would still start on 1x {card.name}, with the FP8 weights run weight-only" in text
        assert "die FP8-Gewichte nur als Gewichte" in plain(render_answer(answer, "de"))
    for card in (card for card in catalog.cards if card.fp8):  # MI300X, H100, L40S ...: FP8 compute, no such word
        serving = fp8_answer(catalog, card).serving
        assert "serving_fp8_weight_only" not in {note.code for note in serving.notes}, card.id


def test_fp8_on_an_a100_is_one_coherent_answer():
    answer = ask("llama 3.1 70b fp8 on an A100")
    text = plain(render_answer(answer, "en"))
    assert "❌ No — 1x A100 SXM (80 GB) cannot run it: A100 SXM has no FP8 hardware for FP8 weights" in text
    assert ("🚀 vLLM: would still start on 1x A100 SXM, with the FP8 weights run weight-only (FP8 Marlin kernel, "
            "no FP8 compute)") in text
    assert "vLLM: starts on" not in text
    # the published FP8 checkpoint, loaded as it is (its FP8 weights run weight-only there too)
    assert repo_of(answer.serving.command) == "RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8"
    assert "--quantization" not in answer.serving.command
    yi = ask("yi 34b fp8 on an A100")  # no FP8 checkpoint in the registry: vLLM makes FP8 while loading
    assert yi.serving.command.endswith("--quantization fp8")


def test_an_fp8_checkpoint_on_an_ampere_card_also_runs_weight_only():
    answer = build_answer(SizeRequest(model="deepseek-v3", card="a100-sxm", gpu_count=8), CATALOG)
    assert "--quantization" not in answer.serving.command  # the FP8 release is loaded as it is
    assert "serving_fp8_weight_only" in {note.code for note in answer.serving.notes}


def test_cards_with_no_fp8_kernel_at_all_are_refused():
    a100 = next(card for card in CATALOG.cards if card.id == "a100-sxm")
    resolved = ask("llama 3.1 8b fp8").resolved
    checkpoint = checkpoint_for(resolved, "vllm")
    for architecture in ("Volta", "Turing", "CDNA 2"):
        said, refusal = card_notes(resolved, checkpoint, dataclasses.replace(a100, architecture=architecture))
        assert said is None and refusal is not None and refusal.code == "serving_fp8_no_kernel"
    said, refusal = card_notes(resolved, checkpoint, a100)
    assert said is not None and refusal is None


def test_in_flight_bitsandbytes_is_refused_on_rocm_and_the_cheapest_card_that_starts_is_named():
    answer = ask("mixtral 8x22b 4 bit on a MI300X")  # no published 4-bit repo listed (8x7B has an AWQ one)
    serving = answer.serving
    assert "--quantization bitsandbytes" in serving.command and not serving.starts
    assert "serving_bnb_no_kernel" in {note.code for note in serving.notes}
    assert answer.serving_fallback is not None and "MI300X" not in answer.serving_fallback.card.name
    text = plain(render_answer(answer, "en"))
    assert "vLLM would not start on 1x MI300X: vLLM has no bitsandbytes kernel for MI300X" in text


# -- the Launch button -------------------------------------------------------------------------------------------

@pytest.fixture
def settings(tmp_path):
    return copied_catalog_settings(tmp_path)


async def launch(bot, user: int, text: str, language_code: str = "en") -> str:
    await bot.send(user, text, language_code=language_code)
    reply = bot.replies(user)[-1]
    buttons = [b for row in reply["reply_markup"]["inline_keyboard"] for b in row]
    [data] = [b["callback_data"] for b in buttons if b.get("callback_data", "").startswith("l:")]
    await bot.press(user, data)
    return bot.request.sent("editMessageText")[-1].params["text"]


async def test_launch_names_the_awq_placeholder_not_the_bf16_repo(settings):
    async with Harness(settings) as bot:
        text = await launch(bot, 45, "yi 34b awq")
        assert "<pre>vllm serve &lt;AWQ checkpoint of Yi 34B&gt; --tensor-parallel-size 1" in text
        assert "01-ai/Yi-34B-Chat" not in text
        assert "the registry knows no AWQ checkpoint of this model" in html.unescape(text)
        german = await launch(bot, 46, "yi 34b awq", language_code="de")
        assert "&lt;AWQ-Checkpoint von Yi 34B&gt;" in german and "Die Registry kennt keinen AWQ-Checkpoint" in german


async def test_launch_of_fp8_on_an_a100_says_weight_only(settings):
    async with Harness(settings) as bot:
        text = await launch(bot, 47, "yi 34b fp8 on an A100")
        assert "<pre>vllm serve 01-ai/Yi-34B-Chat" in text and "--quantization fp8</pre>" in text
        assert "vLLM quantizes the 16-bit weights to FP8 layer by layer" in text
        assert "A100 SXM has no FP8 hardware: vLLM runs the FP8 weights weight-only (FP8 Marlin)" in text
        text = await launch(bot, 47, "llama 3.1 70b fp8 on an A100")
        assert "<pre>vllm serve RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8 " in text and "--quantization" not in text
        assert "A100 SXM has no FP8 hardware: vLLM runs the FP8 weights weight-only (FP8 Marlin)" in text
        text = await launch(bot, 47, "yi 34b 4-bit")
        assert "--quantization bitsandbytes</pre>" in text and "4-bit NF4 as it loads them" in text


def test_the_registry_has_the_repos_these_tests_name():
    shape = REGISTRY.get("llama-3.1-70b")
    assert shape is not None and {repo.quant for repo in shape.quantized} >= {"awq", "gguf_q4_k_m", "w4a16"}
    assert REGISTRY.get("yi-34b").quantized == ()


def test_exl2_has_no_serving_check_rather_than_a_vllm_command_that_cannot_load_it():
    answer = ask("Llama 3.1 70B EXL2 4.65bpw")
    assert answer.serving is None and answer.fit is not None and answer.fit.valid  # the rule's answer stays
    assert "serving_format_unserved" in {note.code for note in answer.review.notes}
    assert "neither vLLM nor llama.cpp loads EXL2 4.65bpw checkpoints (they run on exllamav2)" in plain(
        render_answer(answer, "en"))
    assert "weder vLLM noch llama.cpp lädt EXL2 4.65bpw-Checkpoints" in plain(render_answer(answer, "de"))


# -- MXFP4 (gpt-oss) on cards without FP4/FP8 hardware ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_mxfp4_on_every_ampere_card_is_one_coherent_answer(name):
    """The fit's rule refuses it (no FP8/FP4 hardware); vLLM still starts there, the MXFP4 weights run through its
    Marlin kernel: an answer must not say "❌ No" and then "🚀 vLLM: starts"."""
    catalog = CATALOGS[name]
    for card in (card for card in catalog.cards if not card.fp8):
        answer = build_answer(SizeRequest(model="gpt-oss-20b", card=card.id, gpu_count=1), catalog)
        assert answer.fit is not None and not answer.fit.valid  # the rule's verdict stays
        assert "serving_fp4_weight_only" in {note.code for note in answer.serving.notes}, card.id
        text = plain(render_answer(answer, "en"))
        assert "has no FP8 hardware for MXFP4 weights" in text
        assert (f"vLLM: would still start on 1x {card.name}, with the MXFP4 weights run weight-only (Marlin kernel, "
                "no FP4 compute)") in text
        assert "vLLM: starts on" not in text
        assert "die MXFP4-Gewichte nur als Gewichte (Marlin-Kernel" in plain(render_answer(answer, "de"))
    for card in (card for card in catalog.cards if card.fp8):  # H100, L40S, MI300X ...: nothing to add
        answer = build_answer(SizeRequest(model="gpt-oss-20b", card=card.id, gpu_count=1), catalog)
        assert answer.serving is None or "serving_fp4_weight_only" not in {n.code for n in answer.serving.notes}


async def test_launch_of_gpt_oss_on_an_a100_says_weight_only(settings):
    async with Harness(settings) as bot:
        text = await launch(bot, 48, "gpt-oss-120b on an a100")
        assert "<pre>vllm serve openai/gpt-oss-120b" in text
        assert "A100 SXM has no FP4 hardware: vLLM runs the MXFP4 weights weight-only (Marlin)" in text


async def test_launch_on_a_card_vllm_refuses_says_why(settings):
    async with Harness(settings) as bot:
        text = html.unescape(await launch(bot, 49, "yi 34b 4-bit on an mi300x"))
        assert "--quantization bitsandbytes" in text
        assert "vLLM would not start on this card:" in text and "bitsandbytes" in text.split("would not start")[1]
