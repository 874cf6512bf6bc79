"""The serving check against public engine startup logs (research: research/serving_datapoints.yaml).

Each row compares one logged figure with what engine.serving predicts from the other figures of the same log.
tests/test_serving.py asserts every row within its tolerance and that docs/serving.md carries this table;
`python -m tests.serving_datapoints` prints the table for the docs.

Tolerances: "exact" rows differ only by the log's own rounding (GiB printed with 2 decimals: +-0.005 GiB on
the input, half a unit of the last printed digit on the output); estimate rows use the error the research measured.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from catalog.loader import load_catalog
from engine.models.registry import ModelShape, default_registry
from engine.serving import kv, memory, weights
from engine.serving.constants import ACTIVATION_ERROR_PERCENT, GIB, MIB
from engine.serving.memory import ModelDims
from engine.serving.outcome import Gpu, ServingCheck, ServingModel
from engine.serving.reverse import typical_model
from engine.serving.review import serving_checkpoint
from engine.serving.vllm import BEFORE_0_20, VllmBudget, settings_for_version, vllm_check
from engine.serving.weights import ResidentWeights
from engine.sizing.rule import SizeRequest, resolve

REGISTRY = default_registry()
GPURENTHUB = load_catalog("gpurenthub").catalog

# Shapes of models that are not in engine/models/data.yaml, from the datapoint's own arithmetic.
# deepseek-ai/DeepSeek-V2-Lite config.json: 27 layers, 16 heads, kv_lora_rank 512, qk_rope_head_dim 64
# (research §3.2; vLLM #15871 and PR #20665 logs reproduce 576 elements per token per layer).
DEEPSEEK_V2_LITE = ModelShape(id="deepseek-v2-lite", name="DeepSeek-V2-Lite", params_b=15.7, active_params_b=2.4,
                              layers=27, attention_heads=16, kv_heads=16, head_dim=None, mla_kv_lora_rank=512,
                              mla_qk_rope_head_dim=64, context_max=163840)
# vLLM #25350: the model is not named; 49 139 B per token in fp8 = 48 layers x 2 x 4 KV heads x 128 x 1 B.
FP8_KV_MODEL = ModelShape(id="fp8-kv-48-layer", name="48-layer model", params_b=32, active_params_b=32, layers=48,
                          attention_heads=None, kv_heads=4, head_dim=128)
# /work/shared/reference/models.yaml (config.json copies): the sizes the weights and activation estimates read.
LLAMA_31_8B_DIMS = ModelDims(hidden_size=4096, intermediate_size=14336, vocab_size=128256)
QWEN25_72B_DIMS = ModelDims(hidden_size=8192, intermediate_size=29568, vocab_size=152064)
GPT_OSS_120B = {"layers": 36, "experts": 128, "hidden": 2880, "intermediate": 2880, "vocab": 201088,
                "heads": 64, "kv_heads": 8, "head_dim": 64}

# CUDA totals printed in the logs (or in a log of the same card).
A100_40GB_GIB = 39.38  # vLLM #16570, used by the datapoint's own check
H100_GIB = 79.19       # "Free memory on device (78.66/79.19 GiB)" (llava log) = catalog h100-sxm 81089 MiB
GIB_ROUNDING = 0.005   # half a unit of a GiB figure printed with two decimals


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    source: str
    quantity: str
    logged: float
    predicted: float
    tolerance_percent: float
    basis: str  # what the prediction starts from

    @property
    def error_percent(self) -> float:
        return (self.predicted - self.logged) / abs(self.logged) * 100

    @property
    def within(self) -> bool:
        return abs(self.error_percent) <= self.tolerance_percent + 1e-9


def _gib(value: float) -> float:
    return value * GIB


def _rounding_percent(printed: float, unit: float = GIB_ROUNDING) -> float:
    return unit / abs(printed) * 100


def _shape(model_id: str) -> ModelShape:
    shape = REGISTRY.get(model_id)
    assert shape is not None, model_id
    return shape


# -- vLLM KV arithmetic from the logged "Available KV cache memory" ---------------------------------------------

def _tokens_rows(row_id: str, source: str, shape: ModelShape, tp: int, kv_dtype: str, available_gib: float,
                 max_model_len: int, tokens: int, concurrency: float) -> list[Row]:
    block = kv.bytes_per_block(shape, tp, kv_dtype)
    blocks = kv.kv_blocks(_gib(available_gib), block)
    per_request = kv.blocks_per_request(shape, max_model_len, 8192)
    tolerance = _rounding_percent(available_gib)
    return [
        Row(row_id, source, "KV cache tokens", tokens, blocks * 16, tolerance, f"logged {available_gib} GiB"),
        Row(row_id, source, "max concurrency", concurrency, kv.max_concurrency(blocks, per_request),
            tolerance + _rounding_percent(concurrency), f"logged {available_gib} GiB"),
    ]


def llama_31_8b_a100_rows() -> list[Row]:
    source = "code index 34342936495 (vLLM 0.15.1)"
    rows = _tokens_rows("llama-3.1-8b-a100-40gb", source, _shape("llama-3.1-8b"), 1, "auto", 19.28, 131072,
                        157936, 1.20)
    model = ServingModel(_shape("llama-3.1-8b"), ResidentWeights.from_precision(
        8.03, 2, vocab_size=128256, hidden_size=4096), LLAMA_31_8B_DIMS)
    settings = replace(BEFORE_0_20, usage="llm", enforce_eager=True)
    gpu = Gpu("A100-SXM4-40GB", round(A100_40GB_GIB * 1024))
    check = vllm_check(model, gpu, 131072, settings=settings)
    budget_weights = weights.vllm_weights_bytes_per_gpu(model.weights, 1) / GIB
    overhead = check.runtime_overhead_gb_per_gpu * 1e9 / GIB
    rows += [
        Row("llama-3.1-8b-a100-40gb", source, "weights GiB", 14.99, budget_weights, 1.0, "8.03 B x 2 B"),
        Row("llama-3.1-8b-a100-40gb", source, "activation + non-torch GiB", 1.17, overhead, 30.0,
            "estimate (research §5)"),
        Row("llama-3.1-8b-a100-40gb", source, "max concurrency end to end", 1.20, check.max_concurrency or 0.0, 3.0,
            "card memory 39.38 GiB"),
    ]
    return rows


def gemma_3_1b_rows() -> list[Row]:
    """vLLM 0.13.0, LLM class, one batch in flight: 4 full + 22 sliding layers in groups of 4 (2 padding layers)."""
    shape = _shape("gemma-3-1b")
    block = kv.bytes_per_block(shape, 1, "auto")
    blocks = kv.kv_blocks(_gib(25.39), block)
    per_request = kv.blocks_per_request(shape, 2048, 8192, in_flight_batches=1)
    source = "code index 45665312624 (vLLM 0.13.0)"
    return [
        Row("gemma-3-1b-it", source, "max concurrency (sliding window)", 461.21,
            kv.max_concurrency(blocks, per_request), _rounding_percent(25.39) + _rounding_percent(461.21),
            "logged 25.39 GiB"),
        Row("gemma-3-1b-it", source, "padding layers", 2, kv.layer_groups(shape).padded_layers(shape), 0.0,
            "layer groups"),
    ]


def deepseek_v2_lite_rows() -> list[Row]:
    """TP2 x PP2 on 4x L4: stage 0 holds 14 layers (12.13 GiB), stage 1 13 (11.33 GiB); the minimum counts."""
    stages = ((14, 12.13), (13, 11.33))
    blocks = min(kv.kv_blocks(_gib(gib), kv.bytes_per_block(replace(DEEPSEEK_V2_LITE, layers=layers), 2, "auto"))
                 for layers, gib in stages)
    source = "https://github.com/vllm-project/vllm/pull/20665"
    tolerance = _rounding_percent(12.13)
    return [
        Row("deepseek-v2-lite-tp2-pp2", source, "KV cache tokens (MLA, TP2)", 807792, blocks * 16, tolerance,
            "logged 12.13 / 11.33 GiB"),
        Row("deepseek-v2-lite-tp2-pp2", source, "max concurrency", 788.86, blocks / 64,
            tolerance + _rounding_percent(788.86), "logged 12.13 / 11.33 GiB"),
    ]


def deepseek_v2_lite_needed_rows() -> list[Row]:
    needed = kv.blocks_per_request(DEEPSEEK_V2_LITE, 32768, 8192) * kv.bytes_per_block(DEEPSEEK_V2_LITE, 1, "auto")
    return [Row("deepseek-v2-lite-chat", "https://github.com/vllm-project/vllm/issues/15871",
                "KV GiB needed at 32768", 0.95, needed / GIB, _rounding_percent(0.95), "MLA 576 x 2 B x 27 layers")]


def qwen3_14b_rows() -> list[Row]:
    return _tokens_rows("qwen3-14b", "https://github.com/LMCache/LMCache/issues/1739", _shape("qwen3-14b"), 1,
                        "auto", 6.51, 32768, 42656, 1.30)


def qwen3_235b_tp4_rows() -> list[Row]:
    """4 KV heads over 4 ranks; the log's "Available" is one rank's, the blocks the minimum over ranks (+1.1 %)."""
    shape = _shape("qwen3-235b-a22b")
    blocks = kv.kv_blocks(_gib(8.11), kv.bytes_per_block(shape, 4, "auto"))
    return [Row("qwen3-235b-a22b-fp8-tp4", "https://github.com/vllm-project/vllm/issues/21348",
                "KV cache tokens (TP4)", 178880, blocks * 16, 1.5, "logged 8.11 GiB (one rank)")]


def fp8_kv_rows() -> list[Row]:
    shape = FP8_KV_MODEL
    block = kv.bytes_per_block(shape, 1, "fp8")
    blocks = kv.kv_blocks(_gib(10.55), block)
    short = kv.kv_blocks(_gib(5.59), block)
    needed = kv.blocks_per_request(shape, 221000, 8192) * block
    source = "https://github.com/vllm-project/vllm/issues/25350"
    return [
        Row("fp8-kv-48-layer", source, "KV cache tokens (fp8)", 230528, blocks * 16, _rounding_percent(10.55),
            "logged 10.55 GiB"),
        Row("fp8-kv-48-layer", source, "max concurrency", 2.31, kv.max_concurrency(blocks, math.ceil(100000 / 16)),
            _rounding_percent(10.55) + _rounding_percent(2.31), "logged 10.55 GiB"),
        Row("fp8-kv-48-layer", source, "KV GiB needed at 221000", 10.12, needed / GIB, _rounding_percent(10.12),
            "fp8 = 1 B"),
        Row("fp8-kv-48-layer", source, "estimated max model len", 122080,
            kv.max_model_len_for_blocks(shape, short, 8192, 10_000_000) or 0, _rounding_percent(5.59),
            "logged 5.59 GiB"),
    ]


def llava_mistral_rows() -> list[Row]:
    """vLLM ~0.10.2; the log prints the KV bytes exactly and every part of the budget."""
    shape = _shape("mistral-7b-v0.2")
    block = kv.bytes_per_block(shape, 1, "auto")
    blocks = kv.kv_blocks(59_212_694_937, block)
    budget = VllmBudget(requested=memory.requested_bytes(round(H100_GIB * 1024), 0.9), weights=_gib(14.08),
                        activation=_gib(1.97), non_torch=_gib(0.07), cudagraph=0.0)
    source = "code index 34680831065 (vLLM ~0.10.2)"
    return [
        Row("llava-mistral-7b", source, "KV cache tokens", 451744, blocks * 16, 0.0, "logged 59212694937 B"),
        Row("llava-mistral-7b", source, "max concurrency", 110.29, kv.max_concurrency(blocks, 4096 // 16),
            _rounding_percent(110.29), "logged 59212694937 B"),
        Row("llava-mistral-7b", source, "available KV GiB", 55.15, budget.available_kv / GIB,
            4 * _rounding_percent(55.15), "logged parts, total 79.19 GiB x 0.9"),
    ]


def qwen25_72b_awq_rows() -> list[Row]:
    """V0 0.7.2 on 2x A40: AWQ body at 0.5 + 2.5/128 B (scales and zeros per group of 128), fp16 vocabulary."""
    matrix = 152064 * 8192
    body_params = 72.706e9 - 2 * matrix
    resident = ResidentWeights(body_bytes=body_params * (0.5 + 2.5 / 128), embedding_bytes=matrix * 2,
                               lm_head_bytes=matrix * 2, vocab_size=152064)
    activation = memory.activation_peak_bytes(QWEN25_72B_DIMS, 32768, 256, 2)
    source = "code index 39735714735 (vLLM 0.7.2)"
    return [
        Row("qwen2.5-72b-awq-tp2", source, "weights GiB per GPU (TP2)", 19.3952,
            weights.vllm_weights_bytes_per_gpu(resident, 2) / GIB, 2.0, "AWQ bytes by part"),
        Row("qwen2.5-72b-awq-tp2", source, "activation GiB", 5.66, activation / GIB, 30.0, "estimate (research §5)"),
    ]


def llama_31_8b_3090_rows() -> list[Row]:
    """V0 without chunked prefill profiles max_model_len tokens (20 000 and 29 000) over 256 sequences."""
    source = "https://github.com/vllm-project/vllm/issues/10517"
    return [Row("llama-3.1-8b-rtx3090", source, f"activation GiB at {tokens}", logged,
                memory.activation_peak_bytes(LLAMA_31_8B_DIMS, tokens, 256, 1) / GIB, 30.0, "estimate (research §5)")
            for tokens, logged in ((20000, 2.07), (29000, 2.99))]


def llama_31_8b_3090_kv_rows() -> list[Row]:
    """V0 prints "GPU blocks": 1952 from 3.81 GiB at 20k; 1478 blocks (23 648 tokens) at 29k hold no request."""
    shape = _shape("llama-3.1-8b")
    block = kv.bytes_per_block(shape, 1, "auto")
    source = "https://github.com/vllm-project/vllm/issues/10517"
    rows = []
    for gib, logged, context in ((3.81, 1952, 20000), (2.89, 1478, 29000)):
        blocks = kv.kv_blocks(_gib(gib), block)
        rows.append(Row("llama-3.1-8b-rtx3090", source, f"KV blocks at {context}", logged, blocks,
                        _rounding_percent(gib), f"logged {gib} GiB"))
    return rows


def gpt_oss_rows() -> list[Row]:
    g = GPT_OSS_120B
    attention = g["layers"] * g["hidden"] * (2 * g["heads"] * g["head_dim"] + 2 * g["kv_heads"] * g["head_dim"]) * 2
    vocab = g["vocab"] * g["hidden"] * 2

    def resident(backend: str) -> float:
        experts = weights.mxfp4_expert_bytes(layers=g["layers"], experts=g["experts"], hidden=g["hidden"],
                                             intermediate=g["intermediate"], backend=backend)
        parts = ResidentWeights(body_bytes=experts + attention, embedding_bytes=vocab, lm_head_bytes=vocab,
                                vocab_size=g["vocab"])
        return weights.vllm_weights_bytes_per_gpu(parts, 1) / GIB

    return [
        Row("gpt-oss-120b-marlin", "https://github.com/vllm-project/vllm/issues/23278", "weights GiB (MXFP4 Marlin)",
            65.97, resident("marlin"), 1.0, "MXFP4 padding 128/256"),
        Row("gpt-oss-120b-triton", "https://github.com/vllm-project/vllm/issues/33155", "weights GiB (MXFP4 Triton)",
            64.38, resident("triton-hopper"), 1.0, "Triton on Hopper 64/256"),
    ]


# -- vLLM 0.11.0 on one H100 (79.18 GiB, util 0.9 unless said, max-model-len 16000, block size 128) ---------------
# The llm-d config explorer's measured table (code index 27349653019; its first version is the file below).
LLM_D_H100 = "https://github.com/llm-d/llm-d-benchmark/blob/main/config_explorer/empirical-vllm-memory-results.md"
H100_0_11_GIB = 79.18
# (row id, registry id, logged "Model loading took" GiB, logged "Available KV cache memory" GiB)
H100_0_11_ROWS = (("qwen3-32b-h100-v0.11", "qwen3-32b", 61.03, 4.45),
                  ("llama-3.1-8b-h100-v0.11", "llama-3.1-8b", 14.99, 51.38),
                  ("qwen3-0.6b-h100-v0.11", "qwen3-0.6b", 1.12, 64.45))


def answer_model(model_id: str) -> ServingModel:
    """The model as an answer's serving check reads it (engine.serving.review): BF16 release, registry sizes."""
    resolved = resolve(SizeRequest(model=model_id, precision="bf16"), GPURENTHUB.sizing)
    return serving_checkpoint(resolved)[0]


