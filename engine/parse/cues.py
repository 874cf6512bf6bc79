"""Follow-up cues: the words that open a message changing the question
before it ("and in fp8?", "what about Qwen 72B?", "und auf einer H100?") rather than asking a new one.

A message that names no model or size but sets a field ("with 128k", "per day", "for 10 users") is a change
without any cue; the cue matters for a message that is a whole question by itself: "what about Qwen 72B?" keeps
the precision and context of the question before it, "Qwen 72B fp8" starts afresh.
"""
from __future__ import annotations

# A single word that opens a follow-up.
CUE_WORDS = frozenset("""
and und also auch now jetzt then dann instead stattdessen same dasselbe dieselbe gleiche but aber plus
with mit without ohne ok okay
""".split())
# Two or three words that open one ("what about", "how about", "und was ist mit", "wie wäre es mit").
CUE_PHRASES: frozenset[tuple[str, ...]] = frozenset({
    ("what", "about"), ("how", "about"), ("what", "if"), ("and", "what"), ("same", "with"),
    ("auf", "einer"), ("auf", "einem"), ("was", "ist", "mit"), ("wie", "wäre"),
    ("wie", "waere"), ("wie", "sieht"), ("und", "was"), ("und", "wie"), ("und", "wenn"), ("what", "abt"),
})
_LONGEST = max(len(phrase) for phrase in CUE_PHRASES)
_PHRASE_HEADS = frozenset(phrase[0] for phrase in CUE_PHRASES)


def opens_with_cue(low: list[str]) -> bool:
    """Whether the lower-cased tokens of a message open with a follow-up cue."""
    if not low:
        return False
    if low[0] in CUE_WORDS:
        return True
    if low[0] not in _PHRASE_HEADS:
        return False
    return any(tuple(low[:length]) in CUE_PHRASES for length in range(2, _LONGEST + 1))
