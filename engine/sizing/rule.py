"""Sizing maths: a request -> named memory components in decimal GB, under the provider's sizing policy.

Pure and synchronous: no I/O, no clock. Every component carries the formula that produced it (engine.formula),
so a reply can show its working ("70 x 0.5 B = 35.0 GB")."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from catalog.schema import SizingPolicy
from engine.formats.precision import canonical_kv_precision, canonical_precision, precision_words
from engine.formats.quant import (
    UnknownFormat,
    checkpoint_format,
    quant_name,
    quant_precision,
    quant_weights_gb,
    request_format,
    weights_notes,
)
from engine.formats.table import WeightFormat
from engine.formula import FormulaValue, english_formula, fmt_gb, fmt_num
from engine.models.registry import (
    GGUF_REPO,
    ModelShape,
    QuantizedRepo,
    Registry,
    default_registry,
    hf_repo,
    typical_shape,
    yarn_extended,
)
from engine.notes import Note
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS, resolve_sequence, sequence_matters, sequence_notes

GB = 1e9

# Bytes per parameter and per KV cache element of the seeds' precisions (DESIGN.md "Sizing"; seed 000 section 01):
# the rows of engine/formats/formats.yaml `precisions`, which also say the words that name each.
PRECISION_BYTES: dict[str, float] = precision_words().bytes
KV_PRECISION_BYTES: dict[str, float] = precision_words().kv_bytes
WORKLOADS = ("inference", "full", "lora", "qlora")

# Below 10M parameters a model is not a sizing question: its weights (< 20 MB in BF16) vanish in any card's
# runtime overhead, and bandwidth / weights stops meaning anything (billions of tokens/s, then infinity). The
# smallest open LLMs people deploy start around there (e.g. SmolLM2-135M); nothing in the registry is smaller.
MIN_PARAMS_B = 0.01
MAX_PARAMS_B = 100_000

# Full fine-tuning with Adam (seed 000 section 04): BF16 weights 2 + BF16 gradients 2 + FP32 master 4 +
# Adam moments 4 + 4 = 16 B/param, plus 15 % for activations and fragmentation.
FULL_FT_ACTIVATION_SHARE = 0.15
# LoRA adapter: ~0.5 % of the params, 16 B of optimizer state per adapter param (seed 000 section 04).
LORA_ADAPTER_SHARE = 0.005
LORA_ADAPTER_BYTES = 16
# Activations for LoRA/QLoRA with gradient checkpointing, per 2,048 tokens x batch 1. The seed does not give
# its activation formula; LoRA - 2P = QLoRA - 0.5P in its table, and 1.6 GB + 80 MB per layer reproduces nine of
# its ten LoRA/QLoRA cells (tests/test_golden_gpurenthub.py names the tenth).
LORA_ACTIVATION_BASE_GB = 1.6
LORA_ACTIVATION_PER_LAYER_GB = 0.08
LORA_ACTIVATION_TOKENS = 2048
# GPUwithCrypto (seed 004): full fine-tuning 16-18 B/param, QLoRA 0.75 GB per billion params.
HEADROOM_FULL_LOW_BYTES = 16
HEADROOM_FULL_HIGH_BYTES = 18
HEADROOM_QLORA_GB_PER_B = 0.75


class SizingError(ValueError):
    """A request that cannot be sized; the message names the bad value."""


MAX_BILLING_SPAN = 365  # billing periods in one stated span ("for 365 days"); more is no rental question


@dataclass(slots=True)
class SizeRequest:
    """What the user asked; None means "not said" (the policy's default is then used and listed)."""

    model: str | None = None
    params_b: float | None = None
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch: int | None = None
    workload: str | None = None
    card: str | None = None
    gpu_count: int | None = None
    memory_budget_gb: float | None = None
    region: str | None = None
    assumed: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    # What kind of answer, and how it is paid: None/"size" sizes; "price" quotes `card`;
    # "compare" sets `card` beside `compare_card` for the same model.
    intent: str | None = None
    billing: str | None = None  # "hour" | "day" | "week" | "month": the period prices and the top-up are for
    coin: str | None = None  # a ticker as the user named it ("BTC"); the catalog decides whether it is taken
    cheapest: bool = False  # the user asked for the cheapest layout of any count, whatever the policy
    count_implied: bool = False  # gpu_count 1 read from an article ("a B200"): a card rented in sets takes its set
    compare_card: str | None = None
    card_vram_gb: float | None = None  # the card's own memory as written ("A100 40GB"), checked against the catalog
    followup: bool = False  # a change to the question before it (engine.answer.followup), not a question of its own
    quant: str | None = None  # a named weight format (engine.formats.quant.quant_name: "q4_k_m", "exl2:4.65")
    rope_scaling: str | None = None  # "yarn": the user extends the model's window by RoPE scaling (engine.parse)
    budget_usd: float | None = None  # money the user has for the billing span ("under $1000/mo"), in US dollars
    billing_span: int | None = None  # how many billing periods the user rents for ("for 2 weeks": 2 x week)
    gpu_memory_utilization: float | None = None  # "--gpu-memory-utilization 0.85": vLLM's share, for its check
    # A published quantized repo the question named ("Qwen/Qwen2.5-72B-Instruct-AWQ"): `model` is its base, `quant`
    # its format; the answer sizes that checkpoint and its launch command names it (engine.models.registry.named_repo)
    checkpoint: str | None = None
    # Speed (engine.speed): a decode speed each user needs ("at ≥ 15 tok/s each"), whether the question asks how
    # fast, and the prompt its time to first token is for (default: the context).
    target_tok_s: float | None = None
    speed_asked: bool = False
    prompt_tokens: int | None = None
    # A training job's size ("on 50M tokens, 3 epochs"): its GPU-hours and price (engine.speed.training).
    train_tokens: float | None = None
    epochs: float | None = None
    # The engine the question names ("with llama.cpp", "mit vLLM", a pasted launch line): "vllm" or "llama.cpp", the
    # one whose serving check runs (engine.serving.review.ENGINES); None: chosen by the format.
    engine: str | None = None


@dataclass(slots=True)
class ResolvedRequest:
    """A request with every value filled in, and the notes on what resolving it assumed (the request's own
    notes, from the parser and the user's settings, stay on the SizeRequest; engine.answer.build joins them)."""

    shape: ModelShape
    model: str | None
    params_b: float
    # A PRECISION_BYTES key; or, sized as published, the release's format ("fp8", "mxfp4"); or, sized in a named
    # format (`quant`) that is no seed precision, that format's label in lower case ("q5_k_m"): the JSON says it.
    precision: str
    weight_bytes: float | None  # None when the published weight size is used
    kv_precision: str
    context_tokens: int
    batch: int
    workload: str
    context_named: bool
    batch_named: bool
    sequence_matters: bool  # whether context and batch enter this requirement at all
    card: str | None
    gpu_count: int | None
    memory_budget_gb: float | None
    region: str | None
    notes: tuple[Note, ...] = ()
    quant: WeightFormat | None = None  # the named format the weights are sized in (inference only)
    hf_id: str | None = None  # the registry entry's Hugging Face repo (the checkpoint's, when one was named)
    checkpoint: QuantizedRepo | None = None  # the published quantized repo named, when the answer is in its format
    # The engine the answer runs it on when one is named (the question, a launch line, /set engine, --engine): the
    # speed estimate follows it (engine.speed.layout.default_engine); None: chosen by the format.
    engine: str | None = None

    def to_json(self) -> dict[str, object]:
        """The resolved values of the JSON "request" object (engine.answer.build adds "assumed" and "ignored")."""
        return {
            "model": self.model,
            "params_b": self.params_b,
            "precision": self.precision,
            "kv_precision": self.kv_precision,
            "context_tokens": self.context_tokens,
            "batch": self.batch,
            "workload": self.workload,
            "card": self.card,
            "gpu_count": self.gpu_count,
            "quant": quant_name(self.quant) if self.quant else None,
            "bits_per_weight": self.quant.bits_per_weight if self.quant else None,
            "hf_id": self.hf_id,
        }


@dataclass(slots=True, unsafe_hash=True)  # per answer: not frozen (engine.fit.selection.PerGpu)
class Component:
    """One named part of a requirement; its formula as data (`code` + `values`, see engine.formula) and as the
    English text that the JSON "formula" string carries (written when read: a requirement sized only to compare,
    for a precision hint or a capacity, shows none)."""

    name: str
    gb: float
    code: str
    values: Mapping[str, FormulaValue]

    @classmethod
    def of(cls, name: str, gb: float, code: str, **values: FormulaValue) -> Component:
        return cls(name, gb, code, values)

    @property
    def formula(self) -> str:
        return english_formula(self.code, self.values)

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "gb": self.gb, "formula": self.formula}