def h100_0_11_rows() -> list[Row]:
    """The whole prediction from the registry under the 0.10-0.19 accounting (--vllm-version 0.11): the weights
    the check loads, the activation estimate at 8192 tokens / 1024 sequences, non-torch 0.1 GiB, no CUDA graphs.
    The newest release (0.34) sizes the same layouts from measured memory; no public 0.34 log was found to check it
    against, so docs/serving.md shows the two predictions side by side."""
    rows = []
    for row_id, model_id, logged_weights, logged_kv in H100_0_11_ROWS:
        model = answer_model(model_id)
        assert model.dims is not None
        resident = weights.vllm_weights_bytes_per_gpu(model.weights, 1)
        activation = memory.activation_peak_bytes(model.dims, 8192, 1024, 1)
        budget = VllmBudget(requested=0.9 * H100_0_11_GIB * GIB, weights=resident, activation=activation,
                            non_torch=memory.non_torch_bytes(1), cudagraph=0.0)
        rows.append(Row(row_id, LLM_D_H100, "weights GiB", logged_weights, resident / GIB, 1.0, "registry BF16"))
        rows.append(Row(row_id, LLM_D_H100, "available KV GiB (0.11 accounting)", logged_kv,
                        budget.available_kv / GIB, ACTIVATION_ERROR_PERCENT * activation / GIB / logged_kv,
                        "registry weights, activation estimate"))
    return rows


