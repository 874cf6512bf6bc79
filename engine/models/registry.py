"""The model registry: real shapes of open models (bundled YAML) and the seed's typical shapes for bare sizes."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from catalog.bundled_yaml import load_bundled_file
from catalog.names import normalize_name

REGISTRY_DIR = Path(__file__).resolve().parent / "data"
LANGUAGE_KINDS = ("llm", "vlm")  # decode token by token with a KV cache; diffusion/text-encoder/speech do not
T = TypeVar("T")
_DTYPE_NAMES = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32"}


@dataclass(frozen=True, slots=True)
class PublishedWeights:
    """The size and format of the weights a model is published in (when not BF16/FP16)."""

    format: str  # "fp8", "mxfp4", "fp4+fp8"
    gb: float
    note: str = ""

    @property
    def needs_fp8_hardware(self) -> bool:
        """FP8/FP4 weights run only on cards with hardware support."""
        return any(tag in self.format.lower() for tag in ("fp8", "fp4"))


@dataclass(frozen=True, slots=True)
class QuantizedRepo:
    """A published quantized checkpoint of a model (AWQ, GPTQ, FP8, GGUF file): its repo and size."""

    hf_id: str  # "Qwen/Qwen2.5-72B-Instruct-AWQ"; a GGUF file is "repo:file"
    quant: str  # "awq", "gptq", "fp8_block", "gguf_q4_k_m" ...
    gb: float | None  # decimal GB; None where no reliable size was read or derived
    gb_kind: str = ""  # "published" (read from the repo page) or "derived" (tensor layout arithmetic)
    source: str = ""

    @property
    def repo(self) -> str:
        return self.hf_id.split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class IndexerCache:
    """DeepSeek V3.2's lightning-indexer keys: cached per token in every layer next to the MLA latent."""

    head_dim: int
    bytes_per_token_per_layer: float | None  # None where the cache dtype was not read (GLM-5)
    layers: int
    topk: int | None = None




@dataclass(frozen=True, slots=True)
class RopeYarn:
    """The YaRN setting a model's card publishes to extend its window (Qwen3: factor 4 over 32,768 = 131,072): what
    the user turns on by saying "YaRN" / "rope scaling", and what the launch command passes to the engine."""

    factor: float
    original_max_position_embeddings: int
    rope_theta: float
    source: str = ""

    @property
    def window(self) -> int:
        """The scaled window: original x factor (vLLM config/model.py _get_and_verify_max_len; the card's figure)."""
        return int(self.original_max_position_embeddings * self.factor)


@dataclass(frozen=True, slots=True)
class GlobalAttention:
    """Gemma 4's global (full-attention) layers, whose cache differs from its sliding layers': fewer KV heads of a
    wider head dim, K and V one projection (config num_global_key_value_heads, global_head_dim, attention_k_eq_v).

    K = V saves weights, not cache: vLLM 0.34 loads k_proj into both the K and V slots of qkv_proj and passes k
    and v to Attention (models/gemma4.py), so a global layer stores 2 x kv_heads x head_dim per token like any
    other layer. `layers` equals the model's layers minus its sliding layers."""

    layers: int
    kv_heads: int
    head_dim: int
    k_eq_v: bool


@dataclass(frozen=True, slots=True)
class LinearState:
    """The fixed state one Gated DeltaNet layer keeps per request (config linear_num_key_heads,
    linear_num_value_heads, linear_key/value_head_dim, linear_conv_kernel_dim): a conv state of (kernel - 1) x
    conv_dim and a recurrent state of value_heads x value_dim x key_dim (vLLM mamba_utils.py:280-301
    gated_delta_net_state_shape). The conv state is in the model dtype (bf16, 2 B); the recurrent state in the
    config's mamba_ssm_dtype (Qwen3.5 family: float32, vLLM models/config.py:1293-1306), else the model dtype."""

    key_heads: int
    value_heads: int
    key_dim: int
    value_dim: int
    conv_kernel: int
    recurrent_bytes: int
    source: str = ""
    conv_bytes: int = 2

    def page_bytes(self, tp: int = 1) -> int:
        """One layer's state for one request on one of `tp` GPUs (split over TP as vLLM does; tp 1: the whole)."""
        conv_dim = self.key_dim * self.key_heads * 2 + self.value_dim * self.value_heads
        conv = conv_dim // tp * (self.conv_kernel - 1) * self.conv_bytes
        recurrent = self.value_heads // tp * self.value_dim * self.key_dim * self.recurrent_bytes
        return conv + recurrent


