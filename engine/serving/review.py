"""The serving check on an answer's layouts: which engine, the model as it reads it, one check per
layout cached within the answer, and the cheapest layout that passes both the rule and the engine."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from catalog.schema import Card, Catalog
from engine.fit.ranking import plan
from engine.fit.selection import ROOM_GB, Layout, Rules, evaluate_layout, has_room
from engine.formats.precision import find_precision
from engine.formats.table import canonical_format
from engine.notes import Note
from engine.serving import (
    Gpu,
    LlamaCppSettings,
    ResidentWeights,
    ServingCheck,
    ServingModel,
    ServingShapeError,
    VllmSettings,
    serving_check,
)
from engine.serving.checkpoint import Checkpoint, UnservedFormat, card_notes, checkpoint_for
from engine.serving.constants import MIB
from engine.serving.memory import ModelDims
from engine.serving.vllm import settings_for_version
from engine.serving.weights import mxfp4_backend, mxfp4_resident
from engine.sizing.rule import GB, KV_NOT_INCLUDED, PRECISION_BYTES, Requirement, ResolvedRequest

ENGINES = ("vllm", "llama.cpp")
# A failing check with one of these notes fails on every layout: no search for one that passes.
NOWHERE = ("serving_context_over_max", "serving_v_cache_needs_fa")
UNAVAILABLE = ("serving_unavailable", "serving_format_unserved")  # why an answer has no serving check, said once


@dataclass(frozen=True, slots=True)
class ServingOptions:
    """What the user chose for the check (CLI flags, /set engine); None: the engine's default."""

    engine: str | None = None
    tp: int | None = None  # check the fit's card at this count when no card/count was named
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    vllm_version: str | None = None  # a release whose accounting the check follows ("0.11"); None: the newest

    def __post_init__(self) -> None:
        if self.vllm_version is not None:
            settings_for_version(self.vllm_version)  # a ValueError names a version the check does not know
        if self.engine is not None and self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r} (use vllm or llama.cpp)")
        if self.tp is not None and not 1 <= self.tp <= 64:
            raise ValueError(f"--tp {self.tp} is outside 1..64")
        if self.max_num_batched_tokens is not None and not 1 <= self.max_num_batched_tokens <= 1_000_000:
            raise ValueError(f"max_num_batched_tokens {self.max_num_batched_tokens} is outside 1..1,000,000")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization {self.gpu_memory_utilization:g} is outside (0, 1]")


def _kv_types(kv: str) -> tuple[str, str]:
    """The KV cache precision as (vLLM's --kv-cache-dtype, llama.cpp's cache type), from its row in the formats
    table; a precision with no KV cache type of its own is stored at 16 bit ("auto", "f16")."""
    row = find_precision(kv)
    cache = row.kv_cache if row is not None else None
    return (cache.vllm, cache.llama_cpp) if cache is not None else ("auto", "f16")


def engine_for(resolved: ResolvedRequest, options: ServingOptions | None = None) -> str:
    """The engine asked for, else llama.cpp for a GGUF type and vLLM for every safetensors format (the named
    format first: the parser reads "q4_k_m" as precision INT4 with the format Q4_K_M)."""
    if options is not None and options.engine is not None:
        return options.engine
    fmt = resolved.quant or canonical_format(resolved.precision)
    return "llama.cpp" if fmt is not None and fmt.is_gguf else "vllm"


def _bytes_per_param(resolved: ResolvedRequest, checkpoint: Checkpoint) -> float | None:
    if checkpoint.fmt is not None:  # the checkpoint's own format (bnb NF4 for vLLM's in-flight 4-bit of "INT4")
        return checkpoint.fmt.bits_per_weight / 8
    if resolved.weight_bytes is not None:
        return resolved.weight_bytes
    if resolved.precision in PRECISION_BYTES:
        return PRECISION_BYTES[resolved.precision]
    fmt = canonical_format(resolved.precision)
    return fmt.bits_per_weight / 8 if fmt is not None else None