def gpt_oss_20b_h100_rows() -> list[Row]:
    """gpt-oss-20b (24 layers, 32 experts; config.json in engine/models/data) on the same H100, Triton backend."""
    g = dict(GPT_OSS_120B, layers=24, experts=32)
    attention = g["layers"] * g["hidden"] * (2 * g["heads"] * g["head_dim"] + 2 * g["kv_heads"] * g["head_dim"]) * 2
    vocab = g["vocab"] * g["hidden"] * 2
    experts = weights.mxfp4_expert_bytes(layers=g["layers"], experts=g["experts"], hidden=g["hidden"],
                                         intermediate=g["intermediate"], backend="triton-hopper")
    parts = ResidentWeights(body_bytes=experts + attention, embedding_bytes=vocab, lm_head_bytes=vocab,
                            vocab_size=g["vocab"])
    return [Row("gpt-oss-20b-h100", LLM_D_H100, "weights GiB (MXFP4 Triton)", 13.47,
                weights.vllm_weights_bytes_per_gpu(parts, 1) / GIB, 1.0, "Triton on Hopper 64/256")]


def mistral_small_32_h100_rows() -> list[Row]:
    """A vision LLM (Mistral3ForConditionalGeneration) on the same H100, util 0.95: the whole checkpoint as the
    check loads it (language model + Pixtral tower), the blocks of 128 tokens from the logged KV memory (1,444
    blocks; the log's 28.20 GiB is rounded, so one block of flooring is allowed) and the concurrency at 16000.
    Its logged activation peak (2.12 GiB) is below the check's estimate (4.9 GiB): docs/serving.md."""
    model = answer_model("mistral-small-3.2")
    page = 8 * kv.bytes_per_block(model.shape, 1, "auto")  # 128-token blocks
    blocks = kv.kv_blocks(_gib(28.20), page)
    one_block = 100 / 1444
    return [
        Row("mistral-small-3.2-h100-v0.11", LLM_D_H100, "weights GiB (with vision tower)", 44.76,
            weights.vllm_weights_bytes_per_gpu(model.weights, 1) / GIB, 1.0, "registry BF16"),
        Row("mistral-small-3.2-h100-v0.11", LLM_D_H100, "KV cache tokens (block 128)", 184832, blocks * 128,
            _rounding_percent(28.20) + one_block, "logged 28.20 GiB"),
        Row("mistral-small-3.2-h100-v0.11", LLM_D_H100, "max concurrency at 16000", 11.55,
            blocks / math.ceil(16000 / 128), _rounding_percent(28.20) + one_block + _rounding_percent(11.55),
            "logged 28.20 GiB"),
    ]


