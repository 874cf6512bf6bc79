"""A sized request on one card x count as the speed estimate's workload: which engine runs it (GGUF formats on
llama.cpp, the rest on vLLM, as the serving check decides), the weights one token reads, the KV bytes each token
adds, the request's context and concurrency."""
from __future__ import annotations

import dataclasses

from catalog.schema import Card
from engine.sizing.rule import KV_PRECISION_BYTES, Requirement, ResolvedRequest, kv_split_per_token
from engine.speed.estimate import Hardware, SpeedEstimate, Workload, estimate
from engine.speed.measured import MEASURED_MODELS, find_run

# A measured figure's range: run-to-run spread of llama-bench (± a few %) and of the context carried over.
MEASURED_LOW, MEASURED_HIGH = 0.9, 1.1


def default_engine(resolved: ResolvedRequest) -> str:
    """The engine named for the answer, else as engine.serving.review.engine_for without options: llama.cpp for a
    GGUF type, else vLLM ("gpt-oss-120b with llama.cpp" is timed on llama.cpp, as its serving check runs)."""
    if resolved.engine is not None:
        return resolved.engine
    return "llama.cpp" if resolved.quant is not None and resolved.quant.is_gguf else "vllm"


def hardware(card: Card) -> Hardware:
    return Hardware(card.bandwidth_gbps, card.fp16_tflops, card.fp8_tflops, card.interconnect)


def decodes(resolved: ResolvedRequest) -> bool:
    """Token-by-token decoding is an LLM inference thing; FLUX denoises instead. A mixture of experts whose layer
    count is not read (a config not yet read) is not timed: the per-layer cost that dominates its decode is unknown,
    and the weight read alone put Qwen3.5-122B-A10B at 1,032 tok/s for one stream on 2 H100 (a dense model's
    weight read dwarfs that cost: it is timed)."""
    shape = resolved.shape
    sparse = shape.active_params_b is not None and shape.active_params_b < 0.9 * shape.params_b
    return resolved.workload == "inference" and shape.is_language_model and (bool(shape.layers) or not sparse)


# The request's part of a workload, the same on every layout: worked out once per request (an answer asks for the
# speed of a dozen layouts), keyed by the identity of the request objects, which the entry keeps alive.
_BASES: dict[tuple[int, int], tuple[ResolvedRequest, Requirement, Workload]] = {}
_MAX_BASES = 16


def _base(resolved: ResolvedRequest, requirement: Requirement) -> Workload:
    key = (id(resolved), id(requirement))
    found = _BASES.get(key)
    if found is not None and found[0] is resolved and found[1] is requirement:
        return found[2]
    shape = resolved.shape
    kv, window_kv, window, state = kv_split_per_token(shape, KV_PRECISION_BYTES[resolved.kv_precision])
    params = max(resolved.params_b, 1e-9)
    fmt = resolved.quant
    base = Workload(
        engine=default_engine(resolved), count=1, weights_gb=requirement.active_weights_gb,
        active_params_b=shape.active_params_b if shape.active_params_b else params,
        layers=shape.layers or 0, moe=bool(shape.experts_total and shape.experts_total > 1),
        kv_bytes_per_token=kv, context_tokens=resolved.context_tokens, users=resolved.batch,
        weight_format=fmt.name if fmt is not None else None, quantized=requirement.weights_gb / params < 1.9,
        window_kv_bytes_per_token=window_kv, window_tokens=window, state_bytes=state)
    if len(_BASES) >= _MAX_BASES:
        _BASES.clear()
    _BASES[key] = (resolved, requirement, base)
    return base


def workload(card: Card, count: int, resolved: ResolvedRequest, requirement: Requirement, *,
             engine: str | None = None, users: int | None = None, prompt_tokens: int | None = None,
             context_tokens: int | None = None) -> Workload:
    base = _base(resolved, requirement)
    # positional, in Workload's field order (dataclasses.replace costs more than the estimate itself)
    return Workload(engine or base.engine, count, base.weights_gb, base.active_params_b, base.layers, base.moe,
                    base.kv_bytes_per_token, context_tokens or base.context_tokens, users or base.users,
                    prompt_tokens, base.weight_format, base.quantized,
                    base.quantized and card.fp8 and resolved.precision == "fp8", base.window_kv_bytes_per_token,
                    base.window_tokens, base.state_bytes)


def layout_speed(card: Card, count: int, resolved: ResolvedRequest, requirement: Requirement, *,
                 engine: str | None = None, users: int | None = None, prompt_tokens: int | None = None,
                 context_tokens: int | None = None) -> SpeedEstimate | None:
    """The calibrated speed of the request on `count` x `card`; None where nothing is decoded (training, FLUX)."""
    if not decodes(resolved) or requirement.active_weights_gb <= 0:
        return None
    work = workload(card, count, resolved, requirement, engine=engine, users=users, prompt_tokens=prompt_tokens,
                    context_tokens=context_tokens)
    found = estimate(hardware(card), work)
    if resolved.model not in MEASURED_MODELS or found.users != 1:
        return found
    weight_format = resolved.quant.name if resolved.quant is not None else resolved.precision
    run = find_run(resolved.model, weight_format, card.id, count, work.engine)
    if run is None:
        return found
    # The run's figure, carried from its context to the request's by the estimate's own slowdown.
    at_run = estimate(hardware(card), dataclasses.replace(work, context_tokens=run.context_tokens))
    decode = run.decode_tok_s * found.decode_tok_s / at_run.decode_tok_s
    return dataclasses.replace(found, decode_tok_s=decode, decode_tok_s_per_user=decode, aggregate_tok_s=decode,
                               basis="measured", low=decode * MEASURED_LOW, high=decode * MEASURED_HIGH,
                               source=run.url, measured_context_tokens=run.context_tokens,
                               measured_tok_s=run.decode_tok_s)
