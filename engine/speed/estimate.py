"""How fast one layout generates: single-stream decode at a context, per-user and aggregate decode at a concurrency,
prefill and time to first token, for llama.cpp's layer split and vLLM's tensor parallelism.

Decode is memory bound at small batches: every step reads the active weights and each sequence's KV cache. A
step also pays a fixed cost per layer (kernel launches, MoE routing) that bandwidth does not shrink, and that is
what makes a small model, or a large mixture of experts on many GPUs, run far below bandwidth / weights. Batching
spreads the weight read over the batch until compute (2 x active parameters FLOPs per token) takes over; prefill
is compute bound from the start.

The constants are fitted to the public runs in tests/data/speed_calibration.yaml (each with its URL);
benchmarks/bench_speed.py prints the error on them. The range given with each figure is that error's spread.
"""
from __future__ import annotations

from dataclasses import dataclass

ENGINES = ("vllm", "llama.cpp")

# Share of the card's memory bandwidth a decode step reaches. llama.cpp: the slope of step time over weight size
# between llama 7B F16 and Q8_0/Q4_0 on one RTX 4090 and one RTX 3090 (ggml-org/llama.cpp#4766) is 0.8-1.0 of
# the datasheet bandwidth; vLLM's CUDA-graph decode lands in the same band.
BANDWIDTH_EFFICIENCY = {"llama.cpp": 0.85, "vllm": 0.80}

# Fixed cost of one decode step per layer, milliseconds: what is left of the step time of those runs once the
# weight read is taken out (about 3 ms over 32 layers for llama.cpp in early 2024, under 1 ms with CUDA graphs
# in 2025, ggml-org/llama.cpp#15802).
LAYER_MS = {"llama.cpp": 0.05, "vllm": 0.05}
# A mixture-of-experts layer adds routing, a gather and many small matmuls: gpt-oss-120b on one A100 decodes at
# 90 tok/s under vLLM (vllm-project/vllm#22331) where its ~3 GB of active weights would allow 600.
MOE_LAYER_MS = {"llama.cpp": 0.08, "vllm": 0.25}
# vLLM tensor parallelism: two all-reduces per layer per step; cost per layer by interconnect, milliseconds
# (gpt-oss-120b on 2 A100 NVLink: 90 -> 77 tok/s, vllm-project/vllm#22331). At batch 1 an all-reduce moves a few
# kilobytes, so latency, not link bandwidth, sets it, and PCIe costs little more than NVLink: Llama 3.1 70B AWQ on
# 2 and 4 RTX 3090 Ti over PCIe 4.0 decodes at 30 and 46 tok/s (vllm-project/vllm#6955), 4.8 and 5.5 ms per step
# above the weight read and the layers' fixed cost, 0.06 ms per layer at TP2 (0.15 put both runs 20-40 % low). A
# bridge joins only pairs, so a set of four talks over PCIe: priced as PCIe.
ALLREDUCE_LAYER_MS = {"nvswitch": 0.05, "nvlink": 0.06, "infinity-fabric": 0.07, "nvlink-bridge": 0.065,
                      "pcie": 0.065}
# llama.cpp layer split: one token passes every card in turn, so a set reads the same bytes per token as one card
# and adds a hand-over per boundary, milliseconds.
HOP_MS = 0.2

# Decode compute per extra sequence: the share of dense tensor TFLOPS a small-batch decode matmul reaches. The
# llama.cpp figure reads ggml-org/llama.cpp#15802 (llama 8B Q4_0 on an RTX 3090: 155, 277, 469, 571 tok/s at 1,
# 2, 4, 8 sequences: each sequence past the first adds about 0.7-1.4 ms).
DECODE_COMPUTE_EFFICIENCY = {"llama.cpp": 0.18, "vllm": 0.45}
# Prefill: the share of dense tensor TFLOPS reached on a long prompt. llama.cpp: llama 7B F16 pp512 11,048 tok/s
# on an RTX 4090 (ggml-org/llama.cpp#4766) is 2 x 6.74e9 x 11,048 = 149 TFLOPS of its 165.
PREFILL_EFFICIENCY = {"llama.cpp": 0.80, "vllm": 0.65}
# Quantized weights are dequantized on the fly: prefill of llama 7B Q4_0 on an RTX 4090 runs at 7,980 tok/s
# against 11,048 for F16 (ggml-org/llama.cpp#4766).
QUANTIZED_PREFILL_FACTOR = 0.72
# Tensor parallelism splits prefill too, at this efficiency per added GPU; a layer split does not speed up one
# prompt (pipeline parallelism only helps many prompts at once).
TP_PREFILL_EFFICIENCY = 0.8

