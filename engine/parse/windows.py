"""The window in a model's name read as the context too (after the models and fields passes).

Some releases carry their context window in their name (Phi-3 Mini 128K, "phi-3-medium-128k"). When such a name
ends the model's name as typed and a context word follows ("phi-3 medium 128k context", "phi3 mini 128k ctx"),
the user asked for that context: it is sized at 131,072 tokens, not at the 8,192 default. Which release holds a
context the user named is the engine's part (Registry.wider_release: "phi-3 medium at 128k", a follow-up "and at
128k?", a button), so that every way of asking answers alike.
"""
from __future__ import annotations

from engine.models.registry import id_window
from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.numbers import context_suffix_value
from engine.parse.scan import Scan
from engine.parse.words import CONTEXT_UNIT_WORDS, CONTEXT_WORDS

_CONTEXT_AFTER_NAME = CONTEXT_WORDS | CONTEXT_UNIT_WORDS


def window_as_context(scan: Scan, draft: Draft, name_at: tuple[int, int] | None) -> None:
    """`name_at`: (first token, token count) of the model's name in the text, None when no name was read."""
    model = draft.model
    if model is None or name_at is None or draft.context_tokens is not None \
            or draft.workload not in (None, "inference"):
        return  # "finetune phi-3 mini 128k context with qlora" names the release, not a training sequence
    last = name_at[0] + name_at[1] - 1
    token = scan.low[last]
    # only the release's own window ("128k" of phi-3-mini-128k, whose window is 131,072), never a size that reads
    # like one ("gemma 3 270m context") or another number in a name
    suffix = context_suffix_value(token) if id_window(model.id) == token else None
    if suffix is not None and suffix == model.context_max and scan.next_free(last + 1) in _CONTEXT_AFTER_NAME:
        written = scan.raw(last)
        draft.set_context(suffix, written)
        scan.use(last + 1, 1)
        tokens = int(suffix)
        draft.assumed.append(Note(f"'{written}' read as {model.name} and as a {tokens:,}-token context",
                                  "window_as_context", written=written, model=model.name, tokens=tokens))
