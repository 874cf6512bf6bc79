"""The KV cache as the engines reserve it: bytes per token per GPU, vLLM's blocks and layer groups, llama.cpp's cells.

Shapes are engine.models.registry.ModelShape; the formulas are research §3 (vLLM 0.33.0) and §6.3 (llama.cpp 0c1e57098).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.models.registry import LinearState, ModelShape
from engine.serving.constants import (
    BLOCK_SIZE,
    CELL_PADDING,
    GROUP_SIZE_MAX_RATIO,
    IN_FLIGHT_BATCHES,
    KERNEL_BLOCK_ALIGNMENT,
    LINEAR_STATE_PAGES_PER_REQUEST,
    LLAMA_CPP_KV_TYPE_BYTES,
    N_UBATCH,
    VLLM_KV_DTYPE_BYTES,
)


class ServingShapeError(ValueError):
    """A shape the serving check cannot size (its attention is not published)."""


def kv_element_bytes(kv_dtype: str) -> float:
    """Bytes per cached element for a vLLM --kv-cache-dtype or a llama.cpp --cache-type name."""
    key = kv_dtype.strip().lower()
    if key in VLLM_KV_DTYPE_BYTES:
        return VLLM_KV_DTYPE_BYTES[key]
    if key in LLAMA_CPP_KV_TYPE_BYTES:
        return LLAMA_CPP_KV_TYPE_BYTES[key]
    raise ValueError(f"unknown KV cache type {kv_dtype!r}")


def kv_heads_per_gpu(kv_heads: int, tp: int) -> int:
    """vllm/config/model.py:1663-1683: KV heads split over TP ranks, replicated when fewer than the ranks."""
    return max(1, kv_heads // tp)


def full_attention_layers(shape: ModelShape) -> int:
    """Layers that keep every token: the rest hold a sliding window (or an attention chunk), or keep no per-token
    cache at all (linear attention, cross-attention; ModelShape.kv_layers)."""
    layers = _kv_layers(shape)
    return layers - shape.sliding_layers if shape.sliding_window else layers


def sliding_window_layers(shape: ModelShape) -> int:
    return shape.sliding_layers if shape.sliding_window else 0


def kv_bytes_per_token_per_layer(shape: ModelShape, tp: int, kv_dtype: str) -> float:
    """One token, one layer, one GPU: K and V of the KV heads on that rank, or the MLA latent whole on every rank.

    MLA: vllm/model_executor/layers/attention/mla_attention.py:1376-1378 builds the spec with one KV head and
    max_tp_shards=1, head size kv_lora_rank + qk_rope_head_dim, no V. DeepSeek V3.2 adds its indexer keys in every
    layer (the registry's bytes: 128 fp8 values + one fp32 scale = 132 B, whatever --kv-cache-dtype says); vLLM
    0.34 keeps them in a page of their own per layer (a block covers both), which is the same bytes per token.
    """
    element = kv_element_bytes(kv_dtype)
    if shape.mla_kv_lora_rank is not None:
        latent = (shape.mla_kv_lora_rank + (shape.mla_qk_rope_head_dim or 0)) * element
        return latent + shape.indexer_bytes_per_token_per_layer
    if shape.kv_heads is None or shape.head_dim is None:
        raise ServingShapeError(f"the attention shape of {shape.name} is not published")
    return 2 * kv_heads_per_gpu(shape.kv_heads, tp) * shape.head_dim * element


def full_layer_bytes_per_token(shape: ModelShape, tp: int, kv_dtype: str) -> float:
    """One token in one full-attention layer on one GPU. Gemma 4's global layers have KV heads and a head dim of
    their own (registry.GlobalAttention; per_layer_config in vLLM 0.34 models/gemma4.py); a K = V layer still
    stores K and V (k_proj is loaded into both slots of qkv_proj). Every other model: as any layer."""
    glob = shape.global_attention
    if glob is None:
        return kv_bytes_per_token_per_layer(shape, tp, kv_dtype)
    return 2 * kv_heads_per_gpu(glob.kv_heads, tp) * glob.head_dim * kv_element_bytes(kv_dtype)


def kv_bytes_per_token_per_gpu(shape: ModelShape, tp: int, kv_dtype: str) -> float:
    """What one more token adds on one GPU once every sliding window is full: the full-attention layers only."""
    return full_attention_layers(shape) * full_layer_bytes_per_token(shape, tp, kv_dtype)


# -- linear-attention state (Gated DeltaNet) ---------------------------------------------------------------

def linear_state(shape: ModelShape) -> LinearState | None:
    """The state vLLM keeps as pages in its KV pool for each linear-attention layer, where the registry has its
    shape (registry `linear_state`; it has no sliding window: the grouping below pairs full attention with linear
    attention only)."""
    return shape.linear_state if shape.no_kv_layers > 0 and not shape.sliding_window else None


def attention_block_size(shape: ModelShape, tp: int, kv_dtype: str) -> int:
    """Tokens per attention block: 16, or for a hybrid model the smallest multiple of the kernel alignment whose
    page (block x one layer's bytes per token) holds a linear-attention state page ("Setting attention block
    size to N tokens", platforms/interface.py:1108-1123). Qwen3.8-27B on TP2 with fp8 KV: 1,568."""
    state = linear_state(shape)
    if state is None:
        return BLOCK_SIZE
    per_token = int(kv_bytes_per_token_per_layer(shape, tp, kv_dtype))
    aligned = KERNEL_BLOCK_ALIGNMENT * math.ceil(state.page_bytes(tp) / (KERNEL_BLOCK_ALIGNMENT * per_token))
    return max(BLOCK_SIZE, aligned)


# -- vLLM blocks ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LayerGroups:
    """vLLM's KV cache groups (kv_cache_planning.py:416-556): every group has `size` layers, one block id covers
    one page of each layer in a group, so a block of the pool is `size` pages."""

    size: int
    full: int
    sliding: int
    linear: int = 0  # groups of linear-attention state pages (hybrid models with a registry linear_state)

    def padded_layers(self, shape: ModelShape) -> int:
        """Layers added to fill the last group of each kind ("Add N padding layers" in the log)."""
        linear_layers = shape.no_kv_layers if self.linear else 0
        return (self.full + self.sliding + self.linear) * self.size - _kv_layers(shape) - linear_layers


def _group_size(first: int, second: int) -> int:
    """min(layers per kind), or max when max < 1.5 x min (kv_cache_planning.py:497-556)."""
    low, high = min(first, second), max(first, second)
    return high if high < GROUP_SIZE_MAX_RATIO * low else low


def layer_groups(shape: ModelShape) -> LayerGroups:
    """Group size min(layers per kind), or max when max < 1.5 x min (gpt-oss: 18 + 18 -> two groups of 18); full
    attention beside linear-attention state pages the same way (Qwen3.6-35B-A3B 10 + 30 -> 1 + 3 groups of 10)."""
    full, sliding = full_attention_layers(shape), sliding_window_layers(shape)
    if linear_state(shape) is not None and full:
        size = _group_size(full, shape.no_kv_layers)
        return LayerGroups(size=size, full=math.ceil(full / size), sliding=0,
                           linear=math.ceil(shape.no_kv_layers / size))
    if not sliding or not full:
        return LayerGroups(size=full or sliding, full=1 if full else 0, sliding=1 if sliding else 0)
    size = _group_size(full, sliding)
    return LayerGroups(size=size, full=math.ceil(full / size), sliding=math.ceil(sliding / size))


@dataclass(frozen=True, slots=True)
class Pages:
    """One page per layer and block, the same bytes in every layer (unify_kv_cache_spec_page_size,
    kv_cache_planning.py:392-454 in 0.34.0): where the full and the sliding layers' pages differ (Gemma 4's global
    layers), the smaller page's layers get a block that many times longer, or a padded page where the ratio is
    not whole. Gemma 4 26B-A4B at TP1: sliding 16 x 2 x 8 x 256 x 2 B = 128 KiB, global 16 x 2 x 2 x 512 x 2 B =
    64 KiB, so the global layers hold 32 tokens a block."""

    full_block: int  # tokens per block of a full-attention layer
    window_block: int  # tokens per block of a sliding-window layer
    page_bytes: float  # one layer's page on one GPU


def pages(shape: ModelShape, tp: int, kv_dtype: str) -> Pages:
    block = attention_block_size(shape, tp, kv_dtype)
    full_page = block * full_layer_bytes_per_token(shape, tp, kv_dtype)
    if not sliding_window_layers(shape) or not full_attention_layers(shape):
        return Pages(block, block, full_page)
    window_page = block * kv_bytes_per_token_per_layer(shape, tp, kv_dtype)
    page = max(full_page, window_page)

    def stretched(layer_page: float) -> int:
        return block * int(page // layer_page) if page % layer_page == 0 else block

    return Pages(stretched(full_page), stretched(window_page), page)


def bytes_per_block(shape: ModelShape, tp: int, kv_dtype: str) -> float:
    """A block of the pool on one GPU: group size x page (page = block tokens x one layer's bytes per token; a
    hybrid model's linear-attention state page is padded to that page, platforms/interface.py:1128-1147)."""
    return layer_groups(shape).size * pages(shape, tp, kv_dtype).page_bytes


def sliding_window_tokens(window: int, max_num_batched_tokens: int, max_model_len: int,
                          in_flight_batches: int = IN_FLIGHT_BATCHES) -> int:
    """Tokens a sliding-window layer holds for one request (SlidingWindowSpec, kv_cache_interface.py:901-960).

    0.33.0: min(window - 1 + in-flight tokens, max_model_len), in-flight = 2 batches under async scheduling;
    0.11-0.19 had one batch (pass in_flight_batches=1). extra_retained_tokens (speculative decoding) is 0 here.
    """
    return min(window - 1 + in_flight_batches * max_num_batched_tokens, max_model_len)


def chunk_tokens(chunk: int, max_num_batched_tokens: int, max_model_len: int,
                 in_flight_batches: int = IN_FLIGHT_BATCHES) -> int:
    """Tokens a chunked-local-attention layer (Llama 4) holds for one request (ChunkedLocalAttentionSpec,
    kv_cache_interface.py:875-902 in 0.34.0): min(chunk + in-flight tokens, max_model_len), no partial block."""
    return min(chunk + in_flight_batches * max_num_batched_tokens, max_model_len)


def local_blocks(shape: ModelShape, max_num_batched_tokens: int, max_model_len: int,
                 in_flight_batches: int = IN_FLIGHT_BATCHES, block: int = BLOCK_SIZE) -> tuple[int, int]:
    """(tokens, blocks) one request holds in one windowed layer: a chunk (cdiv) or a sliding window (cdiv + 1,
    the window may not start on a block boundary)."""
    if shape.attention_chunk_size:
        tokens = chunk_tokens(shape.attention_chunk_size, max_num_batched_tokens, max_model_len, in_flight_batches)
        return tokens, math.ceil(tokens / block)
    assert shape.sliding_window is not None
    tokens = sliding_window_tokens(shape.sliding_window, max_num_batched_tokens, max_model_len, in_flight_batches)
    return tokens, math.ceil(tokens / block) + 1


def blocks_per_request(shape: ModelShape, max_model_len: int, max_num_batched_tokens: int,
                       in_flight_batches: int = IN_FLIGHT_BATCHES, *, tp: int = 1, kv_dtype: str = "auto") -> int:
    """Blocks one request of max_model_len tokens takes (kv_cache_utils.py:1082-1111): cdiv(L, block) per full
    group, a window's or a chunk's blocks per windowed group (local_blocks), two state pages per
    linear-attention group (LINEAR_STATE_PAGES_PER_REQUEST). tp and kv_dtype set a hybrid model's block."""
    groups = layer_groups(shape)
    if groups.linear:
        block = attention_block_size(shape, tp, kv_dtype)
        return groups.full * math.ceil(max_model_len / block) + groups.linear * LINEAR_STATE_PAGES_PER_REQUEST
    page = pages(shape, tp, kv_dtype)
    full = groups.full * math.ceil(max_model_len / page.full_block)
    if not groups.sliding:
        return full
    return full + groups.sliding * local_blocks(shape, max_num_batched_tokens, max_model_len, in_flight_batches,
                                                page.window_block)[1]


def kv_blocks(available_bytes: float, block_bytes: float) -> int:
    """kv_cache_planning.py:681: num_blocks = available // bytes per block (0 when nothing is left)."""
    return max(0, int(available_bytes // block_bytes))


def max_concurrency(num_blocks: int, per_request_blocks: int) -> float:
    """The log's "Maximum concurrency for L tokens per request: Xx" (kv_cache_utils.py:1120-1127)."""
    return num_blocks / per_request_blocks


def kv_cache_tokens(num_blocks: int, per_request_blocks: int, max_model_len: int) -> int:
    """The log's "GPU KV cache size: N tokens" in 0.33: int(max concurrency x max_model_len)."""
    return int(max_concurrency(num_blocks, per_request_blocks) * max_model_len)


def largest_fitting(fits: Callable[[int], bool], cap: int, step: int = 1) -> int | None:
    """The largest multiple of `step` up to `cap` for which the monotone fits() holds; None if not even `step`."""
    low, high = 0, cap // step
    if high == 0 or not fits(step):
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle * step):
            low = middle
        else:
            high = middle - 1
    return low * step


def max_model_len_for_blocks(shape: ModelShape, num_blocks: int, max_num_batched_tokens: int, cap: int,
                             in_flight_batches: int = IN_FLIGHT_BATCHES, *, tp: int = 1,
                             kv_dtype: str = "auto") -> int | None:
    """The longest request whose blocks fit in `num_blocks` (estimate_max_model_len, kv_cache_planning.py:97-148:
    a binary search; a dense model gets num_blocks x 16)."""
    groups = layer_groups(shape)
    if groups.linear:
        # The state pages come first; the rest hold cdiv(L, block) blocks per full group.
        block = attention_block_size(shape, tp, kv_dtype)
        left = num_blocks - groups.linear * LINEAR_STATE_PAGES_PER_REQUEST
        tokens = min(cap, left // max(groups.full, 1) * block)
        return tokens if tokens >= 1 else None
    if not groups.sliding:
        # Full attention only: blocks = groups x cdiv(L, 16) <= num_blocks has the closed form the search finds.
        tokens = min(cap, num_blocks // max(groups.full, 1) * BLOCK_SIZE)
        return tokens if tokens >= 1 else None

    def fits(tokens: int) -> bool:
        return blocks_per_request(shape, tokens, max_num_batched_tokens, in_flight_batches, tp=tp,
                                  kv_dtype=kv_dtype) <= num_blocks

    return largest_fitting(fits, cap)


# -- llama.cpp cells -----------------------------------------------------------------------------------------

def pad_cells(cells: int) -> int:
    return math.ceil(cells / CELL_PADDING) * CELL_PADDING


def llama_cpp_swa_cells(n_ctx: int, n_swa: int, n_seq: int, unified: bool, n_ubatch: int = N_UBATCH) -> int:
    """llama-kv-cache-iswa.cpp:68-104: pad256(min(n_ctx, n_swa x (unified ? n_seq : 1) + n_ubatch))."""
    return pad_cells(min(n_ctx, n_swa * (n_seq if unified else 1) + n_ubatch))


def llama_cpp_kv_bytes_per_cell_layer(n_embd_k: int, n_embd_v: int, type_k: str, type_v: str) -> float:
    """llama-kv-cache.cpp:150-305: K = n_embd_k_gqa x size(type_k), V = n_embd_v_gqa x size(type_v) per cell."""
    return n_embd_k * kv_element_bytes(type_k) + n_embd_v * kv_element_bytes(type_v)


def llama_cpp_embd_kv(shape: ModelShape, *, full: bool = False) -> tuple[int, int]:
    """(n_embd_k_gqa, n_embd_v_gqa): MLA keeps one K row of rank + rope and no V (has_v = !is_mla). `full`: a
    full-attention layer's, which for Gemma 4 is its global layers' own KV heads x global_head_dim, K and V both
    (llama-hparams.cpp n_embd_k_gqa(il) / n_embd_v_gqa(il); src/models/gemma4.cpp uses K as V where v_proj is
    absent and stores both; conversion/gemma.py writes key/value_length = global_head_dim)."""
    if shape.mla_kv_lora_rank is not None:
        return shape.mla_kv_lora_rank + (shape.mla_qk_rope_head_dim or 0), 0
    if shape.kv_heads is None or shape.head_dim is None:
        raise ServingShapeError(f"the attention shape of {shape.name} is not published")
    if full and shape.global_attention is not None:
        glob = shape.global_attention
        return glob.kv_heads * glob.head_dim, glob.kv_heads * glob.head_dim
    return shape.kv_heads * shape.head_dim, shape.kv_heads * shape.head_dim


def llama_cpp_full_cell_bytes(shape: ModelShape, type_k: str, type_v: str, *, flash_attn: bool = True) -> float:
    """One cell of one full-attention layer. Without flash attention V is stored transposed at the widest layer's
    V width (llama-kv-cache.cpp: n_embd_v_gqa_max() when v_trans), which only Gemma 4's narrower global layers feel."""
    n_embd_k, n_embd_v = llama_cpp_embd_kv(shape, full=True)
    if not flash_attn:
        n_embd_v = max(n_embd_v, llama_cpp_embd_kv(shape)[1])
    return llama_cpp_kv_bytes_per_cell_layer(n_embd_k, n_embd_v, type_k, type_v)


def llama_cpp_kv_bytes(shape: ModelShape, n_ctx: int, type_k: str, type_v: str, *, n_seq: int = 1,
                       unified: bool = True, n_ubatch: int = N_UBATCH, flash_attn: bool = True) -> float:
    """The whole KV cache (all layers, all devices): full layers hold n_ctx cells, SWA layers their padded window."""
    cells = pad_cells(n_ctx)
    total = full_attention_layers(shape) * cells * llama_cpp_full_cell_bytes(shape, type_k, type_v,
                                                                                flash_attn=flash_attn)
    if shape.sliding_window and shape.sliding_layers:
        n_embd_k, n_embd_v = llama_cpp_embd_kv(shape)
        swa_cells = llama_cpp_swa_cells(cells, shape.sliding_window, n_seq, unified, n_ubatch)
        total += shape.sliding_layers * swa_cells * llama_cpp_kv_bytes_per_cell_layer(n_embd_k, n_embd_v, type_k,
                                                                                      type_v)
    return total


def _kv_layers(shape: ModelShape) -> int:
    if shape.kv_layers is None:
        raise ServingShapeError(f"the layer count of {shape.name} is not published")
    return shape.kv_layers
