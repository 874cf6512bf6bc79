"""Launch commands for a serving layout: `vllm serve ...` (safetensors formats) and `llama-server ...` (GGUF).

Flags as the engines spell them (vLLM 0.34.0 engine/arg_utils.py; llama.cpp 0c1e57098 common/arg.cpp).
"""
from __future__ import annotations

import json

from engine.models.registry import ModelShape, RopeYarn

UNKNOWN_REPO = "<your-model>"


def vllm_command(repo: str | None, *, tp: int, max_model_len: int, gpu_memory_utilization: float | None,
                 kv_cache_dtype: str = "auto", quantization: str | None = None, max_num_seqs: int | None = None,
                 max_num_batched_tokens: int | None = None, enforce_eager: bool = False,
                 dtype: str | None = None, yarn: RopeYarn | None = None) -> str:
    """`vllm serve` with the layout's TP size, context and memory share; the optional flags only where they apply."""
    parts = ["vllm serve", repo or UNKNOWN_REPO, f"--tensor-parallel-size {tp}", f"--max-model-len {max_model_len}"]
    if yarn is not None:
        parts.append(f"--hf-overrides '{vllm_yarn_overrides(yarn)}'")
    if gpu_memory_utilization is not None:  # None: the release's default, left to vLLM
        parts.append(f"--gpu-memory-utilization {gpu_memory_utilization:g}")
    if kv_cache_dtype != "auto":
        parts.append(f"--kv-cache-dtype {kv_cache_dtype}")
    if quantization:
        parts.append(f"--quantization {quantization}")
    if dtype:
        parts.append(f"--dtype {dtype}")
    if max_num_seqs is not None:
        parts.append(f"--max-num-seqs {max_num_seqs}")
    if max_num_batched_tokens is not None:
        parts.append(f"--max-num-batched-tokens {max_num_batched_tokens}")
    if enforce_eager:
        parts.append("--enforce-eager")
    return " ".join(parts)


def applied_yarn(shape: ModelShape) -> RopeYarn | None:
    """The YaRN setting the launch passes: the card's, where the answer's window is the YaRN one."""
    return shape.yarn if shape.yarn_applied else None


def vllm_yarn_overrides(yarn: RopeYarn) -> str:
    """The `--hf-overrides` JSON that gives vLLM the YaRN window. vLLM 0.34.0 removed `--rope-scaling` (docs
    features/context_extension: "use the --hf-overrides method with rope_parameters"); its example passes rope_type,
    factor, original_max_position_embeddings and rope_theta (the override replaces the config's whole
    rope_parameters, so the theta goes with it). 0.34's config/model.py:2654-2662 (_get_and_verify_max_len) no
    longer multiplies a YaRN factor into max_position_embeddings ("YaRN variants leave max_position_embeddings
    already scaled"), so the override sets that too: else --max-model-len over the config's 40,960 is refused."""
    rope = {"rope_type": "yarn", "factor": yarn.factor,
            "original_max_position_embeddings": yarn.original_max_position_embeddings,
            "rope_theta": int(yarn.rope_theta) if yarn.rope_theta.is_integer() else yarn.rope_theta}
    return json.dumps({"rope_parameters": rope, "max_position_embeddings": yarn.window}, separators=(",", ":"))


def llama_cpp_command(repo: str | None, *, quant: str | None, n_ctx: int, devices: int = 1, slots: int = 1,
                      cache_type_k: str = "f16", cache_type_v: str = "f16", flash_attn: bool = True,
                      yarn: RopeYarn | None = None) -> str:
    """`llama-server -hf repo:quant -c N -ngl 99`; several slots share one unified cache of slots x context. YaRN:
    `--rope-scaling yarn --rope-scale F --yarn-orig-ctx N` (common/arg.cpp: "--rope-scale N: RoPE context scaling
    factor, expands context by a factor of N", "--yarn-orig-ctx N: YaRN: original context size of model")."""
    model = repo or UNKNOWN_REPO
    parts = ["llama-server -hf", f"{model}:{quant}" if quant else model, f"-c {n_ctx}", "-ngl 99"]
    if yarn is not None:
        parts.append(f"--rope-scaling yarn --rope-scale {yarn.factor:g} --yarn-orig-ctx "
                     f"{yarn.original_max_position_embeddings}")
    if slots > 1:
        parts.append(f"-np {slots} --kv-unified")
    if devices > 1:
        parts.append("--tensor-split " + ",".join(["1"] * devices))
    if cache_type_k != "f16":
        parts.append(f"--cache-type-k {cache_type_k}")
    if cache_type_v != "f16":
        parts.append(f"--cache-type-v {cache_type_v}")
    if not flash_attn:
        parts.append("-fa off")
    return " ".join(parts)
