"""The choices of an answer's toggle rows (bot/features/answers.py builds the buttons): precisions and contexts."""
from __future__ import annotations

from engine.sizing.sequence import k_label

PRECISION_TOGGLES = (("bf16", "BF16"), ("fp8", "FP8"), ("int4", "INT4"))
CONTEXT_TOGGLES = ((8192, "8k"), (32768, "32k"), (131072, "128k"))


def context_toggles(window: int | None) -> tuple[tuple[int, str], ...]:
    """The context row for a model whose window is `window` tokens: a window shorter than the first choice is a
    choice of its own, first (Llama 2 is answered at its 4,096 tokens: that button is the ticked one). A model with
    no KV cache to size (Whisper, CLIP) gets no context row at all (bot/features/answers.py)."""
    if not window or window >= CONTEXT_TOGGLES[0][0]:
        return CONTEXT_TOGGLES
    return ((window, k_label(window) or f"{window:,}"), *CONTEXT_TOGGLES)
