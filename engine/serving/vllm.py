"""The serving check under vLLM 0.34.0 (and the accounting of older releases): its KV budget per GPU, blocks,
concurrency, max context, command."""
from __future__ import annotations

from dataclasses import dataclass, replace

from engine.models.registry import ModelShape
from engine.notes import Note
from engine.serving import command, kv, memory, weights
from engine.serving.constants import (
    ACTIVATION_ERROR_PERCENT,
    CUDA_CONTEXT_GIB,
    GB,
    GIB,
    GPU_MEMORY_UTILIZATION,
    GPU_MEMORY_UTILIZATION_BEFORE_0_20,
    GPU_MEMORY_UTILIZATION_MEASURED,
    IN_FLIGHT_BATCHES,
    KV_CACHE_MARGIN_FLOOR_GIB,
    KV_CACHE_MARGIN_FRACTION,
    MIB,
    NULL_BLOCKS,
    VLLM_BEFORE_0_20_LAST,
    VLLM_ESTIMATED_LAST,
    VLLM_MEASURED_SINCE,
    VLLM_OLDEST,
    VLLM_VERSION,
)
from engine.serving.memory import ModelDims
from engine.serving.outcome import (
    Gpu,
    ServingCheck,
    ServingModel,
    check_request,
    context_allowed,
    context_cap,
    context_capped_note,
    launch_context,
    layout_refused,
    outcome_notes,
)


@dataclass(frozen=True, slots=True)
class VllmSettings:
    """vLLM options; the defaults are release 0.34.0's. ESTIMATED_0_20 is the accounting of 0.20-0.33, BEFORE_0_20
    reproduces the logs of 0.10-0.19 (settings_for_version picks one by release)."""

    # --gpu-memory-utilization as the user passes it; None: the release's default (release_utilization), and the
    # launch command leaves the flag out.
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str = "auto"
    # --quantization for a quantization made while loading a 16-bit checkpoint (fp8, bitsandbytes: see
    # engine/serving/checkpoint.py); AWQ/GPTQ/FP8/MXFP4 checkpoints are detected from their config.json, and
    # naming "awq" there would pick the slower kernel over awq_marlin.
    quantization: str | None = None
    dtype: str | None = None  # --dtype where "auto" would load another precision (an FP32 answer)
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    count_cudagraphs: bool = True
    in_flight_batches: int = IN_FLIGHT_BATCHES
    null_blocks: int = NULL_BLOCKS
    usage: str = "serve"
    version: str = VLLM_VERSION
    release_utilization: float = GPU_MEMORY_UTILIZATION_MEASURED
    # 0.34's extensible KV cache: sized from memory measured after warmup, with a margin kept free
    measured_kv: bool = True

    @property
    def utilization(self) -> float:
        """The gpu_memory_utilization vLLM resolves: the user's, else the release's default."""
        return self.gpu_memory_utilization if self.gpu_memory_utilization is not None else self.release_utilization


ESTIMATED_0_20 = VllmSettings(version=VLLM_ESTIMATED_LAST, release_utilization=GPU_MEMORY_UTILIZATION,
                              measured_kv=False)
BEFORE_0_20 = VllmSettings(gpu_memory_utilization=GPU_MEMORY_UTILIZATION_BEFORE_0_20, count_cudagraphs=False,
                           in_flight_batches=1, null_blocks=0, version=VLLM_BEFORE_0_20_LAST,
                           release_utilization=GPU_MEMORY_UTILIZATION_BEFORE_0_20, measured_kv=False)


def _release(version: str) -> tuple[int, ...]:
    try:
        parts = tuple(int(part) for part in version.strip().lower().removeprefix("v").split("."))
    except ValueError:
        raise ValueError(f"vLLM version {version!r} is not a release number such as 0.11 or 0.34.0") from None
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"vLLM version {version!r} is not a release number such as 0.11 or 0.34.0")
    return parts + (0,) * (3 - len(parts))


