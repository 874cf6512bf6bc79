"""Derived checkpoint sizes (decimal GB) of published quantized repos, from the registry's own config fields
(engine/models/data/*.yaml) and the tensor layouts of derive_repos.py (AutoAWQ, GPTQ, compressed-tensors, FP8).
Run from the repository root: python research/scripts/derive_registry_repos.py

The same arithmetic as derive_repos.py, reading the registry instead of /work/shared/reference/models.yaml (which
lacks the newer entries). A vision LLM's tower is added at 2 bytes per parameter (vision_params_b): the published
AWQ / FP8 / W4A16 checkpoints of vision LLMs keep it in 16 bit (engine/serving/review.py VISION_BYTES_PER_PARAM).
The first rows reproduce sizes already in the registry, as a check of the reading."""
import glob
import math

import yaml

REG = {m["id"]: m for f in sorted(glob.glob("engine/models/data/*.yaml")) for m in yaml.safe_load(open(f))["models"]}


def wbytes(fmt, i, o):
    n = i * o
    if fmt == "awq":  # qweight in x out/8 int32, qzeros in/128 x out/8 int32, scales in/128 x out fp16
        return n / 2 + (i // 128) * o * (2 + 0.5)
    if fmt == "gptq4":
        return n / 2 + (i // 128) * o * (2 + 0.5) + i * 4
    if fmt == "w4a16":  # compressed-tensors pack-quantized, symmetric group 128, bf16 scales
        return n / 2 + (i // 128) * o * 2
    if fmt == "fp8_channel":  # FP8 + one fp32 scale per output channel (FP8_DYNAMIC / fbgemm)
        return n + o * 4
    if fmt == "fp8_tensor":  # FP8 + per-tensor weight and input scales
        return n + 8
    if fmt == "fp8_block":  # FP8 + one fp32 scale per 128x128 block
        return n + math.ceil(i / 128) * math.ceil(o / 128) * 4
    raise ValueError(fmt)


def ckpt_gb(mid, fmt, qkv_bias=False, qk_norm=False, intermediate=None):
    m = REG[mid]
    L, D, V = m["layers"], m["hidden_size"], m["vocab_size"]
    H, KV, hd = m["attention_heads"], m["kv_heads"], m["head_dim"]
    attn = [(D, H * hd), (D, KV * hd), (D, KV * hd), (H * hd, D)]
    ex = m.get("experts")
    if ex:
        F = ex["moe_intermediate_size"]
        mlp = [(D, F), (D, F), (F, D)] * ex["total"]
        router = D * ex["total"]
    else:
        F = intermediate or m["intermediate_size"]
        mlp = [(D, F), (D, F), (F, D)]
        router = 0
    b = L * sum(wbytes(fmt, i, o) for i, o in attn + mlp)
    b += L * router * 2  # routers stay 16-bit
    b += (L * 2 * D + D) * 2  # RMSNorms
    if qkv_bias:
        b += L * (H * hd + 2 * KV * hd) * 2
    if qk_norm:
        b += L * 2 * hd * 2
    b += V * D * 2 * (1 if m["tie_word_embeddings"] else 2)
    b += (m.get("vision_params_b") or 0) * 1e9 * 2  # vision tower + projector, 16-bit
    return round(b / 1e9, 2)


ROWS = [
    # (repo, registry id, layout, kwargs); the first five are in the registry already (a check)
    ("Qwen/Qwen3-8B-FP8", "qwen3-8b", "fp8_block", {"qk_norm": True}),  # registry 9.44
    ("Qwen/Qwen3-8B-AWQ", "qwen3-8b", "awq", {"qk_norm": True}),  # registry 6.1
    ("Qwen/Qwen3-30B-A3B-FP8", "qwen3-30b-a3b", "fp8_block", {"qk_norm": True}),  # registry 31.17
    ("RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16", "llama-3.1-70b", "w4a16", {}),  # registry 39.5
    ("Qwen/Qwen2.5-32B-Instruct-AWQ", "qwen2.5-32b", "awq", {"qkv_bias": True}),  # published 19.33
    # new rows
    ("Qwen/Qwen3-0.6B-FP8", "qwen3-0.6b", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-1.7B-FP8", "qwen3-1.7b", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-4B-FP8", "qwen3-4b", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-4B-AWQ", "qwen3-4b", "awq", {"qk_norm": True}),
    ("Qwen/Qwen3-4B-Instruct-2507-FP8", "qwen3-4b-2507", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-14B-FP8", "qwen3-14b", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-14B-AWQ", "qwen3-14b", "awq", {"qk_norm": True}),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen3-30b-a3b-2507", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-a22b-2507", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "qwen3-coder-30b-a3b", "fp8_block", {"qk_norm": True}),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder-480b-a35b", "fp8_block", {"qk_norm": True}),
    ("Qwen/QwQ-32B-AWQ", "qwq-32b", "awq", {"qkv_bias": True}),
    ("Qwen/Qwen2.5-VL-3B-Instruct-AWQ", "qwen2.5-vl-3b", "awq", {"qkv_bias": True}),
    ("Qwen/Qwen2.5-VL-7B-Instruct-AWQ", "qwen2.5-vl-7b", "awq", {"qkv_bias": True}),
    ("Qwen/Qwen2.5-VL-72B-Instruct-AWQ", "qwen2.5-vl-72b", "awq", {"qkv_bias": True}),
    ("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic", "mistral-small-3.1", "fp8_channel", {}),
    ("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w4a16", "mistral-small-3.1", "w4a16", {}),
    ("RedHatAI/Mistral-Small-3.2-24B-Instruct-2506-FP8", "mistral-small-3.2", "fp8_channel", {}),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b", "fp8_channel", {}),
    ("RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16", "llama-3.3-70b", "w4a16", {}),
    ("RedHatAI/gemma-3-27b-it-FP8-dynamic", "gemma-3-27b", "fp8_channel", {}),
    ("RedHatAI/gemma-3-27b-it-quantized.w4a16", "gemma-3-27b", "w4a16", {}),
    ("RedHatAI/phi-4-FP8-dynamic", "phi-4", "fp8_channel", {}),
    ("RedHatAI/Mistral-Small-3.2-24B-Instruct-2506-FP8", "mistral-small-3.2", "fp8_tensor", {}),
    ("RedHatAI/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic", "deepseek-r1-distill-llama-70b", "fp8_channel", {}),
    ("casperhansen/deepseek-r1-distill-qwen-32b-awq", "deepseek-r1-distill-qwen-32b", "awq", {"qkv_bias": True}),
    ("casperhansen/deepseek-r1-distill-qwen-14b-awq", "deepseek-r1-distill-qwen-14b", "awq", {"qkv_bias": True}),
    ("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ", "mixtral-8x7b", "awq", {}),  # published 24.65: a check of the MoE rows
]

if __name__ == "__main__":
    for repo, mid, fmt, kw in ROWS:
        print(f"{repo:62s} {mid:22s} {fmt:12s} {ckpt_gb(mid, fmt, **kw):8.2f}")