@dataclass(slots=True, unsafe_hash=True)  # per answer: not frozen (engine.fit.selection.PerGpu)
class Requirement:
    """The memory a request needs, as components that add up to `total_gb`.

    `low_gb` is set where the policy gives a range (GPUwithCrypto full fine-tuning 16-18 B/param); the high
    end is `total_gb` and decides the fit. The split fields feed the per-GPU view under tensor parallelism.
    `notes` says what sizing left out (a KV cache whose attention shape is not published).
    """

    components: tuple[Component, ...]
    total_gb: float
    low_gb: float | None
    weights_gb: float  # resident weights
    active_weights_gb: float  # weights read per decoded token (MoE: the active experts only)
    kv_cache_gb: float
    per_process_gb: float  # fixed cost that every GPU process pays (runtime overhead)
    scales_with_weights_gb: float  # headroom/optimizer/activations that shard like the weights
    kv_replicated: bool  # MLA latent cache: the same on every tensor-parallel rank
    notes: tuple[Note, ...] = ()

    def component(self, name: str) -> Component | None:
        for component in self.components:
            if component.name == name:
                return component
        return None

    def per_gpu_gb(self, count: int, kv_heads: int | None) -> float:
        """Memory on each of `count` GPUs under tensor parallelism.

        Weights (and what scales with them) split evenly; the KV cache splits by KV head, and a KV head is
        never split, so with fewer KV heads than cards each card holds one (replicated); the runtime overhead
        is paid once per GPU process.
        """
        if count <= 1:
            return self.total_gb
        if self.kv_replicated:
            kv_per_gpu = self.kv_cache_gb
        elif kv_heads:
            kv_per_gpu = self.kv_cache_gb * math.ceil(kv_heads / count) / kv_heads
        else:
            kv_per_gpu = self.kv_cache_gb / count
        sharded = (self.weights_gb + self.scales_with_weights_gb) / count
        return sharded + kv_per_gpu + self.per_process_gb

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"total_gb": self.total_gb, "components": [c.to_json() for c in self.components]}
        if self.low_gb is not None:
            data["low_gb"] = self.low_gb
        return data


