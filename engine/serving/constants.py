"""The engines' own numbers the serving check follows, each with the source file and line it was read from.

vLLM: release 0.34.0 (PyPI wheel, vllm/_version.py __commit_id__ 'g62d4bc3c7'), the newest release when it was
read, whose KV cache is sized from memory measured after warmup; the accounting of 0.20-0.33 (read in 0.33.0,
__commit_id__ 'g4ba787ec9') and of 0.10-0.19 (read in 0.11.0 and 0.19.1) is kept next to it and selectable
(engine.serving.vllm.settings_for_version): public startup logs mostly come from 0.10-0.15.
llama.cpp: commit 0c1e57098 (vendored by llama-cpp-python 0.3.36).
Research notes with every line quoted: research/serving.md (sections named below as "research §N").
"""
from __future__ import annotations

from typing import Final

GIB: Final = 2**30
MIB: Final = 2**20
GB: Final = 1e9

VLLM_VERSION: Final = "0.34.0"
# The last release of each accounting the check knows (engine.serving.vllm.settings_for_version).
VLLM_MEASURED_SINCE: Final = "0.34.0"  # extensible KV cache sized from measured memory
VLLM_ESTIMATED_LAST: Final = "0.33.0"  # CUDA graphs estimated and subtracted, 0.92 (0.20.0-0.33.0)
VLLM_BEFORE_0_20_LAST: Final = "0.19.1"  # CUDA graphs not subtracted, 0.9 (0.10.0-0.19.1)
VLLM_OLDEST: Final = "0.10.0"  # the V1 engine's accounting; V0 logs are matched by hand in tests/serving_datapoints
LLAMA_CPP_COMMIT: Final = "0c1e57098"

# -- vLLM 0.34.0: the extensible KV cache ---------------------------------------------------------------------
# config/cache.py:216 `gpu_memory_utilization: float | None = Field(default=None)`; resolved_gpu_memory_utilization
# (:495-501) is 1.0 with the extensible KV cache, which config/vllm.py:3180-3263 turns on by default on CUDA and
# ROCm (off with kv_cache_memory_bytes, num_gpu_blocks_override, elastic EP or some KV connectors).
GPU_MEMORY_UTILIZATION_MEASURED: Final = 1.0
# v1/worker/extensible_kv_cache.py:592-618 measure_kv_cache_bytes: available = min(requested - non-KV memory,
# memory free at startup - non-KV memory - margin) - transient peak, margin = max(1 GiB, 0.75 x transient peak)
# (:64-65, 3 GiB floor on ROCm); non-KV memory is measured after warmup, so the captured CUDA graphs are in it
# (profile_cudagraph_memory returns 0 under the extensible cache: v1/worker/gpu/model_runner.py).
KV_CACHE_MARGIN_FLOOR_GIB: Final = 1.0
KV_CACHE_MARGIN_FRACTION: Final = 0.75
# Memory in use before vLLM's startup snapshot (CUDA context): "Free memory on device (78.66/79.19 GiB)" on an
# H100 (code index 34680831065, the llava log of tests/serving_datapoints.py): 0.53 GiB, used for every card.
CUDA_CONTEXT_GIB: Final = 0.53