def settings_for_version(version: str | None) -> VllmSettings:
    """The accounting of a vLLM release: 0.34+ (measured KV cache), 0.20-0.33 (CUDA graphs estimated and
    subtracted, 0.92), 0.10-0.19 (no CUDA graphs, 0.9, one batch in flight). None or "latest": the newest known."""
    if version is None or version.strip().lower() in ("", "latest"):
        return VllmSettings()
    release = _release(version)
    if release > _release(VLLM_VERSION):
        raise ValueError(f"vLLM {version} is newer than the newest release the check follows ({VLLM_VERSION})")
    if release < _release(VLLM_OLDEST):
        raise ValueError(f"the check follows vLLM {VLLM_OLDEST} and later (the V1 engine), not {version}")
    named = ".".join(str(part) for part in release)
    if release >= _release(VLLM_MEASURED_SINCE):
        return replace(VllmSettings(), version=named)
    if release >= (0, 20, 0):
        return replace(ESTIMATED_0_20, version=named)
    return replace(BEFORE_0_20, gpu_memory_utilization=None, version=named)


@dataclass(frozen=True, slots=True)
class VllmBudget:
    """One GPU under vLLM (gpu_worker.py:641 determine_available_memory; 0.34 measure_kv_cache_bytes), bytes."""

    requested: float  # ceil(total x gpu_memory_utilization)
    weights: float
    activation: float
    non_torch: float
    cudagraph: float
    # 0.34: memory free at startup; the KV cache keeps margin below it. None: the budget is `requested` (<= 0.33).
    startup_free: float | None = None

    @property
    def margin(self) -> float:
        """max(1 GiB, 0.75 x the transient peak) kept free by the measured sizing (0 before 0.34)."""
        if self.startup_free is None:
            return 0.0
        return max(KV_CACHE_MARGIN_FLOOR_GIB * GIB, KV_CACHE_MARGIN_FRACTION * self.activation)

    @property
    def limit(self) -> float:
        """What weights, overheads and KV cache may take: the request, capped by the free memory less the margin."""
        if self.startup_free is None:
            return self.requested
        return min(self.requested, self.startup_free - self.margin)

    @property
    def overhead(self) -> float:
        return self.activation + self.non_torch + self.cudagraph + (self.requested - self.limit)

    @property
    def available_kv(self) -> float:
        """"Available KV cache memory" of the log: requested - weights - activation - non-torch - CUDA graphs
        (0.34: the measured budget, limit - weights - non-torch - CUDA graphs - activation)."""
        return self.requested - self.weights - self.overhead


def _batch_limits(defaults: tuple[int, int], settings: VllmSettings, max_model_len: int) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) after arg_utils.py:3189-3240: mnbt <= seqs x L, seqs <= mnbt."""
    tokens, seqs = defaults
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


@dataclass(frozen=True, slots=True)
class _Fixed:
    """What a check reads that depends on the model, the card, the count and the settings only -- never on the
    question's context or batch."""

    shape: ModelShape
    head_notes: tuple[Note, ...]  # the engine version, a head split that refuses the layout
    refused: bool
    batch_defaults: tuple[int, int]
    dims: ModelDims
    dims_notes: tuple[Note, ...]  # the Llama-like shape assumed
    tail_notes: tuple[Note, ...]  # the CUDA graphs estimate, an uncapped context
    requested: float
    startup_free: float | None
    weights_per_gpu: float
    non_torch: float
    cudagraph: float
    block_bytes: float
    kv_bytes_per_token: float
    weights_gb: float
    cap: int