# -- resolving a request -----------------------------------------------------------------------------------

def resolve(request: SizeRequest, policy: SizingPolicy, registry: Registry | None = None) -> ResolvedRequest:
    """Fill every value the user did not give from the model and the policy; note each filled value.

    Values are checked in the order they are resolved, so the first bad one is the one named."""
    notes: list[Note] = []
    workload = _resolve_workload(request, notes)
    shape, params_b, model_id = _resolve_model(request, registry, notes)
    try:  # a named format sizes inference weights with its real bits (engine.formats.quant)
        quant = request_format(request.quant, workload, notes)
    except UnknownFormat as exc:
        raise SizingError(str(exc)) from None
    precision, weight_bytes = _resolve_precision(request, shape, workload, policy, notes)
    if quant is not None:
        precision, weight_bytes = quant_precision(request.precision and precision, shape, quant, notes)
    checkpoint = _named_checkpoint(request, shape, quant if weight_bytes is not None else None, registry)
    if checkpoint is not None and quant is not None:
        notes.append(_checkpoint_note(checkpoint, quant, shape))
    # a published release's size (weight_bytes None) needs no note on what a real 4-bit checkpoint weighs
    sized_bits = workload == "inference" and weight_bytes is not None
    notes.extend(weights_notes(shape, params_b, precision if sized_bits else "",
                               quant if weight_bytes is not None else None))
    kv_precision = _resolve_kv_precision(request, policy)
    matters = sequence_matters(request, shape, workload, policy)
    context_tokens, batch = resolve_sequence(request, shape, workload, policy, matters, notes)
    if request.context_tokens is not None:
        _check_range("context", context_tokens, 0, MAX_CONTEXT_TOKENS, " tokens")
    if request.batch is not None:
        _check_range("batch", batch, 0, MAX_BATCH, "")
    notes.extend(sequence_notes(request, shape, workload, policy, matters, kv_precision, context_tokens))
    if request.gpu_count is not None and not 1 <= request.gpu_count <= 64:
        raise SizingError(f"GPU count {request.gpu_count} is outside 1..64")
    if request.memory_budget_gb is not None and not 0 < request.memory_budget_gb <= 1_000_000:
        raise SizingError(f"memory budget {request.memory_budget_gb:g} GB is not a sensible size")

    return ResolvedRequest(
        shape=shape,
        model=model_id,
        params_b=params_b,
        precision=precision,
        weight_bytes=weight_bytes,
        kv_precision=kv_precision,
        context_tokens=context_tokens,
        batch=batch,
        workload=workload,
        context_named=request.context_tokens is not None,
        batch_named=request.batch is not None,
        sequence_matters=matters,
        card=request.card,
        gpu_count=request.gpu_count,
        memory_budget_gb=request.memory_budget_gb,
        region=request.region,
        notes=tuple(notes),
        quant=quant,
        hf_id=checkpoint.repo if checkpoint is not None else hf_repo(shape.id) if model_id else None,
        checkpoint=checkpoint,
    )


def _checkpoint_note(repo: QuantizedRepo, fmt: WeightFormat, shape: ModelShape) -> Note:
    """Which checkpoint the answer sized: the repo named, its format and its size (or that its format's bits size
    it where the registry has no size for it)."""
    if fmt.is_gguf:  # a repo of GGUF files: the file of the type asked for (its size is the type's, or published)
        return Note(f"{repo.repo}: the {fmt.label} file of {shape.name}", "checkpoint_named_file", repo=repo.repo,
                    format=fmt.label, model=shape.name)
    label = fmt.label
    if repo.gb is not None:
        return Note(f"{repo.repo}: the {label} checkpoint of {shape.name}, {fmt_gb(repo.gb)}", "checkpoint_named",
                    repo=repo.repo, format=label, model=shape.name, weights_gb=repo.gb)
    return Note(f"{repo.repo}: the {label} checkpoint of {shape.name}, sized by the format's bits",
                "checkpoint_named_bits", repo=repo.repo, format=label, model=shape.name)


def _named_checkpoint(request: SizeRequest, shape: ModelShape, quant: WeightFormat | None,
                      registry: Registry | None) -> QuantizedRepo | None:
    """The quantized repo the question named, when the answer sizes its model in its format (a follow-up "and in
    fp8?" leaves an AWQ repo behind: the answer is then the FP8 one, and names no AWQ repo)."""
    if not request.checkpoint or quant is None:
        return None
    named = (registry or default_registry()).named_repo(request.checkpoint)
    if named is None or named[0].id != shape.id or named[1] is None:
        return None
    repo = named[1]
    if repo.quant == GGUF_REPO:
        return repo if quant.is_gguf else None
    fmt = checkpoint_format(repo.quant)
    return repo if fmt is not None and fmt.name == quant.name else None


def _resolve_workload(request: SizeRequest, notes: list[Note]) -> str:
    workload = (request.workload or "inference").lower()
    if workload not in WORKLOADS:
        raise SizingError(f"unknown workload {request.workload!r} (use one of {', '.join(WORKLOADS)})")
    if request.workload is None:
        notes.append(Note("workload: inference (default)", "default_workload", workload="inference"))
    return workload