# -- vLLM 0.20.0-0.33.0 ---------------------------------------------------------------------------------------
# vllm/config/cache.py:215 `Field(default=0.92, gt=0, le=1)` in 0.33.0; 0.9 up to and including 0.19.1
# (config/cache.py:41 in 0.19.1). 0.20.0 raised it in the same release that began to count CUDA-graph memory.
GPU_MEMORY_UTILIZATION: Final = 0.92
GPU_MEMORY_UTILIZATION_BEFORE_0_20: Final = 0.9
# vllm/config/cache.py:185 `DEFAULT_BLOCK_SIZE: ClassVar[int] = 16`.
BLOCK_SIZE: Final = 16
# Hybrid attention / linear-attention models (vLLM 0.34.0 platforms/interface.py:950-1147
# _align_hybrid_block_size): the attention block grows to the smallest multiple of the kernel block alignment
# whose page holds a linear-attention state page, and that state page is padded to the attention page.
# The alignment is max(smallest kernel block of the backend, cache block size) = 16 for FlashAttention
# (MultipleOf(16), backends/flash_attn.py:357-367), Triton (MultipleOf(16)) and FlashInfer ([16, 32, 64]).
# Not modelled: FA4's head-dim-256 kernel on SM10.x/11.x uses 128 (fa_utils.py:14, :224-233), and 0.34's
# FlashInfer GDN prefill (Hopper; Blackwell on CUDA 13) adds a checkpoint page and a 64-token alignment.
KERNEL_BLOCK_ALIGNMENT: Final = 16
# State pages one request holds per linear-attention group with prefix caching on (the default,
# config/cache.py:267; mamba_cache_mode "align", models/config.py:1094-1096): MambaSpec.max_memory_usage_bytes
# = page x (2 + speculative + checkpoint blocks), kv_cache_interface.py:1168-1174; 1 page without prefix caching.
LINEAR_STATE_PAGES_PER_REQUEST: Final = 2
# vllm/model_executor/layers/vocab_parallel_embedding.py:36 DEFAULT_VOCAB_PADDING_SIZE; pad_vocab_size :95-97
# pads the whole vocabulary, which is then divided evenly over the TP ranks (:301-306).
VOCAB_PADDING: Final = 64
# vllm/engine/arg_utils.py:2958-3006 get_batch_defaults, `vllm serve` = OPENAI_API_SERVER: the tier is chosen by
# the NVML total in bytes; A100s (by name) and GB10 stay in the small tier whatever their memory.
# (min total GiB, max_num_batched_tokens, max_num_seqs); the 160 GiB tier is new since 0.21.0.
SERVE_BATCH_TIERS: Final = ((160, 16384, 1024), (70, 8192, 1024), (0, 2048, 256))
# The Python LLM class (UsageContext.LLM_CLASS) of the same function; public offline logs use it.
LLM_CLASS_BATCH_TIERS: Final = ((160, 16384, 1024), (70, 16384, 1024), (0, 8192, 256))
MID_TIER_GIB: Final = 70
MID_TIER_EXCLUDED_NAMES: Final = ("a100",)
# vllm/config/vllm.py:588-609: max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens, with 2
# batches in flight under async scheduling (on by default, :1685-1719) on one pipeline stage. 0.11-0.19 reserved
# one batch: min(window - 1 + max_num_batched_tokens, max_model_len) (0.11.0 kv_cache_interface.py).
IN_FLIGHT_BATCHES: Final = 2
IN_FLIGHT_BATCHES_BEFORE_0_20: Final = 1
# kv_cache_planning.py:1533-1542: the BlockPool's null block is taken before the capacity check (0.33).
NULL_BLOCKS: Final = 1
# kv_cache_planning.py:416-556: layer groups of hybrid models use min(layers per type), or max when max < 1.5 min.
GROUP_SIZE_MAX_RATIO: Final = 1.5
# vllm/envs.py:2219 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default "1" from the 0.20.0 wheel on ("0" before):
# the CUDA-graph estimate is subtracted from the KV budget (gpu_worker.py:772-797).
CUDAGRAPH_COUNTED_SINCE: Final = "0.20.0"
# KV cache bytes per element (utils/torch_utils.py:40-46): auto = the model dtype (bf16/fp16), fp8 stored as uint8.
VLLM_KV_DTYPE_BYTES: Final[dict[str, float]] = {"auto": 2, "bf16": 2, "fp16": 2, "fp8": 1, "fp8_e4m3": 1,
                                                 "fp8_e5m2": 1}

