"""This year's models as customers name them (English and German) reach their own registry entries through
`cardfit ask`, with the shapes and windows their configs give; `cardfit models` lists them."""
from __future__ import annotations

import json

import pytest

from bot.cli import main as cli
from engine.models.registry import default_registry

REGISTRY = default_registry()


def _ask(capsys, text: str) -> dict:
    assert cli.main(["ask", "--json", "--catalog", "gpuwithcrypto", text]) == 0, text
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("text", "model_id"), [
    ("qwen3.5 27b on an L40S", "qwen3.5-27b"),
    ("Qwen 3.5 27B mit 32k Kontext", "qwen3.5-27b"),
    ("qwen3.6 27b at 64k", "qwen3.6-27b"),
    ("Qwen3.8 27B auf einer H100", "qwen3.8-27b"),
    ("Qwen3.6-35B-A3B for 8 users", "qwen3.6-35b-a3b"),
    ("qwen3.5 35b a3b in fp8", "qwen3.5-35b-a3b"),
    ("Qwen3.5 122B-A10B auf 4x H100", "qwen3.5-122b-a10b"),
    ("qwen3.5-397b-a17b", "qwen3.5-397b-a17b"),
    ("gemma 4 26b a4b on an RTX 4090", "gemma-4-26b-a4b"),
    ("gemma4:26b auf einer RTX 4090", "gemma-4-26b-a4b"),
    ("Gemma 4 31B mit 8k Kontext", "gemma-4-31b"),
    ("deepseek v4 flash", "deepseek-v4-flash"),
    ("DeepSeek V4 Pro mit 64k Kontext", "deepseek-v4-pro"),
    ("magistral small 2509 in 4-bit", "magistral-small-2509"),
    ("Magistral Small 2509 auf einer RTX 4090", "magistral-small-2509"),
    ("hunyuan-a13b on 2x H100", "hunyuan-a13b"),
    ("Hunyuan A13B in FP8 auf H100", "hunyuan-a13b"),
    ("smollm3 at 64k", "smollm3-3b"),
    ("SmolLM3 3B mit 32k Kontext", "smollm3-3b"),
    ("nemotron 3 nano for 4 users", "nemotron-3-nano-30b-a3b"),
    ("Nemotron 3 Nano auf einer L40S", "nemotron-3-nano-30b-a3b"),
    ("llama 3.1 nemotron 70b in 4 bit", "llama-3.1-nemotron-70b"),
    ("Llama 3.1 Nemotron 70B mit 32k Kontext", "llama-3.1-nemotron-70b"),
    ("mistral large 2411 q4 32k", "mistral-large-2411"),
    ("Mistral Large 2411 mit 32k Kontext", "mistral-large-2411"),
    ("Qwen2.5-7B-Instruct-1M at 500k", "qwen2.5-7b-1m"),
    ("qwen2.5 14b 1m mit 256k Kontext", "qwen2.5-14b-1m"),
])
def test_a_model_of_today_is_its_own_entry_in_english_and_german(capsys, text: str, model_id: str) -> None:
    answer = _ask(capsys, text)
    assert answer["error"] is None and answer["request"]["model"] == model_id, (text, answer["request"])
    notes = " ".join(answer["request"]["assumed"])
    assert "add its size" not in notes and "I did not find" not in notes, text


def test_the_1m_release_holds_its_own_window(capsys) -> None:
    """Qwen2.5-7B-Instruct-1M at 500k: within its 1,010,000-token window, not 'would not start past 131,072'."""
    answer = _ask(capsys, "Qwen2.5-7B-Instruct-1M at 500k on an H200")
    assert REGISTRY.get("qwen2.5-7b-1m").context_max == 1_010_000
    text = json.dumps(answer)
    assert "131,072" not in text and "131072" not in text
    assert not any("window" in note for note in answer["request"]["assumed"])


def test_mistral_large_2411_is_named_2411_not_2407(capsys) -> None:
    answer = _ask(capsys, "mistral large 2411 q4 32k")
    assert "2407" not in json.dumps(answer)
    assert REGISTRY.get("mistralai/Mistral-Large-Instruct-2411").id == "mistral-large-2411"
    assert REGISTRY.get("mistralai/Mistral-Large-Instruct-2407").id == "mistral-large-2"