@dataclass(frozen=True, slots=True)
class ModelShape:
    """One registry model: its real shape (config.json), sizes and published checkpoints."""

    id: str
    name: str
    params_b: float
    active_params_b: float
    layers: int | None
    attention_heads: int | None
    kv_heads: int | None
    head_dim: int | None
    family: str = ""
    kind: str = "llm"
    sliding_window: int | None = None
    sliding_layers: int = 0
    mla_kv_lora_rank: int | None = None
    mla_qk_rope_head_dim: int | None = None
    experts_total: int | None = None
    experts_active: int | None = None
    published_weights: PublishedWeights | None = None
    context_max: int | None = None
    aliases: tuple[str, ...] = ()
    # Other releases with this exact shape that have no entry of their own (a registry without DeepSeek-V3.1
    # could list it under DeepSeek-V3): the parser sizes them as this model and says so; they are no aliases
    # (Registry.get does not know them). The bundled entries list none today: each release has its own entry.
    variants: tuple[str, ...] = ()
    source: str = ""
    typical_size_b: float | None = None  # set for a seed "typical shape" standing in for a bare size
    # A bare size off the seeds' rows: the registry models whose shapes it was derived from (names)
    derived_from: tuple[str, ...] = ()
    # Where the model lives on Hugging Face, its exact size and the rest of its config.
    generation: str = ""  # release family ("llama-3.1", "qwen2.5-coder"); `family` is the parser's word family
    hf_id: str | None = None
    hf_ids: tuple[str, ...] = ()
    params_exact_b: float | None = None  # exact count (config arithmetic / safetensors); params_b is the headline
    params_note: str = ""  # why params_exact_b and params_b differ by more than 3 %
    hidden_size: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    tie_word_embeddings: bool | None = None
    torch_dtype: str | None = None
    vision_params_b: float | None = None  # vision tower + projector in the same checkpoint (VLMs)
    no_kv_layers: int = 0  # layers with no per-token KV cache (linear attention, cross-attention to images)
    layer_pattern: str = ""
    attention_chunk_size: int | None = None  # Llama 4 chunked local attention (also its sliding_window cap)
    indexer_cache: IndexerCache | None = None
    global_attention: GlobalAttention | None = None  # Gemma 4: the full-attention layers' own cache shape
    linear_state: LinearState | None = None  # Gated DeltaNet: the state each linear-attention layer keeps
    # A cache of a kind no KV formula sizes, by its kind ("compressed_attention": DeepSeek V4's window plus
    # compressed history); its answers leave the KV cache out and say which kind it is
    kv_not_sized: str = ""
    context_note: str = ""
    note: str = ""  # what else a reader of this entry should know (the research's caveats)
    published_format: str | None = None  # natively quantized format even where its size was not read
    quantized: tuple[QuantizedRepo, ...] = ()
    yarn: RopeYarn | None = None  # the card's YaRN window extension (None: none published)
    yarn_applied: bool = False  # this shape's window is the YaRN one (yarn_extended): the launch passes the setting

    @property
    def typical(self) -> bool:
        return self.typical_size_b is not None

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_lora_rank is not None

    @property
    def is_language_model(self) -> bool:
        """Decodes token by token with a KV cache (an LLM or a vision LLM); FLUX denoises, Whisper is speech."""
        return self.kind in LANGUAGE_KINDS

    @property
    def kv_unmodelled(self) -> str | None:
        """What of this model's cache the KV formulas cannot size today (None: nothing).

        Layers without a per-token KV cache (Gated DeltaNet, lightning attention, Llama 3.2 Vision's cross-attention
        to the image) are left out of the count (`kv_layers`); DeepSeek V3.2's indexer keys are added where their
        bytes per token were read. A model whose indexer cache dtype was not read (GLM-5) cannot be sized: counting
        only its MLA latent would under-size it silently, so its KV cache is left out and said.
        """
        if self.indexer_cache is not None and self.indexer_cache.bytes_per_token_per_layer is None:
            return "the sparse-attention indexer keys cached next to the MLA latent (their dtype was not read)"
        if self.layers is not None and self.no_kv_layers >= self.layers:
            return "no layer keeps a per-token KV cache"
        if self.kv_not_sized:
            return f"a cache of a kind no KV formula sizes ({self.kv_not_sized.replace('_', ' ')})"
        return None

    @property
    def cross_attends_image(self) -> bool:
        """Llama 3.2 Vision's kind of VLM: its layers without a per-token KV cache cross-attend to the image. A
        hybrid VLM's (Qwen3.5) are linear attention; the registry's layer pattern says which."""
        return self.kind == "vlm" and self.no_kv_layers > 0 and "cross-attention" in self.layer_pattern

    @property
    def kv_layers(self) -> int | None:
        """Layers that keep a per-token KV cache: all but the linear-attention / cross-attention ones."""
        return None if self.layers is None else self.layers - self.no_kv_layers

    @property
    def indexer_bytes_per_token_per_layer(self) -> float:
        """Bytes of sparse-attention indexer keys per token per layer (0 without an indexer)."""
        if self.indexer_cache is None or self.indexer_cache.bytes_per_token_per_layer is None:
            return 0.0
        return self.indexer_cache.bytes_per_token_per_layer

    @property
    def kv_known(self) -> bool:
        """Whether the KV cache of this shape can be sized."""
        return _kv_known(self)

    def quantized_as(self, *names: str) -> QuantizedRepo | None:
        """The first published checkpoint of this model in one of the formats `names` (registry quant names, in
        that order of preference)."""
        return next((repo for name in names for repo in self.quantized if repo.quant == name), None)

    @property
    def weights_format(self) -> str | None:
        """The format the model is released in: a natively quantized one (FP8, MXFP4) or the config's dtype."""
        if self.published_format:
            return self.published_format.upper()
        return _DTYPE_NAMES.get(self.torch_dtype or "", self.torch_dtype.upper() if self.torch_dtype else None)

    def listing(self) -> dict[str, object]:
        """The model as `cardfit models --json` lists it (plain data; front ends word it)."""
        published = self.published_weights
        return {
            "id": self.id, "name": self.name, "family": self.family, "generation": self.generation, "kind": self.kind,
            "hf_id": self.hf_id, "hf_ids": list(self.hf_ids), "params_b": self.params_b,
            "params_exact_b": self.params_exact_b, "active_params_b": self.active_params_b,
            "context_max": self.context_max, "weights_format": self.weights_format,
            "published_weights": {"format": published.format, "gb": published.gb} if published else None,
            "quantized": [{"hf_id": repo.hf_id, "quant": repo.quant, "gb": repo.gb} for repo in self.quantized],
        }

    def summary(self) -> ShapeSummary:
        """The attention shape as data (what the KV cache formula multiplies); front ends word it."""
        if not self.kv_known:
            return ShapeSummary("unknown")
        if self.is_mla:
            return ShapeSummary("mla", layers=self.kv_layers, mla_rank=self.mla_kv_lora_rank,
                                mla_rope=self.mla_qk_rope_head_dim)
        glob = self.global_attention
        return ShapeSummary(
            "mha" if self.kv_heads == self.attention_heads else "gqa", layers=self.kv_layers, kv_heads=self.kv_heads,
            head_dim=self.head_dim, window_tokens=self.sliding_window or None,
            window_layers=self.sliding_layers if self.sliding_window else 0,
            global_layers=glob.layers if glob else 0, global_kv_heads=glob.kv_heads if glob else None,
            global_head_dim=glob.head_dim if glob else None,
        )