_MODELS: dict[tuple[int, float | None, str, str | None, float, str, str | None],
              tuple[ServingModel, Checkpoint]] = {}


def serving_checkpoint(resolved: ResolvedRequest, engine: str = "vllm") -> tuple[ServingModel, Checkpoint]:
    """`_serving_model` and the checkpoint it is, one pair per shape, format and engine: it reads nothing else of
    the request."""
    shape = resolved.shape
    quant = resolved.quant.name if resolved.quant is not None else None
    named = resolved.checkpoint.hf_id if resolved.checkpoint is not None else None
    key = (id(shape), resolved.weight_bytes, resolved.precision, quant, resolved.params_b, engine, named)
    found = _MODELS.get(key)
    if found is not None and found[0].shape is shape:  # the entry keeps its shape alive: its id is not reused
        return found
    checkpoint = checkpoint_for(resolved, engine)
    found = (_serving_model(resolved, checkpoint), checkpoint)
    if len(_MODELS) >= 1024:
        _MODELS.clear()
    _MODELS[key] = found
    return found


def _serving_model(resolved: ResolvedRequest, checkpoint: Checkpoint) -> ServingModel:
    """The model as the check reads it: the published checkpoint's size when the answer uses it, else every
    parameter at the checkpoint's bytes (the answer's precision, or the format of the checkpoint the command names),
    with the embedding and output matrices at 16 bit where the registry knows the vocabulary and hidden size
    (config.json; else the check notes its Llama-like assumption) and the transformer body set to the registry's
    size of that checkpoint where it gives one; and the repo the launch command names."""
    shape = resolved.shape
    published = shape.published_weights
    if resolved.weight_bytes is None and published is not None:
        weights = ResidentWeights(body_bytes=published.gb * GB)
    else:
        per_param = _bytes_per_param(resolved, checkpoint)
        if per_param is None:
            raise ValueError(f"the serving check has no bytes per weight for {resolved.precision}")
        language, vision = _language_and_vision_params_b(resolved)
        weights = ResidentWeights.from_precision(language, per_param, vocab_size=shape.vocab_size,
                                                 hidden_size=shape.hidden_size,
                                                 tied=bool(shape.tie_word_embeddings))
        weights = dataclasses.replace(weights, body_bytes=weights.body_bytes + vision * 1e9 * VISION_BYTES_PER_PARAM)
        weights = _sized_as_published(weights, checkpoint)
    dims = None
    if shape.hidden_size and shape.intermediate_size and shape.vocab_size:
        dims = ModelDims(shape.hidden_size, shape.intermediate_size, shape.vocab_size,
                         moe=shape.experts_total is not None, experts_active=shape.experts_active or 0,
                         multimodal=shape.kind == "vlm")
    return ServingModel(shape=shape, weights=weights, dims=dims, repo=checkpoint.repo)


def _mxfp4_on_card(resolved: ResolvedRequest, model: ServingModel, card: Card, version: str) -> ServingModel:
    """A published MXFP4 MoE checkpoint (gpt-oss) as vLLM lays its experts out on this card's architecture
    (engine.serving.weights.mxfp4_resident): 64.38 GiB of gpt-oss-120b on an H100 (Triton), 65.97 with Marlin."""
    shape, published = resolved.shape, resolved.shape.published_weights
    if resolved.weight_bytes is not None or published is None or published.format.lower() != "mxfp4":
        return model
    layers, experts, hidden = shape.layers, shape.experts_total, shape.hidden_size
    intermediate = shape.intermediate_size
    if not (layers and experts and hidden and intermediate):
        return model
    triton = tuple(int(part) for part in version.split(".")) >= (0, 11, 0)
    backend = mxfp4_backend(card.architecture, triton_on_hopper=triton)
    body = mxfp4_resident(published.gb * GB, layers=layers, experts=experts, hidden=hidden,
                          intermediate=intermediate, backend=backend)
    return dataclasses.replace(model, weights=dataclasses.replace(model.weights, body_bytes=body))


