"""What a serving check takes and returns (the card, the model, the JSON `serving` object) and the notes both
engines share: tensor-parallel splits, the model's maximum context, the outcome."""
from __future__ import annotations

from dataclasses import dataclass

from catalog.schema import Card
from engine.models.registry import ModelShape
from engine.notes import Note
from engine.serving.constants import GIB
from engine.serving.kv import ServingShapeError
from engine.serving.memory import ModelDims
from engine.serving.weights import ResidentWeights
from engine.sizing.sequence import MAX_CONTEXT_TOKENS

# The reverse questions search up to this context when the model publishes no maximum (engine.sizing.rule's limit).
UNCAPPED_CONTEXT_TOKENS = MAX_CONTEXT_TOKENS


@dataclass(frozen=True, slots=True)
class Gpu:
    """One card as the runtime sees it: its name (vLLM's A100 rule reads it) and total memory in MiB."""

    name: str
    memory_mib: int

    def __post_init__(self) -> None:
        if self.memory_mib <= 0:
            raise ValueError(f"{self.name}: memory_mib must be positive, not {self.memory_mib}")

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


@dataclass(slots=True, unsafe_hash=True)  # per answer: not frozen (engine.fit.selection.PerGpu)
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

    def holds(self, batch: int) -> bool:
        """Whether `batch` requests of the context run there at once: the engine starts and its KV cache holds them
        all (vLLM's "Maximum concurrency"; llama.cpp's start already reserves every slot). The rule sized the KV
        cache of every user, so a layout that starts for one request but queues the rest does not run the
        workload."""
        return self.starts and (self.max_concurrency is None or self.max_concurrency >= batch)

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


def tp_problem(shape: ModelShape, tp: int) -> Note | None:
    """config/model.py:1557-1563 (heads divisible by tp) and layers/linear.py:1066-1071 (KV heads vs tp)."""
    heads, kv_heads = shape.attention_heads, shape.kv_heads
    if heads and heads % tp:
        return Note(f"{heads} attention heads do not split over {tp} GPUs", "serving_tp_heads", heads=heads, tp=tp)
    if kv_heads and shape.mla_kv_lora_rank is None and (tp % kv_heads if tp >= kv_heads else kv_heads % tp):
        return Note(f"{kv_heads} KV heads do not split over {tp} GPUs", "serving_tp_kv_heads",
                    kv_heads=kv_heads, tp=tp)
    return None


def context_cap(shape: ModelShape, notes: list[Note]) -> int:
    if shape.context_max:
        return shape.context_max
    notes.append(Note("max context not capped: the model's own maximum is not published",
                      "serving_context_uncapped"))
    return UNCAPPED_CONTEXT_TOKENS


def context_capped_note(shape: ModelShape, best: int | None, cap: int, notes: list[Note]) -> None:
    if best is not None and best == cap and shape.context_max:
        notes.append(Note(f"max context capped at the model's maximum ({cap:,} tokens)", "serving_context_capped",
                          tokens=cap))


def layout_refused(shape: ModelShape, tp: int, notes: list[Note]) -> bool:
    """True (and noted) when the heads do not split over the GPUs: nothing starts at any context."""
    problem = tp_problem(shape, tp) if tp > 1 else None
    if problem is not None:
        notes.append(problem)
    return problem is not None


def check_request(shape: ModelShape, context_tokens: int, batch: int, gpus: int) -> None:
    """A request the check can size, or a ValueError naming the bad value (callers answer with it, never crash).

    A model without a published KV cache shape (DeepSeek V4's compressed cache) or without a KV cache at all
    (FLUX) raises ServingShapeError."""
    if not shape.kv_known:
        raise ServingShapeError(f"the serving check cannot size {shape.name}: no published KV cache shape")
    if 1 <= context_tokens <= UNCAPPED_CONTEXT_TOKENS and 1 <= batch <= 4096 and 1 <= gpus <= 64:
        return  # every check of every answer passes here: the loop below only names the bad value
    for name, value, high in (("context", context_tokens, UNCAPPED_CONTEXT_TOKENS), ("batch", batch, 4096),
                              ("GPU count", gpus, 64)):
        if not 1 <= value <= high:
            raise ValueError(f"{name} {value} is outside 1..{high:,}")


def context_allowed(shape: ModelShape, tp: int, context_tokens: int, notes: list[Note]) -> bool:
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


def launch_context(starts: bool, context_tokens: int, best: int | None, notes: list[Note]) -> int:
    """The context the command launches: the one asked for, or the largest that starts (said in a note)."""
    if starts or not best:
        return context_tokens
    notes.append(Note(f"the command uses the largest context that starts ({best:,} tokens, one request)",
                      "serving_command_reduced", tokens=best))
    return best


def outcome_notes(starts: bool, concurrency: float | None, batch: int, available: float,
                   notes: list[Note]) -> None:
    if available <= 0:
        notes.append(Note("the weights and runtime overheads leave no memory for the KV cache",
                          "serving_no_kv_memory", available_gib=available / GIB))
    elif starts and concurrency is not None and concurrency < batch:
        notes.append(Note(f"starts, but holds {concurrency:.2f} of {batch} requests at once; the rest wait",
                          "serving_concurrency_below_batch", concurrency=concurrency, batch=batch))