def qwen25_vl_72b_rows() -> list[Row]:
    """A vision LLM under TP4 on A100 40GB (V0 0.8.3): the whole checkpoint split over four ranks."""
    model = answer_model("qwen2.5-vl-72b")
    return [Row("qwen2.5-vl-72b-tp4-a100-40gb", "https://github.com/vllm-project/vllm/issues/16570",
                "weights GiB per GPU (TP4)", 34.43, weights.vllm_weights_bytes_per_gpu(model.weights, 4) / GIB, 1.0,
                "registry BF16")]


# -- the activation peak of MoE models and the sampler term it rests on ------------------------------------------

GPT_OSS_DIMS = ModelDims(hidden_size=2880, intermediate_size=2880, vocab_size=201088, moe=True, experts_active=4)
# v0.11.0 on one H100 (79.18 GiB), `vllm serve` defaults for the >= 70 GiB tier: 8192 tokens / 1024 sequences;
# "torch peak memory increase" per model (VLLM_LOGGING_LEVEL=DEBUG).
H100_TABLE = "code index 27349653019 (vLLM 0.11.0, H100)"
# Dense models of the same table, the whole estimate from the registry's config.json sizes (engine/models/data):
# at 1024 sequences the sampler term is their peak too (the forward passes are 0.1-1.5 GiB).
DENSE_H100_ROWS = (("qwen3-0.6b", "qwen3-0.6b", 1, 5.56), ("qwen3-32b-tp1", "qwen3-32b", 1, 5.64),
                   ("qwen3-32b-tp2", "qwen3-32b", 2, 5.64), ("llama-3.1-8b-h100", "llama-3.1-8b", 1, 4.76),
                   ("llama-3.3-70b-fp8-tp2", "llama-3.3-70b", 2, 4.84))