def _with_yarn(shape: ModelShape, tokens: int | None, notes: list[Note]) -> ModelShape:
    """The user said "YaRN": the window the card's YaRN setting gives (Qwen3 8B: 131,072), said in a note; where the
    card publishes none, the config's window stays, said when the context asked for is beyond it."""
    extended = yarn_extended(shape)
    if extended.yarn_applied and extended.yarn is not None:
        yarn = extended.yarn
        original = yarn.original_max_position_embeddings
        notes.append(Note(f"{shape.name} with YaRN: factor {yarn.factor:g} over {original:,} tokens, a "
                          f"{yarn.window:,}-token window", "yarn_window", model=shape.name,
                          factor=yarn.factor, original=yarn.original_max_position_embeddings, tokens=yarn.window))
    elif shape.yarn is None and shape.context_max and (tokens is None or tokens > shape.context_max):
        notes.append(Note(f"no published YaRN setting for {shape.name}: its window stays "
                          f"{shape.context_max or 0:,} tokens", "yarn_unpublished", model=shape.name,
                          tokens=shape.context_max or 0))
    return extended


def _resolve_model(request: SizeRequest, registry: Registry | None,
                   notes: list[Note]) -> tuple[ModelShape, float, str | None]:
    """The model's shape, its parameter count and registry id (None for a bare size)."""
    if request.model:
        registry = registry or default_registry()
        shape = registry.get(request.model)
        if shape is None:
            raise SizingError(f"unknown model {request.model!r}")
        inference = request.workload in (None, "inference")  # training sizes no window (same shape either way)
        if inference and request.rope_scaling == "yarn":
            shape = _with_yarn(shape, request.context_tokens, notes)
        if inference and request.context_tokens is not None \
                and (wider := registry.wider_release(shape, request.context_tokens)):
            # "phi-3 medium at 128k", "and at 128k?" after Phi-3 Medium: the release whose window holds it
            notes.append(Note(f"sized as {wider.name}: {request.context_tokens:,} tokens is beyond {shape.name}'s "
                              f"{shape.context_max:,}-token window", "model_window", model=wider.name,
                              base=shape.name, tokens=request.context_tokens, max_tokens=shape.context_max))
            shape = wider
        elif inference and request.intent == "max_context" and request.context_tokens is None \
                and (wider := registry.wider_release(shape, MAX_CONTEXT_TOKENS)):
            # "max context for phi-3 medium on an H100": the same weights as the release with the longest window
            notes.append(Note(f"sized as {wider.name}, the release with the longest window "
                              f"({wider.context_max:,} tokens)", "model_window_longest", model=wider.name,
                              tokens=wider.context_max))
            shape = wider
        if request.params_b is not None and abs(request.params_b - shape.params_b) > 1e-9:
            notes.append(Note(f"{fmt_num(request.params_b)}B ignored: {shape.name} has {fmt_num(shape.params_b)}B",
                              "params_ignored", given=request.params_b, model=shape.name, params=shape.params_b))
        params_b, model_id = shape.params_b, shape.id
    elif request.params_b is not None:
        params_b = float(request.params_b)
        _check_params(params_b)
        shape, nominal = typical_shape(params_b)
        summary = shape.summary()
        if shape.derived_from:  # a size off the seeds' rows: a shape of today, from the registry's models
            model, *nearest = shape.derived_from
            notes.append(Note(f"shape of today for {fmt_num(nominal)}B, that of {model} (the median KV cache of "
                              f"{', '.join(shape.derived_from)}): {summary.english()}", "derived_shape",
                              size=nominal, model=model, models=list(shape.derived_from), shape=summary))
        else:
            notes.append(Note(f"shape of a typical {fmt_num(nominal)}B model: {summary.english()}", "typical_shape",
                              size=nominal, shape=summary))
        model_id = None
    else:
        raise SizingError("no model or parameter count given")
    _check_params(params_b)
    return shape, params_b, model_id


def _resolve_precision(request: SizeRequest, shape: ModelShape, workload: str, policy: SizingPolicy,
                       notes: list[Note]) -> tuple[str, float | None]:
    """The weights' precision and bytes per parameter (None: the published weight size is used)."""
    if request.precision is not None:
        precision = canonical_precision(request.precision)
        if precision is None:
            raise SizingError(f"unknown precision {request.precision!r} (use fp32, bf16, fp16, fp8, int8 or int4)")
        published = shape.published_weights  # the release is in the precision asked: its published size
        if published is None or workload != "inference" or published.format.lower() != precision:
            return precision, PRECISION_BYTES[precision]
    published = shape.published_weights
    if published is not None and workload == "inference":
        notes.append(Note(f"weights as published: {fmt_gb(published.gb)} ({published.format.upper()})",
                          "published", weights_gb=published.gb, format=published.format.upper()))
        return published.format, None
    if workload == "qlora":
        return "int4", PRECISION_BYTES["int4"]  # QLoRA's base is 4-bit NF4 by definition
    release = (shape.published_format or "").lower()  # a native FP8/INT4 release whose size was not read
    precision = release if workload == "inference" and release in PRECISION_BYTES else policy.default_precision
    if workload in ("inference", "lora"):
        said, code = ("as released", "release_precision") if precision == release else ("default", "default_precision")
        notes.append(Note(f"precision: {precision.upper()} ({said})", code, precision=precision.upper()))
    return precision, PRECISION_BYTES[precision]