def _cross_attention_vlm(resolved: ResolvedRequest) -> bool:
    """Llama 3.2 Vision: a vision LLM whose image enters through cross-attention layers (no per-token KV)."""
    return resolved.shape.cross_attends_image


# A vision tower stays in the model dtype in the published AWQ/GPTQ/FP8 checkpoints of vision LLMs (their
# quantization configs list the vision modules as ignored / not converted), and vLLM splits its linears over the TP
# ranks like the language model's (config/multimodal.py:384 mm_encoder_tp_mode default "weights" in 0.34.0).
VISION_BYTES_PER_PARAM = 2.0


def _language_and_vision_params_b(resolved: ResolvedRequest) -> tuple[float, float]:
    """(language model, vision tower) parameters in billions of the checkpoint vLLM loads. A registry entry's
    params_b is the whole checkpoint for most vision LLMs and the language model alone for Gemma 3 (its
    params_exact_b is the whole): the vision tower is the difference when params_exact_b says so, else inside
    params_b. A size the user typed is the language model's."""
    shape = resolved.shape
    vision = shape.vision_params_b or 0.0
    if shape.kind != "vlm" or not vision or resolved.params_b != shape.params_b:
        return resolved.params_b, 0.0
    whole = shape.params_exact_b or shape.params_b
    if whole - shape.params_b >= 0.9 * vision:  # params_b is the language model alone (Gemma 3)
        return shape.params_b, vision
    return shape.params_b - vision, vision


def _sized_as_published(weights: ResidentWeights, checkpoint: Checkpoint) -> ResidentWeights:
    """The registry's size of the checkpoint named (AWQ, GPTQ, FP8 repos keep embeddings and lm_head in 16 bit,
    engine/formats/formats.yaml): the body is what the file holds beyond those. GGUF files quantize the vocabulary
    matrices too, so their size is not split that way: the format's bits stay."""
    if checkpoint.gb is None or checkpoint.fmt is None or checkpoint.fmt.is_gguf:
        return weights
    body = checkpoint.gb * GB - weights.embedding_bytes - weights.lm_head_bytes - weights.replicated_bytes
    return dataclasses.replace(weights, body_bytes=body) if body > 0 else weights


def _engine_settings(engine: str, kv: str, tag: str | None, quantization: str | None, dtype: str | None,
                     options: ServingOptions) -> tuple[VllmSettings | None, LlamaCppSettings | None]:
    """ServingReview.settings; `tag`,
    `quantization` and `dtype` are the checkpoint's (engine.serving.checkpoint.Checkpoint)."""
    if engine == "llama.cpp":
        cache = _kv_types(kv)[1]
        return None, LlamaCppSettings(quant=tag, cache_type_k=cache, cache_type_v=cache)
    return dataclasses.replace(
        settings_for_version(options.vllm_version),
        gpu_memory_utilization=options.gpu_memory_utilization,
        kv_cache_dtype=_kv_types(kv)[0], quantization=quantization, dtype=dtype,
        max_num_batched_tokens=options.max_num_batched_tokens), None


