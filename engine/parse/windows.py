"""The context-window pass: a model name and a context that belong together (after the models and fields passes).

Some releases differ only in their context window, and the registry lists each with its window in its id:
Phi-3 Mini 4K / 128K, Phi-3 Small 8K / 128K, Phi-3 Medium 4K / 128K (their configs: max_position_embeddings 4096
or 8192 against 131072, the same layers and heads). Two readings follow from that:

1. "phi-3 medium 128k context": the "128k" that ends the model's name is also the context the user asked for
   (a context word follows it), so it is sized at 131,072 tokens, not at the 8,192 default.
2. "phi-3 medium at 128k": the name does not say which window ("phi-3 medium" is the 4K release's alias), and
   the asked context is beyond that release's window: the sibling release whose window holds it is taken (the
   widest when none does), with a note (model_window). A name that says its window ("phi-3-medium-4k at 128k")
   is kept and sized as asked, with engine.sizing's beyond_context note.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.numbers import context_suffix_value
from engine.parse.scan import Scan
from engine.parse.words import CONTEXT_UNIT_WORDS, CONTEXT_WORDS
from engine.registry import ModelShape, Registry

_WINDOW_ID_RE = re.compile(r"-\d+k$")  # "phi-3-medium-128k": the release's window, in its registry id
_CONTEXT_AFTER_NAME = CONTEXT_WORDS | CONTEXT_UNIT_WORDS


def fit_window(scan: Scan, draft: Draft, windows: Mapping[str, tuple[ModelShape, ...]],
               name_at: tuple[int, int] | None) -> None:
    """`windows`: releases_by_window of the registry (ModelNames.windows); `name_at`: (first token, token count)
    of the model's name in the text, None when no name was read."""
    model = draft.model
    if model is None or name_at is None:
        return
    start, length = name_at
    last = start + length - 1
    window_named = any(context_suffix_value(token) is not None for token in scan.low[start:last + 1])
    if draft.context_tokens is None and window_named:
        suffix = context_suffix_value(scan.low[last])
        if suffix is not None and scan.next_free(last + 1) in _CONTEXT_AFTER_NAME:
            draft.set_context(suffix, scan.raw(last))
            scan.use(last + 1, 1)
        return
    tokens = draft.context_tokens
    if window_named or tokens is None or not model.context_max or tokens <= model.context_max:
        return
    window = model.context_max
    wider = [other for other in windows.get(_WINDOW_ID_RE.sub("", model.id), ())
             if other.context_max is not None and other.context_max > window]
    if not wider:
        return
    # the narrowest window that holds the context; when none does, the widest (still sized as asked, with
    # engine.sizing's beyond_context note on it)
    holding = [other for other in wider if (other.context_max or 0) >= tokens]
    chosen = min(holding, key=_window) if holding else max(wider, key=_window)
    note = Note(f"{chosen.name}: {tokens:,} tokens is beyond {model.name}'s {model.context_max:,}-token window",
                "model_window", model=chosen.name, base=model.name, tokens=tokens, max_tokens=model.context_max)
    before = draft.model_note
    if before is not None:
        draft.assumed = [item for item in draft.assumed if item is not before]
    draft.model_note = None
    if before is not None and before.code == "model_fuzzy":
        span = str(before.values["span"])
        draft.set_model(chosen, Note(f"{chosen.name} (assumed from '{span}')", "model_fuzzy", model=chosen.name,
                                     span=span))
        draft.assumed.append(note)
    else:
        draft.set_model(chosen, note)


def _window(model: ModelShape) -> int:
    return model.context_max or 0


def releases_by_window(registry: Registry) -> dict[str, tuple[ModelShape, ...]]:
    """Registry models whose ids differ only in their window suffix and whose shapes are the same, by the id
    without the suffix (only groups of two or more)."""
    groups: dict[str, list[ModelShape]] = {}
    for model in registry.models:
        if _WINDOW_ID_RE.search(model.id):
            groups.setdefault(_WINDOW_ID_RE.sub("", model.id), []).append(model)
    return {stem: tuple(models) for stem, models in groups.items()
            if len(models) > 1 and len({_shape_key(model) for model in models}) == 1}


def _shape_key(model: ModelShape) -> tuple[object, ...]:
    return (model.family, model.params_b, model.layers, model.attention_heads, model.kv_heads, model.head_dim,
            model.hidden_size, model.kind)