def _registry_dims(model_id: str) -> ModelDims:
    shape = _shape(model_id)
    assert shape.hidden_size and shape.intermediate_size and shape.vocab_size, model_id
    return ModelDims(shape.hidden_size, shape.intermediate_size, shape.vocab_size)


def moe_activation_rows() -> list[Row]:
    """gpt-oss-20b and -120b measured the same 7.38 GiB: the sampler over 1024 x 201 088 logits, not the experts;
    the dense models of the same table and #13882 follow the same sampler term."""
    estimate = memory.activation_peak_bytes(GPT_OSS_DIMS, 8192, 1024, 1) / GIB
    tolerance = float(ACTIVATION_ERROR_PERCENT)
    rows = [Row("gpt-oss-120b-marlin", "https://github.com/vllm-project/vllm/issues/23278",
                "activation + non-torch GiB (8192 / 1024)", 7.44, estimate + memory.non_torch_bytes(1) / GIB,
                tolerance, "MoE estimate (anchor)")]
    rows += [Row(row_id, H100_TABLE, "activation GiB (8192 / 1024)", 7.38, estimate, tolerance, "MoE estimate")
             for row_id in ("gpt-oss-20b-h100", "gpt-oss-120b-h100")]
    # 0.9 x 79.18 - 13.47 weights - activation - non-torch (0.11.0 does not subtract CUDA graphs) = 50.28 logged.
    budget = VllmBudget(requested=0.9 * 79.18 * GIB, weights=_gib(13.47), activation=estimate * GIB,
                        non_torch=memory.non_torch_bytes(1), cudagraph=0.0)
    rows.append(Row("gpt-oss-20b-h100", H100_TABLE, "available KV GiB", 50.28, budget.available_kv / GIB,
                    tolerance * 7.38 / 50.28, "logged weights, MoE estimate"))
    for row_id, model_id, tp, logged in DENSE_H100_ROWS:
        rows.append(Row(row_id, H100_TABLE, "activation GiB (8192 / 1024)", logged,
                        memory.activation_peak_bytes(_registry_dims(model_id), 8192, 1024, tp) / GIB, tolerance,
                        "estimate (sampler term)"))
    # V0 on an RTX 4060 at 4096 tokens / 256 sequences: 1.42 GiB, the forward pass only ~0.55 GiB.
    rows.append(Row("qwen2.5-7b-rtx4060", "https://github.com/vllm-project/vllm/issues/13882", "activation GiB",
                    1.42, memory.activation_peak_bytes(_registry_dims("qwen2.5-7b"), 4096, 256, 1) / GIB, tolerance,
                    "estimate (sampler term)"))
    # V0 (Dec 2024) `vllm serve meta-llama/Meta-Llama-3-8B`, H100: no chunked prefill at max_model_len 8192, so
    # max(8192, 2048) tokens / 256 sequences; the peak is 1.26 GiB at TP1 and TP2 alike: the gathered sampler, not
    # the forward pass that TP halves.
    for tp in (1, 2):
        rows.append(Row(f"llama-3-8b-h100-tp{tp}", "https://github.com/vllm-project/vllm/pull/10511",
                        "activation GiB (8192 / 256)", 1.26,
                        memory.activation_peak_bytes(LLAMA_31_8B_DIMS, 8192, 256, tp) / GIB, tolerance,
                        "estimate (sampler term)"))
    return rows