# Decode slows where dequantizing costs more than reading: the k-quants below 4 bits (llama 7B Q2_K decodes at
# 92.7 tok/s on an RTX 3090 against 121.8 for the larger Q4_0, ggml-org/llama.cpp#4766). Multiplies the time of
# the weight read; formats not named read at bandwidth.
DEQUANT_FACTOR = {"q2_k": 2.4, "q3_k_s": 2.2, "q3_k_m": 2.0, "q3_k_l": 1.9, "iq2_xxs": 2.4, "iq2_xs": 2.4,
                  "iq3_xxs": 2.0, "iq3_s": 2.0, "iq1_s": 2.4}

# The range around an estimate: the spread of the calibration error (benchmarks/bench_speed.py), rounded out.
RANGE_LOW, RANGE_HIGH = 0.75, 1.25


@dataclass(frozen=True, slots=True)
class Hardware:
    """What a card brings to speed (catalog.schema.Card's fields)."""

    bandwidth_gbps: float
    fp16_tflops: float | None
    fp8_tflops: float | None
    interconnect: str


@dataclass(frozen=True, slots=True)
class Workload:
    """The model as one decode step sees it, and the request's sequence."""

    engine: str
    count: int
    weights_gb: float  # weights read per token, whole model (MoE: shared + active experts)
    active_params_b: float  # parameters one token multiplies (MoE: the active ones)
    layers: int
    moe: bool
    kv_bytes_per_token: float  # the layers that keep every token, all KV heads (decimal bytes)
    context_tokens: int
    users: int = 1
    prompt_tokens: int | None = None
    weight_format: str | None = None  # a formats.yaml name ("q4_k_m") or None for 16-bit / safetensors
    quantized: bool = False  # weights below 16 bits (dequantized during prefill)
    fp8_compute: bool = False  # FP8 weights on a card with FP8 tensor cores
    # Sliding-window (or chunked) layers read at most their window: bytes per token over those layers, and the window
    window_kv_bytes_per_token: float = 0.0
    window_tokens: int = 0
    state_bytes: float = 0.0  # linear-attention layers' fixed state per sequence, read and written every step

    def attended_bytes(self, tokens: float) -> float:
        """KV bytes over the tokens a sequence of `tokens` attends to: every token of the full layers, the window
        of the sliding ones."""
        return self.kv_bytes_per_token * tokens + self.window_kv_bytes_per_token * min(tokens, self.window_tokens)

    def kv_read_bytes(self, tokens: float) -> float:
        """What one sequence of `tokens` reads per decode step besides the weights: its KV cache and its state."""
        return self.attended_bytes(tokens) + self.state_bytes


@dataclass(frozen=True, slots=True)
class SpeedEstimate:
    """The JSON `speed` object (DESIGN.md contract v3)."""

    engine: str
    decode_tok_s: float  # one stream at the request's context
    decode_tok_s_per_user: float  # each of `users` streams at once
    aggregate_tok_s: float  # all streams together
    prefill_tok_s: float | None  # None: the card's TFLOPS have no source in the catalog
    ttft_s: float | None
    ceiling_decode_tok_s: float  # bandwidth / weights: what no engine beats (Details)
    users: int
    prompt_tokens: int
    basis: str = "calibrated"  # "measured" when a published run of this model on this card is quoted
    low: float = 0.0
    high: float = 0.0
    source: str | None = None  # the published run's URL when basis is "measured"
    measured_context_tokens: int | None = None  # the context the run was measured at
    measured_tok_s: float | None = None  # the run's own figure

    def to_json(self) -> dict[str, object]:
        return {"engine": self.engine, "decode_tok_s": self.decode_tok_s,
                "decode_tok_s_per_user": self.decode_tok_s_per_user, "aggregate_tok_s": self.aggregate_tok_s,
                "prefill_tok_s": self.prefill_tok_s, "ttft_s": self.ttft_s,
                "ceiling_decode_tok_s": self.ceiling_decode_tok_s, "basis": self.basis,
                "range": [self.low, self.high], "users": self.users, "prompt_tokens": self.prompt_tokens,
                "source": self.source}


def _tensor_parallel(work: Workload) -> int:
    """GPUs that split every matmul: vLLM's tensor parallelism; llama.cpp's layer split reads on one at a time."""
    return work.count if work.engine == "vllm" else 1