def _kv_known(shape: ModelShape) -> bool:
    # A diffusion transformer (FLUX.1) has attention but no token-by-token KV cache to size.
    if shape.layers is None or not shape.is_language_model or shape.kv_unmodelled is not None:
        return False
    if shape.is_mla:
        return True
    return shape.kv_heads is not None and shape.head_dim is not None


@dataclass(frozen=True, slots=True)
class ShapeSummary:
    """An attention shape as a reader checks a KV cache against it: "80 layers, GQA 8 KV heads, head dim 128".

    `kind` is unknown (not published), mla (latent rank + RoPE dims), mha (as many KV heads as query heads)
    or gqa; a sliding window adds how many layers hold only `window_tokens`.
    """

    kind: Literal["unknown", "mla", "mha", "gqa"]
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    mla_rank: int | None = None
    mla_rope: int | None = None
    window_tokens: int | None = None
    window_layers: int = 0
    global_layers: int = 0  # Gemma 4: full-attention layers with their own KV heads and head dim (K = V)
    global_kv_heads: int | None = None
    global_head_dim: int | None = None

    def english(self) -> str:
        """The English sentence for the engine's own notes (JSON); bot/texts/render.py words it per locale."""
        if self.kind == "unknown":
            return "attention shape not published"
        if self.kind == "mla":
            return f"{self.layers} layers, MLA latent {self.mla_rank}+{self.mla_rope}"
        kind = "MHA" if self.kind == "mha" else f"GQA {self.kv_heads} KV heads"
        text = f"{self.layers} layers, {kind}, head dim {self.head_dim}"
        if self.window_tokens:
            text += f", {self.window_layers} layers with a {self.window_tokens:,}-token window"
        if self.global_layers:
            text += f", {self.global_layers} global layers of {self.global_kv_heads} KV heads x {self.global_head_dim}"
        return text


# Seed 000 section 02: "typische Formen" for bare sizes; head dim 128 throughout. Attention heads are not in
# the seed; they come from the real model of that shape (Llama 2 7B/13B, Yi-34B, Llama 3.1 70B/405B) and only
# matter for tensor-parallel divisibility. Only these exact sizes are the seeds' rows (their golden tests pin them);
# any other bare size gets a shape of today (derived_shape).
TYPICAL_SHAPES: tuple[tuple[float, int, int, int], ...] = (
    # size_b, layers, attention_heads, kv_heads
    (7, 32, 32, 8),
    (13, 40, 40, 40),
    (34, 60, 56, 8),
    (70, 80, 64, 8),
    (405, 126, 128, 8),
)
SEED_SIZES_B = frozenset(row[0] for row in TYPICAL_SHAPES)
DERIVED_NEIGHBOURS = 3  # registry models a shape of today is derived from


@lru_cache(maxsize=1024, typed=True)
def typical_shape(params_b: float) -> tuple[ModelShape, float]:
    """The shape a bare size is sized with, with params set to `params_b`: the seed's typical shape for one of the
    seeds' sizes (7, 13, 34, 70, 405 B), else a shape of today derived from the registry's real models near that
    size (derived_shape); without such models, the seed's shape nearest by ratio.

    One object per size (cached): the serving check keeps what a layout of a shape needs by the shape's
    identity (engine.serving.vllm), and a bare "70B" is the same shape on every question.

    Returns the shape and the nominal size whose shape was used (the size itself for a derived shape), so the
    caller can say what it assumed. Any positive finite size has a shape (log(p) - log(size), not log(p / size):
    5e-324 / 7 is 0); the engine's bounds (engine.sizing.rule.MIN_PARAMS_B) keep absurd sizes from getting here.
    """
    if not math.isfinite(params_b) or params_b <= 0:
        raise ValueError(f"no typical shape for {params_b!r}B parameters")
    if params_b not in SEED_SIZES_B:
        derived = derived_shape(default_registry(), params_b)
        if derived is not None:
            return derived, params_b
    return seed_shape(params_b)


