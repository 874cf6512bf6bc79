"""The serving check: will vLLM or llama.cpp start this model on this card/set, with how much context and
concurrency, and the command that launches it. Pure arithmetic over engine.serving's formulas."""
from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.schema import Card
from engine.notes import Note
from engine.registry import ModelShape
from engine.serving import command, kv, memory, weights
from engine.serving.constants import (
    ACTIVATION_ERROR_PERCENT,
    CELL_PADDING,
    FIT_MARGIN_MIB,
    GB,
    GIB,
    GPU_MEMORY_UTILIZATION,
    IN_FLIGHT_BATCHES,
    LLAMA_CPP_COMMIT,
    MIB,
    N_UBATCH,
    NULL_BLOCKS,
    VLLM_VERSION,
)
from engine.serving.memory import ModelDims
from engine.serving.weights import ResidentWeights

# The reverse questions search up to this context when the model publishes no maximum (engine.sizing's limit).
UNCAPPED_CONTEXT_TOKENS = 10_000_000


@dataclass(frozen=True, slots=True)
class Gpu:
    """One card as the runtime sees it: its name (vLLM's A100 rule reads it) and total memory in MiB."""

    name: str
    memory_mib: int

    @classmethod
    def from_card(cls, card: Card) -> Gpu:
        if card.memory_mib is None:
            raise ValueError(f"card {card.id} has no memory_mib in the catalog")
        return cls(card.name, card.memory_mib)


@dataclass(frozen=True, slots=True)
class ServingModel:
    """What the check reads of a model: its attention shape, its weights by part, config sizes, its repo."""

    shape: ModelShape
    weights: ResidentWeights
    dims: ModelDims | None = None
    repo: str | None = None


@dataclass(frozen=True, slots=True)
class VllmSettings:
    """vLLM options; the defaults are release 0.33.0's. BEFORE_0_20 reproduces the logs of 0.10-0.19."""

    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION
    kv_cache_dtype: str = "auto"
    # --quantization for on-the-fly quantization (fp8 of a bf16 checkpoint); AWQ/GPTQ/FP8/MXFP4 checkpoints are
    # detected from their config.json, and naming "awq" there would pick the slower kernel over awq_marlin.
    quantization: str | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    count_cudagraphs: bool = True
    in_flight_batches: int = IN_FLIGHT_BATCHES
    null_blocks: int = NULL_BLOCKS
    usage: str = "serve"


BEFORE_0_20 = VllmSettings(gpu_memory_utilization=0.9, count_cudagraphs=False, in_flight_batches=1, null_blocks=0)


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
class ServingCheck:
    """The JSON `serving` object of DESIGN.md "Contract v2" (GB decimal, per GPU where the name says so)."""

    engine: str
    tp: int
    weights_gb: float
    weights_gb_per_gpu: float
    kv_bytes_per_token_per_gpu: float
    kv_gb_per_gpu: float
    runtime_overhead_gb_per_gpu: float
    usable_gb_per_gpu: float
    gpu_memory_utilization: float | None
    max_num_batched_tokens: int | None
    starts: bool
    max_context_tokens: int | None
    max_concurrency: float | None
    command: str
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "engine": self.engine, "tp": self.tp, "weights_gb": self.weights_gb,
            "weights_gb_per_gpu": self.weights_gb_per_gpu,
            "kv_bytes_per_token_per_gpu": self.kv_bytes_per_token_per_gpu, "kv_gb_per_gpu": self.kv_gb_per_gpu,
            "runtime_overhead_gb_per_gpu": self.runtime_overhead_gb_per_gpu,
            "usable_gb_per_gpu": self.usable_gb_per_gpu, "gpu_memory_utilization": self.gpu_memory_utilization,
            "max_num_batched_tokens": self.max_num_batched_tokens, "starts": self.starts,
            "max_context_tokens": self.max_context_tokens, "max_concurrency": self.max_concurrency,
            "command": self.command, "notes": [str(note) for note in self.notes],
        }


# -- vLLM ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class VllmBudget:
    """One GPU under vLLM (gpu_worker.py:641 determine_available_memory), bytes."""

    requested: float  # ceil(total x gpu_memory_utilization)
    weights: float
    activation: float
    non_torch: float
    cudagraph: float

    @property
    def overhead(self) -> float:
        return self.activation + self.non_torch + self.cudagraph

    @property
    def available_kv(self) -> float:
        """"Available KV cache memory" of the log: requested - weights - activation - non-torch - CUDA graphs."""
        return self.requested - self.weights - self.overhead


