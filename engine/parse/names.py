"""Model names as typed: how far a name runs in the text, whether a registry model agrees with all of it.

A model is only read as a registry entry whose names agree with everything the typed name says:
* a distinguishing word ("distill", "coder", "vl", "medium", "air": words.DISTINGUISHING) or a family word
  ("qwen" in "deepseek r1 distill qwen 7b") must be in the model's names;
* a version ("3" in "qwen3", "3.1" in "v3.1", "0528") must be in the model's names (a major version covers its
  minor ones: "llama 3 405b" may be Llama 3.1 405B);
* a size must agree with the model's size (within 10 %); "17b-16e" (17B active per token, 16 experts) with its
  active size and expert count; "a3b" with its active size.
How far the typed name runs: from the matched words on over the words a name is made of (see `NameWords.end`),
never over a card, a precision, a context, a keyword or an ordinary word. Pure functions of the tokens.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from engine.models.registry import ModelShape
from engine.parse.cards import card_at
from engine.parse.numbers import context_suffix_value, size_of
from engine.parse.precision import precision_token
from engine.parse.scan import Scan
from engine.parse.vocabulary import ALPHA_PREFIX_RE, ModelNames, Vocabulary
from engine.parse.words import (
    AFTER_NUMBER,
    BIT_WORDS,
    CONTEXT_UNIT_WORDS,
    CONTEXT_WORDS,
    DISTINGUISHING,
    KEYWORDS,
    NAME_WORD_SPELLINGS,
    STOP_WORDS,
)

EXPERTS_RE = re.compile(r"([0-9]{1,3})e")  # "16e" in "17b-16e": the number of experts
ACTIVE_RE = re.compile(r"a([0-9]+(?:\.[0-9]+)?)b")  # "a3b" in "30b-a3b": active parameters per token
_DATE_RE = re.compile(r"[0-9]{4}")  # "0528", "2507": a release date
_BARE_VERSION_RE = re.compile(r"[0-9]{1,2}(?:\.[0-9]+)*")  # "4", "3.1", "4.5": right after a family word only
_VERSION_RE = re.compile(r"[a-z]{1,2}[0-9]+(?:\.[0-9]+)*")  # "v3.1", "k2", "r1"
PIECE_RE = re.compile(r"[^\W\d_]+|[0-9]+(?:\.[0-9]+)*")  # "qwen2.5" -> "qwen", "2.5"
# Words that do not change the shape: a name may carry them or not.
NEUTRAL_WORDS = frozenset({"instruct", "chat", "hf", "base", "it", "pt", "preview", "latest", "thinking"})
MAX_NAME = 8  # tokens in one typed name
MAX_ORG = 3  # tokens in an organisation before a "/" ("deepseek-ai", "meta-llama")
SIZE_TOLERANCE = 0.1
_CONTEXT_NEXT = CONTEXT_WORDS | CONTEXT_UNIT_WORDS  # words after a number that make it a context

SIZE, EXPERTS, ACTIVE, DATE, DISTINCT, NEUTRAL, FAMILY, VERSION, BARE, LETTER = (
    "size", "experts", "active", "date", "distinct", "neutral", "family", "version", "bare", "letter")
_AFTER_SIZE = frozenset({EXPERTS, ACTIVE, DATE, NEUTRAL})  # "17b-16e", "30b-a3b", "70b-instruct", "7b 2507"


def near(own: float, size: float) -> bool:
    return abs(own - size) <= SIZE_TOLERANCE * size


def word_kind(token: str, models: ModelNames) -> str | None:
    """What a token can be in a model name, or None for a word no name is made of."""
    if not token:
        return None
    if "0" <= token[0] <= "9":  # only these kinds start with a digit (the word lists hold letters only)
        if size_of(token) is not None:
            return SIZE
        if EXPERTS_RE.fullmatch(token):
            return EXPERTS
        if _DATE_RE.fullmatch(token):
            return DATE
        return BARE if _BARE_VERSION_RE.fullmatch(token) else None
    if token[0] == "a" and ACTIVE_RE.fullmatch(token):
        return ACTIVE
    if token in DISTINGUISHING:
        return DISTINCT
    if token in NEUTRAL_WORDS:
        return NEUTRAL
    alpha = ALPHA_PREFIX_RE.match(token)
    if alpha and alpha.group() in models.families:
        return FAMILY
    if _VERSION_RE.fullmatch(token):
        return VERSION
    if len(token) == 1 and "a" <= token <= "z":
        return LETTER  # "r" in "command r"
    return None


class NameWords:
    """Where the name a user typed begins and ends around a match, for one text."""

    __slots__ = ("scan", "vocabulary", "models")

    def __init__(self, scan: Scan, vocabulary: Vocabulary) -> None:
        self.scan = scan
        self.vocabulary = vocabulary
        self.models = vocabulary.models

    def _breaks(self, j: int) -> bool:
        """Token j can be in no model name: used, a card, a precision, a context, a keyword."""
        scan = self.scan
        token = scan.low[j]
        if scan.used[j] or token in KEYWORDS or len(token) > 24:
            return True
        if token in STOP_WORDS and token not in DISTINGUISHING and token not in NEUTRAL_WORDS:
            return True
        if precision_token(token) is not None or context_suffix_value(token) is not None:
            return True
        return scan.flat[j] in self.vocabulary.card_prefixes and card_at(scan, self.vocabulary, j) is not None

    def _card(self, j: int) -> bool:
        """Token j starts a card's name ("4090"), whatever follows it (card_at says no card before "context")."""
        return self.scan.flat[j] in self.vocabulary.card_prefixes

    def end(self, start: int, stop: int) -> int:
        """The typed name that begins at `start` and was matched up to `stop` runs on to the returned token.

        It runs over sizes, versions, distinguishing words and (after one: "distill qwen") family words; after
        a size only over "16e", "a3b", dates and words like "instruct"; a bare number ("4" in "llama 4", "3" in
        "llama guard 3") only right after a family or distinguishing word, so "deepseek r1 8 h200" keeps its
        count; a single letter only after a family word ("command r")."""
        scan = self.scan
        low = scan.low
        seen_size = any(map(size_of, low[start:stop]))  # size_of gives None or a size (never 0)
        previous = word_kind(low[stop - 1], self.models) if stop > start else None
        j = stop
        while j < scan.n and j - start < MAX_NAME:
            kind = word_kind(low[j], self.models)  # before _breaks: most names end at a word of no kind
            if kind is None or self._breaks(j) or (seen_size and kind not in _AFTER_SIZE):
                break
            # a bare number belongs to the name after a family or distinguishing word, and right after a matched
            # name of two words or more that ends in a plain one ("stable diffusion 3.5": never SDXL)
            bare_ok = previous in (FAMILY, DISTINCT) or (j == stop and previous is None and stop - start >= 2)
            if (kind == BARE and not bare_ok) or (kind == LETTER and previous != FAMILY):
                break
            if kind == BARE and j + 1 < scan.n and (low[j + 1] in AFTER_NUMBER or low[j + 1] in BIT_WORDS):
                break  # "llama 70 b", "plus 4 bit", "guard 2 gpus": a value, read by the fields pass
            if kind == DATE and j + 1 < scan.n and low[j + 1] in _CONTEXT_NEXT and not self._card(j):
                break  # "llama 2 70b 4096 context": a context, not a release date like "0528" (nor "4090", a card)
            if kind == FAMILY and previous != DISTINCT:
                break
            if kind in (EXPERTS, ACTIVE) and not seen_size:
                break
            seen_size = seen_size or kind == SIZE
            previous = kind
            j += 1
        return j

    def org(self, start: int) -> int:
        """'deepseek-ai/' or 'meta-llama/' right before a name belongs to it (a Hugging Face repository id)."""
        scan = self.scan
        if start == 0 or "/" not in scan.text or scan.used[start - 1] or self._between(start - 1) != "/":
            return start
        i = start - 1
        while i > 0 and start - i < MAX_ORG and not scan.used[i - 1] and self._between(i - 1) == "-":
            i -= 1
        return i

    def _between(self, left: int) -> str:
        """What is written between token `left` and the next one."""
        tokens = self.scan.tokens
        return self.scan.text[tokens.end[left]:tokens.start[left + 1]]

    def begin(self, start: int) -> int:
        """A match that does not start with a family word ('v3' in 'whisper large v3') takes the distinguishing
        and family words right before it into the typed name."""
        low = self.scan.low
        if word_kind(low[start], self.models) == FAMILY:
            return self.org(start)
        i = start
        while i > 0 and word_kind(low[i - 1], self.models) in (DISTINCT, FAMILY) and not self._breaks(i - 1):
            i -= 1
        return self.org(i)


    def family_before(self, start: int) -> int | None:
        """The family word that a name matched from a version ('v3', 'r1', 'k2') belongs to: the nearest family
        word before `start` with only words of a name or words no name is made of ('larg', 'xyz') between, never
        across a break ('and', 'or', a card, a precision); None when there is none ('v3 on 8x h200')."""
        low = self.scan.low
        i = start - 1
        while i >= 0 and start - i <= MAX_NAME and not self._breaks(i):
            kind = word_kind(low[i], self.models)
            if kind == FAMILY:
                return i
            if kind not in _BETWEEN_FAMILY_AND_VERSION:
                return None
            i -= 1
        return None


