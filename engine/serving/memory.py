"""What an engine leaves for weights and KV cache on one GPU: its share of the card and its runtime overheads."""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.serving.constants import (
    ASSUMED_MOE_TOP_K,
    COMPUTE_FA_MIB,
    COMPUTE_NO_FA_BASE_MIB,
    CUDAGRAPH_GIB_LARGE,
    CUDAGRAPH_GIB_SMALL,
    CUDAGRAPH_SMALL_MAX_PARAMS_B,
    GIB,
    LLM_CLASS_BATCH_TIERS,
    MIB,
    MID_TIER_EXCLUDED_NAMES,
    MID_TIER_GIB,
    N_UBATCH,
    NON_TORCH_GIB_SINGLE,
    NON_TORCH_GIB_TP,
    SAMPLER_BYTES_PER_LOGIT,
    SERVE_BATCH_TIERS,
)

# Dimensions assumed when the registry does not publish them (a bare size): Llama 3's vocabulary and its
# intermediate / hidden ratio (meta-llama/Llama-3.1-8B config.json: 14336 / 4096, vocab 128256).
ASSUMED_VOCAB = 128256
ASSUMED_INTERMEDIATE_RATIO = 3.5


@dataclass(frozen=True, slots=True)
class ModelDims:
    """The config sizes the activation estimate and the vocabulary padding read (config.json fields).

    For a MoE model intermediate_size is the registry's (the expert width for gpt-oss, Mixtral and Qwen3 MoE, the
    dense layers' width for DeepSeek-style models, which over-states their expert caches); experts_active is
    num_experts_per_tok, 0 when not published."""

    hidden_size: int
    intermediate_size: int
    vocab_size: int
    moe: bool = False
    experts_active: int = 0
    multimodal: bool = False  # a vision LLM: vLLM profiles its encoder cache too

    @classmethod
    def assumed(cls, hidden_size: int, moe: bool = False) -> ModelDims:
        return cls(hidden_size, round(hidden_size * ASSUMED_INTERMEDIATE_RATIO), ASSUMED_VOCAB, moe)

    @property
    def top_k(self) -> int:
        """Experts per token of a MoE layer (ASSUMED_MOE_TOP_K when not published)."""
        return self.experts_active or ASSUMED_MOE_TOP_K


def batch_defaults(memory_mib: int, device_name: str, usage: str = "serve") -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM picks for a card (arg_utils.py:2958-3006).

    The mid tier (>= 70 GiB) excludes A100s by name; usage "serve" is `vllm serve`, "llm" the Python LLM class.
    vLLM compares the NVML total; the CUDA total of catalog cards is 0.5-0.7 GiB lower, which moves no card
    across a tier (research §1 table). GB10 (compute capability 12.1, also excluded) is not a rental card.
    """
    tiers = SERVE_BATCH_TIERS if usage == "serve" else LLM_CLASS_BATCH_TIERS
    gib = memory_mib * MIB / GIB
    excluded = any(name in device_name.lower() for name in MID_TIER_EXCLUDED_NAMES)
    for min_gib, tokens, seqs in tiers:
        if gib >= min_gib and not (excluded and min_gib == MID_TIER_GIB):
            return tokens, seqs
    raise AssertionError("the last tier has no minimum")  # pragma: no cover


def requested_bytes(memory_mib: int, gpu_memory_utilization: float) -> int:
    """utils.py:716 request_memory: ceil(CUDA total x gpu_memory_utilization)."""
    return math.ceil(memory_mib * MIB * gpu_memory_utilization)


def activation_peak_bytes(dims: ModelDims, max_num_batched_tokens: int, max_num_seqs: int, tp: int) -> float:
    """Estimate of the profile run's transient peak (constants.py "Estimates"; vLLM measures it, no formula exists).

    The larger of the forward pass over mnbt tokens and the sampler run over S = min(max_num_seqs, mnbt) requests
    that follows it once the forward's transients are freed: the same profile_run for dense and MoE models.
    """
    sequences = min(max_num_seqs, max_num_batched_tokens)
    peak = max(forward_peak_bytes(dims, max_num_batched_tokens, tp), sampler_peak_bytes(dims, sequences))
    return encoder_cache_bytes(dims, max_num_batched_tokens) + peak


def encoder_cache_bytes(dims: ModelDims, max_num_batched_tokens: int) -> float:
    """A vision LLM's encoder outputs held through the profile run (0 for a text model).

    vLLM 0.34.0 v1/worker/gpu/model_runner.py:1070-1100 profile_run: before the dummy forward it runs the vision
    encoder on dummy images of the largest size (multimodal/encoder_budget.py get_dummy_encoder_profile_inputs) and
    keeps their embeddings in the encoder cache until reset_encoder_cache() after the sampler run. The cache holds
    max(max_num_batched_tokens, tokens of one image) embeddings (v1/core/encoder_cache_manager.py:329-375,
    config/scheduler.py:350-351), each hidden_size values in the model dtype (2 B). The tokens of one image are not
    in the registry, so max_num_batched_tokens (the smaller bound) is used; the encoder's own transient activations
    are measured by vLLM and not modelled here.
    """
    if not dims.multimodal:
        return 0.0
    return max_num_batched_tokens * dims.hidden_size * 2


def forward_peak_bytes(dims: ModelDims, max_num_batched_tokens: int, tp: int) -> float:
    """The forward pass over one batch of mnbt tokens, 2 B each: 4 hidden + 3 intermediate / tp per token; a MoE
    layer's fused_moe caches make the MLP term top_k x (3 intermediate / tp + hidden)."""
    mlp = 3 * dims.intermediate_size / tp
    if dims.moe:
        mlp = dims.top_k * (mlp + dims.hidden_size)
    return max_num_batched_tokens * (4 * dims.hidden_size + mlp) * 2


def sampler_peak_bytes(dims: ModelDims, sequences: int) -> float:
    """The dummy sampler run: one row of fp32 logits per request, sorted for top-k/top-p (~10 copies), on every TP
    rank (the logits are gathered); the logits processor cuts the padded vocabulary back to the model's
    (layers/logits_processor.py)."""
    return sequences * dims.vocab_size * SAMPLER_BYTES_PER_LOGIT


def non_torch_bytes(tp: int) -> float:
    """NCCL and cuBLAS workspaces outside torch's allocator (0.03-0.07 GiB alone, 0.32 GiB under TP2 in logs)."""
    return (NON_TORCH_GIB_SINGLE if tp == 1 else NON_TORCH_GIB_TP) * GIB


def cudagraph_bytes(params_b: float, tp: int, enforce_eager: bool) -> float:
    """CUDA-graph memory vLLM subtracts since 0.20 (measured 0.67-2.4 GiB in logs; none with --enforce-eager)."""
    if enforce_eager:
        return 0.0
    small = tp == 1 and params_b <= CUDAGRAPH_SMALL_MAX_PARAMS_B
    return (CUDAGRAPH_GIB_SMALL if small else CUDAGRAPH_GIB_LARGE) * GIB


def llama_cpp_compute_bytes(n_ctx: int, attention_heads: int | None, flash_attn: bool,
                            n_ubatch: int = N_UBATCH) -> float:
    """Compute buffer estimate: flat with flash attention; without it the KQ matrix n_ctx x n_ubatch x n_head x 4 B."""
    if flash_attn:
        return COMPUTE_FA_MIB * MIB
    return COMPUTE_NO_FA_BASE_MIB * MIB + n_ctx * n_ubatch * (attention_heads or 0) * 4
