"""A request's named weight format: its canonical name, and the weights it gives a model of the registry.

engine/formats/table.py knows the formats' real bits per weight part by part (WeightParts); this module applies them to
a request: the embedding and output matrices at the bits the format keeps them in where the registry knows the
model's vocabulary and hidden size, else every parameter at the body bits with a note saying so.
"""
from __future__ import annotations

from engine.formats.table import (
    EXL2_DEFAULT_BPW,
    WeightFormat,
    WeightParts,
    all_formats,
    canonical_format,
    normalize_format,
    weights_bytes,
)
from engine.formula import fmt_gb, fmt_num
from engine.models.registry import ModelShape, QuantizedRepo
from engine.notes import Note


class UnknownFormat(ValueError):
    """A format name that engine/formats/table.py does not know."""


def find_format(name: str) -> WeightFormat:
    """The format a canonical (or user) name names; raises UnknownFormat."""
    found = canonical_format(name)
    if found is None:
        raise UnknownFormat(f"unknown weight format {name!r} (e.g. q4_k_m, q8_0, iq4_xs, awq, gptq, exl2:4.65, nf4, "
                            "fp8, mxfp4, nvfp4)")
    return found


def find_format_for(name: str, engine: str) -> WeightFormat:
    """find_format, with a shorthand ("4-bit") resolved for `engine`."""
    found = canonical_format(name, engine)
    if found is None:
        raise UnknownFormat(f"unknown weight format {name!r}")
    return found


def quant_name(fmt: WeightFormat) -> str:
    """The canonical name a request carries: the table's name, EXL2 with its target bpw ("exl2:4.65")."""
    if fmt.family == "exl2":
        return f"exl2:{fmt.bits_per_weight:g}"
    return fmt.name


def checkpoint_format(quant: str) -> WeightFormat | None:
    """The format of a registry `quantized` entry's quant name: 'gguf_q4_k_m' is Q4_K_M, 'fp8_channel' the format
    that lists it in `published_as` (FP8-dynamic); None for a whole GGUF repo ('gguf': its type is the question's)."""
    if quant.startswith("gguf_"):
        return canonical_format(quant[len("gguf_"):])
    return canonical_format(quant) or next((fmt for fmt in all_formats() if quant in fmt.published_as), None)


def canonical_quant(word: str) -> str | None:
    """A user's word -> the canonical name, or None when it names no format."""
    found = canonical_format(word)
    return None if found is None else quant_name(found)


def exl2_name(bits: float | None = None) -> str:
    return f"exl2:{(EXL2_DEFAULT_BPW if bits is None else bits):g}"


def quant_weights_gb(params_b: float, fmt: WeightFormat, shape: ModelShape | None = None) -> float:
    """Decimal GB of `params_b` billion parameters in the format (scales included).

    Where the registry knows the model's vocabulary and hidden size (config.json), the token embedding and the
    output layer are sized at the bits the format keeps them in (16 for AWQ/GPTQ/FP8, Q6_K-class in the GGUF mixes;
    engine/formats/table.py) and the rest at the format's body bits; otherwise every parameter at the body bits (and
    `approximation_note` says so)."""
    repo = published_repo(shape, fmt) if shape is not None else None
    if repo is not None and repo.gb is not None:
        return repo.gb
    if shape is None or not shape.vocab_size or not shape.hidden_size:
        return params_b * fmt.bits_per_weight / 8
    matrix = shape.vocab_size * shape.hidden_size
    tied = bool(shape.tie_word_embeddings)
    lm_head = 0 if tied else matrix
    body = max(0, round(params_b * 1e9) - matrix - lm_head)
    return weights_bytes(fmt, WeightParts(body=body, embedding=matrix, lm_head=lm_head, one_d=0, tied=tied)).gb


def published_repo(shape: ModelShape, fmt: WeightFormat) -> QuantizedRepo | None:
    """The registry's published file of an unsloth dynamic mix ('UD-Q2_K_XL' of DeepSeek-R1: 212 GB): no bits per
    weight describe those mixes across models, so the file's size is the weights' size. The llama.cpp types keep
    their derived size (engine/formats/table.py reproduces the published files within 0.4%)."""
    if not fmt.name.startswith("ud-"):
        return None
    repo = shape.quantized_as(f"gguf_{fmt.name}")
    return repo if repo is not None and repo.gb is not None else None