def _resolve_kv_precision(request: SizeRequest, policy: SizingPolicy) -> str:
    if request.kv_precision is None:
        return policy.default_kv_precision
    kv_precision = canonical_kv_precision(request.kv_precision)
    if kv_precision is None:
        raise SizingError(f"unknown KV cache precision {request.kv_precision!r} (use fp16, bf16, fp8 or int8)")
    return kv_precision


def _check_params(params_b: float) -> None:
    if math.isfinite(params_b) and 0 < params_b < MIN_PARAMS_B:
        raise SizingError(f"params {params_b:g}B is too small to size: at least {fmt_num(MIN_PARAMS_B)}B "
                          f"(10M parameters)")
    _check_range("params", params_b, 0, MAX_PARAMS_B, "B")


def _check_range(what: str, value: float, low_exclusive: float, high: float, unit: str) -> None:
    if not math.isfinite(value) or value <= low_exclusive or value > high:
        raise SizingError(f"{what} {fmt_num(value)}{unit} is out of range (must be above {fmt_num(low_exclusive)} "
                          f"and at most {fmt_num(high)}{unit})")


# -- KV cache ----------------------------------------------------------------------------------------------

def kv_cache(shape: ModelShape, kv_bytes: float, tokens: int, batch: int) -> Component | None:
    """2 x layers x kv_heads x head_dim x bytes x tokens x batch, with sliding windows and MLA latents.

    Sliding-window layers hold at most the window (Gemma 2/3, Mistral 7B v0.1, gpt-oss; Llama 4's chunked layers
    hold at most a chunk); MLA models (DeepSeek V3/R1) cache one latent of kv_lora_rank + qk_rope_head_dim per layer
    and token, with no K/V pair, and DeepSeek V3.2 its indexer keys next to it. Only the layers that keep a
    per-token cache are counted (`ModelShape.kv_layers`): Qwen3-Next's Gated DeltaNet and MiniMax's lightning
    layers hold a fixed state per request instead. Gemma 4's global layers have a shape of their own
    (registry.GlobalAttention). The seeds' shapes have none of these, so their rows are the seeds' formula unchanged.
    Returns None when the registry does not know the attention shape."""
    if not shape.kv_known:
        return None
    layers = shape.kv_layers
    assert layers is not None
    if shape.is_mla:
        assert shape.mla_kv_lora_rank is not None and shape.mla_qk_rope_head_dim is not None
        width = shape.mla_kv_lora_rank + shape.mla_qk_rope_head_dim
        indexer = shape.indexer_bytes_per_token_per_layer
        gb = layers * (width * kv_bytes + indexer) * tokens * batch / GB
        if indexer:
            return Component.of("kv_cache", gb, "kv_mla_indexer", layers=layers, rank=shape.mla_kv_lora_rank,
                                rope=shape.mla_qk_rope_head_dim, bytes=kv_bytes, indexer=indexer, tokens=tokens,
                                batch=batch, kv_gb=gb)
        return Component.of("kv_cache", gb, "kv_mla", layers=layers, rank=shape.mla_kv_lora_rank,
                            rope=shape.mla_qk_rope_head_dim, bytes=kv_bytes, tokens=tokens, batch=batch, kv_gb=gb)
    assert shape.kv_heads is not None and shape.head_dim is not None
    window_layers = shape.sliding_layers if shape.sliding_window else 0
    full_layers = layers - window_layers
    per_layer_token = 2 * shape.kv_heads * shape.head_dim * kv_bytes
    glob = shape.global_attention
    if glob is not None:
        # Gemma 4: the global layers keep their own KV heads and head dim; K = V is stored as K and V (vLLM 0.34
        # models/gemma4.py), so a global layer is 2 x kv_heads x head_dim per token like any other.
        windowed = min(tokens, shape.sliding_window or tokens)
        elements = glob.layers * glob.kv_heads * glob.head_dim * tokens + window_layers * shape.kv_heads * \
            shape.head_dim * windowed
        gb = 2 * elements * kv_bytes * batch / GB
        return Component.of("kv_cache", gb, "kv_global", global_layers=glob.layers, global_kv_heads=glob.kv_heads,
                            global_head_dim=glob.head_dim, tokens=tokens, window_layers=window_layers,
                            kv_heads=shape.kv_heads, head_dim=shape.head_dim, window_tokens=windowed, bytes=kv_bytes,
                            batch=batch, kv_gb=gb)
    if window_layers and tokens > (shape.sliding_window or 0):
        windowed = min(tokens, shape.sliding_window or tokens)
        gb = per_layer_token * (full_layers * tokens + window_layers * windowed) * batch / GB
        return Component.of("kv_cache", gb, "kv_window", kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                            bytes=kv_bytes, full_layers=full_layers, tokens=tokens, window_layers=window_layers,
                            window_tokens=windowed, batch=batch, kv_gb=gb)
    gb = per_layer_token * layers * tokens * batch / GB
    state = shape.linear_state
    if state is not None and shape.no_kv_layers:
        # Gated DeltaNet layers keep a fixed state per request (registry.LinearState), whatever the context.
        state_gb = shape.no_kv_layers * state.page_bytes() * batch / GB
        return Component.of("kv_cache", gb + state_gb, "kv_linear", layers=layers, kv_heads=shape.kv_heads,
                            head_dim=shape.head_dim, bytes=kv_bytes, tokens=tokens, batch=batch,
                            linear_layers=shape.no_kv_layers, state_mb=round(state.page_bytes() / 1e6, 2),
                            kv_gb=gb + state_gb)
    return Component.of("kv_cache", gb, "kv", layers=layers, kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                        bytes=kv_bytes, tokens=tokens, batch=batch, kv_gb=gb)