def seed_shape(params_b: float) -> tuple[ModelShape, float]:
    """The seed's typical shape nearest to `params_b` (by ratio), with params set to `params_b`."""
    log_params = math.log(params_b)
    size, layers, heads, kv_heads = min(TYPICAL_SHAPES, key=lambda row: abs(log_params - math.log(row[0])))
    shape = ModelShape(
        id=f"typical-{size:g}b",
        name=f"{params_b:g}B",
        params_b=params_b,
        active_params_b=params_b,
        layers=layers,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=128,
        typical_size_b=size,
        source="seed 000 section 02 (typical shapes)",
    )
    return shape, size


def shape_of_today(model: ModelShape) -> bool:
    """Whether a registry model can stand for a bare size's shape: a dense text LLM with grouped KV heads on every
    layer (no sliding window, no linear-attention layers, no MLA), its shape read from its config."""
    return (model.kind == "llm" and model.experts_total is None and not model.is_mla and not model.sliding_window
            and not model.no_kv_layers and model.attention_chunk_size is None and model.kv_known
            and model.layers is not None and model.attention_heads is not None and model.kv_heads is not None
            and model.kv_heads < model.attention_heads)


def derived_shape(registry: Registry, params_b: float) -> ModelShape | None:
    """A bare size's shape of today: of the DERIVED_NEIGHBOURS registry models nearest in size (by ratio, one per
    distinct shape, shape_of_today), the one with the median KV cache per token, with params set to `params_b`.
    A real model's whole shape (layers, heads, KV heads, head dim), never a mix of several; `derived_from` names
    the neighbours so the answer can say where the shape came from. None when the registry has no such model."""
    by_shape: dict[tuple[object, ...], ModelShape] = {}
    log_params = math.log(params_b)
    for model in sorted((model for model in registry.models if shape_of_today(model)),
                        key=lambda model: (abs(log_params - math.log(model.params_b)), model.id)):
        by_shape.setdefault((model.layers, model.attention_heads, model.kv_heads, model.head_dim), model)
        if len(by_shape) == DERIVED_NEIGHBOURS:
            break
    if not by_shape:
        return None
    neighbours = list(by_shape.values())
    ranked = sorted(neighbours, key=lambda model: (_kv_elements_per_token(model), model.params_b))
    chosen = ranked[(len(ranked) - 1) // 2]  # the lower median of an even count: never the largest cache
    return ModelShape(
        id=f"derived-{params_b:g}b",
        name=f"{params_b:g}B",
        params_b=params_b,
        active_params_b=params_b,
        layers=chosen.layers,
        attention_heads=chosen.attention_heads,
        kv_heads=chosen.kv_heads,
        head_dim=chosen.head_dim,
        typical_size_b=params_b,
        derived_from=(chosen.name, *(model.name for model in neighbours if model is not chosen)),
        source="the registry's models nearest in size: " + ", ".join(model.name for model in neighbours),
    )


def _kv_elements_per_token(model: ModelShape) -> int:
    return (model.layers or 0) * (model.kv_heads or 0) * (model.head_dim or 0)


@dataclass(frozen=True)
class Registry:
    """The models and every name they go by (build_registry)."""

    models: tuple[ModelShape, ...]
    by_key: dict[str, ModelShape] = field(repr=False)  # ids, names, aliases, hf_id/hf_ids (the parser's names)
    # Published quantized repos -> (base model, repo). Kept apart from by_key: "Qwen2.5-72B-Instruct-AWQ" in a
    # question is the model plus a precision word the parser must still read.
    quantized_by_key: dict[str, tuple[ModelShape, QuantizedRepo]] = field(default_factory=dict, repr=False)

    def wider_release(self, model: ModelShape, tokens: int) -> ModelShape | None:
        """The release of the same shape whose context window holds `tokens` (the narrowest such; the widest
        when none does) when `model`'s window is shorter, else None. Releases that differ only in their window
        carry it in their ids (Phi-3 Mini 4K / 128K, Small 8K / 128K, Medium 4K / 128K: max_position_embeddings
        4096 or 8192 against 131072, the same layers and heads)."""
        window = model.context_max
        if not window or tokens <= window:
            return None
        releases = self._windows.get(_WINDOW_ID_RE.sub("", model.id), ())
        if model not in releases:
            return None
        wider = [other for other in releases if (other.context_max or 0) > window]
        if not wider:
            return None
        holding = [other for other in wider if (other.context_max or 0) >= tokens]
        return min(holding, key=_window) if holding else max(wider, key=_window)

    @cached_property
    def _windows(self) -> dict[str, tuple[ModelShape, ...]]:
        """releases_by_window(models), built at the first wider_release() (cached_property writes the instance's
        __dict__ directly, so the frozen dataclass allows it)."""
        return releases_by_window(self.models)

    def get(self, model_id: str) -> ModelShape | None:
        """Exact lookup by id, name, alias or Hugging Face repo id, a published quantized repo's giving its base
        model (separators and case ignored: "Qwen/Qwen2.5-72B-Instruct", "meta-llama/llama-3.1-8b-instruct")."""
        key = normalize_name(model_id)
        model = self.by_key.get(key)
        if model is None and key in self.quantized_by_key:
            model = self.quantized_by_key[key][0]
        return model

    def quantized_repo(self, hf_id: str) -> QuantizedRepo | None:
        """The published quantized checkpoint a repo id (or GGUF "repo:file") names; get() gives its base."""
        found = self.quantized_by_key.get(normalize_name(hf_id))
        return found[1] if found else None

    def named_repo(self, repo_id: str) -> tuple[ModelShape, QuantizedRepo | None] | None:
        """The model a whole Hugging Face repo id names, and the quantized checkpoint it is (None: the model's own
        16-bit or native release). Read as a whole, never by a prefix: "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B" is the
        8B distill, never DeepSeek-R1-0528; in a registry without the distill it is None (the Hub lookup, or "I don't
        know it", answers for it).

        1. a repo id of a registry entry (hf_id, hf_ids, an alias such as "unsloth/Llama-3.3-70B-Instruct"'s
           name "Llama-3.3-70B-Instruct");
        2. a published quantized repo the registry lists (a GGUF repo as a whole: the type is the question's);
        3. a repo whose name is a registry model's name followed by a publisher's format suffix (REPO_SUFFIXES:
           "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF"); its size
           is the listed one where the registry lists a repo of that publisher and format for the model (a
           renamed repo: "meta-llama/Meta-Llama-3.1-405B-Instruct-FP8"), else None (sized by the format's bits).
        """
        repo_id = repo_id.strip()
        owner, slash, name = repo_id.partition("/")
        if not slash or not owner or not name or "/" in name:
            return None
        key = normalize_name(repo_id)
        model = self.by_key.get(key)
        if model is not None:
            return model, None
        listed = self.quantized_by_key.get(key)
        if listed is not None:
            model, repo = listed
            if repo.quant.startswith("gguf_") and normalize_name(repo.repo) == key:
                return model, QuantizedRepo(repo.repo, GGUF_REPO, None, "", "a GGUF repo: its type is the question's")
            return model, repo
        lowered = name.lower()
        for suffix, quant in REPO_SUFFIXES:
            if lowered.endswith(suffix) and len(lowered) > len(suffix):
                base = self._repo_name_model(name[:-len(suffix)])
                if base is None:
                    return None
                quant = _ORG_QUANT.get((owner.lower(), quant), quant)
                return base, _derived_repo(base, f"{owner}/{name}", quant)
        model = self._repo_name_model(name)
        return (model, None) if model is not None else None

    def _repo_name_model(self, name: str) -> ModelShape | None:
        """The registry model a repo's name (without its owner) names: an alias, or the name of one of its repos."""
        key = normalize_name(name)
        return self.by_key.get(key) or self._repo_names.get(key)

    @cached_property
    def _repo_names(self) -> dict[str, ModelShape]:
        """A repo name without its owner -> the model ("Llama-3.3-70B-Instruct" -> Llama 3.3 70B); a name two
        models share names neither."""
        names: dict[str, ModelShape | None] = {}
        for model in self.models:
            for repo in (model.hf_id, *model.hf_ids):
                if repo and "/" in repo:
                    key = normalize_name(repo.split("/", 1)[1])
                    names[key] = model if names.get(key, model) is model else None
        return {key: model for key, model in names.items() if model is not None}

    def search(self, text: str) -> tuple[ModelShape, ...]:
        """Models whose id, name, aliases, family or repo ids contain every word of `text`, in registry order."""
        words = [normalize_name(word) for word in text.split()]
        words = [word for word in words if word]
        if not words:
            return self.models
        return tuple(model for model in self.models if all(word in _haystack(model) for word in words))

    def __iter__(self) -> Iterator[ModelShape]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def with_models(self, *shapes: ModelShape) -> Registry:
        """This registry and `shapes` (a model looked up for one question: engine.models.hub); theirs win a name."""
        by_key = dict(self.by_key)
        for shape in shapes:
            by_key[normalize_name(shape.id)] = shape
        return Registry((*self.models, *shapes), by_key)


GGUF_REPO = "gguf"  # QuantizedRepo.quant of a whole GGUF repo: it holds many types, the question names one
# A quantized repo's name is its model's name and the publisher's format suffix (longest first). The publishers'
# conventions, as their repos are named on the Hub: Qwen "-AWQ", "-GPTQ-Int4", "-GPTQ-Int8", "-FP8"
# (Qwen/Qwen2.5-72B-Instruct-AWQ, Qwen/Qwen3-8B-FP8); RedHatAI and neuralmagic "-FP8", "-FP8-dynamic",
# "-quantized.w4a16" (RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16); hugging-quants "-AWQ-INT4",
# "-GPTQ-INT4"; unsloth "-bnb-4bit", "-unsloth-bnb-4bit", "-GGUF"; bartowski and TheBloke "-GGUF", "-AWQ",
# "-GPTQ"; casperhansen "-awq"; nvidia "-FP4", "-NVFP4" (nvidia/Llama-3.3-70B-Instruct-FP4). The quant names are
# the registry's `quantized` names (engine/formats/formats.yaml `name` / `published_as`).
REPO_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("-unsloth-bnb-4bit", "bnb_nf4"), ("-bnb-4bit", "bnb_nf4"),
    ("-awq-int4", "awq"), ("-awq", "awq"),
    ("-gptq-int4", "gptq"), ("-gptq-int8", "gptq_int8"), ("-gptq", "gptq"),
    ("-quantized.w4a16", "w4a16"), ("-w4a16", "w4a16"),
    ("-fp8-dynamic", "fp8_dynamic"), ("-fp8", "fp8"),
    ("-nvfp4", "nvfp4"), ("-fp4", "nvfp4"),
    ("-gguf", GGUF_REPO),
)
# "-FP8" means another FP8 layout per publisher: Qwen's and DeepSeek's are block-wise (128x128 scales, the
# Qwen3 FP8 model cards: "fine-grained fp8 quantization with block size of 128"), Meta's fbgemm per output channel
# (meta-llama/Llama-3.1-405B-Instruct-FP8: quantization_config fbgemm_fp8); RedHatAI's static per tensor.
_ORG_QUANT = {("qwen", "fp8"): "fp8_block", ("deepseek-ai", "fp8"): "fp8_block",
              ("meta-llama", "fp8"): "fp8_channel"}