def qwen25_7b_rtx4060_rows() -> list[Row]:
    """V0: 0.7 x 8.00 GiB - 5.20 weights - 0.03 non-torch - 1.42 activation = -1.05 GiB: does not start."""
    budget = VllmBudget(requested=memory.requested_bytes(8 * 1024, 0.7), weights=_gib(5.20), activation=_gib(1.42),
                        non_torch=_gib(0.03), cudagraph=0.0)
    return [Row("qwen2.5-7b-rtx4060", "https://github.com/vllm-project/vllm/issues/13882", "available KV GiB",
                -1.05, budget.available_kv / GIB, 4 * _rounding_percent(1.05), "logged parts")]


# -- hybrid attention: Gated DeltaNet state pages in the KV pool ---------------------------------------------------

def _hybrid_rows(row_id: str, source: str, model_id: str, tp: int, kv_dtype: str, available_gib: float,
                 max_model_len: int, tokens: int, concurrency: float) -> list[Row]:
    """The attention block enlarged to hold a state page (engine.serving.kv.attention_block_size), groups of
    full-attention and state pages, two state pages per linear group and request (prefix caching on)."""
    shape = _shape(model_id)
    blocks = kv.kv_blocks(_gib(available_gib), kv.bytes_per_block(shape, tp, kv_dtype))
    per_request = kv.blocks_per_request(shape, max_model_len, 8192, tp=tp, kv_dtype=kv_dtype)
    block = kv.attention_block_size(shape, tp, kv_dtype)
    tolerance = _rounding_percent(available_gib)
    basis = f"logged {available_gib} GiB, {block}-token blocks"
    return [
        Row(row_id, source, "KV cache tokens (hybrid)", tokens, kv.kv_cache_tokens(blocks, per_request, max_model_len),
            tolerance, basis),
        Row(row_id, source, "max concurrency (hybrid)", concurrency, kv.max_concurrency(blocks, per_request),
            tolerance + _rounding_percent(concurrency), basis),
    ]