def vllm_batch_limits(gpu: Gpu, settings: VllmSettings, max_model_len: int) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) after arg_utils.py:3189-3240: mnbt <= seqs x L, seqs <= mnbt."""
    tokens, seqs = memory.batch_defaults(gpu.memory_mib, gpu.name, settings.usage)
    tokens = settings.max_num_batched_tokens or tokens
    seqs = settings.max_num_seqs or seqs
    tokens = min(seqs * max_model_len, tokens)
    return tokens, min(seqs, tokens)


def model_dims(model: ServingModel, notes: list[Note]) -> ModelDims:
    """The config sizes, or Llama-like ones from the attention shape (noted) when the registry has none."""
    if model.dims is not None:
        return model.dims
    shape = model.shape
    hidden = (shape.attention_heads or 0) * (shape.head_dim or 0) or 4096
    notes.append(Note(f"activation estimate uses a Llama-like shape (hidden {hidden}, vocabulary "
                      f"{memory.ASSUMED_VOCAB:,})", "serving_dims_assumed", hidden=hidden))
    return ModelDims.assumed(hidden, moe=bool(shape.experts_total))


def vllm_budget(model: ServingModel, gpu: Gpu, tp: int, settings: VllmSettings, batch_tokens: int,
                max_num_seqs: int, notes: list[Note]) -> VllmBudget:
    dims = model_dims(model, notes)
    activation = memory.activation_peak_bytes(dims, batch_tokens, max_num_seqs, tp)
    cudagraph = memory.cudagraph_bytes(model.shape.params_b, tp, settings.enforce_eager)
    notes.append(_activation_note(dims, activation))
    if settings.count_cudagraphs and cudagraph:
        notes.append(Note(f"CUDA graphs estimated at {cudagraph / GIB:.1f} GiB (vLLM >= 0.20 subtracts them; "
                          "0.67-2.4 GiB measured in public logs)", "serving_cudagraph_estimate",
                          gib=cudagraph / GIB))
    return VllmBudget(
        requested=memory.requested_bytes(gpu.memory_mib, settings.gpu_memory_utilization),
        weights=weights.vllm_weights_bytes_per_gpu(model.weights, tp),
        activation=activation,
        non_torch=memory.non_torch_bytes(tp),
        cudagraph=cudagraph if settings.count_cudagraphs else 0.0,
    )


def _activation_note(dims: ModelDims, activation: float) -> Note:
    if dims.moe:
        return Note(f"activation peak {activation / GIB:.2f} GiB taken from a measured MoE log (gpt-oss-120b, "
                    "vLLM #23278); vLLM measures it at start", "serving_activation_moe", gib=activation / GIB)
    return Note(f"activation peak estimated at {activation / GIB:.2f} GiB (+-{ACTIVATION_ERROR_PERCENT} %; vLLM "
                "measures it in its profile run)", "serving_activation_estimate", gib=activation / GIB,
                error_percent=ACTIVATION_ERROR_PERCENT)


def _tp_problem(shape: ModelShape, tp: int) -> Note | None:
    """config/model.py:1557-1563 (heads divisible by tp) and layers/linear.py:1066-1071 (KV heads vs tp)."""
    heads, kv_heads = shape.attention_heads, shape.kv_heads
    if heads and heads % tp:
        return Note(f"{heads} attention heads do not split over {tp} GPUs", "serving_tp_heads", heads=heads, tp=tp)
    if kv_heads and shape.mla_kv_lora_rank is None and (tp % kv_heads if tp >= kv_heads else kv_heads % tp):
        return Note(f"{kv_heads} KV heads do not split over {tp} GPUs", "serving_tp_kv_heads",
                    kv_heads=kv_heads, tp=tp)
    return None


def _context_cap(shape: ModelShape, notes: list[Note]) -> int:
    if shape.context_max:
        return shape.context_max
    notes.append(Note("max context not capped: the model's own maximum is not published",
                      "serving_context_uncapped"))
    return UNCAPPED_CONTEXT_TOKENS


def _context_notes(shape: ModelShape, best: int | None, cap: int, notes: list[Note]) -> None:
    if best is not None and best == cap and shape.context_max:
        notes.append(Note(f"max context capped at the model's maximum ({cap:,} tokens)", "serving_context_capped",
                          tokens=cap))


def _layout_refused(shape: ModelShape, tp: int, notes: list[Note]) -> bool:
    """True (and noted) when the heads do not split over the GPUs: nothing starts at any context."""
    problem = _tp_problem(shape, tp) if tp > 1 else None
    if problem is not None:
        notes.append(problem)
    return problem is not None


def _common_notes(shape: ModelShape, tp: int, context_tokens: int, notes: list[Note]) -> bool:
    """Notes every engine shares; False when the engine refuses the requested context."""
    if shape.context_max and context_tokens > shape.context_max:
        notes.append(Note(f"{context_tokens:,} tokens exceed the model's maximum of {shape.context_max:,}; the "
                          "engine refuses it", "serving_context_over_max", tokens=context_tokens,
                          max_tokens=shape.context_max))
        return False
    if shape.is_mla and tp > 1:
        notes.append(Note("MLA latent cache is held whole on every GPU", "serving_mla_replicated"))
    elif shape.kv_heads and shape.kv_heads < tp:
        notes.append(Note(f"{shape.kv_heads} KV heads on {tp} GPUs: each GPU holds one (replicated)",
                          "serving_kv_replicated", kv_heads=shape.kv_heads, tp=tp))
    return True


def vllm_check(model: ServingModel, gpu: Gpu, context_tokens: int, *, batch: int = 1, tp: int = 1,
               settings: VllmSettings | None = None) -> ServingCheck:
    """vLLM on `tp` equal GPUs: its KV budget per GPU, blocks, concurrency and the largest context that starts."""
    settings = settings or VllmSettings()
    shape = model.shape
    notes = [Note(f"vLLM {VLLM_VERSION} rules, gpu_memory_utilization {settings.gpu_memory_utilization:g}",
                  "serving_engine_version", engine="vllm", version=VLLM_VERSION)]
    refused = _layout_refused(shape, tp, notes)
    allowed = not refused and _common_notes(shape, tp, context_tokens, notes)
    batch_tokens, max_num_seqs = vllm_batch_limits(gpu, settings, context_tokens)
    budget = vllm_budget(model, gpu, tp, settings, batch_tokens, max_num_seqs, notes)
    block_bytes = kv.bytes_per_block(shape, tp, settings.kv_cache_dtype)
    num_blocks = kv.kv_blocks(budget.available_kv, block_bytes)
    usable_blocks = num_blocks - settings.null_blocks

    blocks = kv.blocks_per_request(shape, context_tokens, batch_tokens, settings.in_flight_batches)
    starts = allowed and budget.available_kv > 0 and blocks <= usable_blocks
    cap = _context_cap(shape, notes)
    best, concurrency = None, None
    if budget.available_kv > 0 and not refused:
        best = kv.max_model_len_for_blocks(shape, usable_blocks, batch_tokens, cap, settings.in_flight_batches)
        concurrency = kv.max_concurrency(num_blocks, blocks)
    _context_notes(shape, best, cap, notes)
    _outcome_notes(starts, concurrency, batch, budget.available_kv, notes)
    if allowed and not starts and budget.available_kv > 0:
        notes.append(_kv_too_small(context_tokens, blocks * block_bytes, budget.available_kv, best))
    _sliding_note(shape, batch_tokens, context_tokens, settings.in_flight_batches, notes)
    return ServingCheck(
        engine="vllm", tp=tp, weights_gb=weights.vllm_weights_bytes(model.weights) / GB,
        weights_gb_per_gpu=budget.weights / GB,
        kv_bytes_per_token_per_gpu=kv.kv_bytes_per_token_per_gpu(shape, tp, settings.kv_cache_dtype),
        kv_gb_per_gpu=blocks * batch * block_bytes / GB, runtime_overhead_gb_per_gpu=budget.overhead / GB,
        usable_gb_per_gpu=(budget.requested - budget.overhead) / GB,
        gpu_memory_utilization=settings.gpu_memory_utilization, max_num_batched_tokens=batch_tokens,
        starts=starts, max_context_tokens=best, max_concurrency=concurrency,
        command=command.vllm_command(
            model.repo, tp=tp, max_model_len=_launch_context(starts, context_tokens, best, notes),
            gpu_memory_utilization=settings.gpu_memory_utilization,
            kv_cache_dtype=settings.kv_cache_dtype, quantization=settings.quantization,
            max_num_seqs=settings.max_num_seqs, max_num_batched_tokens=settings.max_num_batched_tokens,
            enforce_eager=settings.enforce_eager),
        notes=tuple(notes),
    )


def _sliding_note(shape: ModelShape, batch_tokens: int, context_tokens: int, in_flight_batches: int,
                  notes: list[Note]) -> None:
    if not (shape.sliding_window and shape.sliding_layers):
        return
    tokens = kv.sliding_window_tokens(shape.sliding_window, batch_tokens, context_tokens, in_flight_batches)
    notes.append(Note(f"sliding-window layers reserve {tokens:,} tokens per request, not the "
                      f"{shape.sliding_window:,}-token window", "serving_sliding_reserve",
                      tokens=tokens, window=shape.sliding_window))


def _launch_context(starts: bool, context_tokens: int, best: int | None, notes: list[Note]) -> int:
    """The context the command launches: the one asked for, or the largest that starts (said in a note)."""
    if starts or not best:
        return context_tokens
    notes.append(Note(f"the command uses the largest context that starts ({best:,} tokens, one request)",
                      "serving_command_reduced", tokens=best))
    return best


def _kv_too_small(context_tokens: int, needed: float, available: float, best: int | None) -> Note:
    """vLLM's start failure (kv_cache_planning.py:50-87): one request of max_model_len does not fit."""
    return Note(f"one request of {context_tokens:,} tokens needs {needed / GIB:.2f} GiB of KV cache, "
                f"{available / GIB:.2f} GiB available; the largest context that starts is {best or 0:,} tokens",
                "serving_kv_too_small", tokens=context_tokens, needed_gib=needed / GIB,
                available_gib=available / GIB, max_tokens=best or 0)