# One publisher under two names: the neuralmagic org's repos are RedHatAI's (the Hub shows them under RedHatAI)
_SAME_PUBLISHER = {"neuralmagic": "redhatai"}


def _publisher(repo_id: str) -> str:
    owner = repo_id.split("/", 1)[0].lower()
    return _SAME_PUBLISHER.get(owner, owner)


def _derived_repo(model: ModelShape, repo_id: str, quant: str) -> QuantizedRepo:
    """A quantized repo known by its name only: the size of the publisher's listed repo in that format (a renamed
    repo), else none (sized by the format's bits)."""
    owner = _publisher(repo_id)
    for repo in model.quantized:
        if repo.quant == quant and _publisher(repo.repo) == owner and repo.gb is not None:
            return QuantizedRepo(repo_id, quant, repo.gb, repo.gb_kind, f"as {repo.hf_id}: {repo.source}")
    return QuantizedRepo(repo_id, quant, None, "", "named by its repo's suffix")


def _haystack(model: ModelShape) -> str:
    names = (model.id, model.name, model.family, model.generation, *model.aliases, *_repo_ids(model))
    return " ".join(normalize_name(name) for name in names)


def _repo_ids(model: ModelShape, *, quantized: bool = True) -> tuple[str, ...]:
    """The Hugging Face repo ids that name this model: its own, same-shape siblings (and its quantized repos)."""
    own = (model.hf_id,) if model.hf_id else ()
    repos = tuple(dict.fromkeys(key for repo in model.quantized for key in (repo.hf_id, repo.repo))) \
        if quantized else ()
    return (*own, *model.hf_ids, *repos)


