"""The choices of an answer's toggle rows (bot/features/answers.py builds the buttons): precisions and contexts."""
from __future__ import annotations

from engine.formats.precision import button_precisions
from engine.sizing.sequence import k_label

PRECISION_TOGGLES = button_precisions()  # the rows of engine/formats/formats.yaml with `button: true`
CONTEXT_TOGGLES = ((8192, "8k"), (32768, "32k"), (131072, "128k"))


def context_toggles(window: int | None) -> tuple[tuple[int, str], ...]:
    """The context row for a model whose window is `window` tokens: a window shorter than the first choice is a
    choice of its own, first (Llama 2 is answered at its 4,096 tokens: that button is the ticked one). A model with
    no KV cache to size (Whisper, CLIP) gets no context row at all (bot/features/answers.py)."""
    if not window or window >= CONTEXT_TOGGLES[0][0]:
        return CONTEXT_TOGGLES
    return ((window, k_label(window) or f"{window:,}"), *CONTEXT_TOGGLES)