def hybrid_attention_rows() -> list[Row]:
    """Qwen3.6/3.8 under vLLM 0.2x with prefix caching and fp8 KV: the full-attention KV alone overstates the
    pool by about 10 % (the state pages and the block padding take the rest)."""
    return [
        *_hybrid_rows("qwen3.6-35b-a3b-nvfp4-5090", "https://github.com/noonghunna/club-3090/issues/652",
                      "qwen3.6-35b-a3b", 1, "fp8", 6.01, 131072, 569878, 4.35),
        *_hybrid_rows("qwen3.6-35b-a3b-nvfp4-5090-b", "https://github.com/noonghunna/club-3090/issues/612",
                      "qwen3.6-35b-a3b", 1, "fp8", 5.98, 131072, 567978, 4.33),
        *_hybrid_rows("qwen3.8-27b-fp8-2x3090", "https://github.com/mitchross/talos-argocd-proxmox/pull/1995",
                      "qwen3.8-27b", 2, "fp8", 4.99, 131072, 302921, 2.31),
        *_hybrid_rows("qwen3.6-27b-2x3090", "https://github.com/noonghunna/club-3090/issues/104",
                      "qwen3.6-27b", 2, "fp8_e5m2", 9.84, 262144, 619202, 2.36),
    ]


def gemma_4_rows() -> list[Row]:
    """Gemma 4 12B on 2x RTX 3090 (TP2, bf16 KV, 131,072 tokens, --max-num-batched-tokens 4096): K and V both stored
    in the 8 global layers (1 KV head of 512, replicated over the two ranks), whose pages are half the sliding
    layers', so they hold 32 tokens a block (engine.serving.kv.pages). Not storing V would give 4.57x, two batches
    in flight 2.39x: the log matches one batch of 4,096 (the run had a draft model resident; the reserve is taken
    as the fit gives it)."""
    row_id, source = "gemma-4-12b-2x3090", \
        "https://github.com/noonghunna/club-3090/blob/4a29ab57d42a1d587de1042fa5dfd9535f94a063/" \
        "scripts/lib/profiles/calibration/gemma-4-12b.yml"
    shape, available, max_model_len = _shape("gemma-4-12b"), 8.16, 131072
    blocks = kv.kv_blocks(_gib(available), kv.bytes_per_block(shape, 2, "auto"))
    per_request = kv.blocks_per_request(shape, max_model_len, 4096, 1, tp=2, kv_dtype="auto")
    tolerance = _rounding_percent(available)
    block = kv.pages(shape, 2, "auto").full_block
    basis = f"logged {available} GiB, global blocks of {block} tokens, one batch in flight"
    return [
        Row(row_id, source, "KV cache tokens (Gemma 4)", 384019, kv.kv_cache_tokens(blocks, per_request, max_model_len),
            tolerance, basis),
        Row(row_id, source, "max concurrency (Gemma 4)", 2.93, kv.max_concurrency(blocks, per_request),
            tolerance + _rounding_percent(2.93, 0.005), basis),
    ]


# -- llama.cpp ---------------------------------------------------------------------------------------------------

def llama_cpp_rows() -> list[Row]:
    shape = _shape("mistral-7b-v0.2")
    source = "https://github.com/fedora-copr/logdetective/pull/106"
    rows = []
    for n_ctx, logged_kv, logged_compute in ((2048, 256.0, 164.0), (32768, 4096.0, 2144.0)):
        rows.append(Row("llamacpp-7b", source, f"KV MiB at {n_ctx}", logged_kv,
                        kv.llama_cpp_kv_bytes(shape, n_ctx, "f16", "f16") / MIB, 0.0, "f16 cache"))
        rows.append(Row("llamacpp-7b", source, f"compute MiB at {n_ctx} (no FA)", logged_compute,
                        memory.llama_cpp_compute_bytes(n_ctx, 32, flash_attn=False) / MIB, 40.0,
                        "KQ + 96 MiB estimate"))
    per_layer = kv.llama_cpp_kv_bytes_per_cell_layer(24576, 16384, "q4_0", "f16") * 16384
    rows.append(Row("llamacpp-deepseek-61l", "https://github.com/ggml-org/llama.cpp/issues/9390",
                    "KV MiB on CUDA0 (8 layers, q4_0 K)", 5824.0, 8 * per_layer / MIB, 0.0, "q4_0 = 18 B / 32"))
    rows.append(Row("llamacpp-qwen3.6-27b", "https://github.com/ggml-org/llama.cpp/pull/25465",
                    "compute MiB at 262144 (FA)", 756.0, memory.llama_cpp_compute_bytes(262144, None, True) / MIB,
                    30.0, "flat FA estimate"))
    return rows