@dataclass(slots=True)
class ServingReview:
    """One answer's serving checks: computed on first use per (card, count) -- the model, context and
    precisions are the answer's -- so the JSON path pays for the fit only and a reply for what it shows."""

    resolved: ResolvedRequest
    requirement: Requirement
    catalog: Catalog
    options: ServingOptions = field(default_factory=ServingOptions)
    engine: str = "vllm"
    notes: list[Note] = field(default_factory=list)
    _model: ServingModel | None = None
    _checkpoint: Checkpoint | None = None
    _checks: dict[tuple[str, int], ServingCheck | None] = field(default_factory=dict)
    _passing: Layout | None = None
    _searched: bool = False

    @classmethod
    def of(cls, resolved: ResolvedRequest, requirement: Requirement, catalog: Catalog,
           options: ServingOptions | None = None) -> ServingReview | None:
        """None for what no engine serves: training, and models that are no LLM."""
        if resolved.workload != "inference" or resolved.shape.kind not in ("llm", "vlm"):
            return None
        options = options or ServingOptions()
        return cls(resolved, requirement, catalog, options, engine_for(resolved, options))

    def checkpoint(self) -> Checkpoint:
        """What the launch command loads (engine.serving.checkpoint): a repo in the answer's format, vLLM's own
        quantization of the 16-bit release, or a placeholder for one."""
        if self._checkpoint is None:
            self._checkpoint = checkpoint_for(self.resolved, self.engine)
        return self._checkpoint

    def settings(self) -> tuple[VllmSettings | None, LlamaCppSettings | None]:
        """The engine's options for this answer: the user's, the KV precision mapped, the checkpoint's GGUF type,
        --quantization and --dtype."""
        checkpoint = self.checkpoint()
        return _engine_settings(self.engine, self.resolved.kv_precision, checkpoint.tag, checkpoint.quantization,
                                checkpoint.dtype, self.options)

    def model(self) -> ServingModel | None:
        """The model as the check reads it; None (noted once, by check()) when it cannot be read or the engine does
        not serve it (Llama 3.2 Vision under vLLM)."""
        if self.engine == "vllm" and _cross_attention_vlm(self.resolved):
            return None
        if self._model is None:
            try:
                self._model, self._checkpoint = serving_checkpoint(self.resolved, self.engine)
            except ValueError:
                return None
        return self._model

    def model_on(self, card: Card) -> ServingModel | None:
        """The model as the check reads it on `card`: `model()` with a published MXFP4 MoE's experts laid out as
        vLLM loads them on the card's architecture (one source for the forward check and the reverse questions)."""
        model = self.model()
        if model is None or self.engine != "vllm":
            return model
        vllm = self.settings()[0]
        return _mxfp4_on_card(self.resolved, model, card, vllm.version) if vllm is not None else model

    def check(self, card: Card, count: int) -> ServingCheck | None:
        """The check of `count` x `card`; None (and a note, once) when it cannot be made."""
        key = (card.id, count)
        if key not in self._checks:
            self._checks[key] = self._run(card, count)
        return self._checks[key]

    def check_layout(self, layout: Layout | None) -> ServingCheck | None:
        return self.check(layout.card, layout.count) if layout is not None else None

    def _run(self, card: Card, count: int) -> ServingCheck | None:
        try:
            if self.engine == "vllm" and _cross_attention_vlm(self.resolved):
                # vLLM 0.34.0 model_executor/models/registry.py:883-899 _PREVIOUSLY_SUPPORTED_MODELS:
                # "MllamaForConditionalGeneration": "0.10.2" (encoder-decoder models went with the V0 engine).
                raise ValueError("vLLM serves Llama 3.2 Vision (Mllama) only up to release 0.10.1; later releases "
                                 "removed it")
            if self._model is None:
                self._model, self._checkpoint = serving_checkpoint(self.resolved, self.engine)
            vllm, llama_cpp = self.settings()
            model = self.model_on(card) or self._model
            check = serving_check(model, Gpu.from_card(card), self.resolved.context_tokens,
                                  engine=self.engine, tp=count, batch=self.resolved.batch, vllm=vllm,
                                  llama_cpp=llama_cpp)
            return self._on_card(check, card) if self.engine == "vllm" else check
        except (ServingShapeError, ValueError) as exc:
            # A model without a published KV shape already carries sizing's kv_unknown note: said once.
            said = isinstance(exc, ServingShapeError) and any(n.code in KV_NOT_INCLUDED for n in self.requirement.notes)
            if not said and not any(note.code in UNAVAILABLE for note in self.notes):
                self.notes.append(exc.note if isinstance(exc, UnservedFormat) else
                                  Note(f"no serving check: {exc}", "serving_unavailable", reason=str(exc)))
            return None

    def _on_card(self, check: ServingCheck, card: Card) -> ServingCheck:
        """What vLLM does with these weights on this card beyond memory: FP8 weights weight-only on a card without
        FP8 hardware (said), no kernel at all (the check refuses the card)."""
        said, refusal = card_notes(self.resolved, self.checkpoint(), card)
        if said is not None:
            return dataclasses.replace(check, notes=(*check.notes, said))
        if refusal is not None:
            return dataclasses.replace(check, starts=False, max_context_tokens=None, max_concurrency=None,
                                       notes=(*check.notes, refusal))
        return check

    def passing(self, failing: Layout | None) -> Layout | None:
        """When `failing`'s check says the engine would not start: the cheapest valid layout (price order) whose
        check passes. Searched once per answer."""
        check = self.check_layout(failing)
        if failing is None or check is None or self.runs(check):
            return None
        if not self._searched:
            self._searched = True
            if not any(note.code in NOWHERE for note in check.notes):
                self._passing = self._cheapest_passing(self._lower_bound_gb(check, failing.count))
        return self._passing

    def _lower_bound_gb(self, check: ServingCheck, count: int) -> float:
        """What the whole set must hold at least, whatever the count: the weights, and the KV cache of every
        request (ServingCheck.holds) when the failing check was on one GPU (on a set, replicated KV heads make its
        per-GPU figure no lower bound)."""
        if count != 1:
            return check.weights_gb
        return check.weights_gb + check.kv_gb_per_gpu

    def runs(self, check: ServingCheck) -> bool:
        """Whether the request runs where `check` was made: it starts and holds every user at once."""
        return check.holds(self.resolved.batch)

    def _share_gb(self, card: Card) -> float:
        """One card's memory under the engine's share (vLLM's gpu_memory_utilization; llama.cpp: all of it)."""
        share = 1.0 if self.engine == "llama.cpp" else (self.options.gpu_memory_utilization
                                                         or settings_for_version(self.options.vllm_version).utilization)
        return (card.memory_mib or 0) * MIB * share / GB

    def _cheapest_passing(self, lower_bound_gb: float) -> Layout | None:
        return cheapest_running(self.requirement, self.resolved, self.catalog, self, lower_bound_gb)


