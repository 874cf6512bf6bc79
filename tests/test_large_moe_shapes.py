"""Qwen3.5-122B-A10B and Hunyuan-A13B carry their config shapes: a KV line for each, the 122B's Gated DeltaNet state
pages in vLLM's KV pool (shared with the 397B), and a serving check for both through `cardfit ask`."""
from __future__ import annotations

import json

import pytest

from bot.cli import main as cli
from engine.models.registry import default_registry
from engine.serving import kv
from engine.serving.outcome import Gpu
from engine.serving.vllm import vllm_check
from tests.serving_datapoints import answer_model

REGISTRY = default_registry()


def _shape(model_id: str):
    shape = REGISTRY.get(model_id)
    assert shape is not None, model_id
    return shape


def _ask(capsys, text: str) -> dict:
    assert cli.main(["ask", "--json", "--catalog", "gpuwithcrypto", text]) == 0, text
    return json.loads(capsys.readouterr().out)


def _kv_gb(answer: dict) -> float:
    return next(c["gb"] for c in answer["requirement"]["components"] if c["name"] == "kv_cache")


def test_qwen35_122b_is_a_hybrid_moe_with_12_kv_layers() -> None:
    shape = _shape("qwen3.5-122b-a10b")
    assert (shape.layers, shape.no_kv_layers, shape.attention_heads, shape.kv_heads, shape.head_dim) == (
        48, 36, 32, 2, 256)
    assert (shape.hidden_size, shape.vocab_size, shape.torch_dtype) == (3072, 248320, "bfloat16")
    assert (shape.experts_total, shape.experts_active) == (256, 8)
    assert shape.kv_known and shape.kv_unmodelled is None and shape.kv_layers == 12
    # 12 layers x K and V x 2 heads x 256 x 2 B
    assert kv.kv_bytes_per_token_per_gpu(shape, 1, "auto") == 12 * 2 * 2 * 256 * 2 == 24_576


def test_hunyuan_a13b_keeps_kv_on_all_32_layers() -> None:
    shape = _shape("hunyuan-a13b")
    assert (shape.layers, shape.no_kv_layers, shape.attention_heads, shape.kv_heads, shape.head_dim) == (
        32, 0, 32, 8, 128)
    assert (shape.hidden_size, shape.vocab_size, shape.tie_word_embeddings) == (4096, 128167, True)
    assert (shape.experts_total, shape.experts_active, shape.torch_dtype) == (64, 8, "bfloat16")
    assert shape.kv_known and shape.kv_unmodelled is None
    assert kv.kv_bytes_per_token_per_gpu(shape, 1, "auto") == 32 * 2 * 8 * 128 * 2 == 131_072
    # config arithmetic: 32 x (attention + 64 routed and 1 shared SwiGLU of 3072 + router + norms) + tied embedding
    assert shape.params_exact_b == pytest.approx(80.393, abs=0.001)


@pytest.mark.parametrize("model_id", ["qwen3.5-122b-a10b", "qwen3.5-397b-a17b"])
def test_the_64_value_head_state_page(model_id: str) -> None:
    """conv (2 x 16 x 128 + 64 x 128) x 3 x 2 B + recurrent 64 x 128 x 128 x 4 B (mamba_ssm_dtype float32);
    TP2 halves both."""
    state = kv.linear_state(_shape(model_id))
    assert state is not None
    assert state.page_bytes(1) == 12288 * 3 * 2 + 64 * 128 * 128 * 4 == 4_268_032
    assert state.page_bytes(2) == 6144 * 3 * 2 + 32 * 128 * 128 * 4 == 2_134_016


def test_the_122b_attention_block_grows_to_hold_its_state_page() -> None:
    """bf16 KV: one layer's token is 2,048 B on one GPU, so a 4,268,032 B state page needs 2,084 tokens, padded to
    a multiple of 16; the request then holds two state pages per linear group (3 groups of 12)."""
    shape = _shape("qwen3.5-122b-a10b")
    assert kv.attention_block_size(shape, 1, "auto") == 2096
    assert kv.layer_groups(shape) == kv.LayerGroups(size=12, full=1, sliding=0, linear=3)
    assert kv.blocks_per_request(shape, 131072, 8192, tp=1) == 63 + 3 * 2


def test_the_122b_serving_check_counts_its_state_pages() -> None:
    model = answer_model("qwen3.5-122b-a10b")
    h200 = Gpu("H200 SXM", 143156)  # catalog memory_mib: the CUDA total of an H200
    check = vllm_check(model, h200, 131072, tp=2)
    shape = model.shape
    assert check.starts
    assert check.kv_gb_per_gpu * 1e9 == kv.blocks_per_request(shape, 131072, 8192, tp=2) * kv.bytes_per_block(
        shape, 2, "auto")
    assert check.kv_gb_per_gpu * 1e9 > kv.kv_bytes_per_token_per_gpu(shape, 2, "auto") * 131072


@pytest.mark.parametrize("text", ["qwen3.5 122b at 128k context fp8", "Qwen3.5 122B-A10B mit 128k Kontext in FP8"])
def test_a_qwen35_122b_question_gets_a_kv_line_and_a_serving_check(capsys, text: str) -> None:
    answer = _ask(capsys, text)
    assert answer["request"]["model"] == "qwen3.5-122b-a10b", answer["request"]
    notes = " ".join(answer["request"]["assumed"])
    assert "12 full-attention layers" in notes and "36 linear-attention layers" in notes
    state = 36 * (12288 * 3 * 2 + 64 * 128 * 128 * 4)  # each linear layer's conv + float32 recurrent state
    assert _kv_gb(answer) == pytest.approx((24_576 * 131_072 + state) / 1e9)
    assert answer["serving"] is not None and answer["serving"]["starts"], answer["serving"]
    assert answer["serving"]["kv_bytes_per_token_per_gpu"] == 24_576 // answer["serving"]["tp"]


@pytest.mark.parametrize("text", ["hunyuan a13b at 32k for 4 users", "Hunyuan A13B mit 32k Kontext für 4 Nutzer"])
def test_a_hunyuan_a13b_question_gets_a_kv_line(capsys, text: str) -> None:
    answer = _ask(capsys, text)
    assert answer["request"]["model"] == "hunyuan-a13b", answer["request"]
    assert _kv_gb(answer) == pytest.approx(131_072 * 32_768 * 4 / 1e9)
    assert answer["serving"] is not None and answer["serving"]["starts"], answer["serving"]
