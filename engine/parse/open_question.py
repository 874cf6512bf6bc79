"""Open questions: "largest qwen that fits on a 3090", "Ich habe 48 GB VRAM – welches Modell passt am besten?",
"best model on a $300/month budget" -- the biggest-model intent (engine.answer.open_question answers it), read
from a superlative or "which" with a model word or a family name, on a card, a memory budget or a money budget.
A family name is kept as the request's `model`: "largest qwen" asks for the biggest of the models whose ids start
with "qwen". Run after engine.parse.capacity, from words no other pass read."""
from __future__ import annotations

from engine.parse.draft import Draft
from engine.parse.scan import Scan

_LEADS = frozenset({"largest", "biggest", "best", "größte", "größten", "größtes", "groesste", "grösste", "beste",
                    "besten", "bestes", "which", "what", "welches", "welche", "welcher", "strongest", "stärkste",
                    "stärkstes"})
_MODEL = frozenset({"model", "modell", "llm", "models", "modelle"})
# What the model is for ("for coding", "RAG chatbot"): with a model named, it changes no memory, so it is read and
# said nowhere; in an open question ("best coding model") Cardfit does not choose by it, so it stays listed as not
# understood there (the answer's models are the largest that run, whatever they are for).
_USE_CASES = frozenset({"coding", "programming", "programmieren", "chatbot", "assistant", "assistent",
                        "rag", "agent", "agents", "agentic", "roleplay", "writing", "translation",
                        "übersetzung", "summarization", "zusammenfassung"})


def read_use_case(scan: Scan, draft: Draft) -> None:
    """'qwen2.5 coder 32b for coding': the use case of a named model is no leftover."""
    if (draft.model is None and draft.params_b is None) or scan.words.isdisjoint(_USE_CASES):
        return
    for i, token in enumerate(scan.low):
        if token in _USE_CASES and scan.free(i):
            scan.used[i] = True


def find_open_question(scan: Scan, draft: Draft) -> None:
    """The biggest-model intent for a question that names no model and asks which is the largest or best."""
    if draft.intent is not None or draft.model is not None or draft.params_b is not None:
        return
    if draft.card is None and draft.budget_gb is None and draft.budget_usd is None:
        return
    words = scan.words
    if words.isdisjoint(_LEADS) or (words.isdisjoint(_MODEL) and not draft.ambiguous):
        return
    draft.intent = "biggest_model"
    if draft.ambiguous:  # "largest qwen": the family the name could be, kept as the word (the request's model)
        draft.family = draft.ambiguous_span.lower().strip()
        draft.ambiguous = []
        spans = set(draft.family.split())
    else:
        spans = set()
    if draft.budget_usd is not None:
        spans.add("budget")  # "on a $300/month budget": the word after the amount
    for i, token in enumerate(scan.low):
        if scan.free(i) and (token in _LEADS or token in _MODEL or token in spans):
            scan.used[i] = True
