"""Which checkpoint an answer's launch command names, in the format the answer sized: the registry's published
quantized repo, a quantization vLLM does while it loads the 16-bit release, or a placeholder saying what to put
there (never the 16-bit repo for 4-bit weights); and what vLLM does with FP8 or bitsandbytes weights on a card.

What vLLM does, read in its source (vllm-project/vllm; the lines are the same in the releases around 0.33):
What vLLM loads for each precision and format is data: the `vllm` facts of a precision row, and `vllm_quantization`
and `published_as` of a format row, in engine/formats/formats.yaml. Those facts, read in vLLM's source:
* no AWQ or GPTQ quantization while loading: those formats are read from a checkpoint's quantization_config;
* `--quantization bitsandbytes` on a 16-bit checkpoint quantizes every linear to NF4 as it loads it
  (model_loader/bitsandbytes_loader.py `_unquantized_generator`: `quantize_4bit(..., compress_statistics=True,
  quant_type="nf4")`, i.e. the double-quantized NF4 of engine/formats/formats.yaml bnb_nf4); the load format follows
  from the flag (engine/arg_utils.py create_load_config); 8-bit bitsandbytes loads only pre-quantized checkpoints
  (`_quantized_8bit_generator`), and ROCm has no bitsandbytes on gfx9 cards (platforms/rocm.py: "bitsandbytes not
  supported on gfx9 (warp size 64 limitation)");
* `--quantization fp8` on a 16-bit checkpoint quantizes the linears to FP8 layer by layer while loading
  (layers/quantization/online/fp8.py `_Fp8OnlineLinearBase`: weights "onto meta device and materializes them
  just-in-time"), so the FP8 size is what the GPU holds;
* FP8 weights -- an FP8 checkpoint or the on-the-fly FP8 -- on a GPU without FP8 hardware (compute capability
  8.0-8.6: A100, A40, RTX A6000, RTX 3090, RTX A5000) run weight-only through the FP8 Marlin kernel
  (layers/quantization/utils/marlin_utils_fp8.py `is_fp8_marlin_supported` = has_device_capability(80), "For GPUs
  that lack FP8 hardware support, we can leverage the Marlin kernel for fast weight-only FP8 quantization";
  fp8.py Fp8LinearMethod `use_marlin = not has_device_capability(89)`, Fp8Config.get_min_capability 80;
  kernels/linear/scaled_mm/marlin.py MarlinFP8ScaledMMLinearKernel below capability 89; compressed-tensors FP8
  checkpoints: compressed_tensors.py picks CompressedTensorsW8A16Fp8 where W8A8 FP8 is not supported). ROCm has no
  FP8 Marlin (fp8.py: "Disable marlin for rocm"): an AMD card without FP8 (CDNA 2 and older) cannot run them.
"""
from __future__ import annotations

from dataclasses import dataclass

from catalog.schema import Card
from engine.formats.precision import find_precision, precision_label
from engine.formats.quant import checkpoint_format, find_format
from engine.formats.table import WeightFormat
from engine.models.registry import ModelShape
from engine.notes import Note
from engine.sizing.rule import ResolvedRequest

# Card architectures (catalog `architecture`) with no FP8 kernel in vLLM: NVIDIA below compute capability 8.0
# (FP8 Marlin needs 8.0) and AMD without FP8 hardware (ROCm has no FP8 Marlin).
NO_FP8_KERNEL = ("Pascal", "Volta", "Turing", "CDNA", "CDNA 2")
FP8_MARLIN = ("Ampere",)  # compute capability 8.0 / 8.6: weight-only FP8 Marlin