# The keys an entry may carry; a typo ("aliasses") is an error at load, not a silently missing field.
ENTRY_KEYS = frozenset({
    "id", "name", "family", "generation", "kind", "hf_id", "hf_ids", "aliases", "params_b", "params_exact_b",
    "params_note", "params_source", "active_params_b", "layers", "attention_heads", "kv_heads", "head_dim",
    "hidden_size", "intermediate_size", "vocab_size", "tie_word_embeddings", "context_max", "context_note",
    "torch_dtype", "sliding_window", "sliding_layers", "layer_pattern", "attention_chunk_size", "no_kv_layers",
    "mla", "experts", "vision_params_b", "published_weights", "indexer_cache", "quantized", "note", "source",
    "variants", "variants_source", "global_attention", "yarn", "linear_state", "kv_not_sized",
})


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _published(entry: dict[str, Any]) -> tuple[PublishedWeights | None, str | None]:
    """Published weights only where their size was read (gb null: the format alone is kept)."""
    published = entry.get("published_weights")
    if not published:
        return None, None
    fmt = str(published["format"])
    if published.get("gb") is None:
        return None, fmt
    return PublishedWeights(fmt, float(published["gb"]), str(published.get("note") or "")), fmt


def _indexer(entry: dict[str, Any]) -> IndexerCache | None:
    data = entry.get("indexer_cache")
    if not data:
        return None
    return IndexerCache(int(data["head_dim"]), _optional_float(data.get("bytes_per_token_per_layer")),
                        int(data["layers"]), _optional_int(data.get("topk")))


def _global_attention(entry: dict[str, Any]) -> GlobalAttention | None:
    data = entry.get("global_attention")
    if not data:
        return None
    return GlobalAttention(int(data["layers"]), int(data["kv_heads"]), int(data["head_dim"]), bool(data["k_eq_v"]))


# Caches of a kind no KV formula sizes (registry `kv_not_sized`), each said in its own words by the answers.
KV_NOT_SIZED_KINDS = ("compressed_attention",)