def kv_split_per_token(shape: ModelShape, kv_bytes: float = 2) -> tuple[float, float, int, float]:
    """The KV cache of one sequence as (bytes per token over the layers that keep every token, bytes per token over
    the layers that keep a window, the window, fixed bytes of linear-attention state): kv_cache at L tokens is
    full x L + windowed x min(L, window) + fixed. Zeros when the shape is not known. What a decode step reads
    (engine.speed)."""
    if not shape.kv_known or shape.kv_layers is None:
        return 0.0, 0.0, 0, 0.0
    if shape.is_mla:
        assert shape.mla_kv_lora_rank is not None and shape.mla_qk_rope_head_dim is not None
        width = shape.mla_kv_lora_rank + shape.mla_qk_rope_head_dim
        return shape.kv_layers * (width * kv_bytes + shape.indexer_bytes_per_token_per_layer), 0.0, 0, 0.0
    assert shape.kv_heads is not None and shape.head_dim is not None
    per_layer = 2 * shape.kv_heads * shape.head_dim * kv_bytes
    window_layers = shape.sliding_layers if shape.sliding_window else 0
    glob = shape.global_attention
    full = glob.layers * 2 * glob.kv_heads * glob.head_dim * kv_bytes if glob else \
        (shape.kv_layers - window_layers) * per_layer
    state = shape.linear_state
    fixed = float(shape.no_kv_layers * state.page_bytes()) if state is not None and shape.no_kv_layers else 0.0
    return full, window_layers * per_layer, (shape.sliding_window or 0) if window_layers else 0, fixed


def kv_bytes_per_token(shape: ModelShape, kv_bytes: float = 2) -> float | None:
    """Full-context KV bytes per token and sequence (no window cap, no fixed linear-attention state), as the seeds'
    tables list it."""
    if not shape.kv_known:
        return None
    full, windowed, _, _ = kv_split_per_token(shape, kv_bytes)
    return float(round(full + windowed))


# -- weights -----------------------------------------------------------------------------------------------

def _weights(resolved: ResolvedRequest) -> Component:
    shape = resolved.shape
    named = resolved.checkpoint
    if named is not None and named.gb is not None and resolved.quant is not None and not resolved.quant.is_gguf:
        # the repo the question named, at its published (or layout-derived) size: engine/models/data/*.yaml
        return Component.of("weights", named.gb, "weights_published", model=named.hf_id,
                            format=resolved.quant.label, weights_gb=named.gb)
    # real bits, scales included (engine.formats.quant)
    if resolved.quant is not None and resolved.weight_bytes is not None:
        gb = quant_weights_gb(resolved.params_b, resolved.quant, shape)  # bits: effective over the whole model
        return Component.of("weights", gb, "weights_quant", params=resolved.params_b, bits=gb * 8 / resolved.params_b,
                            format=resolved.quant.label, weights_gb=gb)
    if resolved.weight_bytes is None:
        assert shape.published_weights is not None
        published = shape.published_weights
        return Component.of("weights", published.gb, "weights_published", model=shape.name,
                            format=published.format.upper(), weights_gb=published.gb)
    gb = resolved.params_b * resolved.weight_bytes
    return Component.of("weights", gb, "weights", params=resolved.params_b, bytes=resolved.weight_bytes,
                        weights_gb=gb)


def _frozen_base(resolved: ResolvedRequest) -> Component:
    """LoRA's frozen base in the precision asked for (BF16 unless said)."""
    bytes_per_param = resolved.weight_bytes if resolved.weight_bytes is not None else 2
    gb = resolved.params_b * bytes_per_param
    return Component.of("weights", gb, "weights_frozen", params=resolved.params_b, bytes=bytes_per_param,
                        weights_gb=gb)


# The notes of _kv_unknown: no KV cache in the sum, and why.
KV_NOT_INCLUDED = ("kv_unknown", "kv_unmodelled_indexer", "kv_unmodelled_compressed")


def _kv_unknown(shape: ModelShape) -> tuple[Note, ...]:
    """Why no KV cache is in the sum: the shape is not published, or part of the cache is not per-token K/V the
    formula can size (registry.ModelShape.kv_unmodelled: an indexer whose cache dtype was not read)."""
    if not shape.is_language_model:
        return ()  # a diffusion transformer has no KV cache: nothing is missing
    if shape.kv_not_sized == "compressed_attention":
        return (Note(f"KV cache not included: {shape.name} caches a short window and a compressed history per layer "
                     "(compressed sparse attention), which the formula does not size", "kv_unmodelled_compressed",
                     model=shape.name),)
    if shape.indexer_cache is not None and shape.kv_unmodelled is not None:
        return (Note(f"KV cache not included: {shape.name} also caches its sparse-attention indexer keys per token, "
                     "which the formula does not size", "kv_unmodelled_indexer", model=shape.name),)
    return (Note(f"KV cache not included: the attention shape of {shape.name} is not published", "kv_unknown",
                 model=shape.name),)