class UnservedFormat(ValueError):
    """A format neither engine of the check loads; `note` says so (the answer's "no serving check")."""

    def __init__(self, fmt: WeightFormat) -> None:
        engines = ", ".join(fmt.engines)
        self.note = Note(f"no serving check: neither vLLM nor llama.cpp loads {fmt.label} checkpoints (they run on "
                         f"{engines})", "serving_format_unserved", format=fmt.label, engines=engines)
        super().__init__(str(self.note))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a launch command loads: a repo (or a placeholder), how the engine gets the answer's format from it, and
    its size where the registry gives it."""

    repo: str | None  # a Hugging Face repo id; None: no model known (a bare size at 16 bit: "<your-model>")
    placeholder: bool = False  # `repo` says what to put there: the registry knows no checkpoint in that format
    tag: str | None = None  # llama.cpp's -hf quant tag ("Q4_K_M")
    quantization: str | None = None  # vLLM --quantization: made while loading the 16-bit release
    gb: float | None = None  # the checkpoint's size (registry, decimal GB); None: sized by the format's bits
    fmt: WeightFormat | None = None  # the format it is in when that is not the answer's own precision
    dtype: str | None = None  # vLLM --dtype where "auto" would not load the answer's precision
    label: str = ""  # the format as said in a note ("AWQ", "BF16")

    @property
    def fp8(self) -> bool:
        return self.quantization == "fp8" or (self.fmt is not None and self.fmt.family == "fp8")


def placeholder_name(what: str, shape: ModelShape) -> str:
    """`<AWQ checkpoint of Yi 34B>`; a bare size is "a 70B model"."""
    model = f"a {shape.name} model" if shape.typical else shape.name
    return f"<{what} of {model}>"


def checkpoint_for(resolved: ResolvedRequest, engine: str) -> Checkpoint:
    """The checkpoint of an inference answer's weights as `engine` loads it; a ValueError (the answer says "no
    serving check" with it) for a format neither engine loads (EXL2: exllamav2 and TabbyAPI, formats.yaml)."""
    shape = resolved.shape
    if resolved.weight_bytes is None:  # the release itself is in the format sized (FP8, MXFP4 ...)
        published = shape.published_weights
        label = published.format.upper() if published is not None else ""
        if engine == "llama.cpp":  # llama-server -hf loads a GGUF file; the release's safetensors repo has none
            return Checkpoint(placeholder_name(f"{label} GGUF repo", shape), placeholder=True, label=label)
        return Checkpoint(shape.hf_id, label=label)
    fmt = resolved.quant
    if fmt is not None and not fmt.is_gguf and "vllm" not in fmt.engines:
        raise UnservedFormat(fmt)
    named = resolved.checkpoint
    if named is not None and fmt is not None and fmt.is_gguf == (engine == "llama.cpp"):
        # the repo the question named ("Qwen/Qwen2.5-72B-Instruct-AWQ", "bartowski/...-GGUF" with its type)
        if fmt.is_gguf:
            return Checkpoint(named.repo, tag=fmt.name.upper(), fmt=fmt, label=fmt.label)
        return Checkpoint(named.hf_id, gb=named.gb, fmt=fmt, label=fmt.label)
    if engine == "llama.cpp":
        return _gguf(shape, fmt, resolved.precision)
    if fmt is not None:
        return _named(shape, fmt)
    return _plain(shape, resolved.precision)


def _sixteen_bit_release(shape: ModelShape) -> bool:
    return shape.hf_id is not None and not shape.published_format


def _gguf(shape: ModelShape, fmt: WeightFormat | None, precision: str) -> Checkpoint:
    """llama-server -hf <repo>:<type>: the registry's GGUF repo of that type, else a placeholder for one."""
    if fmt is not None and fmt.is_gguf:
        tag = fmt.name.upper()
        repo = shape.quantized_as(f"gguf_{fmt.name}")
        if repo is not None:
            return Checkpoint(repo.repo, tag=tag, fmt=fmt, label=fmt.label)
        return Checkpoint(placeholder_name("GGUF repo", shape), placeholder=True, tag=tag, fmt=fmt, label=fmt.label)
    label = fmt.label if fmt is not None else precision_label(precision)  # llama.cpp loads no AWQ: a GGUF of it
    return Checkpoint(placeholder_name(f"{label} GGUF repo", shape), placeholder=True, fmt=fmt, label=label)


def _named(shape: ModelShape, fmt: WeightFormat) -> Checkpoint:
    """A named format under vLLM: the registry's repo in it, vLLM's own quantization of the 16-bit release where
    it makes that format while loading, else a placeholder."""
    if fmt.is_gguf:  # vLLM loads a GGUF from a local file (--tokenizer from the 16-bit repo)
        return Checkpoint(placeholder_name(f"{fmt.label} GGUF file", shape), placeholder=True, fmt=fmt,
                          label=fmt.label)
    repo = shape.quantized_as(*(fmt.published_as or (fmt.name,)))
    if repo is not None:
        return Checkpoint(repo.hf_id, gb=repo.gb, fmt=fmt, label=fmt.label)
    if fmt.vllm_quantization is not None and _sixteen_bit_release(shape):
        return Checkpoint(shape.hf_id, quantization=fmt.vllm_quantization, fmt=fmt, label=fmt.label)
    return Checkpoint(placeholder_name(f"{fmt.label} checkpoint", shape), placeholder=True, fmt=fmt,
                      label=fmt.label)


