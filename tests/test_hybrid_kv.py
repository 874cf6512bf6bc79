"""Hybrid Gated DeltaNet / full attention under vLLM: the state pages share the KV pool, the attention block grows
to hold one, and a request holds two state pages per linear group (prefix caching on, the default)."""
from __future__ import annotations

import math

from engine.models.registry import default_registry
from engine.serving import kv
from engine.serving.outcome import Gpu
from engine.serving.vllm import vllm_check
from tests.serving_datapoints import answer_model, hybrid_attention_rows

REGISTRY = default_registry()


def _shape(model_id: str):
    shape = REGISTRY.get(model_id)
    assert shape is not None
    return shape


def test_state_page_of_qwen38_27b_on_two_gpus():
    """conv (2 x 16 x 128 + 48 x 128) / 2 x 3 x 2 B + recurrent 24 x 128 x 128 x 4 B (mamba_ssm_dtype float32)."""
    state = kv.linear_state(_shape("qwen3.8-27b"))
    assert state is not None
    assert state.page_bytes(2) == 5120 * 3 * 2 + 24 * 128 * 128 * 4 == 1_603_584


def test_attention_block_grows_to_hold_the_state_page():
    """PR #1995 of mitchross/talos-argocd-proxmox: 'ceil(262144/1568)' blocks for Qwen3.8-27B, TP2, fp8 KV."""
    assert kv.attention_block_size(_shape("qwen3.8-27b"), 2, "fp8") == 1568
    assert kv.attention_block_size(_shape("qwen3.6-35b-a3b"), 1, "fp8") == 2096
    # bf16 KV halves the tokens a page needs; a dense model keeps 16.
    assert kv.attention_block_size(_shape("qwen3.6-35b-a3b"), 1, "auto") == 16 * math.ceil(2_146_304 / (16 * 2048))
    assert kv.attention_block_size(_shape("qwen3-32b"), 1, "auto") == 16


def test_groups_and_blocks_per_request():
    shape = _shape("qwen3.6-35b-a3b")
    assert kv.layer_groups(shape) == kv.LayerGroups(size=10, full=1, sliding=0, linear=3)
    assert kv.layer_groups(shape).padded_layers(shape) == 0
    assert kv.bytes_per_block(shape, 1, "fp8") == 10 * 2096 * 1024
    assert kv.blocks_per_request(shape, 131072, 8192, tp=1, kv_dtype="fp8") == 63 + 3 * 2
    # the longest request of 300 blocks: (300 - 6) x 2096 tokens
    assert kv.max_model_len_for_blocks(shape, 300, 8192, 10**7, tp=1, kv_dtype="fp8") == 294 * 2096


def test_unknown_state_keeps_the_full_attention_count():
    """A hybrid whose state shape was not read (MiniMax lightning attention) keeps 16-token blocks."""
    shape = _shape("minimax-text-01")
    assert kv.linear_state(shape) is None
    assert kv.layer_groups(shape).linear == 0


def test_public_logs_match_exactly():
    rows = hybrid_attention_rows()
    assert len(rows) == 8
    assert all(row.within for row in rows)
    assert all(row.predicted == row.logged for row in rows if "tokens" in row.quantity)


def test_serving_check_counts_the_state_pages():
    """The check's KV for one request includes the three state groups: it needs more than the full-attention
    KV alone, and the max context leaves their pages out."""
    model = answer_model("qwen3.6-27b")
    check = vllm_check(model, Gpu("H100 80GB HBM3", 81089), 131072)
    shape = model.shape
    full_only = kv.kv_bytes_per_token_per_gpu(shape, 1, "auto") * 131072
    assert check.kv_gb_per_gpu * 1e9 > full_only
    assert check.starts
    block = kv.attention_block_size(shape, 1, "auto")
    assert check.kv_gb_per_gpu * 1e9 == kv.blocks_per_request(shape, 131072, 8192, tp=1) * kv.bytes_per_block(
        shape, 1, "auto")
    assert check.max_context_tokens is not None and check.max_context_tokens % block == 0