def _kv_layers_note(shape: ModelShape) -> tuple[Note, ...]:
    """Which layers the KV line counts, where some keep no per-token cache (said, so "12 layers" of a 48-layer
    model is not read as a mistake)."""
    glob = shape.global_attention
    if glob is not None and shape.kv_known:
        stored = ", K = V stored as K and V, as vLLM and llama.cpp do" if glob.k_eq_v else ""
        return (Note(f"KV cache: the {glob.layers} global layers of {shape.name} keep {glob.kv_heads} KV heads of "
                     f"{glob.head_dim} for every token{stored}; its {shape.sliding_layers} sliding layers keep "
                     f"{shape.kv_heads} of {shape.head_dim} for the window only",
                     "kv_layers_global_k_eq_v" if glob.k_eq_v else "kv_layers_global", model=shape.name,
                     layers=glob.layers, kv_heads=glob.kv_heads, head_dim=glob.head_dim,
                     window_layers=shape.sliding_layers, window_kv_heads=shape.kv_heads,
                     window_head_dim=shape.head_dim),)
    if not shape.no_kv_layers or shape.layers is None or not shape.kv_known:
        return ()
    if shape.cross_attends_image:
        return (Note(f"KV cache counts the {shape.kv_layers} self-attention layers of {shape.name}; its "
                     f"{shape.no_kv_layers} cross-attention layers keep K/V of the image only, not per text token",
                     "kv_layers_cross_attention", model=shape.name, kv_layers=shape.kv_layers,
                     layers=shape.layers, no_kv_layers=shape.no_kv_layers),)
    state = shape.linear_state
    if state is not None:
        state_mb = round(shape.no_kv_layers * state.page_bytes() / 1e6)
        return (Note(f"KV cache counts the {shape.kv_layers} full-attention layers of {shape.name} and the fixed "
                     f"state of its {shape.no_kv_layers} linear-attention layers, {state_mb} MB per request",
                     "kv_layers_linear_state", model=shape.name, kv_layers=shape.kv_layers,
                     no_kv_layers=shape.no_kv_layers, state_mb=state_mb),)
    return (Note(f"KV cache counts the {shape.kv_layers} full-attention layers of {shape.name}; its "
                 f"{shape.no_kv_layers} linear-attention layers keep a fixed state per request instead",
                 "kv_layers_linear_attention", model=shape.name, kv_layers=shape.kv_layers, layers=shape.layers,
                 no_kv_layers=shape.no_kv_layers),)


def _active_share(shape: ModelShape) -> float:
    return shape.active_params_b / shape.params_b if shape.params_b else 1.0


# -- policies ----------------------------------------------------------------------------------------------

def size(resolved: ResolvedRequest, policy: SizingPolicy) -> Requirement:
    """The memory requirement of a resolved request under the provider's sizing policy."""
    if policy.policy == "breakdown":
        return _size_breakdown(resolved, policy)
    return _size_headroom(resolved, policy)


def _requirement(components: list[Component], *, weights_gb: float, active_weights_gb: float | None = None,
                 kv_cache_gb: float = 0.0, per_process_gb: float = 0.0, scales_with_weights_gb: float = 0.0,
                 kv_replicated: bool = False, low_gb: float | None = None,
                 notes: tuple[Note, ...] = ()) -> Requirement:
    return Requirement(
        components=tuple(components), total_gb=sum(component.gb for component in components), low_gb=low_gb,
        weights_gb=weights_gb, active_weights_gb=weights_gb if active_weights_gb is None else active_weights_gb,
        kv_cache_gb=kv_cache_gb, per_process_gb=per_process_gb, scales_with_weights_gb=scales_with_weights_gb,
        kv_replicated=kv_replicated, notes=notes,
    )


def _size_breakdown(resolved: ResolvedRequest, policy: SizingPolicy) -> Requirement:
    p = resolved.params_b
    shape = resolved.shape
    overhead = Component.of("overhead", policy.overhead_gb, "runtime_overhead", overhead_gb=policy.overhead_gb)
    if resolved.workload == "inference":
        weights = _weights(resolved)
        kv = kv_cache(shape, KV_PRECISION_BYTES[resolved.kv_precision], resolved.context_tokens, resolved.batch)
        components = [weights] if kv is None else [weights, kv]
        return _requirement(
            [*components, overhead], weights_gb=weights.gb, active_weights_gb=weights.gb * _active_share(shape),
            kv_cache_gb=kv.gb if kv else 0.0, per_process_gb=overhead.gb, kv_replicated=shape.is_mla,
            notes=_kv_unknown(shape) if kv is None else _kv_layers_note(shape),
        )
    if resolved.workload == "full":
        weights = Component.of("weights", 2 * p, "weights_bf16", params=p, bytes=2, weights_gb=2 * p)
        gradients = Component.of("gradients", 2 * p, "gradients_bf16", params=p, bytes=2, gradients_gb=2 * p)
        optimizer = Component.of("optimizer", 12 * p, "optimizer_adam", params=p, bytes=12, optimizer_gb=12 * p)
        base = 16 * p
        activations_gb = FULL_FT_ACTIVATION_SHARE * base
        activations = Component.of("activations", activations_gb, "activations_share",
                                   percent=FULL_FT_ACTIVATION_SHARE * 100, base_gb=base, activations_gb=activations_gb)
        return _requirement(
            [weights, gradients, optimizer, activations], weights_gb=weights.gb,
            scales_with_weights_gb=gradients.gb + optimizer.gb + activations.gb,
        )
    # LoRA / QLoRA: frozen base + adapter with its optimizer state + activations + runtime overhead.
    if resolved.workload == "qlora":
        base_bytes = PRECISION_BYTES["int4"]
        weights = Component.of("weights", base_bytes * p, "weights_frozen_nf4", params=p, bytes=base_bytes,
                               weights_gb=base_bytes * p)
    else:
        weights = _frozen_base(resolved)
    adapter_gb = LORA_ADAPTER_SHARE * p * LORA_ADAPTER_BYTES
    adapter = Component.of("adapter", adapter_gb, "lora_adapter", percent=LORA_ADAPTER_SHARE * 100, params=p,
                           bytes=LORA_ADAPTER_BYTES, adapter_gb=adapter_gb)
    layers = shape.layers or typical_shape(p)[0].layers or 0
    scale = resolved.context_tokens * resolved.batch / LORA_ACTIVATION_TOKENS
    activations_gb = (LORA_ACTIVATION_BASE_GB + LORA_ACTIVATION_PER_LAYER_GB * layers) * scale
    activations = Component.of(
        "activations", activations_gb, "lora_activations", base=LORA_ACTIVATION_BASE_GB,
        per_layer=LORA_ACTIVATION_PER_LAYER_GB, layers=layers, tokens=resolved.context_tokens, batch=resolved.batch,
        per_tokens=LORA_ACTIVATION_TOKENS, activations_gb=activations_gb,
    )
    return _requirement(
        [weights, adapter, activations, overhead], weights_gb=weights.gb, per_process_gb=overhead.gb,
        scales_with_weights_gb=adapter.gb + activations.gb,
    )


