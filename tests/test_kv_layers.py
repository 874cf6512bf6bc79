"""Every architecture's cache as the engine keeps it: hybrid linear/full attention counts the layers that keep a
per-token KV cache, DeepSeek V3.2 adds its indexer keys to the MLA latent, Llama 4's chunked layers hold a chunk."""
from __future__ import annotations

import math

import pytest

from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.models.registry import default_registry
from engine.serving import kv
from engine.sizing.rule import SizeRequest, kv_bytes_per_token, kv_cache

REGISTRY = default_registry()
CATALOG = load_catalog("gpurenthub").catalog


def _shape(model_id: str):
    shape = REGISTRY.get(model_id)
    assert shape is not None
    return shape


def test_qwen3_next_counts_its_12_full_attention_layers():
    """config.json: 48 layers, full_attention_interval 4 (12 full-attention layers), 2 KV heads x 256:
    2 x 12 x 2 x 256 x 2 B = 24,576 B per token; 256k x 4 requests = 25.8 GB, and each request's state in the 36
    Gated DeltaNet layers: conv (2 x 16 x 128 + 32 x 128) x 3 x 2 B + 32 x 128 x 128 x 2 B (bf16) = 1,097,728 B."""
    shape = _shape("qwen3-next-80b-a3b")
    assert shape.kv_known and shape.kv_layers == 12
    assert kv_bytes_per_token(shape) == 24576
    component = kv_cache(shape, 2, 262144, 4)
    state = 36 * 1_097_728 * 4
    assert component is not None and component.gb == pytest.approx((24576 * 262144 * 4 + state) / 1e9)
    assert round(component.gb, 1) == 25.9


def test_qwen3_next_question_keeps_its_context_and_says_which_layers_count():
    answer = build_answer(SizeRequest(model="qwen3-next-80b-a3b", context_tokens=262144, batch=4), CATALOG)
    component = answer.requirement.component("kv_cache")
    assert component is not None and round(component.gb, 1) == 25.9
    [note] = [n for n in answer.requirement.notes if n.code == "kv_layers_linear_state"]
    assert "12 full-attention layers" in str(note) and "36 linear-attention layers, 40 MB per request" in str(note)
    english = plain(render_answer(answer, "en"))
    assert "262,144 tokens" in english and "KV cache 25.9 GB" in english
    assert "12 full-attention layers" in english
    assert "36 Schichten mit linearer Attention" in plain(render_answer(answer, "de"))


def test_minimax_lightning_layers_keep_no_kv():
    """10 softmax layers of 80 grow with the context (the entry's comment: 2 x 8 x 128 per token per layer)."""
    shape = _shape("minimax-m1")
    assert shape.kv_layers == 10
    assert kv_bytes_per_token(shape) == 10 * 2 * 8 * 128 * 2


def test_llama_32_vision_counts_its_self_attention_layers():
    shape = _shape("llama-3.2-11b-vision")
    assert shape.kv_layers == 32
    assert kv_bytes_per_token(shape) == 32 * 2 * shape.kv_heads * shape.head_dim * 2
    answer = build_answer(SizeRequest(model="llama-3.2-11b-vision", context_tokens=32768), CATALOG)
    assert answer.requirement.component("kv_cache") is not None
    assert any(n.code == "kv_layers_cross_attention" for n in answer.requirement.notes)


def test_deepseek_v32_mla_latent_plus_indexer_keys():
    """61 layers x 576 x 2 B = 70,272 B (9.2 GB at 128k) plus 61 x 132 B of indexer keys (fp8 + fp32 scale)."""
    shape = _shape("deepseek-v3.2-exp")
    component = kv_cache(shape, 2, 131072, 1)
    assert component is not None and component.code == "kv_mla_indexer"
    mla = 61 * 576 * 2 * 131072 / 1e9
    indexer = 61 * 132 * 131072 / 1e9
    assert round(mla, 1) == 9.2
    assert component.gb == pytest.approx(mla + indexer)
    answer = build_answer(SizeRequest(model="deepseek-v3.2-exp", context_tokens=131072), CATALOG)
    assert "indexer keys" in plain(render_answer(answer, "en", details=True))
    assert "Indexer-Schlüssel" in plain(render_answer(answer, "de", details=True))


def test_serving_bytes_per_token_follow_the_same_layers():
    assert kv.kv_bytes_per_token_per_gpu(_shape("qwen3-next-80b-a3b"), 1, "auto") == 24576
    assert kv.kv_bytes_per_token_per_gpu(_shape("qwen3-next-80b-a3b"), 2, "auto") == 12288  # 2 KV heads split
    assert kv.kv_bytes_per_token_per_gpu(_shape("deepseek-v3.2-exp"), 8, "auto") == 61 * (576 * 2 + 132)
    assert kv.kv_bytes_per_token_per_gpu(_shape("deepseek-v3.2-exp"), 8, "fp8") == 61 * (576 + 132)


def test_llama_4_chunked_layers_reserve_a_chunk_and_the_in_flight_batches():
    """ChunkedLocalAttentionSpec (vLLM 0.34.0): cdiv(min(chunk + in-flight tokens, L), 16), no extra block."""
    shape = _shape("llama-4-scout")
    tokens, blocks = kv.local_blocks(shape, 8192, 1_000_000)
    assert tokens == 8192 + 2 * 8192 and blocks == math.ceil(tokens / 16)
    groups = kv.layer_groups(shape)
    assert kv.blocks_per_request(shape, 1_000_000, 8192) == groups.full * math.ceil(1_000_000 / 16) \
        + groups.sliding * blocks
    # A sliding window keeps its extra block (Gemma 3).
    gemma = _shape("gemma-3-27b")
    assert kv.local_blocks(gemma, 8192, 100_000)[1] == math.ceil((gemma.sliding_window - 1 + 16384) / 16) + 1