def _plain(shape: ModelShape, precision: str) -> Checkpoint:
    """A plain precision under vLLM (the seed's BF16/FP8/INT8/INT4), as its row's `vllm` facts say: the release
    itself (with a --dtype or an in-flight --quantization), else a published checkpoint, else a format vLLM makes
    from the release while loading, else a placeholder."""
    row = find_precision(precision)
    label = (row.vllm.label or row.label) if row is not None else precision.upper()
    native = (shape.published_format or "").lower()
    if native:  # FP8/INT4 release: the repo is in that format only
        if precision == native:
            return Checkpoint(shape.hf_id, label=label)
        return Checkpoint(placeholder_name(f"{label} checkpoint", shape), placeholder=True, label=label)
    if row is None:
        return Checkpoint(placeholder_name(f"{label} checkpoint", shape), placeholder=True, label=label)
    load = row.vllm
    if load.release:
        return Checkpoint(shape.hf_id, label=label, dtype=load.dtype, quantization=load.quantization)
    repo = shape.quantized_as(*load.checkpoints)
    fmt_of_repo = checkpoint_format(repo.quant) if repo is not None else None
    if repo is not None and fmt_of_repo is not None:
        return Checkpoint(repo.hf_id, gb=repo.gb, fmt=fmt_of_repo, label=fmt_of_repo.label)
    if load.in_flight is not None and shape.hf_id is not None:
        fmt = find_format(load.in_flight)
        return Checkpoint(shape.hf_id, quantization=fmt.vllm_quantization, fmt=fmt, label=fmt.label)
    return Checkpoint(placeholder_name(f"{label} checkpoint", shape), placeholder=True, label=label)


def fp8_weights(resolved: ResolvedRequest, checkpoint: Checkpoint) -> bool:
    """Whether vLLM runs FP8 weights (an FP8 checkpoint, a release in FP8, or its FP8 made while loading)."""
    if checkpoint.fp8:
        return True
    if resolved.weight_bytes is None:
        published = resolved.shape.published_weights
        return published is not None and published.format.lower() == "fp8"
    row = find_precision(resolved.precision)
    return row is not None and row.needs_fp8_hardware and resolved.quant is None


def fp4_weights(resolved: ResolvedRequest) -> str | None:
    """The FP4 format vLLM runs (MXFP4 as gpt-oss is published, an NVFP4 or MXFP4 format asked for), else None."""
    if resolved.quant is not None:
        return resolved.quant.label if resolved.quant.needs_fp4_hardware else None
    published = resolved.shape.published_weights
    if resolved.weight_bytes is None and published is not None and published.format.lower() in ("mxfp4", "nvfp4"):
        return published.format.upper()
    return None


def card_notes(resolved: ResolvedRequest, checkpoint: Checkpoint, card: Card) -> tuple[Note | None, Note | None]:
    """(what the check should say, why vLLM would refuse the card) for these weights on `card`."""
    if checkpoint.quantization == "bitsandbytes" and card.architecture.startswith("CDNA"):
        return None, Note(f"vLLM has no bitsandbytes kernel for {card.name} (ROCm gfx9, warp size 64): use an "
                          "AWQ or GPTQ checkpoint", "serving_bnb_no_kernel", card=card.name)
    fp4 = None if card.fp8 else fp4_weights(resolved)
    if fp4 is not None and card.architecture in FP8_MARLIN:
        # The fit's rule refuses FP4 weights without FP8/FP4 hardware (its verdict stays); vLLM still
        # starts there: "Weight-only FP4 compression ... leveraging the Marlin kernel" (vllm issue #31085, the
        # gpt-oss-120b log quoted in engine/formats/formats.yaml mxfp4), and its gpt-oss recipe runs 120b on one A100.
        return Note(f"{card.name} has no FP4 hardware: vLLM runs the {fp4} weights weight-only through its Marlin "
                    "kernel (no FP4 compute)", "serving_fp4_weight_only", card=card.name, weights=fp4), None
    if card.fp8 or not fp8_weights(resolved, checkpoint):
        return None, None
    if card.architecture in FP8_MARLIN:
        return Note(f"{card.name} has no FP8 hardware: vLLM runs the FP8 weights weight-only through its FP8 "
                    "Marlin kernel (no FP8 compute)", "serving_fp8_weight_only", card=card.name), None
    if card.architecture in NO_FP8_KERNEL:
        return None, Note(f"vLLM has no FP8 kernel for {card.name} (FP8 Marlin needs compute capability 8.0, "
                          "ROCm has none)", "serving_fp8_no_kernel", card=card.name)
    return None, None
