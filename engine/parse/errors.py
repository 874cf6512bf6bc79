"""The parser's error notes: what a nonsense value is called, with its code and values, and the limits they name.

`ParseResult.error` is NOT_A_QUESTION (the plain string) or one of these engine.notes.Note, code in ERROR_CODES,
so the bot can say it in German (`note.<code>`).
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.models.registry import ModelShape
from engine.notes import Note
from engine.sizing.rule import MIN_PARAMS_B
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS


@dataclass(frozen=True, slots=True)
class UnknownName:
    """A model name no registry entry agrees with ('deepseek r1 distill qwen 7b', 'Kimi K2').

    `moe_written`: a mixture-of-experts size that is not the total ('17B-16E': 17B active, 16 experts)."""

    span: str
    moe_written: str | None = None
    active_b: float | None = None
    experts: int = 0



NOT_A_QUESTION = "not a sizing question"
# The codes of the errors in ParseResult.error (engine.notes.Note; the bot's texts are `note.<code>`).
ERROR_CODES = frozenset({
    "parse_bad_size", "parse_ambiguous", "parse_ambiguous_more", "parse_context_range", "parse_context_too_long",
    "parse_batch_range", "parse_gpu_count_range", "parse_gpu_count_whole", "parse_budget_range", "parse_precision",
    "parse_unknown_model", "parse_unknown_model_plain", "parse_moe_total", "parse_size_too_small",
    "parse_card_memory_range",
})
MAX_GPU_COUNT = 64
MAX_BUDGET_GB = 1_000_000
# A card's own memory as written ("an 80GB A100"), bounded like a budget: a size no card has is still read (and
# found in no catalog), but a 40-digit one would be infinite, and no answer could be written as JSON.
MAX_CARD_MEMORY_GB = MAX_BUDGET_GB
MAX_AMBIGUOUS_NAMES = 5
SIZED_PRECISIONS = "fp32, bf16, fp16, fp8, int8 or int4"
# A context's token count is echoed up to this: '1e308 tokens' would echo a 300-digit number (the value as written
# is cut to 20 characters, engine.parse.numbers.shown).
MAX_ECHOED_TOKENS = 10**12


class BadValue(Exception):
    """A value that is nonsense as written ("0B", "batch 0"); the Note is the user-facing error."""

    def __init__(self, note: Note) -> None:
        super().__init__(note)
        self.note = note


def size_error(written: str) -> Note:
    return Note(f"{written} is not a model size", "parse_bad_size", written=written)


def size_too_small_error(written: str) -> Note:
    """A positive size below engine.sizing.rule.MIN_PARAMS_B ('0.0000001B', '5 million')."""
    millions = round(MIN_PARAMS_B * 1000)
    return Note(f"{written} is too small to size: Cardfit sizes models from {millions} million parameters "
                f"({MIN_PARAMS_B:g}B) up", "parse_size_too_small", written=written, min_params_m=millions)


def gpu_count_error(written: str) -> Note:
    return Note(f"GPU count {written} is out of range (1 to {MAX_GPU_COUNT})", "parse_gpu_count_range",
                written=written, max_count=MAX_GPU_COUNT)


def gpu_count_whole_error(written: str) -> Note:
    return Note(f"GPU count {written} is not a whole number", "parse_gpu_count_whole", written=written)


def precision_error(written: str) -> Note:
    return Note(f"{written} is not a precision Cardfit sizes: use {SIZED_PRECISIONS}", "parse_precision",
                written=written)


def context_error(written: str, tokens: int | None) -> Note:
    """`tokens`: the whole number of tokens when the value was one (then only too long can be wrong with it)."""
    if tokens is not None and MAX_CONTEXT_TOKENS < tokens <= MAX_ECHOED_TOKENS:
        return Note(f"context {written} ({tokens:,} tokens) is out of range: at most {MAX_CONTEXT_TOKENS:,} tokens",
                    "parse_context_too_long", written=written, tokens=tokens, max_tokens=MAX_CONTEXT_TOKENS)
    return Note(f"context {written} is out of range (1 to {MAX_CONTEXT_TOKENS:,} tokens)", "parse_context_range",
                written=written, max_tokens=MAX_CONTEXT_TOKENS)


def batch_error(written: str) -> Note:
    return Note(f"batch {written} is out of range (1 to {MAX_BATCH:,})", "parse_batch_range", written=written,
                max_batch=MAX_BATCH)


def budget_error(written: str) -> Note:
    return Note(f"memory budget {written} is out of range", "parse_budget_range", written=written)


def card_memory_error(written: str) -> Note:
    """A card's own memory beyond MAX_CARD_MEMORY_GB ('an 807000000000GB A100')."""
    return Note(f"card memory {written} is out of range (at most {MAX_CARD_MEMORY_GB:,} GB)",
                "parse_card_memory_range", written=written, max_gb=MAX_CARD_MEMORY_GB)


def ambiguous_error(span: str, models: list[ModelShape]) -> Note:
    """'llama 3.1' names several models: ask for the size, naming the first few."""
    names = [model.name for model in models[:MAX_AMBIGUOUS_NAMES]]
    more = len(models) - len(names)
    if more:
        return Note(f"'{span}' could be {', '.join(names)} and {more} more: add the size", "parse_ambiguous_more",
                    span=span, models=names, more=more)
    return Note(f"'{span}' could be {', '.join(names)}: add the size", "parse_ambiguous", span=span, models=names)


def unknown_model_error(name: str, similar: list[str]) -> Note:
    """A model nobody knows and no size: ask for the size, with up to three registry names it may have meant."""
    if similar:
        return Note(f"I don't know the model '{name}': add its size (did you mean {', '.join(similar)}?)",
                    "parse_unknown_model", name=name, models=similar)
    return Note(f"I don't know the model '{name}': add its size", "parse_unknown_model_plain", name=name)


def moe_total_error(unknown: UnknownName) -> Note:
    """'Llama 4 Scout 17B-16E': 17B is the active size of a mixture of experts, never the total."""
    return Note(f"I don't know the model '{unknown.span}': {unknown.moe_written} is a mixture of experts "
                f"({unknown.active_b:g}B active, {unknown.experts} experts) whose total size I don't know: "
                "add the total size", "parse_moe_total", name=unknown.span, written=unknown.moe_written,
                active=unknown.active_b, experts=unknown.experts)
