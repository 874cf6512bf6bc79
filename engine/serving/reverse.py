"""Reverse questions over the serving check: the largest context, the concurrency at a context, the biggest model."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.models.registry import ModelShape, typical_shape
from engine.serving.constants import FIT_MIN_CONTEXT, MIB
from engine.serving.llama_cpp import LlamaCppSettings, llama_cpp_check
from engine.serving.outcome import Gpu, ServingCheck, ServingModel
from engine.serving.vllm import VllmSettings, vllm_check
from engine.serving.weights import ResidentWeights

# The biggest-model search: 0.1 B steps up to 100,000 B (engine.sizing.rule's MAX_PARAMS_B).
PARAMS_STEP_B = 0.1
MAX_PARAMS_B = 100_000.0


def serving_check(model: ServingModel, gpu: Gpu, context_tokens: int, *, engine: str = "vllm", tp: int = 1,
                  batch: int = 1, vllm: VllmSettings | None = None,
                  llama_cpp: LlamaCppSettings | None = None) -> ServingCheck:
    """One entry point for both engines (`tp` is the device count for llama.cpp's layer split)."""
    if engine == "vllm":
        return vllm_check(model, gpu, context_tokens, batch=batch, tp=tp, settings=vllm)
    if engine == "llama.cpp":
        return llama_cpp_check(model, gpu, context_tokens, batch=batch, devices=tp, settings=llama_cpp)
    raise ValueError(f"unknown engine {engine!r} (use vllm or llama.cpp)")


def launch_command(model: ServingModel, gpu: Gpu, context_tokens: int, *, engine: str = "vllm", tp: int = 1,
                   batch: int = 1, vllm: VllmSettings | None = None,
                   llama_cpp: LlamaCppSettings | None = None) -> str:
    """The command that launches the layout (the check's own `command`; engine.serving.command words it)."""
    return serving_check(model, gpu, context_tokens, engine=engine, tp=tp, batch=batch, vllm=vllm,
                         llama_cpp=llama_cpp).command


def max_context_for_layout(model: ServingModel, gpu: Gpu, *, engine: str = "vllm", tp: int = 1,
                           vllm: VllmSettings | None = None, llama_cpp: LlamaCppSettings | None = None) -> int | None:
    """The longest single request that starts (vLLM's `--max-model-len auto`), None when the weights do not fit.

    Checked at the model's own maximum, so vLLM's batch limits are those of that launch.
    """
    context = model.shape.context_max or FIT_MIN_CONTEXT
    check = serving_check(model, gpu, context, engine=engine, tp=tp, vllm=vllm, llama_cpp=llama_cpp)
    return check.max_context_tokens


def max_context_for_users(model: ServingModel, gpu: Gpu, users: int, *, engine: str = "vllm", tp: int = 1,
                          vllm: VllmSettings | None = None,
                          llama_cpp: LlamaCppSettings | None = None) -> int | None:
    """The longest context each of `users` requests gets at once: vLLM's KV cache holds `users` of them
    ("Maximum concurrency" >= users), llama.cpp's `users` slots of it fit (-np users). None when not even one
    token each starts. A bisection between 1 token and the longest single request (more context never needs
    less memory)."""
    longest = max_context_for_layout(model, gpu, engine=engine, tp=tp, vllm=vllm, llama_cpp=llama_cpp)
    if longest is None or users <= 1:
        return longest

    def starts(context: int) -> bool:
        check = serving_check(model, gpu, context, engine=engine, tp=tp, batch=users, vllm=vllm,
                              llama_cpp=llama_cpp)
        if engine == "vllm":
            return check.starts and (check.max_concurrency or 0.0) >= users
        return check.starts

    return _largest_starting(starts, longest)


def max_concurrency_at(model: ServingModel, gpu: Gpu, context_tokens: int, *, engine: str = "vllm", tp: int = 1,
                       vllm: VllmSettings | None = None, llama_cpp: LlamaCppSettings | None = None) -> float | None:
    """How many requests of `context_tokens` the KV cache holds at once (vLLM's "Maximum concurrency")."""
    check = serving_check(model, gpu, context_tokens, engine=engine, tp=tp, vllm=vllm, llama_cpp=llama_cpp)
    return check.max_concurrency if check.starts else None


def typical_model(params_b: float, bytes_per_param: float) -> ServingModel:
    """A bare size: the seed's typical shape, every parameter at `bytes_per_param` (no vocabulary published)."""
    shape: ModelShape = typical_shape(params_b)[0]
    return ServingModel(shape=replace(shape, context_max=None),
                        weights=ResidentWeights.from_precision(params_b, bytes_per_param))


def biggest_model_params_b(gpu: Gpu, *, bytes_per_param: float, context_tokens: int, engine: str = "vllm",
                           tp: int = 1, vllm: VllmSettings | None = None,
                           llama_cpp: LlamaCppSettings | None = None) -> float | None:
    """The most parameters (0.1 B steps) whose typical-shape model starts with `context_tokens` on the layout.

    A bisection: more parameters never need less memory here except where the typical shape changes (at the
    geometric midpoints between 7/13/34/70/405 B), which can move the answer by one shape's KV difference.
    """
    ceiling = _steps_ceiling(gpu, bytes_per_param, tp, vllm)

    def starts(steps: int) -> bool:
        if steps > ceiling:
            return False  # the weights alone exceed each GPU: no check needed, the bisection's path is the same
        model = typical_model(steps * PARAMS_STEP_B, bytes_per_param)
        check = serving_check(model, gpu, context_tokens, engine=engine, tp=tp, vllm=vllm, llama_cpp=llama_cpp)
        return check.starts

    steps = _largest_starting(starts, round(MAX_PARAMS_B / PARAMS_STEP_B))
    return None if steps is None else round(steps * PARAMS_STEP_B, 1)


def _largest_starting(starts: Callable[[int], bool], high: int) -> int | None:
    """The largest n in 1..high for which `starts(n)` holds, by bisection (read as monotone: more context or more
    parameters need more memory; the callers say where that bends); None when not even 1 starts."""
    if not starts(1):
        return None
    low = 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _steps_ceiling(gpu: Gpu, bytes_per_param: float, tp: int, vllm: VllmSettings | None) -> float:
    """Past this many 0.1 B steps a typical-shape model cannot start on `tp` x `gpu` in either engine (about
    half the bisection's probes are up there). Its weights are all body (no vocabulary published), so each
    GPU holds body / tp (weights.vllm_weights_bytes_per_gpu, llama_cpp_weights_bytes_per_gpu); vLLM starts only
    below its requested share (at most the card's memory x gpu_memory_utilization) minus overheads that are never
    negative, llama.cpp only within the card's memory minus its compute buffer and margin. A 0.1 % margin (and one
    step) keeps the rounding of steps x 0.1 B on the safe side; tests/test_capacity.py checks the result
    against the unpruned search."""
    if bytes_per_param <= 0:
        return float("inf")
    share = max(1.0, vllm.utilization) if vllm is not None else 1.0
    per_gpu_bytes = gpu.memory_mib * MIB * share
    return per_gpu_bytes * tp / (PARAMS_STEP_B * 1e9 * bytes_per_param) * 1.001 + 1