# Estimates, not vLLM source (vLLM measures the peak in its profile run; research §5, tests/serving_datapoints.py).
# profile_run (vllm/v1/worker/gpu_model_runner.py; V0 worker/model_runner.py alike) runs the forward pass over mnbt
# tokens, frees its transients, then _dummy_sampler_run on S = min(max_num_seqs, mnbt) rows of fp32 logits over the
# whole vocabulary (gathered on every TP rank) with top-k/top-p set, which sorts them
# (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: values + int64 indices, softmax, cumsum, scatter): the
# peak is the larger of the two, for dense and MoE models alike. Forward: mnbt x (4 H + 3 I / tp) x 2 B (research
# §5). A MoE layer's MLP term becomes the fused_moe caches: fused_experts_impl
# (model_executor/layers/fused_moe/fused_moe.py) allocates intermediate_cache1 (M, top_k, 2 I/tp), cache2
# (M x top_k, I/tp) and cache3 (M, top_k, H) in the activation dtype, M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE):
# mnbt x (4 H + top_k x (3 I / tp + H)) x 2 B. The MXFP4 backends' own workspaces are not modelled: no log shows
# them (gpt-oss-20b and -120b, 32 vs 128 experts, measured the same 7.38 GiB). Sampler: S x V x
# SAMPLER_BYTES_PER_LOGIT, anchored on vLLM #23278 (gpt-oss-120b, H100, 8192 tokens / 1024 sequences, vocabulary
# 201 088: 71.27 - 65.97 + 2.14 = 7.44 GiB activation + non-torch, the non-torch share counted on its own) = 38.3 B,
# about ten fp32 copies of the logits. The v0.11.0 H100 table (code index 27349653019) gives 38.3-38.6 B for dense
# models too (Qwen3-0.6B 5.56, Qwen3-32B 5.64, Llama-3.1-8B 4.76, Llama-3.3-70B-FP8 4.84 GiB at 1024 sequences),
# where the earlier dense formula (forward + S x V x 4 B x 3) said 1.9-3.2 GiB (-43 .. -65 %). Error of this
# estimate on every logged peak: -17 % (Qwen2.5-72B AWQ TP2, V0) .. +9 % (tests/serving_datapoints.py).
ACTIVATION_ERROR_PERCENT: Final = 30
# Non-torch memory (NCCL, cuBLAS workspaces): 0.03-0.13 GiB on one GPU, 0.32-0.55 GiB under TP2 in the logs.
NON_TORCH_GIB_SINGLE: Final = 0.1
NON_TORCH_GIB_TP: Final = 0.3
SAMPLER_ANCHOR_GIB: Final = 7.44 - NON_TORCH_GIB_SINGLE  # vLLM #23278, activation only
SAMPLER_ANCHOR_LOGITS: Final = 1024 * 201088  # max_num_seqs x gpt-oss vocabulary (a multiple of 64: unpadded)
SAMPLER_BYTES_PER_LOGIT: Final = SAMPLER_ANCHOR_GIB * GIB / SAMPLER_ANCHOR_LOGITS
# top_k when a MoE shape does not publish experts_active: 8, the most common in engine/models/data (DeepSeek-V3,
# Qwen3 MoE, GLM-4.5, Kimi K2, MiniMax-M2).
ASSUMED_MOE_TOP_K: Final = 8
# CUDA graphs: 0.67 GiB (Mistral-7B), 2.02 GiB (Llama-3.1-8B-INT8), ~2.4 GiB (Yi-34B TP4) measured; 0 when eager.
CUDAGRAPH_GIB_SMALL: Final = 1.0  # one GPU, up to 14B parameters
CUDAGRAPH_GIB_LARGE: Final = 2.0
CUDAGRAPH_SMALL_MAX_PARAMS_B: Final = 14.0