def _size_headroom(resolved: ResolvedRequest, policy: SizingPolicy) -> Requirement:
    if resolved.workload == "inference":
        return _size_headroom_inference(resolved, policy.headroom_factor)
    p = resolved.params_b
    if resolved.workload == "full":
        weights = Component.of("weights", 2 * p, "weights_bf16", params=p, bytes=2, weights_gb=2 * p)
        gradients = Component.of("gradients", 2 * p, "gradients", params=p, bytes=2, gradients_gb=2 * p)
        optimizer = Component.of("optimizer", 12 * p, "optimizer_adamw", params=p, bytes=12, optimizer_gb=12 * p)
        upper_bytes = HEADROOM_FULL_HIGH_BYTES - HEADROOM_FULL_LOW_BYTES
        upper = Component.of("optimizer_upper", upper_bytes * p, "optimizer_upper", params=p, bytes=upper_bytes,
                             optimizer_gb=upper_bytes * p)
        return _requirement(
            [weights, gradients, optimizer, upper], low_gb=HEADROOM_FULL_LOW_BYTES * p, weights_gb=weights.gb,
            scales_with_weights_gb=gradients.gb + optimizer.gb + upper.gb,
        )
    if resolved.workload == "lora":
        factor = policy.headroom_factor
        weights = _frozen_base(resolved)
        buffer_gb = weights.gb * (factor - 1)
        buffer = Component.of("overhead", buffer_gb, "planning_buffer", factor=factor, overhead_gb=buffer_gb)
        return _requirement([weights, buffer], weights_gb=weights.gb, scales_with_weights_gb=buffer.gb)
    base_bytes = PRECISION_BYTES["int4"]
    weights = Component.of("weights", base_bytes * p, "weights_4bit", params=p, bytes=base_bytes,
                           weights_gb=base_bytes * p)
    rest_per_b = HEADROOM_QLORA_GB_PER_B - base_bytes
    adapter = Component.of("adapter", rest_per_b * p, "qlora_rest", params=p, rest=rest_per_b,
                           per_b=HEADROOM_QLORA_GB_PER_B, adapter_gb=rest_per_b * p)
    return _requirement([weights, adapter], weights_gb=weights.gb, scales_with_weights_gb=adapter.gb)


def _size_headroom_inference(resolved: ResolvedRequest, factor: float) -> Requirement:
    """Seed 004: weights x 1.2; a named context (or batch) adds the KV cache, never less than the x1.2 rule."""
    shape = resolved.shape
    weights = _weights(resolved)
    headroom_gb = weights.gb * (factor - 1)
    percent = (factor - 1) * 100
    kv = None
    notes: tuple[Note, ...] = ()
    if resolved.context_named or resolved.batch_named:
        kv = kv_cache(shape, KV_PRECISION_BYTES[resolved.kv_precision], resolved.context_tokens, resolved.batch)
        notes = _kv_unknown(shape) if kv is None else _kv_layers_note(shape)
    components = [weights]
    if kv is not None:
        components.append(kv)
        rest = headroom_gb - kv.gb
        if rest > 0:
            components.append(Component.of("overhead", rest, "headroom_after_kv", percent=percent,
                                           headroom_gb=headroom_gb, overhead_gb=rest))
    else:
        components.append(Component.of("overhead", headroom_gb, "headroom", percent=percent, weights_gb=weights.gb,
                                       overhead_gb=headroom_gb))
    kv_gb = kv.gb if kv else 0.0
    return _requirement(
        components, weights_gb=weights.gb, active_weights_gb=weights.gb * _active_share(shape), kv_cache_gb=kv_gb,
        scales_with_weights_gb=max(0.0, headroom_gb - kv_gb), kv_replicated=shape.is_mla, notes=notes,
    )