def dynamic_note(shape: ModelShape, fmt: WeightFormat) -> Note | None:
    """What an answer in an unsloth dynamic mix says about its weights: the file's published size, or that the
    mix was sized at its base type's bits (a floor: the mix keeps some layers at more bits)."""
    if not fmt.name.startswith("ud-"):
        return None
    repo = published_repo(shape, fmt)
    if repo is not None:
        return Note(f"{fmt.label} weights as published: {fmt_gb(repo.gb or 0)} ({repo.hf_id})", "quant_published_file",
                    format=fmt.label, weights_gb=repo.gb, repo=repo.hf_id)
    return Note(f"{fmt.label} sized at {fmt_num(fmt.bits_per_weight)} bits per weight, its base type's: unsloth's "
                f"dynamic mix keeps some layers at more bits, and no published size of {shape.name} in it is known",
                "quant_dynamic_base", format=fmt.label, bits=fmt.bits_per_weight, model=shape.name)


def knows_parts(shape: ModelShape) -> bool:
    """Whether the registry gives the embedding and output matrices' size (vocabulary x hidden size)."""
    return bool(shape.vocab_size and shape.hidden_size)


def approximation_note(shape: ModelShape, fmt: WeightFormat) -> Note:
    """Said with every quantized answer until the registry carries vocabulary and MLP widths."""
    name = shape.name
    return Note(f"{fmt.label} weights of {name} sized at {fmt_num(fmt.bits_per_weight)} bits for every parameter: "
                "the embedding and output matrices (kept at higher precision by most formats) are approximated",
                "quant_parts_approx", format=fmt.label, model=name, bits=fmt.bits_per_weight)


def real_4bit_note(shape: ModelShape, params_b: float) -> Note:
    """For a plain "4-bit"/"int4" answer (the seed's 0.5 B): what a real 4-bit checkpoint of the model weighs."""
    # What "4-bit" means in practice (formats.yaml shorthands): the GGUF download, the safetensors checkpoint
    gguf, awq = find_format_for("4-bit", "llama.cpp"), find_format_for("4-bit", "vllm")
    gguf_gb, awq_gb = quant_weights_gb(params_b, gguf, shape), quant_weights_gb(params_b, awq, shape)
    return Note(f"a real 4-bit checkpoint of {shape.name} weighs more than 0.5 B per parameter: about {gguf.label} "
                f"{fmt_gb(gguf_gb)} (llama.cpp) or {awq.label} {fmt_gb(awq_gb)} (vLLM)"
                + ("" if knows_parts(shape) else ", embedding matrices approximated"),
                "real_4bit" if knows_parts(shape) else "real_4bit_approx",
                model=shape.name, gguf=gguf.label, gguf_gb=gguf_gb, awq=awq.label, awq_gb=awq_gb)


def request_format(name: str | None, workload: str, notes: list[Note]) -> WeightFormat | None:
    """The request's named format for inference; training sizes its own weights (BF16, the frozen base, NF4) and
    says the format was not used. Raises UnknownFormat."""
    if not name:
        return None
    fmt = find_format(name)
    if workload != "inference":
        notes.append(Note(f"{fmt.label} ignored: {workload} sizing uses its own weight precision", "quant_unused",
                          format=fmt.label, workload=workload))
        return None
    return fmt


def quant_precision(plain: str | None, shape: ModelShape, fmt: WeightFormat,
                    notes: list[Note]) -> tuple[str, float | None]:
    """The precision and bytes per parameter of weights in a named format (`plain`: the seed precision the user's
    word also was). A model published in that very format keeps its published size (bytes None, as in
    engine.sizing.rule); otherwise the default-precision and published notes no longer apply."""
    notes[:] = [note for note in notes if note.code not in ("published", "default_precision")]
    published = shape.published_weights
    if published is not None and normalize_format(published.format) == normalize_format(fmt.name):
        notes.append(Note(f"weights as published: {fmt_gb(published.gb)} ({published.format.upper()})",
                          "published", weights_gb=published.gb, format=published.format.upper()))
        return published.format, None
    return plain or fmt.label.lower(), fmt.bits_per_weight / 8


def weights_notes(shape: ModelShape, params_b: float, precision: str, fmt: WeightFormat | None) -> list[Note]:
    """What an inference answer says about its weights: the approximation of a named format, or what a real
    4-bit checkpoint weighs beside the seed's 0.5 B per parameter (`precision` "" when not inference)."""
    if fmt is not None:
        dynamic = dynamic_note(shape, fmt)
        if dynamic is not None:
            return [dynamic]
        return [] if knows_parts(shape) else [approximation_note(shape, fmt)]
    if precision == "int4":
        return [real_4bit_note(shape, params_b)]
    return []