# -- MXFP4 MoE experts (vllm/model_executor/layers/fused_moe/oracle/mxfp4.py:837-917) -------------------------
# 4-bit E2M1 values + one E8M0 scale byte per 32 (OCP MX block): 4.25 bits per weight.
MXFP4_BITS: Final = 4.25
# backend -> (intermediate multiple, hidden multiple); hidden 1 = unchanged.
MXFP4_PADDING: Final[dict[str, tuple[int, int]]] = {
    "marlin": (128, 256),
    "trtllm": (128, 256),
    "cutlass": (128, 128),
    "flashinfer-cutlass": (128, 128),
    "deepgemm": (128, 128),
    "rocm": (256, 256),
    "emulation": (32, 32),
    "triton": (64, 1),
    # The OAI Triton kernels on Hopper: mxfp4.py:901 rounds intermediate to 64, then triton_kernels' Hopper value
    # layout (mxfp4_utils.py:65-130 _swizzle_mxfp4, not in vLLM's source) pads further. A hidden size padded to
    # 256 reproduces both H100 logs of vLLM 0.11.0 (code index 27349653019): gpt-oss-120b 64.38 GiB (predicted
    # 64.6), gpt-oss-20b 13.47 GiB (13.4); the rounding rule alone gives 60.7 / 12.8 GiB. Fitted, not read.
    "triton-hopper": (64, 256),
}
# The backend vLLM picks for gpt-oss's MXFP4 experts by card architecture (0.34.0 fused_moe/oracle/mxfp4.py:421-
# 457 _get_priority_backends_for_gpt_oss, experts/gpt_oss_triton_kernels_moe.py:41-63): Triton on Hopper (SM90;
# 0.10.1 still used Marlin there: vLLM #23278 logs the Marlin warning, 65.97 GiB), FlashInfer TRT-LLM on datacenter
# Blackwell and Marlin on Ampere, Ada and consumer Blackwell (both 128 / 256), AITER on MI300X (CDNA 3).
MXFP4_BACKEND_BY_ARCHITECTURE: Final[dict[str, str]] = {"hopper": "triton-hopper", "cdna 3": "rocm"}
MXFP4_DEFAULT_BACKEND: Final = "marlin"
MXFP4_TRITON_ON_HOPPER_SINCE: Final = "0.11.0"

# -- llama.cpp 0c1e57098 --------------------------------------------------------------------------------------
# common/common.h:483 fit target `1024 * 1024*1024` per device (-fitt); :480 -fitc 4096; :453-454 -b 2048 -ub 512.
FIT_MARGIN_MIB: Final = 1024
FIT_MIN_CONTEXT: Final = 4096
N_BATCH: Final = 2048
N_UBATCH: Final = 512
# src/llama-context.cpp:290-305 and llama-kv-cache-iswa.cpp:68-104: cells are padded to 256.
CELL_PADDING: Final = 256
# tools/server/server.cpp:156-160: -np auto = 4 slots sharing one unified cache.
SERVER_AUTO_SLOTS: Final = 4
# ggml/src/ggml-common.h block structs: bytes per element of a cache type (q8_0 = 34 B / 32, q4_0 = 18 B / 32).
LLAMA_CPP_KV_TYPE_BYTES: Final[dict[str, float]] = {
    "f32": 4, "f16": 2, "bf16": 2, "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32, "q5_0": 22 / 32,
    "q5_1": 24 / 32, "iq4_nl": 18 / 32,
}
# Compute buffer (not a formula in llama.cpp: sched_reserve measures a worst-case graph, llama-context.cpp:700-745).
# With flash attention (-fa auto, on for CUDA) logs show 0.17-0.76 GiB; the upper end of research §6.4's
# 0.3-0.8 GiB is used. Without it the KQ matrix n_ctx x n_ubatch x n_head x 4 B is added to 96 MiB (logdetective
# PR #106: 164 MiB at 2048, 2144 MiB at 32768 for 32 heads).
COMPUTE_FA_MIB: Final = 800
COMPUTE_NO_FA_BASE_MIB: Final = 96
