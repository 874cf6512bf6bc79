"""The reverse questions: "max context for 70B FP8 on an H100", "how many users on an L40S with
Llama 3.1 8B at 8k", "biggest model on a 4090 / in 48 GB" -- intents max_context, max_batch, biggest_model.

Run after every other pass, from words no other pass reads; a comparison or a price question keeps its intent.
The words are used here, so they are not listed as ignored.
"""
from __future__ import annotations

from engine.parse.draft import Draft
from engine.parse.scan import Scan

_MOST = frozenset({"max", "maximum", "maximal", "maximale", "maximaler", "maximalen", "maximales", "longest",
                   "largest", "biggest", "längste", "längsten", "längster", "größte", "größten", "größter",
                   "größtes", "groesste", "grösste", "most"})
_HOW_MUCH = frozenset({("how", "much"), ("how", "long"), ("wie", "viel"), ("wie", "lang")})
_HOW_MANY = frozenset({("how", "many"), ("wie", "viele")})
_CONTEXT = frozenset({"context", "kontext", "kontextlänge", "ctx", "context-length"})
_USERS = frozenset({"users", "user", "nutzer", "benutzer", "requests", "anfragen", "concurrent", "parallel",
                    "parallele", "parallelen", "gleichzeitigen", "kunden", "customers",
                    "gleichzeitig", "gleichzeitige", "sessions", "streams", "clients"})
_MODEL = frozenset({"model", "modell", "llm"})


# Every reverse question has a word of each: what it asks about, and "max"/"how" before it
_ASKED = _CONTEXT | _USERS | _MODEL
_LEADS = _MOST | {"how", "wie"}


def find_capacity_intent(scan: Scan, draft: Draft) -> None:
    # "how much"/"wie viel" before a card reads as a price question; "wie viel Kontext maximal auf einer H100?"
    # asks how much context, so there the context word wins (it was answered with the H100's price card).
    price = draft.intent == "price"
    if (draft.intent is not None and not price) or scan.words.isdisjoint(_ASKED) or scan.words.isdisjoint(_LEADS):
        return
    low = scan.low
    for i, token in enumerate(low):
        if price and not (token in _CONTEXT and i > 1 and (low[i - 2], low[i - 1]) in _HOW_MUCH):
            continue
        pair = (low[i - 1], token) if i else None
        # "with 32k max context" gives the context: a sizing question, not a reverse one.
        if token in _CONTEXT and i and draft.context_tokens is None \
                and (low[i - 1] in _MOST or (i > 1 and (low[i - 2], low[i - 1]) in _HOW_MUCH)):
            draft.intent = "max_context"
        elif token in _USERS and pair is not None and (pair in _HOW_MANY or low[i - 1] in _MOST):
            draft.intent = "max_batch"
        elif token in _USERS and i > 1 and (low[i - 2], low[i - 1]) in _HOW_MANY:
            draft.intent = "max_batch"
        elif token in _MODEL and i and low[i - 1] in _MOST and draft.model is None and draft.params_b is None:
            draft.intent = "biggest_model"
        else:
            continue
        scan.use(max(0, i - 2), min(i, 2) + 1)  # the question words too ("biggest model", "how many users")
        after = i + 1  # "how many parallel requests": the noun after the adjective is the same question
        while after < scan.n and scan.free(after) and low[after] in _USERS:
            scan.use(after, 1)
            after += 1
        return
