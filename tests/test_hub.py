"""engine/models/hub.py on real config.json files: the shape it reads is the registry's shape of the same model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.models.hub import shape_from_hub
from engine.models.registry import default_registry
from engine.parse import parse
from engine.sizing.rule import SizeRequest
from tests.support.hubserver import (
    DEEPSEEK_V3,
    LLAMA31_8B,
    MISTRAL_7B_V01,
    MIXTRAL_8X7B,
    QWEN25_05B,
    llama_tensors,
    parameter_count,
)

REGISTRY = default_registry()


@pytest.mark.parametrize(("config", "registry_id"), [
    (LLAMA31_8B, "llama-3.1-8b"),
    (QWEN25_05B, "qwen2.5-0.5b"),
    (MISTRAL_7B_V01, "mistral-7b"),
    (MIXTRAL_8X7B, "mixtral-8x7b"),
])
def test_dense_and_moe_configs_read_as_the_registry_has_them(config, registry_id):
    counts = parameter_count(llama_tensors(config))
    hub = shape_from_hub("org/model", config, counts)
    shape, known = hub.shape, REGISTRY.get(registry_id)
    assert known is not None
    assert (shape.layers, shape.attention_heads, shape.kv_heads, shape.head_dim) == (
        known.layers, known.attention_heads, known.kv_heads, known.head_dim)
    assert (shape.sliding_window, shape.sliding_layers) == (known.sliding_window, known.sliding_layers)
    assert (shape.experts_total, shape.experts_active) == (known.experts_total, known.experts_active)
    assert shape.context_max == known.context_max
    assert shape.params_b == pytest.approx(known.params_b, rel=0.03)
    assert shape.active_params_b == pytest.approx(known.active_params_b, rel=0.03)
    assert shape.published_weights is None and hub.format == "BF16"
    assert hub.notes == ()
    assert shape.kv_known and shape.id == "org/model" and shape.name == "model"


def test_qwen_sliding_window_that_is_off_is_no_window():
    assert QWEN25_05B["use_sliding_window"] is False
    shape = shape_from_hub("Qwen/Qwen2.5-0.5B", QWEN25_05B, {"BF16": 494_032_768}).shape
    assert shape.sliding_window is None and shape.sliding_layers == 0
    assert shape.params_b == pytest.approx(0.494, abs=1e-3)


def test_deepseek_v3_is_mla_moe_in_fp8():
    # Counts as the Hub lists deepseek-ai/DeepSeek-V3 by dtype shape: the embedding and lm_head in BF16
    # (2 x vocab 129,280 x hidden 7,168, from the config), the rest FP8, 671B in all (the MTP module left out).
    embeddings = 2 * 129_280 * 7_168
    counts = {"BF16": embeddings, "F8_E4M3": 671_000_000_000 - embeddings}
    hub = shape_from_hub("deepseek-ai/DeepSeek-V3", DEEPSEEK_V3, counts)
    shape, known = hub.shape, REGISTRY.get("deepseek-v3")
    assert known is not None
    assert shape.is_mla and (shape.mla_kv_lora_rank, shape.mla_qk_rope_head_dim) == (512, 64)
    assert shape.kv_heads is None and shape.head_dim is None  # MLA: the latent is what the KV cache holds
    assert (shape.layers, shape.experts_total, shape.experts_active) == (61, 256, 8)
    assert shape.context_max == known.context_max
    assert shape.params_b == pytest.approx(671, rel=1e-6)
    assert shape.active_params_b == pytest.approx(known.active_params_b, rel=0.03)  # 37B active
    assert shape.published_weights is not None and shape.published_weights.format == "fp8"
    assert hub.format == "FP8" and shape.published_weights.needs_fp8_hardware
    assert shape.published_weights.gb == pytest.approx((671e9 + embeddings) / 1e9, rel=1e-3)


def test_awq_packed_weights_are_counted_unpacked_and_published_as_int4():
    # An AutoAWQ checkpoint of Llama 3.1 8B: the quantized linear layers' qweight are I32 holding 8 weights each.
    config = {**LLAMA31_8B, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
    tensors = llama_tensors(LLAMA31_8B)
    linear = sum(size for name, (_, dims) in tensors.items() if "proj" in name for size in [dims[0] * dims[1]])
    rest = sum(dims[0] * (dims[1] if len(dims) > 1 else 1) for name, (_, dims) in tensors.items() if "proj" not in name)
    counts = {"I32": linear // 8, "F16": rest}
    hub = shape_from_hub("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", config, counts)
    assert hub.shape.params_b == pytest.approx(8.03, rel=0.01)
    assert hub.shape.published_weights is not None and hub.shape.published_weights.format == "int4"
    assert hub.format == "INT4" and any("AWQ" in note for note in hub.notes)


def test_gemma_style_layer_types_and_text_config():
    config = {"model_type": "gemma3", "text_config": {
        "model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 1024,
        "sliding_window_pattern": 6, "max_position_embeddings": 131072, "vocab_size": 262208}}
    shape = shape_from_hub("google/gemma-3-4b-it", config, {"BF16": 3_880_000_000}).shape
    known = REGISTRY.get("gemma-3-4b")
    assert known is not None
    assert (shape.layers, shape.kv_heads, shape.head_dim) == (known.layers, known.kv_heads, known.head_dim)
    assert (shape.sliding_window, shape.sliding_layers) == (known.sliding_window, known.sliding_layers)


def test_what_the_config_does_not_say_is_noted_not_guessed():
    hub = shape_from_hub("org/odd", {"model_type": "odd"}, {"F32": 1_000_000_000})
    assert hub.shape.layers is None and not hub.shape.kv_known
    assert "layers not in config.json" in hub.notes and "context length not in config.json" in hub.notes
    with pytest.raises(ValueError):
        shape_from_hub("org/empty", LLAMA31_8B, {})


def test_registry_with_a_looked_up_model():
    shape = shape_from_hub("HuggingFaceTB/SmolLM2-1.7B", LLAMA31_8B, {"BF16": 10}).shape
    extended = REGISTRY.with_models(shape)
    assert extended.get("HuggingFaceTB/SmolLM2-1.7B") is shape
    assert extended.get("llama-3.1-8b") is REGISTRY.get("llama-3.1-8b") and len(extended) == len(REGISTRY) + 1
    assert REGISTRY.get("HuggingFaceTB/SmolLM2-1.7B") is None


@pytest.mark.parametrize(("text", "candidate"), [
    ("HuggingFaceTB/SmolLM2-1.7B in bf16", "HuggingFaceTB/SmolLM2-1.7B"),
    ("how much for https://huggingface.co/HuggingFaceTB/SmolLM2-135M at 32k?", "HuggingFaceTB/SmolLM2-135M"),
    ("tiiuae/Falcon-H1-Tiny", "tiiuae/Falcon-H1-Tiny"),  # not in the registry, no size: an error, still a candidate
    ("deepseek-ai/DeepSeek-V2-Lite", None),  # the registry (engine/models/data/deepseek.yaml) knows it
    ("meta-llama/Llama-3.1-8B", None),  # the registry knows it
    ("70b fp8 and/or int4", None),
    ("70b fp8 24/7", None),
    ("70B int4", None),
])
def test_parser_reports_repository_ids_the_registry_does_not_know(text, candidate, bundled_vocabulary):
    assert parse(text, bundled_vocabulary).hub_candidate == candidate


def test_a_card_pair_is_no_repository(bundled_vocabulary):
    assert parse("70b on H100/H200", bundled_vocabulary).hub_candidate is None


# -- a vision LLM: a config with vision_config ------------------------------------------------------------------------

HUB_DRAFTS = Path(__file__).parent / "data" / "hub_drafts"


def test_a_config_with_a_vision_config_is_a_vision_model_with_its_text_sizes():
    """Qwen3.5-397B-A17B's config.json (a local copy): the vision tower under vision_config, the language model under
    text_config. Before, a Hub lookup read it as kind 'llm' and the answer had no vision serving check."""
    config = json.loads((HUB_DRAFTS / "qwen3.5-397b-a17b" / "config.json").read_text())
    hub = shape_from_hub("Qwen/Qwen3.5-397B-A17B", config, {"BF16": 397_000_000_000})
    shape = hub.shape
    assert shape.kind == "vlm" and any("vision tower" in note for note in hub.notes)
    text = config["text_config"]
    assert (shape.hidden_size, shape.vocab_size) == (text["hidden_size"], text["vocab_size"])
    assert shape.intermediate_size == text["moe_intermediate_size"]  # no dense width: the experts'
    text_only = shape_from_hub("Qwen/Qwen3.5-397B-A17B", {k: v for k, v in config.items() if k != "vision_config"},
                               {"BF16": 397_000_000_000}).shape
    assert text_only.kind == "llm"


def test_a_hub_vision_model_gets_the_vision_serving_check():
    config = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
              "text_config": QWEN25_05B, "vision_config": {"depth": 32, "hidden_size": 1280, "out_hidden_size": 896}}
    counts = parameter_count(llama_tensors(QWEN25_05B))
    vlm = shape_from_hub("acme/Tiny-VL", config, counts).shape
    llm = shape_from_hub("acme/Tiny", QWEN25_05B, counts).shape
    catalog = load_catalog("gpurenthub").catalog
    checks = []
    for shape in (vlm, llm):
        registry = default_registry().with_models(shape)
        request = SizeRequest(model=shape.id, context_tokens=8192)
        answer = build_answer(request, catalog, registry=registry)
        assert answer.error is None and answer.review is not None and answer.serving is not None
        model = answer.review.model()
        assert model is not None and model.dims is not None
        checks.append((model.dims.multimodal, answer.serving))
    (vision_dims, vision_check), (text_dims, text_check) = checks
    assert vision_dims and not text_dims
    # the encoder cache of the profile run: max_num_batched_tokens x hidden x 2 B more than the text twin
    assert vision_check.runtime_overhead_gb_per_gpu > text_check.runtime_overhead_gb_per_gpu