def _kv_not_sized(entry: dict[str, Any]) -> str:
    kind = str(entry.get("kv_not_sized") or "")
    if kind and kind not in KV_NOT_SIZED_KINDS:
        raise ValueError(f"model registry: {entry.get('id')!r} kv_not_sized {kind!r} is none of {KV_NOT_SIZED_KINDS}")
    return kind


# Bytes of the dtypes a config names for a recurrent state (mamba_ssm_dtype, torch_dtype).
STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def _linear_state(entry: dict[str, Any]) -> LinearState | None:
    data = entry.get("linear_state")
    if not data:
        return None
    return LinearState(int(data["key_heads"]), int(data["value_heads"]), int(data["key_dim"]), int(data["value_dim"]),
                       int(data["conv_kernel"]), STATE_DTYPE_BYTES[str(data["recurrent_dtype"])],
                       str(data.get("source") or ""))


def _yarn(entry: dict[str, Any]) -> RopeYarn | None:
    data = entry.get("yarn")
    if not data:
        return None
    return RopeYarn(float(data["factor"]), int(data["original_max_position_embeddings"]), float(data["rope_theta"]),
                    str(data.get("source") or ""))


@lru_cache(maxsize=256)
def yarn_extended(shape: ModelShape) -> ModelShape:
    """`shape` with its window widened by the card's YaRN setting (the user said "YaRN"); the shape itself where it
    publishes none or its config window is already as wide."""
    if shape.yarn is None or shape.yarn_applied or (shape.context_max or 0) >= shape.yarn.window:
        return shape
    return replace(shape, context_max=shape.yarn.window, yarn_applied=True)


def _quantized(entry: dict[str, Any]) -> tuple[QuantizedRepo, ...]:
    return tuple(
        QuantizedRepo(str(row["hf_id"]), str(row["quant"]), _optional_float(row.get("gb")),
                      str(row.get("gb_kind") or ""), str(row.get("source") or ""))
        for row in entry.get("quantized") or ()
    )


def _shape_from_entry(entry: dict[str, Any]) -> ModelShape:
    unknown = set(entry) - ENTRY_KEYS
    if unknown:
        raise ValueError(f"model registry: {entry.get('id')!r} has unknown keys {sorted(unknown)}")
    mla = entry.get("mla") or {}
    experts = entry.get("experts") or {}
    published, published_format = _published(entry)
    params_b = float(entry["params_b"])
    return ModelShape(
        id=str(entry["id"]),
        name=str(entry.get("name") or entry["id"]),
        family=str(entry.get("family") or ""),
        kind=str(entry.get("kind") or "llm"),
        params_b=params_b,
        active_params_b=float(entry.get("active_params_b") or params_b),
        layers=_optional_int(entry.get("layers")),
        attention_heads=_optional_int(entry.get("attention_heads")),
        kv_heads=_optional_int(entry.get("kv_heads")),
        head_dim=_optional_int(entry.get("head_dim")),
        sliding_window=_optional_int(entry.get("sliding_window")),
        sliding_layers=int(entry.get("sliding_layers") or 0),
        mla_kv_lora_rank=mla.get("kv_lora_rank"),
        mla_qk_rope_head_dim=mla.get("qk_rope_head_dim"),
        experts_total=experts.get("total"),
        experts_active=experts.get("active"),
        published_weights=published,
        context_max=_optional_int(entry.get("context_max")),
        aliases=tuple(str(alias) for alias in entry.get("aliases") or ()),
        variants=tuple(str(variant) for variant in entry.get("variants") or ()),
        source=str(entry.get("source") or ""),
        generation=str(entry.get("generation") or entry.get("family") or ""),
        hf_id=str(entry["hf_id"]) if entry.get("hf_id") else None,
        hf_ids=tuple(str(repo) for repo in entry.get("hf_ids") or ()),
        params_exact_b=_optional_float(entry.get("params_exact_b")),
        params_note=str(entry.get("params_note") or ""),
        hidden_size=_optional_int(entry.get("hidden_size")),
        intermediate_size=_optional_int(entry.get("intermediate_size")),
        vocab_size=_optional_int(entry.get("vocab_size")),
        tie_word_embeddings=entry.get("tie_word_embeddings"),
        torch_dtype=str(entry["torch_dtype"]) if entry.get("torch_dtype") else None,
        vision_params_b=_optional_float(entry.get("vision_params_b")),
        no_kv_layers=int(entry.get("no_kv_layers") or 0),
        layer_pattern=str(entry.get("layer_pattern") or ""),
        attention_chunk_size=_optional_int(entry.get("attention_chunk_size")),
        indexer_cache=_indexer(entry),
        global_attention=_global_attention(entry),
        linear_state=_linear_state(entry),
        kv_not_sized=_kv_not_sized(entry),
        context_note=str(entry.get("context_note") or ""),
        note=str(entry.get("note") or ""),
        published_format=published_format,
        quantized=_quantized(entry),
        yarn=_yarn(entry),
    )