def _fixed(model: ServingModel, gpu: Gpu, tp: int, settings: VllmSettings) -> _Fixed:
    shape = model.shape
    head = [Note(f"vLLM {settings.version} rules, gpu_memory_utilization {settings.utilization:g}",
                 "serving_engine_version", engine="vllm", version=settings.version)]
    refused = layout_refused(shape, tp, head)
    dims_notes: list[Note] = []
    dims = model_dims(model, dims_notes)
    cudagraph = memory.cudagraph_bytes(shape.params_b, tp, settings.enforce_eager)
    tail: list[Note] = []
    if settings.count_cudagraphs and cudagraph:
        tail.append(Note(f"CUDA graphs estimated at {cudagraph / GIB:.1f} GiB (vLLM >= 0.20 subtracts them; "
                         "0.67-2.4 GiB measured in public logs)", "serving_cudagraph_estimate", gib=cudagraph / GIB))
    if settings.measured_kv:
        tail.append(Note("KV cache sized from the memory measured after warmup (vLLM >= 0.34): a margin of "
                         "max(1 GiB, 0.75 x the activation peak) stays free", "serving_kv_margin"))
    cap = context_cap(shape, tail)
    return _Fixed(
        shape=shape, head_notes=tuple(head), refused=refused,
        batch_defaults=memory.batch_defaults(gpu.memory_mib, gpu.name, settings.usage), dims=dims,
        dims_notes=tuple(dims_notes), tail_notes=tuple(tail),
        requested=memory.requested_bytes(gpu.memory_mib, settings.utilization),
        startup_free=gpu.memory_mib * MIB - CUDA_CONTEXT_GIB * GIB if settings.measured_kv else None,
        weights_per_gpu=weights.vllm_weights_bytes_per_gpu(model.weights, tp), non_torch=memory.non_torch_bytes(tp),
        cudagraph=cudagraph if settings.count_cudagraphs else 0.0,
        block_bytes=kv.bytes_per_block(shape, tp, settings.kv_cache_dtype),
        kv_bytes_per_token=kv.kv_bytes_per_token_per_gpu(shape, tp, settings.kv_cache_dtype),
        weights_gb=weights.vllm_weights_bytes(model.weights) / GB, cap=cap)


@dataclass(frozen=True, slots=True)
class _Pool:
    """A layout's KV pool under its batch limits (the card's at most contexts): the budget, the blocks and the
    longest request they hold."""

    fixed: _Fixed
    activation_note: Note
    budget: VllmBudget
    num_blocks: int
    usable_blocks: int
    best: int | None


def _pool(fixed: _Fixed, batch_tokens: int, max_num_seqs: int, tp: int, settings: VllmSettings) -> _Pool:
    activation = memory.activation_peak_bytes(fixed.dims, batch_tokens, max_num_seqs, tp)
    budget = VllmBudget(requested=fixed.requested, weights=fixed.weights_per_gpu, activation=activation,
                        non_torch=fixed.non_torch, cudagraph=fixed.cudagraph, startup_free=fixed.startup_free)
    num_blocks = kv.kv_blocks(budget.available_kv, fixed.block_bytes)
    usable_blocks = num_blocks - settings.null_blocks
    best = None
    if budget.available_kv > 0 and not fixed.refused:
        best = kv.max_model_len_for_blocks(fixed.shape, usable_blocks, batch_tokens, fixed.cap,
                                           settings.in_flight_batches, tp=tp, kv_dtype=settings.kv_cache_dtype)
    return _Pool(fixed, _activation_note(fixed.dims, activation), budget, num_blocks, usable_blocks, best)


def _activation_note(dims: ModelDims, activation: float) -> Note:
    return Note(f"activation peak estimated at {activation / GIB:.2f} GiB (+-{ACTIVATION_ERROR_PERCENT} %; vLLM "
                "measures it in its profile run)", "serving_activation_estimate", gib=activation / GIB,
                error_percent=ACTIVATION_ERROR_PERCENT)


