"""A sized request on one card x count as the speed estimate's workload: which engine runs it (GGUF formats on
llama.cpp, the rest on vLLM, as the serving check decides), the weights one token reads, the KV bytes each token
adds, the request's context and concurrency."""
from __future__ import annotations

import dataclasses

from catalog.schema import Card
from engine.sizing.rule import KV_PRECISION_BYTES, Requirement, ResolvedRequest, kv_bytes_per_token
from engine.speed.estimate import Hardware, SpeedEstimate, Workload, estimate
from engine.speed.measured import find_run

# A measured figure's range: run-to-run spread of llama-bench (± a few %) and of the context carried over.
MEASURED_LOW, MEASURED_HIGH = 0.9, 1.1


def default_engine(resolved: ResolvedRequest) -> str:
    """engine.serving.review.engine_for without options: llama.cpp for a GGUF type, else vLLM."""
    return "llama.cpp" if resolved.quant is not None and resolved.quant.is_gguf else "vllm"


def hardware(card: Card) -> Hardware:
    return Hardware(card.bandwidth_gbps, card.fp16_tflops, card.fp8_tflops, card.interconnect)


def decodes(resolved: ResolvedRequest) -> bool:
    """Token-by-token decoding is an LLM inference thing; FLUX denoises instead."""
    return resolved.workload == "inference" and resolved.shape.is_language_model


def workload(card: Card, count: int, resolved: ResolvedRequest, requirement: Requirement, *,
             engine: str | None = None, users: int | None = None, prompt_tokens: int | None = None,
             context_tokens: int | None = None) -> Workload:
    shape = resolved.shape
    kv = kv_bytes_per_token(shape, KV_PRECISION_BYTES[resolved.kv_precision]) or 0.0
    params = max(resolved.params_b, 1e-9)
    bytes_per_param = requirement.weights_gb / params
    fmt = resolved.quant
    return Workload(
        engine=engine or default_engine(resolved), count=count, weights_gb=requirement.active_weights_gb,
        active_params_b=shape.active_params_b if shape.active_params_b else params,
        layers=shape.layers or 0, moe=bool(shape.experts_total and shape.experts_total > 1),
        kv_bytes_per_token=kv, context_tokens=context_tokens or resolved.context_tokens,
        users=users or resolved.batch, prompt_tokens=prompt_tokens,
        weight_format=fmt.name if fmt is not None else None, quantized=bytes_per_param < 1.9,
        fp8_compute=bytes_per_param < 1.9 and card.fp8 and resolved.precision == "fp8")


def layout_speed(card: Card, count: int, resolved: ResolvedRequest, requirement: Requirement, *,
                 engine: str | None = None, users: int | None = None, prompt_tokens: int | None = None,
                 context_tokens: int | None = None) -> SpeedEstimate | None:
    """The calibrated speed of the request on `count` x `card`; None where nothing is decoded (training, FLUX)."""
    if not decodes(resolved) or requirement.active_weights_gb <= 0:
        return None
    work = workload(card, count, resolved, requirement, engine=engine, users=users, prompt_tokens=prompt_tokens,
                    context_tokens=context_tokens)
    found = estimate(hardware(card), work)
    weight_format = resolved.quant.name if resolved.quant is not None else resolved.precision
    run = find_run(resolved.model, weight_format, card.id, count, work.engine)
    if run is None or found.users != 1:
        return found
    # The run's figure, carried from its context to the request's by the estimate's own slowdown.
    at_run = estimate(hardware(card), dataclasses.replace(work, context_tokens=run.context_tokens))
    decode = run.decode_tok_s * found.decode_tok_s / at_run.decode_tok_s
    return dataclasses.replace(found, decode_tok_s=decode, decode_tok_s_per_user=decode, aggregate_tok_s=decode,
                               basis="measured", low=decode * MEASURED_LOW, high=decode * MEASURED_HIGH,
                               source=run.url, measured_context_tokens=run.context_tokens,
                               measured_tok_s=run.decode_tok_s)
