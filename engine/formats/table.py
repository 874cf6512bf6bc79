"""The weight-format table: one row per format or plain precision (formats.yaml), every name each goes by, and what a
quantized checkpoint weighs, per part of the model.

The table is the bundled formats.yaml, or the file CARDFIT_FORMATS names (tests add a row that way: read, never
written, like every bundled file)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from catalog.bundled_yaml import load_bundled, load_bundled_file

FORMATS_PATH = Path(__file__).resolve().parent / "formats.yaml"
FORMATS_ENV = "CARDFIT_FORMATS"  # another formats file to read instead of the bundled one

# Engines that load GGUF files; a shorthand like "4-bit" means a GGUF mix for them and a safetensors format otherwise.
GGUF_ENGINES = frozenset({"llama.cpp", "ollama"})

# exllamav2 convert_exl2.py: `-b` defaults to 4.125 (turboderp/exllamav2 b9c025b4), so a bare "exl2" is that target.
EXL2_DEFAULT_BPW = 4.125
_EXL2_AFTER = re.compile(r"^exl2[:@=]?(\d+(?:\.\d+)?)(?:bpw|bits?|b)?$")
_EXL2_BEFORE = re.compile(r"^(\d+(?:\.\d+)?)(?:bpw|bits?|b)?exl2$")
_SEPARATORS = re.compile(r"[\s_\-()]+")
# Decorations that name the container rather than the format ("Q4_K_M.gguf", "gguf q4_k_m").
_GGUF_WORD = re.compile(r"^\.?gguf|\.?gguf$")
_UD_PREFIX = re.compile(r"^ud[\s_\-]*")


@dataclass(frozen=True, slots=True)
class WeightFormat:
    """One quantized weight format; bits are per weight, scales and zero points included (data/formats.yaml)."""

    name: str
    label: str
    kind: str
    family: str
    bits_per_weight: float  # over the quantized transformer-block linears
    embedding_bits: float
    output_layer_bits: float  # lm_head / output.weight
    tied_embedding_bits: float  # the one shared matrix of a tied model
    ffn_down_bits: float | None  # GGUF: the mix's mean over ffn_down alone
    ffn_down_fallback_bits: float | None  # GGUF: ffn_down when intermediate_size % 256 != 0
    # Norms, biases, routers. GGUF: 1-D tensors stay F32, and llama-quant.cpp never quantizes ffn_gate_inp (the
    # router; "do not quantize expert gating tensors"), left at the converter's F32 (not verified here). Else 16 bit.
    unquantized_bits: float
    experts_only: bool  # only MoE expert linears are quantized (MXFP4 as published for gpt-oss)
    keeps_16bit: tuple[str, ...]
    engines: tuple[str, ...]
    needs_fp8_hardware: bool
    needs_fp4_hardware: bool
    hardware: str
    aliases: tuple[str, ...]
    source: str
    cite: str = ""  # the short form of `source` for tables
    vllm_quantization: str | None = None  # --quantization with which vLLM makes it from the 16-bit release
    published_as: tuple[str, ...] = ()  # the registry's `quantized` names of checkpoints in it (default: its name)

    @property
    def is_gguf(self) -> bool:
        return self.family == "gguf"

    def with_bits(self, bits_per_weight: float) -> WeightFormat:
        """The same layout at another target bpw (EXL2's `-b` is a parameter, not a fixed format)."""
        label = f"{self.label} {bits_per_weight:g}bpw"
        return replace(self, bits_per_weight=bits_per_weight, label=label, name=f"{self.name}_{bits_per_weight:g}")


@dataclass(frozen=True, slots=True)
class KvCacheType:
    """A precision as a KV cache precision: bytes per element and what each engine calls it."""

    bytes: float
    vllm: str  # --kv-cache-dtype
    llama_cpp: str  # --cache-type-k / -v


@dataclass(frozen=True, slots=True)
class VllmLoad:
    """What vLLM loads for a plain precision (formats.yaml `precisions`, `vllm`)."""

    release: bool = False  # the 16-bit release as published
    dtype: str | None = None  # --dtype where "auto" would load another
    quantization: str | None = None  # --quantization that makes it from the release while loading
    checkpoints: tuple[str, ...] = ()  # else the registry's published checkpoints, first found wins
    in_flight: str | None = None  # else a format row vLLM makes from the release while loading
    label: str | None = None  # what a placeholder checkpoint is called (default: the precision's label)


@dataclass(frozen=True, slots=True)
class Precision:
    """A seed precision: weights at a fixed number of bytes per parameter (formats.yaml `precisions`)."""

    name: str
    label: str
    bytes_per_weight: float
    width: int | None  # the bare bit width that names it ("16-bit" is BF16)
    aliases: tuple[str, ...]
    question_aliases: tuple[str, ...]
    setting_aliases: tuple[str, ...]
    format_aliases: tuple[str, ...]
    phrases: tuple[tuple[str, str], ...]
    kv_cache: KvCacheType | None
    payload: str
    button: bool
    needs_fp8_hardware: bool
    vllm: VllmLoad


@dataclass(frozen=True, slots=True)
class WeightParts:
    """A model's parameters by the part a format treats differently (plain counts, from config.json arithmetic)."""

    body: int  # transformer-block linear weights, MoE experts included, routers excluded
    embedding: int
    lm_head: int  # 0 when tied
    one_d: int  # norms, biases: 1-D tensors
    tied: bool = False
    router: int = 0  # MoE router (gate) weights, never quantized
    ffn_down: int = 0  # the part of `body` that is ffn_down (dense) or expert down projections
    ffn_not_multiple_of_256: bool = False  # intermediate_size % 256 != 0: GGUF's ffn_down falls back
    experts: int = 0  # the part of `body` that is MoE expert linears

    def __post_init__(self) -> None:
        counts = (self.body, self.embedding, self.lm_head, self.one_d, self.router, self.ffn_down, self.experts)
        if min(counts) < 0:
            raise ValueError("parameter counts cannot be negative")
        if self.experts > self.body or self.ffn_down > self.body:
            raise ValueError("experts and ffn_down are parts of body")

    @property
    def total(self) -> int:
        return self.body + self.embedding + self.lm_head + self.one_d + self.router

    @classmethod
    def from_config(
        cls,
        *,
        layers: int,
        hidden: int,
        intermediate: int,
        vocab: int,
        heads: int,
        kv_heads: int,
        head_dim: int | None = None,
        tied: bool = False,
        experts: int = 0,
        norms_per_layer: int = 2,
        qkv_bias: bool = False,
        o_bias: bool = False,
        expert_bias: bool = False,
        qk_norm: bool = False,
    ) -> WeightParts:
        """Parts of a llama-style decoder from its config fields.

        The arithmetic of params_computed_b in /work/shared/reference/models.yaml (embeddings + attention + MLP or
        experts + norms, head counted once if tied): q/o are hidden x heads*head_dim, k/v hidden x kv_heads*head_dim,
        the MLP gate/up/down hidden x intermediate (per expert when `experts` > 0, every layer MoE, no shared expert).
        `expert_bias` is gpt-oss's: gate_up/down biases per expert plus the router bias.
        """
        if min(layers, hidden, intermediate, vocab, heads, kv_heads) <= 0 or experts < 0:
            raise ValueError("a model shape needs positive layers, widths, vocabulary and head counts")
        hd = head_dim if head_dim is not None else hidden // heads
        attention = 2 * hidden * heads * hd + 2 * hidden * kv_heads * hd
        mlp = 3 * hidden * intermediate
        copies = experts if experts else 1
        expert_params = layers * experts * mlp
        one_d = layers * norms_per_layer * hidden + hidden
        one_d += layers * (heads * hd + 2 * kv_heads * hd) if qkv_bias else 0
        one_d += layers * hidden if o_bias else 0
        one_d += layers * experts * (2 * intermediate + hidden + 1) if expert_bias else 0
        one_d += layers * 2 * hd if qk_norm else 0
        return cls(
            body=layers * (attention + copies * mlp),
            embedding=vocab * hidden,
            lm_head=0 if tied else vocab * hidden,
            one_d=one_d,
            tied=tied,
            router=layers * hidden * experts,
            ffn_down=layers * copies * intermediate * hidden,
            ffn_not_multiple_of_256=intermediate % 256 != 0,
            experts=expert_params,
        )


@dataclass(frozen=True, slots=True)
class WeightBreakdown:
    """Bytes per part, so a serving check can place embeddings and lm_head on the GPUs that hold them."""

    body: float  # transformer-block linears, the ffn_down fallback included
    ffn_down_fallback: float  # the extra bytes of GGUF's ffn_down fallback (part of `body`)
    embedding: float
    lm_head: float
    one_d: float
    router: float

    @property
    def total(self) -> float:
        return self.body + self.embedding + self.lm_head + self.one_d + self.router

    @property
    def gb(self) -> float:
        """Decimal GB (1e9 bytes), the unit of published file sizes."""
        return self.total / 1e9


def _body_bits(fmt: WeightFormat, parts: WeightParts) -> float:
    """Quantized linears at bits_per_weight; an experts-only format leaves the rest of the body at 16 bit.

    Source: the layouts in data/formats.yaml (gpt-oss: HF trees of openai/gpt-oss-20b/-120b, only experts MXFP4).
    A dense model has no experts, so there the format covers every linear.
    """
    if fmt.experts_only and parts.experts:
        return parts.experts * fmt.bits_per_weight + (parts.body - parts.experts) * 16.0
    return parts.body * fmt.bits_per_weight


def _fallback_bits(fmt: WeightFormat, parts: WeightParts) -> float:
    """Extra bits when llama.cpp's tensor_type_fallback moves ffn_down to a 32-block type (llama-quant.cpp)."""
    if not parts.ffn_not_multiple_of_256 or fmt.ffn_down_fallback_bits is None or fmt.ffn_down_bits is None:
        return 0.0
    return parts.ffn_down * (fmt.ffn_down_fallback_bits - fmt.ffn_down_bits)


def _embedding_bits(fmt: WeightFormat, parts: WeightParts) -> float:
    """A tied matrix is stored once; GGUF stores it at the output type (llama-quant.cpp: output = token_embd)."""
    return parts.embedding * (fmt.tied_embedding_bits if parts.tied else fmt.embedding_bits)


def weights_bytes(fmt: WeightFormat, parts: WeightParts) -> WeightBreakdown:
    """Bytes of a checkpoint in `fmt`: the formula in the header of data/formats.yaml, part by part."""
    fallback = _fallback_bits(fmt, parts)
    return WeightBreakdown(
        body=(_body_bits(fmt, parts) + fallback) / 8,
        ffn_down_fallback=fallback / 8,
        embedding=_embedding_bits(fmt, parts) / 8,
        lm_head=parts.lm_head * fmt.output_layer_bits / 8,
        one_d=parts.one_d * fmt.unquantized_bits / 8,
        router=parts.router * fmt.unquantized_bits / 8,
    )


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: caches are kept per table
class FormatTable:
    """The weight formats and plain precisions, and every name they go by (build_table)."""

    formats: tuple[WeightFormat, ...]
    by_key: dict[str, WeightFormat]
    shorthands: dict[str, dict[str, str]]  # normalized word -> {"gguf": name, "safetensors": name}
    block_bits: dict[str, float]  # raw ggml block types, e.g. "ggml_q6_k" -> 6.5625
    precisions: tuple[Precision, ...] = ()

    def get(self, name: str) -> WeightFormat | None:
        return self.by_key.get(normalize_format(name))


def normalize_format(text: str) -> str:
    """Lower-case, drop separators and a "gguf" container word: 'Q4_K_M', 'q4-k-m', 'Q4_K_M.gguf' -> 'q4km'."""
    key = _SEPARATORS.sub("", text.strip().lower())
    stripped = _GGUF_WORD.sub("", key)
    return stripped or key


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _format_from_entry(entry: dict[str, Any]) -> WeightFormat:
    return WeightFormat(
        name=str(entry["name"]),
        label=str(entry["label"]),
        kind=str(entry["kind"]),
        family=str(entry["family"]),
        bits_per_weight=float(entry["bits_per_weight"]),
        embedding_bits=float(entry["embedding_bits"]),
        output_layer_bits=float(entry["output_layer_bits"]),
        tied_embedding_bits=float(entry["tied_embedding_bits"]),
        ffn_down_bits=_optional_float(entry.get("ffn_down_bits")),
        ffn_down_fallback_bits=_optional_float(entry.get("ffn_down_fallback_bits")),
        unquantized_bits=float(entry["unquantized_bits"]),
        experts_only=bool(entry["experts_only"]),
        keeps_16bit=tuple(str(part) for part in entry.get("keeps_16bit") or ()),
        engines=tuple(str(engine) for engine in entry.get("engines") or ()),
        needs_fp8_hardware=bool(entry["needs_fp8_hardware"]),
        needs_fp4_hardware=bool(entry["needs_fp4_hardware"]),
        hardware=str(entry.get("hardware") or ""),
        aliases=tuple(str(alias) for alias in entry.get("aliases") or ()),
        source=str(entry["source"]),
        cite=str(entry.get("cite") or ""),
        vllm_quantization=_optional_str(entry.get("vllm_quantization")),
        published_as=_strings(entry.get("published_as")),
    )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _strings(values: Any) -> tuple[str, ...]:
    return tuple(str(value) for value in values or ())


def _precision_from_entry(entry: dict[str, Any]) -> Precision:
    kv = entry.get("kv_cache")
    load = entry.get("vllm") or {}
    return Precision(
        name=str(entry["name"]),
        label=str(entry["label"]),
        bytes_per_weight=_number(entry["bytes_per_weight"]),
        width=None if entry.get("width") is None else int(entry["width"]),
        aliases=_strings(entry.get("aliases")),
        question_aliases=_strings(entry.get("question_aliases")),
        setting_aliases=_strings(entry.get("setting_aliases")),
        format_aliases=_strings(entry.get("format_aliases")),
        phrases=tuple(_phrase(str(phrase)) for phrase in entry.get("phrases") or ()),
        kv_cache=None if kv is None else KvCacheType(_number(kv["bytes"]), str(kv["vllm"]), str(kv["llama_cpp"])),
        payload=str(entry["payload"]),
        button=bool(entry.get("button", False)),
        needs_fp8_hardware=bool(entry.get("needs_fp8_hardware", False)),
        vllm=VllmLoad(release=bool(load.get("release", False)), dtype=_optional_str(load.get("dtype")),
                      quantization=_optional_str(load.get("quantization")),
                      checkpoints=_strings(load.get("checkpoints")), in_flight=_optional_str(load.get("in_flight")),
                      label=_optional_str(load.get("label"))),
    )


def _number(value: Any) -> float:
    """A byte count as written: 2 stays the int 2 (the JSON and the formulas print it as the seeds' "2 B")."""
    return value if isinstance(value, int) and not isinstance(value, bool) else float(value)


def _phrase(text: str) -> tuple[str, str]:
    words = text.lower().split()
    if len(words) != 2:
        raise ValueError(f"formats table: a precision phrase is two words, not {text!r}")
    return words[0], words[1]


def _add_key(by_key: dict[str, str], word: str, name: str) -> None:
    key = normalize_format(word)
    if by_key.get(key, name) != name:
        raise ValueError(f"formats table: {word!r} names both {by_key[key]} and {name}")
    by_key[key] = name


def build_table(data: dict[str, Any]) -> FormatTable:
    """The table from the parsed YAML; one word naming two formats is an error in the data."""
    formats = tuple(_format_from_entry(entry) for entry in data["formats"])
    names: dict[str, str] = {}
    for fmt in formats:
        for word in (fmt.name, fmt.label, *fmt.aliases):
            _add_key(names, word, fmt.name)
    shorthands: dict[str, dict[str, str]] = {}
    for entry in data["shorthands"]:
        targets = {str(k): str(v) for k, v in entry["resolves_to"].items()}
        for word in (entry["name"], *(entry.get("aliases") or ())):
            _add_key(names, word, str(entry["name"]))
            shorthands[normalize_format(word)] = targets
    by_name = {fmt.name: fmt for fmt in formats}
    by_key = {key: by_name[name] for key, name in names.items() if name in by_name}
    blocks = {str(entry["name"]): float(entry["bits_per_weight"]) for entry in data["block_types"]}
    precisions = tuple(_precision_from_entry(entry) for entry in data.get("precisions") or ())
    return FormatTable(formats, by_key, shorthands, blocks, precisions)


def formats_path() -> Path:
    """The formats file the engine reads: the bundled one unless CARDFIT_FORMATS names another."""
    other = os.environ.get(FORMATS_ENV)
    return Path(other) if other else FORMATS_PATH


def default_table() -> FormatTable:
    """The table of formats_path(), read once per file (DESIGN: the engine reads its data at first use only)."""
    return table_at(formats_path())


@lru_cache(maxsize=4)
def table_at(path: Path) -> FormatTable:
    """The table in one formats file; the bundled file through its compiled copy, any other file read as it is."""
    if path == FORMATS_PATH:
        return build_table(load_bundled_file(FORMATS_PATH))
    return build_table(load_bundled(path.read_text(encoding="utf-8")))


def _exl2(key: str, table: FormatTable) -> WeightFormat | None:
    """'exl2:4.65', '4.65bpw exl2', 'exl2' (the convert_exl2.py default -b 4.125)."""
    base = table.by_key.get("exl2")
    match = _EXL2_AFTER.match(key) or _EXL2_BEFORE.match(key)
    if base is None or match is None:
        return None
    bits = float(match.group(1))
    # A bpw is a bit count per weight; EXL2 never stores more than the 16-bit original or nothing at all.
    return base.with_bits(bits) if 0 < bits <= 16 else None


def canonical_format(word: str, engine: str | None = None) -> WeightFormat | None:
    """The format a user's word names, or None (also for the plain precisions: engine/formats/precision.py).

    A shorthand ("4-bit", "2-bit", "1.58-bit") resolves per engine: a GGUF mix for llama.cpp/ollama (and when no
    engine is named, the common download), a safetensors format for vLLM and the like (data/formats.yaml shorthands).
    """
    if not isinstance(word, str):
        return None
    table = default_table()
    key = normalize_format(word)
    targets = table.shorthands.get(key)
    if targets is not None:
        wants_gguf = engine is None or engine.strip().lower() in GGUF_ENGINES
        target = targets["gguf"] if wants_gguf else targets.get("safetensors", targets["gguf"])
        return table.by_key.get(normalize_format(target))
    found = table.by_key.get(key)
    if found is not None and found.name == "exl2":
        return found.with_bits(EXL2_DEFAULT_BPW)
    if found is None and (key.startswith("ud") or key.endswith("kxl")):
        return _unsloth_dynamic(word, key, table)
    return found if found is not None else _exl2(key, table)


def _unsloth_dynamic(word: str, key: str, table: FormatTable) -> WeightFormat | None:
    """Unsloth's dynamic GGUF mixes ('UD-Q2_K_XL', 'UD-IQ1_S'; 'Q2_K_XL' is their name only): named as written,
    sized at their base type's bits (IQ1_S, Q2_K for Q2_K_XL) unless the registry has the file's published size
    (engine.formats.quant.published_repo): the dynamic mix keeps some layers at more bits, so the base type is a
    floor."""
    rest = key[2:] if key.startswith("ud") else key
    base = table.by_key.get(rest[:-2] if rest.endswith("kxl") else rest)
    if base is None or not base.is_gguf:
        return None
    written = _UD_PREFIX.sub("", word.strip().lower())
    written = _SEPARATORS.sub("_", _GGUF_WORD.sub("", written)).strip("_")
    return replace(base, name=f"ud-{written}", label=f"UD-{written.upper()}")


def all_formats() -> tuple[WeightFormat, ...]:
    """Every format in the bundled table, in its order (the docs table is generated from this)."""
    return default_table().formats


def _bits_cell(fmt: WeightFormat) -> str:
    text = f"as named (default {fmt.bits_per_weight:g})" if fmt.name == "exl2" else f"{fmt.bits_per_weight:g}"
    extra = []
    if fmt.is_gguf:
        extra.append(f"emb {fmt.embedding_bits:g}, out {fmt.output_layer_bits:g}")
        if fmt.ffn_down_fallback_bits is not None and fmt.ffn_down_fallback_bits != fmt.ffn_down_bits:
            extra.append(f"ffn_down {fmt.ffn_down_fallback_bits:g} if intermediate % 256")
    elif fmt.output_layer_bits != 16:
        extra.append(f"lm_head {fmt.output_layer_bits:g}")
    if fmt.experts_only:
        extra.append("MoE experts only")
    return f"{text} ({'; '.join(extra)})" if extra else text


def docs_table() -> str:
    """The README table of docs/formats.md, generated from the bundled data (a test keeps the doc equal to it)."""
    lines = ["| format | bits per weight | kept at 16 bit | engines | source |", "|---|---|---|---|---|"]
    for fmt in all_formats():
        kept = ", ".join(fmt.keeps_16bit) if fmt.keeps_16bit else "nothing (1-D tensors F32)"
        lines.append(f"| {fmt.label} | {_bits_cell(fmt)} | {kept} | {', '.join(fmt.engines)} | {fmt.cite} |")
    return "\n".join(lines) + "\n"