def all_rows() -> list[Row]:
    return [*llama_31_8b_a100_rows(), *gemma_3_1b_rows(), *deepseek_v2_lite_rows(), *deepseek_v2_lite_needed_rows(),
            *qwen3_14b_rows(), *qwen3_235b_tp4_rows(), *fp8_kv_rows(), *llava_mistral_rows(),
            *qwen25_72b_awq_rows(), *llama_31_8b_3090_rows(), *llama_31_8b_3090_kv_rows(), *gpt_oss_rows(),
            *moe_activation_rows(), *qwen25_7b_rtx4060_rows(), *h100_0_11_rows(), *gpt_oss_20b_h100_rows(),
            *mistral_small_32_h100_rows(), *qwen25_vl_72b_rows(), *hybrid_attention_rows(), *gemma_4_rows(),
            *llama_cpp_rows()]


# -- everyday questions checked (no log: what the check says) ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class Figure:
    question: str
    layout: str
    check: ServingCheck


def example_figures() -> list[Figure]:
    """Questions the memory rule fits on one card, checked as vLLM would start them, on the catalog cards
    (A40 45 520 MiB, A100 80GB 81 920 MiB, H100 81 089 MiB), vLLM 0.34.0 defaults unless an accounting is named."""
    a40, a100 = Gpu("A40", 45520), Gpu("A100-SXM4-80GB", 81920)
    llama_70b = ServingModel(_shape("llama-3.1-70b"), weights.weights_at_precision(
        70.554, "int4", vocab_size=128256, hidden_size=8192), ModelDims(8192, 28672, 128256),
        "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")
    h100 = Gpu("H100 80GB HBM3", 81089)
    qwen3_32b = answer_model("qwen3-32b")
    return [
        Figure("Qwen3-32B, 16k (vLLM 0.11 accounting)", "1x H100",
               vllm_check(qwen3_32b, h100, 16384, settings=settings_for_version("0.11"))),
        Figure("Qwen3-32B, 16k (vLLM 0.33 accounting)", "1x H100",
               vllm_check(qwen3_32b, h100, 16384, settings=settings_for_version("0.33"))),
        Figure("Qwen3-32B, 16k (vLLM 0.34)", "1x H100", vllm_check(qwen3_32b, h100, 16384)),
        Figure("70B at 4-bit, 32k", "1x A40", vllm_check(typical_model(70, 0.5), a40, 32768)),
        Figure("Llama 3.1 70B AWQ, 32k", "1x A40", vllm_check(llama_70b, a40, 32768)),
        Figure("Llama 3.1 70B AWQ, 128k", "1x A100 80GB", vllm_check(llama_70b, a100, 131072)),
        Figure("Llama 3.1 70B AWQ, 128k", "2x A100 80GB", vllm_check(llama_70b, a100, 131072, tp=2)),
    ]


def render_figures(figures: list[Figure]) -> str:
    lines = ["| question | layout | starts | max context (one request) | max concurrency | command |",
             "| --- | --- | --- | ---: | ---: | --- |"]
    for figure in figures:
        check = figure.check
        concurrency = "-" if check.max_concurrency is None else f"{check.max_concurrency:.2f}x"
        context = "-" if check.max_context_tokens is None else f"{check.max_context_tokens:,}"
        lines.append(f"| {figure.question} | {figure.layout} | {'yes' if check.starts else 'no'} | {context} | "
                     f"{concurrency} | `{check.command}` |")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    if abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"


def render_table(rows: list[Row]) -> str:
    lines = ["| datapoint | source | quantity | from | logged | predicted | error | tolerance |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row.id} | {row.source} | {row.quantity} | {row.basis} | {_fmt(row.logged)} | "
                     f"{_fmt(row.predicted)} | {row.error_percent:+.2f} % | {row.tolerance_percent:.2f} % |")
    return "\n".join(lines)




if __name__ == "__main__":
    print(render_table(all_rows()))
    print()
    print(render_figures(example_figures()))