_BETWEEN_FAMILY_AND_VERSION = frozenset({None, DISTINCT, NEUTRAL, VERSION, LETTER})  # "whisper larg v3"


def agrees(models: ModelNames, model: ModelShape, tokens: Sequence[str], extra: frozenset[str] = frozenset()) -> bool:
    """Does the model agree with every word of the typed name? `extra`: pieces of a variant's name."""
    pieces = models.pieces.get(model.id, frozenset()) | extra
    for index, token in enumerate(tokens):
        if context_suffix_value(token) is not None or token in pieces:
            continue
        size = size_of(token)
        if size is not None:
            experts_next = index + 1 < len(tokens) and EXPERTS_RE.fullmatch(tokens[index + 1]) is not None
            if experts_next:  # "17b-16e": 17B active per token
                if isinstance(size, str) or not near(model.active_params_b, size):
                    return False
            elif not models.agrees(model, size):
                return False
            continue
        if not _word_agrees(models, model, token, pieces):
            return False
    return True


def _word_agrees(models: ModelNames, model: ModelShape, token: str, pieces: frozenset[str]) -> bool:
    active = ACTIVE_RE.fullmatch(token)
    if active:
        return near(model.active_params_b, float(active.group(1)))
    experts = EXPERTS_RE.fullmatch(token)
    if experts:
        return model.experts_total == int(experts.group(1))
    for piece in PIECE_RE.findall(token.replace(",", ".")):  # "qwen2,5" is qwen2.5
        if piece in pieces or NAME_WORD_SPELLINGS.get(piece) in pieces:
            continue
        if piece == "vision" and model.kind == "vlm":
            continue  # "mistral small 3.2 vision": a vision-language model is one, whether its name says so or not
        if "0" <= piece[0] <= "9":
            # a major version covers its minor ones ("llama 3 405b" is Llama 3.1 405B, said in a note); another
            # version is another model; "70" of "llama 70 b" is its size
            minor = piece + "."
            if any(own.startswith(minor) for own in pieces):
                continue
            if token[0] == "v" and "0." + piece in pieces:
                continue  # "v3" of a release named "v0.3" (Mistral 7B v0.3)
            if piece.count(".") > 1 or not models.agrees(model, float(piece)):
                return False
        elif piece in DISTINGUISHING or piece in models.families:
            return False
    return True


_TYPO_TARGETS = tuple(sorted(word for word in DISTINGUISHING if len(word) >= 5))  # "mini", "vl": too short to guess


def distinguishing_typo(token: str, joined: str, prefixes: frozenset[str] | set[str]) -> str | None:
    """The distinguishing word ("medium", "small", "vision") one typo away from `token` (a letter changed, added,
    dropped or two swapped; the same first letter) with which the name read so far (`joined`, flat) still
    continues a registry name; None when there is none or more than one."""
    if len(token) < 4 or not token.isalpha():
        return None
    hits = [word for word in _TYPO_TARGETS
            if word[0] == token[0] and word != token and _one_edit(token, word) and joined + word in prefixes]
    return hits[0] if len(hits) == 1 else None


def _one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance exactly 1 (an adjacent swap counts as one)."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diffs = [k for k in range(len(a)) if a[k] != b[k]]
        return len(diffs) == 1 or (len(diffs) == 2 and diffs[1] == diffs[0] + 1
                                   and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    k = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[k:] == long[k + 1:]
