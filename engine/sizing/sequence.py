"""The sequence of a sizing: context tokens and batch, the policy's defaults where the user named none, and the
notes on them (engine.sizing.rule checks a named value against the limits here). Split from engine.sizing.rule.

A default context is never longer than the model's own window (`ModelShape.context_max`): Llama 2 70B's config
says max_position_embeddings 4096, and vLLM starts it at 4,096 tokens unless told otherwise (vllm/config.py
`_get_and_verify_max_len`: a max_model_len not given is the smallest of max_position_embeddings, n_positions,
max_seq_len, ... in the config). A KV cache of the policy's 8,192 tokens, which it can never use, was sized before,
and the serving check then said vLLM "would not start" at a context nobody had asked for. A context the user
named is sized as asked, with a note when it is beyond the window (sequence_notes)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from engine.notes import Note

if TYPE_CHECKING:
    from catalog.schema import SizingPolicy
    from engine.models.registry import ModelShape

# The longest context any question may ask for: 16M (2^24) holds the longest published window, Llama 4 Scout's
# 10,485,760 tokens (its config.json max_position_embeddings; engine/models/data/llama.yaml), so "scout 10M context"
# is sized, not refused (tests/test_context_window.py checks every registry window against it).
MAX_CONTEXT_TOKENS = 16 * 1024 * 1024
MAX_BATCH = 4096


def k_label(tokens: int) -> str | None:
    """"32k" for 32,768 tokens, as people write a context that is a whole number of 1,024 tokens (the parser reads
    k the same way); None for any other count."""
    return f"{tokens // 1024}k" if tokens >= 1024 and tokens % 1024 == 0 else None


class AskedSequence(Protocol):
    """What of engine.sizing.rule.SizeRequest the sequence reads (a protocol: engine.sizing.rule imports this
    module)."""

    context_tokens: int | None
    batch: int | None
    kv_precision: str | None


def sequence_matters(request: AskedSequence, shape: ModelShape, workload: str, policy: SizingPolicy) -> bool:
    """Does the sequence enter the sizing? In the breakdown policy for inference (KV cache) and LoRA/QLoRA
    (activations); in the headroom policy only for inference once a context or a batch is named (seed 004).
    A KV cache only counts where the model's attention shape is known (not FLUX, not DeepSeek V4)."""
    training = workload != "inference"
    if policy.policy == "breakdown":
        return workload in ("lora", "qlora") or (not training and shape.kv_known)
    return not training and shape.kv_known and (request.context_tokens is not None or request.batch is not None)


# A context asked this little above the model's window is its window written as a round figure (k = 1,024 tokens:
# "128k" = 131,072 is 2.4 % above a 128,000-token window, "1M" = 1,048,576 is 3.8 % above 1,010,000).
WINDOW_ROUNDING = 1.05


def resolve_sequence(request: AskedSequence, shape: ModelShape, workload: str, policy: SizingPolicy,
                     matters: bool, notes: list[Note]) -> tuple[int, int]:
    """Context tokens and batch, the policy's defaults where not given (noted where they enter the sizing); a
    default inference context longer than the model's window is the window (the decoder's 448 tokens for Whisper,
    whose fine-tuning is sized with the training default)."""
    if request.context_tokens is not None:
        context_tokens = int(request.context_tokens)  # range-checked by engine.sizing.rule
        window = shape.context_max if workload == "inference" else None
        if window and window < context_tokens <= window * WINDOW_ROUNDING:
            # "128k" on a 128,000-token model, "200k" on GLM's 202,752, "1M" on Qwen2.5 7B Instruct 1M's 1,010,000:
            # the round figure names the whole window (k = 1,024 puts it a few per cent above), which runs;
            # never "vLLM would not start" over the rounding
            notes.append(Note(f"{context_tokens:,} tokens read as {shape.name}'s whole context window, {window:,} "
                              f"tokens", "window_rounded", asked=context_tokens, tokens=window, model=shape.name))
            context_tokens = window
    else:
        default = policy.training_context_tokens if workload != "inference" else policy.default_context_tokens
        window = shape.context_max if workload == "inference" else None  # training has its own, shorter default
        if window and window < default:
            context_tokens = window  # also where it does not enter the sizing: the serving check starts vLLM at it
            if matters:
                notes.append(Note(f"context: {context_tokens:,} tokens ({shape.name}'s whole context window; the "
                                  f"default {default:,} is beyond it)", "window_context", tokens=context_tokens,
                                  model=shape.name, default=default))
        else:
            context_tokens = default
            if matters:
                notes.append(Note(f"context: {context_tokens:,} tokens (default)", "default_context",
                                  tokens=context_tokens))
    if request.batch is not None:
        batch = int(request.batch)
    else:
        batch = policy.default_batch
        if matters:
            notes.append(Note(f"batch: {batch} (default)", "default_batch", batch=batch))
    return context_tokens, batch


def sequence_notes(request: AskedSequence, shape: ModelShape, workload: str, policy: SizingPolicy,
                   matters: bool, kv_precision: str, context_tokens: int) -> list[Note]:
    """The default KV precision where a KV cache is sized, and a named context that is too long or unused."""
    notes = []
    training = workload != "inference"
    named = request.context_tokens is not None or request.batch is not None
    if not training and request.kv_precision is None and shape.kv_known and (policy.policy == "breakdown" or named):
        notes.append(Note(f"KV cache in {kv_precision.upper()} (default)", "default_kv", kv=kv_precision.upper()))
    if request.context_tokens is not None and shape.context_max and context_tokens > shape.context_max \
            and not training:
        notes.append(Note(f"{context_tokens:,} tokens is beyond {shape.name}'s {shape.context_max:,}-token context "
                          f"window; sized as asked", "beyond_context", tokens=context_tokens, model=shape.name,
                          max_tokens=shape.context_max))
        yarn = shape.yarn  # the card reaches it with YaRN: said, applied only when the user says so
        if yarn is not None and not shape.yarn_applied and context_tokens <= yarn.window:
            notes.append(Note(f"{shape.name}'s card reaches {yarn.window:,} tokens with YaRN (factor {yarn.factor:g}): "
                              "add 'YaRN' to the question to size it so", "yarn_available", model=shape.name,
                              tokens=yarn.window, factor=yarn.factor))
    if request.context_tokens is not None and not matters and shape.kv_known:
        notes.append(Note(f"the context length does not enter {workload} sizing under this provider's rules",
                          "context_unused", workload=workload))
    return notes