def vllm_check(model: ServingModel, gpu: Gpu, context_tokens: int, *, batch: int = 1, tp: int = 1,
               settings: VllmSettings | None = None) -> ServingCheck:
    """vLLM on `tp` equal GPUs: its KV budget per GPU, blocks, concurrency and the largest context that starts."""
    settings = settings or VllmSettings()
    shape = model.shape
    check_request(shape, context_tokens, batch, tp)
    fixed = _fixed(model, gpu, tp, settings)
    notes = list(fixed.head_notes)
    refused = fixed.refused
    allowed = not refused and context_allowed(shape, tp, context_tokens, notes)
    batch_tokens, max_num_seqs = _batch_limits(fixed.batch_defaults, settings, context_tokens)
    pool = _pool(fixed, batch_tokens, max_num_seqs, tp, settings)
    notes.extend(fixed.dims_notes)
    notes.append(pool.activation_note)
    notes.extend(fixed.tail_notes)
    budget, block_bytes, num_blocks, cap = pool.budget, fixed.block_bytes, pool.num_blocks, fixed.cap
    blocks = kv.blocks_per_request(shape, context_tokens, batch_tokens, settings.in_flight_batches, tp=tp,
                                   kv_dtype=settings.kv_cache_dtype)
    starts = allowed and budget.available_kv > 0 and blocks <= pool.usable_blocks
    best, concurrency = pool.best, None
    if budget.available_kv > 0 and not refused:
        concurrency = kv.max_concurrency(num_blocks, blocks)
    context_capped_note(shape, best, cap, notes)
    outcome_notes(starts, concurrency, batch, budget.available_kv, notes)
    if allowed and not starts and budget.available_kv > 0:
        notes.append(_kv_too_small(context_tokens, blocks * block_bytes, budget.available_kv, best))
    _sliding_note(shape, batch_tokens, context_tokens, settings.in_flight_batches, notes)
    return ServingCheck(
        engine="vllm", tp=tp, weights_gb=fixed.weights_gb, weights_gb_per_gpu=budget.weights / GB,
        kv_bytes_per_token_per_gpu=fixed.kv_bytes_per_token,
        kv_gb_per_gpu=blocks * batch * block_bytes / GB, runtime_overhead_gb_per_gpu=budget.overhead / GB,
        usable_gb_per_gpu=(budget.requested - budget.overhead) / GB,
        gpu_memory_utilization=settings.utilization, max_num_batched_tokens=batch_tokens,
        starts=starts, max_context_tokens=best, max_concurrency=concurrency,
        command=command.vllm_command(
            model.repo, tp=tp, max_model_len=launch_context(starts, context_tokens, best, notes),
            gpu_memory_utilization=settings.gpu_memory_utilization,
            kv_cache_dtype=settings.kv_cache_dtype, quantization=settings.quantization,
            max_num_seqs=settings.max_num_seqs, max_num_batched_tokens=settings.max_num_batched_tokens,
            enforce_eager=settings.enforce_eager, dtype=settings.dtype,
            yarn=command.applied_yarn(model.shape)),
        notes=tuple(notes),
    )


def _sliding_note(shape: ModelShape, batch_tokens: int, context_tokens: int, in_flight_batches: int,
                  notes: list[Note]) -> None:
    if not (shape.sliding_window and shape.sliding_layers):
        return
    tokens = kv.local_blocks(shape, batch_tokens, context_tokens, in_flight_batches)[0]
    notes.append(Note(f"sliding-window layers reserve {tokens:,} tokens per request, not the "
                      f"{shape.sliding_window:,}-token window", "serving_sliding_reserve",
                      tokens=tokens, window=shape.sliding_window))


def _kv_too_small(context_tokens: int, needed: float, available: float, best: int | None) -> Note:
    """vLLM's start failure (kv_cache_planning.py:50-87): one request of max_model_len does not fit."""
    return Note(f"one request of {context_tokens:,} tokens needs {needed / GIB:.2f} GiB of KV cache, "
                f"{available / GIB:.2f} GiB available; the largest context that starts is {best or 0:,} tokens",
                "serving_kv_too_small", tokens=context_tokens, needed_gib=needed / GIB,
                available_gib=available / GIB, max_tokens=best or 0)