def test_phi_4_is_sized_at_its_exact_count(capsys) -> None:
    """14.66B (config arithmetic and the safetensors metadata), as Phi-4-reasoning already was: no seed pins 14."""
    phi_4, reasoning = REGISTRY.get("phi-4"), REGISTRY.get("phi-4-reasoning")
    assert phi_4.params_b == reasoning.params_b == 14.66
    answer = _ask(capsys, "phi-4 in bf16")
    weights = next(c for c in answer["requirement"]["components"] if c["name"] == "weights")
    assert weights["gb"] == pytest.approx(14.66 * 2)


@pytest.mark.parametrize(("model_id", "layers", "no_kv", "kv_heads", "head_dim"), [
    ("qwen3.5-27b", 64, 48, 4, 256), ("qwen3.8-27b", 64, 48, 4, 256), ("qwen3.5-35b-a3b", 40, 30, 2, 256),
    ("qwen3.5-397b-a17b", 60, 45, 2, 256), ("nemotron-3-nano-30b-a3b", 52, 46, 2, 128),
])
def test_hybrid_attention_models_count_the_layers_without_kv(model_id, layers, no_kv, kv_heads, head_dim) -> None:
    model = REGISTRY.get(model_id)
    assert (model.layers, model.no_kv_layers, model.kv_heads, model.head_dim) == (layers, no_kv, kv_heads, head_dim)
    assert model.kv_unmodelled is None and model.kv_layers == layers - no_kv  # only the layers that keep K/V
    assert not model.cross_attends_image  # linear attention, not Llama 3.2 Vision's cross-attention to the image


@pytest.mark.parametrize("text", ["qwen3.5 27b at 32k", "Qwen3.5 27B mit 32k Kontext"])
def test_a_hybrid_vision_model_counts_its_full_attention_layers_and_gets_the_serving_check(capsys, text) -> None:
    """Qwen3.5 is a vision model with linear-attention layers: its KV line counts the 16 full-attention layers
    and vLLM serves it, unlike Llama 3.2 Vision whose layers without KV cross-attend to the image."""
    answer = _ask(capsys, text)
    notes = " ".join(answer["request"]["assumed"])
    assert "16 full-attention layers" in notes and "cross-attention" not in notes and "Mllama" not in notes
    assert answer["serving"] is not None and answer["serving"]["starts"], answer["serving"]


def test_gemma_4_keeps_its_global_layers_apart() -> None:
    model = REGISTRY.get("gemma-4-26b-a4b")
    assert (model.sliding_window, model.sliding_layers, model.layers) == (1024, 25, 30)
    glob = model.global_attention
    assert glob is not None and (glob.layers, glob.kv_heads, glob.head_dim, glob.k_eq_v) == (5, 2, 512, True)
    assert model.kind == "vlm" and (model.experts_total, model.experts_active) == (128, 8)


def test_every_new_entry_names_its_source() -> None:
    for model_id in ("qwen3.5-27b", "qwen3.6-27b", "qwen3.8-27b", "qwen3.5-35b-a3b", "qwen3.6-35b-a3b",
                     "qwen3.5-122b-a10b", "qwen3.5-397b-a17b", "gemma-4-12b", "gemma-4-26b-a4b", "gemma-4-31b",
                     "magistral-small-2509", "hunyuan-a13b", "smollm3-3b", "nemotron-3-nano-30b-a3b",
                     "llama-3.1-nemotron-70b", "qwen2.5-7b-1m", "qwen2.5-14b-1m", "mistral-large-2411"):
        model = REGISTRY.get(model_id)
        assert model is not None and model.source and model.hf_id, model_id