def running_layouts(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
                    review: ServingReview | None, lower_bound_gb: float = 0.0) -> Iterator[Layout]:
    """Every layout, cheapest first (price order), that the rule accepts with room to spare
    (engine.fit.selection.ROOM_GB) and, with a review, on which the engine starts. `lower_bound_gb`: what the whole
    set must hold at least under the engine's share (a failing check's bound)."""
    total, kv_heads = requirement.total_gb, resolved.shape.kv_heads
    rules = Rules(resolved, catalog)
    # Price order over what can hold the total at all; the rule is evaluated only on those, the engine
    # check only on layouts the rule accepts.
    # (the price order is the catalog's, built once: engine.fit.ranking.plan)
    for _, count, _, card in plan(catalog).by_price:
        if card.vram_gb * count < total + ROOM_GB:
            continue
        if review is not None and review._share_gb(card) * count < lower_bound_gb:
            continue  # cannot start: the weights (and one request's KV cache) alone exceed the engine's share
        # A layout is valid when the rules' fast check passes and each card holds its share (engine.fit.selection)
        if not rules.ok(card, count) or count > 1 and card.vram_gb < requirement.per_gpu_gb(count, kv_heads) + ROOM_GB:
            continue
        if review is not None:
            found = review.check(card, count)
            if found is not None and not review.runs(found):
                continue
        # The check first: the full layout (its rule problems named) only for the one that starts.
        layout = evaluate_layout(card, count, requirement, resolved, catalog, rules)
        if layout.valid and has_room(layout):
            yield layout


def cheapest_running(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
                     review: ServingReview | None, lower_bound_gb: float = 0.0) -> Layout | None:
    """The cheapest layout on which the workload runs (running_layouts): what an answer recommends when the rule's
    own pick does not run."""
    return next(running_layouts(requirement, resolved, catalog, review, lower_bound_gb), None)
