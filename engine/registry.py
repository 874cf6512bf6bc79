"""The model registry: real shapes of open models (bundled YAML) and the seed's typical shapes for bare sizes."""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from catalog.names import normalize_name

REGISTRY_PATH = Path(__file__).resolve().parent / "data" / "models.yaml"


@dataclass(frozen=True, slots=True)
class PublishedWeights:
    format: str  # "fp8", "mxfp4", "fp4+fp8"
    gb: float
    note: str = ""

    @property
    def needs_fp8_hardware(self) -> bool:
        """FP8/FP4 weights run only on cards with hardware support (issue 3)."""
        return any(tag in self.format.lower() for tag in ("fp8", "fp4"))


@dataclass(frozen=True, slots=True)
class ModelShape:
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
    # Other releases with this exact shape ("DeepSeek-V3.1" for DeepSeek-V3): the parser sizes them as this
    # model and says so; they are no aliases (Registry.get does not know them).
    variants: tuple[str, ...] = ()
    source: str = ""
    typical_size_b: float | None = None  # set for a seed "typical shape" standing in for a bare size

    @property
    def typical(self) -> bool:
        return self.typical_size_b is not None

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_lora_rank is not None

    @property
    def kv_known(self) -> bool:
        # A diffusion transformer (FLUX.1) has attention but no token-by-token KV cache to size.
        if self.layers is None or self.kind != "llm":
            return False
        if self.is_mla:
            return True
        return self.kv_heads is not None and self.head_dim is not None

    def summary(self) -> ShapeSummary:
        """The attention shape as data (what the KV cache formula multiplies); front ends word it."""
        if not self.kv_known:
            return ShapeSummary("unknown")
        if self.is_mla:
            return ShapeSummary("mla", layers=self.layers, mla_rank=self.mla_kv_lora_rank,
                                mla_rope=self.mla_qk_rope_head_dim)
        return ShapeSummary(
            "mha" if self.kv_heads == self.attention_heads else "gqa", layers=self.layers, kv_heads=self.kv_heads,
            head_dim=self.head_dim, window_tokens=self.sliding_window or None,
            window_layers=self.sliding_layers if self.sliding_window else 0,
        )


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

    def english(self) -> str:
        """The English sentence for the engine's own notes (JSON); bot/render.py words it per locale."""
        if self.kind == "unknown":
            return "attention shape not published"
        if self.kind == "mla":
            return f"{self.layers} layers, MLA latent {self.mla_rank}+{self.mla_rope}"
        kind = "MHA" if self.kind == "mha" else f"GQA {self.kv_heads} KV heads"
        text = f"{self.layers} layers, {kind}, head dim {self.head_dim}"
        if self.window_tokens:
            text += f", {self.window_layers} layers with a {self.window_tokens:,}-token window"
        return text


# Seed 000 section 02: "typische Formen" for bare sizes; head dim 128 throughout. Attention heads are not in
# the seed; they come from the real model of that shape (Llama 2 7B/13B, Yi-34B, Llama 3.1 70B/405B) and only
# matter for tensor-parallel divisibility.
TYPICAL_SHAPES: tuple[tuple[float, int, int, int], ...] = (
    # size_b, layers, attention_heads, kv_heads
    (7, 32, 32, 8),
    (13, 40, 40, 40),
    (34, 60, 56, 8),
    (70, 80, 64, 8),
    (405, 126, 128, 8),
)


def typical_shape(params_b: float) -> tuple[ModelShape, float]:
    """The seed's typical shape nearest to `params_b` (by ratio), with params set to `params_b`.

    Returns the shape and the nominal size whose shape was used, so the caller can say what it assumed.
    Any positive finite size has a nearest shape (log(p) - log(size), not log(p / size): 5e-324 / 7 is 0);
    the engine's bounds (engine.sizing.MIN_PARAMS_B) keep absurd sizes from getting here at all.
    """
    if not math.isfinite(params_b) or params_b <= 0:
        raise ValueError(f"no typical shape for {params_b!r}B parameters")
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


@dataclass(frozen=True)
class Registry:
    models: tuple[ModelShape, ...]
    by_key: dict[str, ModelShape] = field(repr=False)

    def get(self, model_id: str) -> ModelShape | None:
        """Exact lookup by id or alias (separators and case ignored)."""
        return self.by_key.get(normalize_name(model_id))

    def __iter__(self) -> Iterator[ModelShape]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def with_models(self, *shapes: ModelShape) -> Registry:
        """This registry and `shapes` (a model looked up for one question: engine.hub); theirs win a name."""
        by_key = dict(self.by_key)
        for shape in shapes:
            by_key[normalize_name(shape.id)] = shape
        return Registry((*self.models, *shapes), by_key)


def _shape_from_entry(entry: dict[str, Any]) -> ModelShape:
    mla = entry.get("mla") or {}
    experts = entry.get("experts") or {}
    published = entry.get("published_weights")
    params_b = float(entry["params_b"])
    return ModelShape(
        id=str(entry["id"]),
        name=str(entry.get("name") or entry["id"]),
        family=str(entry.get("family") or ""),
        kind=str(entry.get("kind") or "llm"),
        params_b=params_b,
        active_params_b=float(entry.get("active_params_b") or params_b),
        layers=entry.get("layers"),
        attention_heads=entry.get("attention_heads"),
        kv_heads=entry.get("kv_heads"),
        head_dim=entry.get("head_dim"),
        sliding_window=entry.get("sliding_window"),
        sliding_layers=int(entry.get("sliding_layers") or 0),
        mla_kv_lora_rank=mla.get("kv_lora_rank"),
        mla_qk_rope_head_dim=mla.get("qk_rope_head_dim"),
        experts_total=experts.get("total"),
        experts_active=experts.get("active"),
        published_weights=(
            PublishedWeights(str(published["format"]), float(published["gb"]), str(published.get("note") or ""))
            if published
            else None
        ),
        context_max=entry.get("context_max"),
        aliases=tuple(str(alias) for alias in entry.get("aliases") or ()),
        variants=tuple(str(variant) for variant in entry.get("variants") or ()),
        source=str(entry.get("source") or ""),
    )


def build_registry(entries: list[dict[str, Any]]) -> Registry:
    models = tuple(_shape_from_entry(entry) for entry in entries)
    by_key: dict[str, ModelShape] = {}
    for model in models:
        for key in (model.id, model.name, *model.aliases):
            normalized = normalize_name(key)
            other = by_key.get(normalized)
            if other is not None and other.id != model.id:
                raise ValueError(f"model registry: {key!r} names both {other.id} and {model.id}")
            by_key[normalized] = model
    for model in models:
        for variant in model.variants:
            other = by_key.get(normalize_name(variant))
            if other is not None:
                raise ValueError(f"model registry: variant {variant!r} of {model.id} is a name of {other.id}")
    return Registry(models, by_key)


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The bundled registry, read once (DESIGN: the engine reads its bundled data at import/first use only)."""
    with REGISTRY_PATH.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    return build_registry(data["models"])
