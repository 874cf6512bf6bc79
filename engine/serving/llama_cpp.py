"""The serving check under llama-server (llama.cpp 0c1e57098): layer split, cells, compute buffer, --fit margin."""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.models.registry import ModelShape
from engine.notes import Note
from engine.serving import command, kv, memory, weights
from engine.serving.constants import CELL_PADDING, FIT_MARGIN_MIB, GB, LLAMA_CPP_COMMIT, MIB, N_UBATCH
from engine.serving.outcome import (
    Gpu,
    ServingCheck,
    ServingModel,
    check_request,
    context_allowed,
    context_cap,
    context_capped_note,
    launch_context,
    outcome_notes,
)


@dataclass(frozen=True, slots=True)
class LlamaCppSettings:
    """llama-server options; defaults of commit 0c1e57098 (f16 cache, flash attention auto = on for CUDA)."""

    quant: str | None = None
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    flash_attn: bool = True
    n_ubatch: int = N_UBATCH
    fit_margin_mib: int = FIT_MARGIN_MIB


@dataclass(frozen=True, slots=True)
class LlamaCppBudget:
    """One device under llama-server, bytes: the busiest device of an even layer split."""

    total: float
    weights: float
    compute: float
    margin: float

    @property
    def usable(self) -> float:
        """What --fit lets weights + KV cache take: total - compute buffer - fit margin."""
        return self.total - self.compute - self.margin


def llama_cpp_kv_bytes_per_gpu(shape: ModelShape, n_ctx: int, devices: int, settings: LlamaCppSettings,
                               slots: int) -> float:
    """The busiest device's share of the cache: its ceil(layers / devices) layers."""
    total = kv.llama_cpp_kv_bytes(shape, n_ctx, settings.cache_type_k, settings.cache_type_v, n_seq=slots,
                                  unified=True, n_ubatch=settings.n_ubatch, flash_attn=settings.flash_attn)
    layers = shape.layers or 1
    return total * math.ceil(layers / devices) / layers


def llama_cpp_check(model: ServingModel, gpu: Gpu, context_tokens: int, *, batch: int = 1, devices: int = 1,
                    settings: LlamaCppSettings | None = None) -> ServingCheck:
    """llama-server with every layer on `devices` equal GPUs (-ngl 99, layer split), `batch` slots of the context."""
    settings = settings or LlamaCppSettings()
    shape = model.shape
    check_request(shape, context_tokens, batch, devices)
    notes = [Note(f"llama.cpp {LLAMA_CPP_COMMIT} rules, --fit margin {settings.fit_margin_mib} MiB",
                  "serving_engine_version", engine="llama.cpp", version=LLAMA_CPP_COMMIT)]
    allowed = context_allowed(shape, 1, context_tokens, notes)  # a layer split: no KV head is split
    if settings.cache_type_v != "f16" and not settings.flash_attn:
        notes.append(Note("a quantized V cache needs flash attention", "serving_v_cache_needs_fa"))
        allowed = False
    n_ctx = kv.pad_cells(context_tokens * batch)

    def budget_at(cells: int) -> LlamaCppBudget:
        return LlamaCppBudget(
            total=gpu.memory_mib * MIB, weights=weights.llama_cpp_weights_bytes_per_gpu(model.weights, devices),
            compute=memory.llama_cpp_compute_bytes(cells, shape.attention_heads, settings.flash_attn,
                                                   settings.n_ubatch),
            margin=settings.fit_margin_mib * MIB)

    def fits(tokens: int) -> bool:  # one request, as vLLM's max context
        budget = budget_at(tokens)
        return budget.weights + llama_cpp_kv_bytes_per_gpu(shape, tokens, devices, settings, 1) <= budget.usable

    budget = budget_at(n_ctx)
    kv_per_gpu = llama_cpp_kv_bytes_per_gpu(shape, n_ctx, devices, settings, batch)
    starts = allowed and budget.weights + kv_per_gpu <= budget.usable
    cap = context_cap(shape, notes)
    best = kv.largest_fitting(fits, cap, step=CELL_PADDING) if budget.weights < budget.usable else None
    context_capped_note(shape, best, cap, notes)
    one_request = llama_cpp_kv_bytes_per_gpu(shape, kv.pad_cells(context_tokens), devices, settings, 1)
    concurrency = (budget.usable - budget.weights) / one_request if budget.weights < budget.usable else None
    outcome_notes(starts, concurrency, batch, budget.usable - budget.weights, notes)
    if not starts and allowed:
        notes.append(Note("--fit (on by default) would shrink the context or move layers to the CPU instead of "
                          "failing; this check keeps every layer on the GPU", "serving_fit_would_adjust"))
    per_cell = kv.llama_cpp_full_cell_bytes(shape, settings.cache_type_k, settings.cache_type_v,
                                            flash_attn=settings.flash_attn)
    layers = shape.layers or 1
    return ServingCheck(
        engine="llama.cpp", tp=devices, weights_gb=weights.llama_cpp_weights_bytes(model.weights) / GB,
        weights_gb_per_gpu=budget.weights / GB,
        kv_bytes_per_token_per_gpu=kv.full_attention_layers(shape) * per_cell * math.ceil(layers / devices) / layers,
        kv_gb_per_gpu=kv_per_gpu / GB, runtime_overhead_gb_per_gpu=(budget.compute + budget.margin) / GB,
        usable_gb_per_gpu=budget.usable / GB, gpu_memory_utilization=None, max_num_batched_tokens=None,
        starts=starts, max_context_tokens=best, max_concurrency=concurrency,
        command=command.llama_cpp_command(
            model.repo, quant=settings.quant, n_ctx=n_ctx if starts else launch_context(starts, n_ctx, best, notes),
            devices=devices, slots=batch if starts or not best else 1,
            cache_type_k=settings.cache_type_k, cache_type_v=settings.cache_type_v, flash_attn=settings.flash_attn,
            yarn=command.applied_yarn(model.shape)),
        notes=tuple(notes),
    )