def _check_layers(model: ModelShape) -> None:
    """The per-kind layer caches add up: a linear state needs linear layers (and no window beside them), global
    layers are the layers that are not sliding."""
    if model.linear_state is not None and (model.no_kv_layers <= 0 or model.sliding_window):
        raise ValueError(f"model registry: {model.id} has a linear_state but no linear-attention layers "
                         "(no_kv_layers) or also a sliding window")
    glob = model.global_attention
    if glob is not None and (model.layers is None or glob.layers != model.layers - model.sliding_layers):
        raise ValueError(f"model registry: {model.id} has {glob.layers} global layers, not its layers minus its "
                         "sliding layers")


def build_registry(entries: list[dict[str, Any]]) -> Registry:
    """The registry of `entries`; a name, alias or repo id that names two models is an error."""
    models = tuple(_shape_from_entry(entry) for entry in entries)
    for model in models:
        _check_layers(model)
    by_key: dict[str, ModelShape] = {}
    for model in models:
        for key in (model.id, model.name, *model.aliases, *_repo_ids(model, quantized=False)):
            _claim(by_key, key, model)
    quantized_by_key: dict[str, tuple[ModelShape, QuantizedRepo]] = {}
    for model in models:
        for repo in model.quantized:
            for key in (repo.hf_id, repo.repo):  # a GGUF file "repo:file" and its repo both name the model
                named = by_key.get(normalize_name(key))
                if named is not None:  # the model's own release (DeepSeek V3 in FP8): already its name
                    if named.id != model.id:
                        raise ValueError(f"model registry: quantized repo {key!r} of {model.id} names {named.id}")
                    continue
                other = quantized_by_key.get(normalize_name(key))
                if other is not None and other[0].id != model.id:
                    raise ValueError(f"model registry: {key!r} names both {other[0].id} and {model.id}")
                if other is None or key == repo.hf_id:
                    quantized_by_key[normalize_name(key)] = (model, repo)
    for model in models:
        for variant in model.variants:
            named_model = by_key.get(normalize_name(variant))
            if named_model is not None:
                raise ValueError(f"model registry: variant {variant!r} of {model.id} is a name of {named_model.id}")
    return Registry(models, by_key, quantized_by_key)


def _claim(by_key: dict[str, ModelShape], key: str, model: ModelShape) -> None:
    normalized = normalize_name(key)
    other = by_key.get(normalized)
    if other is not None and other.id != model.id:
        raise ValueError(f"model registry: {key!r} names both {other.id} and {model.id}")
    by_key[normalized] = model


def load_entries(directory: Path = REGISTRY_DIR) -> list[dict[str, Any]]:
    """Every entry of every *.yaml in `directory`, files in name order, entries in file order."""
    entries: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        data = load_bundled_file(path)
        entries.extend(data["models"])
    return entries


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The bundled registry, read once (DESIGN: the engine reads its bundled data at import/first use only)."""
    return build_registry(load_entries())


_INDEXES: dict[str, object] = {}


def bundled_index(slot: str, build: Callable[[Registry], T]) -> T:
    """What `build` makes of the bundled registry (the parser's name index), once per run."""
    if slot not in _INDEXES:
        _INDEXES[slot] = build(default_registry())
    return cast(T, _INDEXES[slot])


def hf_repo(model_id: str) -> str | None:
    """The Hugging Face repo of a bundled registry model (Contract v2 `hf_id`), or None."""
    shape = default_registry().get(model_id)
    return shape.hf_id if shape is not None and shape.hf_id else None


def find_hf_repo(registry: Registry, repo_id: str) -> ModelShape | None:
    """A model by its Hugging Face repo id ("meta-llama/Llama-3.1-70B-Instruct"), case-insensitively: the registry
    indexes hf_id, hf_ids and published quantized repos."""
    return registry.get(repo_id)


# "phi-3-medium-128k", "qwen2.5-7b-1m": the release's window, in its registry id
_WINDOW_ID_RE = re.compile(r"-\d+[km]$")


def id_window(model_id: str) -> str | None:
    """The window a release carries in its id ("128k" of "phi-3-medium-128k"), None when it carries none."""
    found = _WINDOW_ID_RE.search(model_id)
    return found.group()[1:] if found else None


def _window(model: ModelShape) -> int:
    return model.context_max or 0


def releases_by_window(models: tuple[ModelShape, ...]) -> dict[str, tuple[ModelShape, ...]]:
    """Models whose ids differ only in their window suffix and whose shapes are the same, by the id without the
    suffix (groups of two or more only); a release whose id is that stem belongs to it (Qwen2.5 7B beside Qwen2.5
    7B Instruct 1M)."""
    groups: dict[str, list[ModelShape]] = {}
    for model in models:
        if id_window(model.id) is not None:
            groups.setdefault(_WINDOW_ID_RE.sub("", model.id), []).append(model)
    for model in models:
        if model.id in groups:
            groups[model.id].append(model)
    return {stem: tuple(group) for stem, group in groups.items()
            if len(group) > 1 and len({_shape_key(model) for model in group}) == 1}


def _shape_key(model: ModelShape) -> tuple[object, ...]:
    # the exact count where read: a headline (Qwen2.5 14B's 14.7) may differ from its sibling's exact 14.77
    return (model.family, model.params_exact_b or model.params_b, model.layers, model.attention_heads, model.kv_heads,
            model.head_dim, model.hidden_size, model.kind)