def _outcome_notes(starts: bool, concurrency: float | None, batch: int, available: float,
                   notes: list[Note]) -> None:
    if available <= 0:
        notes.append(Note("the weights and runtime overheads leave no memory for the KV cache",
                          "serving_no_kv_memory", available_gib=available / GIB))
    elif starts and concurrency is not None and concurrency < batch:
        notes.append(Note(f"starts, but holds {concurrency:.2f} of {batch} requests at once; the rest wait",
                          "serving_concurrency_below_batch", concurrency=concurrency, batch=batch))


# -- llama.cpp -------------------------------------------------------------------------------------------------

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
                                  unified=True, n_ubatch=settings.n_ubatch)
    layers = shape.layers or 1
    return total * math.ceil(layers / devices) / layers


def llama_cpp_check(model: ServingModel, gpu: Gpu, context_tokens: int, *, batch: int = 1, devices: int = 1,
                    settings: LlamaCppSettings | None = None) -> ServingCheck:
    """llama-server with every layer on `devices` equal GPUs (-ngl 99, layer split), `batch` slots of the context."""
    settings = settings or LlamaCppSettings()
    shape = model.shape
    notes = [Note(f"llama.cpp {LLAMA_CPP_COMMIT} rules, --fit margin {settings.fit_margin_mib} MiB",
                  "serving_engine_version", engine="llama.cpp", version=LLAMA_CPP_COMMIT)]
    allowed = _common_notes(shape, 1, context_tokens, notes)  # a layer split: no KV head is split
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
    cap = _context_cap(shape, notes)
    best = kv.largest_fitting(fits, cap, step=CELL_PADDING) if budget.weights < budget.usable else None
    _context_notes(shape, best, cap, notes)
    one_request = llama_cpp_kv_bytes_per_gpu(shape, kv.pad_cells(context_tokens), devices, settings, 1)
    concurrency = (budget.usable - budget.weights) / one_request if budget.weights < budget.usable else None
    _outcome_notes(starts, concurrency, batch, budget.usable - budget.weights, notes)
    if not starts and allowed:
        notes.append(Note("--fit (on by default) would shrink the context or move layers to the CPU instead of "
                          "failing; this check keeps every layer on the GPU", "serving_fit_would_adjust"))
    n_embd_k, n_embd_v = kv.llama_cpp_embd_kv(shape)
    per_cell = kv.llama_cpp_kv_bytes_per_cell_layer(n_embd_k, n_embd_v, settings.cache_type_k,
                                                    settings.cache_type_v)
    layers = shape.layers or 1
    return ServingCheck(
        engine="llama.cpp", tp=devices, weights_gb=weights.llama_cpp_weights_bytes(model.weights) / GB,
        weights_gb_per_gpu=budget.weights / GB,
        kv_bytes_per_token_per_gpu=kv.full_attention_layers(shape) * per_cell * math.ceil(layers / devices) / layers,
        kv_gb_per_gpu=kv_per_gpu / GB, runtime_overhead_gb_per_gpu=(budget.compute + budget.margin) / GB,
        usable_gb_per_gpu=budget.usable / GB, gpu_memory_utilization=None, max_num_batched_tokens=None,
        starts=starts, max_context_tokens=best, max_concurrency=concurrency,
        command=command.llama_cpp_command(
            model.repo, quant=settings.quant, n_ctx=n_ctx if starts else _launch_context(starts, n_ctx, best, notes),
            devices=devices, slots=batch if starts or not best else 1,
            cache_type_k=settings.cache_type_k, cache_type_v=settings.cache_type_v, flash_attn=settings.flash_attn),
        notes=tuple(notes),
    )