def ceiling_decode(hw: Hardware, work: Workload) -> float:
    """Bandwidth over the weights one token reads, on the GPUs that read at once (never x count for a layer
    split)."""
    return hw.bandwidth_gbps * _tensor_parallel(work) / max(work.weights_gb, 1e-9)


def step_ms(hw: Hardware, work: Workload, batch: int) -> float:
    """One decode step for `batch` sequences at the request's context, milliseconds."""
    engine, tp = work.engine, _tensor_parallel(work)
    bandwidth = hw.bandwidth_gbps * BANDWIDTH_EFFICIENCY[engine] * tp  # GB/s over the GPUs reading at once
    weights_ms = work.weights_gb / bandwidth * 1000 * DEQUANT_FACTOR.get(work.weight_format or "", 1.0)
    # The KV cache streams in long contiguous reads (flash attention) at the card's full bandwidth: llama 8B
    # Q4_0 at a 32k context decodes at 98 tok/s on an RTX 4090 (ggml-org/llama.cpp#17505), which the weights'
    # efficiency would put at 85.
    kv_ms = batch * work.kv_read_bytes(work.context_tokens) / 1e9 / (hw.bandwidth_gbps * tp) * 1000
    fixed_ms = work.layers * (LAYER_MS[engine] + (MOE_LAYER_MS[engine] if work.moe else 0.0))
    if engine == "vllm" and tp > 1:
        fixed_ms += work.layers * ALLREDUCE_LAYER_MS.get(hw.interconnect, ALLREDUCE_LAYER_MS["pcie"]) \
            * (1 + 0.25 * (tp - 2))
    if engine == "llama.cpp" and work.count > 1:
        fixed_ms += HOP_MS * (work.count - 1)
    memory_ms = weights_ms + kv_ms
    tflops = _tflops(hw, work)
    if tflops is None or batch <= 1:
        return memory_ms + fixed_ms
    # Past the first sequence each adds its matmuls; below the roofline they overlap the weight read.
    compute_ms = 2 * work.active_params_b * 1e9 * batch / (tflops * 1e12 * tp
                                                           * DECODE_COMPUTE_EFFICIENCY[engine]) * 1000
    return max(memory_ms, compute_ms) + fixed_ms


def _tflops(hw: Hardware, work: Workload) -> float | None:
    if work.fp8_compute and hw.fp8_tflops:
        return hw.fp8_tflops
    return hw.fp16_tflops


def prefill_tok_s(hw: Hardware, work: Workload, prompt_tokens: int) -> float | None:
    """Prompt tokens per second: 2 x active parameters FLOPs per token plus attention over the prompt so far."""
    tflops = _tflops(hw, work)
    if tflops is None:
        return None
    efficiency = PREFILL_EFFICIENCY[work.engine] * (QUANTIZED_PREFILL_FACTOR if work.quantized else 1.0)
    tp = _tensor_parallel(work)
    speedup = 1 + TP_PREFILL_EFFICIENCY * (tp - 1)
    # Attention: QK^T and AV over on average half the prompt, per layer (the KV width stands in for the model's):
    # 4 FLOPs x the K elements (KV bytes / 2 for K / 2 bytes) per token attended.
    attention_flops = work.attended_bytes(prompt_tokens / 2)
    flops_per_token = 2 * work.active_params_b * 1e9 + attention_flops
    return tflops * 1e12 * efficiency * speedup / flops_per_token


def estimate(hw: Hardware, work: Workload) -> SpeedEstimate:
    """The calibrated speed of one layout for the request (see the module docstring)."""
    users = max(work.users, 1)
    single = 1000 / step_ms(hw, work, 1)
    per_user = single if users == 1 else 1000 / step_ms(hw, work, users)
    prompt = work.prompt_tokens if work.prompt_tokens is not None else work.context_tokens
    prefill = prefill_tok_s(hw, work, prompt)
    ttft = prompt / prefill if prefill else None
    ceiling = ceiling_decode(hw, work)
    single = min(single, ceiling)
    per_user = min(per_user, single)
    return SpeedEstimate(engine=work.engine, decode_tok_s=single, decode_tok_s_per_user=per_user,
                         aggregate_tok_s=per_user * users, prefill_tok_s=prefill, ttft_s=ttft,
                         ceiling_decode_tok_s=ceiling, users=users, prompt_tokens=prompt,
                         low=single * RANGE_LOW, high=single * RANGE_HIGH)