def test_cardfit_models_lists_the_new_families(capsys) -> None:
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    for model_id in ("qwen3.5-27b", "qwen3.8-27b", "gemma-4-26b-a4b", "deepseek-v4-flash", "magistral-small-2509",
                     "hunyuan-a13b", "smollm3-3b", "nemotron-3-nano-30b-a3b", "llama-3.1-nemotron-70b",
                     "qwen2.5-7b-1m", "qwen2.5-14b-1m", "mistral-large-2411", "glm-4.7", "glm-4.7-flash",
                     "kimi-k2.5"):
        assert f"\n{model_id} " in out, model_id
    assert cli.main(["models", "--search", "gemma", "4"]) == 0
    found = capsys.readouterr().out
    assert "gemma-4-26b-a4b" in found and "gemma-4-31b" in found


@pytest.mark.parametrize(("text", "size_b"), [
    ("a 12b model in 8bit for 8 users", 12), ("ein 12b Modell in 8 Bit für 8 Nutzer", 12),
    ("1.5b model at 128k", 1.5), ("1,5B Modell mit 128k Kontext", 1.5), ("27b at 32k", 27),
])
def test_a_size_off_the_seed_rows_is_sized_with_a_shape_of_today(capsys, text: str, size_b: float) -> None:
    """Not the seeds' 2023 shapes (13B multi-head attention: 53.7 GB of KV for 8 users at 8k; a 7B's 32 layers for
    1.5B): the shape of a real model near that size with grouped KV heads, named in the answer."""
    answer = _ask(capsys, text)
    assert answer["request"]["params_b"] == size_b, text
    assert any("shape of today" in note for note in answer["request"]["assumed"]), text
    if size_b == 12:
        kv = next(c for c in answer["requirement"]["components"] if c["name"] == "kv_cache")
        assert kv["gb"] < 15, kv


def test_cardfit_models_lists_a_natively_quantized_release_once(capsys) -> None:
    """gpt-oss-120b's own repo is its MXFP4 release: one entry, not 'MXFP4 65.3 GB, MXFP4 65.3 GB'."""
    assert cli.main(["models", "--search", "gpt-oss-120b"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("gpt-oss-120b "))
    assert line.count("MXFP4") == 1 and line.rstrip().endswith("MXFP4 65.3 GB")


@pytest.mark.parametrize(("text", "model_id"), [("qwen2.5 7b at 1M context", "qwen2.5-7b-1m"),
                                               ("Qwen2.5 7B mit 1M Kontext", "qwen2.5-7b-1m"),
                                               ("qwen2.5 14b with 1M context", "qwen2.5-14b-1m")])
def test_a_context_beyond_the_window_takes_the_release_of_the_same_shape_that_holds_it(capsys, text: str,
                                                                                       model_id: str) -> None:
    """Qwen2.5 7B (131,072 tokens) and Qwen2.5 7B Instruct 1M (1,010,000) share their shape: '1M' is the 1M
    release, as 'phi-3 medium at 128k' is Phi-3 Medium 128K, said in a note."""
    answer = _ask(capsys, text)
    assert answer["request"]["model"] == model_id
    assert answer["request"]["context_tokens"] == 1_010_000


@pytest.mark.parametrize(("text", "lang", "said"), [
    ("deepseek v4 flash at 64k", "en", "caches a short window and a compressed history per layer"),
    ("DeepSeek V4 Pro mit 64k Kontext", "de",
     "speichert je Schicht ein kurzes Fenster und einen komprimierten Verlauf"),
])
def test_deepseek_v4_says_which_cache_it_leaves_out(text, lang, said) -> None:
    """Its config is read (43/61 layers, one K=V vector of 512 per token in a 128-token window, a compressed history
    at ratio 4 or 128): the KV cache is left out because no formula sizes that kind, not because a shape is missing."""
    from bot.cli.main import ask_answer
    from bot.texts.render import plain, render_answer
    from catalog.loader import load_catalog
    from engine.parse import Vocabulary

    catalog = load_catalog("gpurenthub").catalog
    answer, error, _ = ask_answer(text, catalog, Vocabulary.of_catalog(catalog))
    assert answer is not None and error is None and answer.requirement.component("kv_cache") is None
    reply = plain(render_answer(answer, lang))
    assert said in reply and "not published" not in reply and "nicht veröffentlicht" not in reply
