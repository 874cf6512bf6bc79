"""Numbers in words and what they count: "seven billion", "seventy-two billion", "four hundred and five billion",
"sieben Milliarden", "zweiundsiebzig Milliarden" are sizes; "twenty four users", "zwölf Nutzer", "zwei GPUs"
are counts. "a"/"ein" is a number only in "a billion" (and "a single user")."""
from __future__ import annotations

from engine.parse.draft import Draft
from engine.parse.scan import Scan
from engine.parse.words import (
    DE_NUMBER_WORDS,
    EN_NUMBER_WORDS,
    EN_TENS,
    EN_UNIT_WORDS,
    GERMAN_ARTICLES,
    GPU_NOUN_LEAD,
    GPU_NOUNS,
    MILLION_WORDS,
    NUMBER_WORDS,
    PARAM_WORDS,
    SIZE_ARTICLES,
    SIZE_UNITS,
    SPELLED_SIZE_UNITS,
    USER_ADJECTIVES,
    USER_NOUNS,
    WORD_NUMBERS,
)

MAX_USER_ADJECTIVES = 2

# A number read from words: (value, tokens)
Spoken = tuple[int, int]


def count_noun(scan: Scan, j: int) -> tuple[str, int] | None:
    """After a number: '[concurrent] users' -> ('batch', n), '[graphics] GPUs' -> ('gpus', n)."""
    length = 0
    while scan.free(j + length) and scan.low[j + length] in USER_ADJECTIVES and length < MAX_USER_ADJECTIVES:
        length += 1
    token = scan.next_free(j + length)
    if token in USER_NOUNS:
        return "batch", length + 1
    if length:
        return "batch", length  # "32 concurrent", "8 parallel"
    if token in GPU_NOUN_LEAD and scan.next_free(j + 1) in GPU_NOUNS:
        return "gpus", 2
    if token in GPU_NOUNS:
        return "gpus", 1
    return None


def word_number(scan: Scan, i: int) -> Spoken | None:
    """A number in words at token i -> (value, tokens): 'seven', 'seventy two' ('seventy-two'),
    'four hundred and five', 'a hundred', 'zweiundsiebzig', 'vierhundertfünf', 'ein'."""
    token = scan.low[i]
    value = DE_NUMBER_WORDS.get(token)
    if value is not None:
        return value, 1
    hundreds = 0
    after = i
    if token == "hundred":
        hundreds, after = 100, i + 1
    elif (token in EN_UNIT_WORDS or token in ("a", "an")) and scan.next_free(i + 1) == "hundred":
        hundreds, after = 100 * EN_UNIT_WORDS.get(token, 1), i + 2
    if hundreds:
        rest_at = after + (1 if scan.next_free(after) == "and" else 0)
        rest = _below_hundred(scan, rest_at)
        if rest is not None:
            return hundreds + rest[0], rest_at - i + rest[1]
        return hundreds, after - i
    rest = _below_hundred(scan, i)
    if rest is not None:
        return rest
    value = NUMBER_WORDS.get(token)
    return (value, 1) if value is not None else None


def _below_hundred(scan: Scan, j: int) -> Spoken | None:
    token = scan.next_free(j)
    if token is None:
        return None
    tens = EN_TENS.get(token)
    if tens is not None:
        unit = scan.next_free(j + 1)
        if unit is not None and unit in EN_UNIT_WORDS:
            return tens + EN_UNIT_WORDS[unit], 2
        return tens, 1
    value = EN_NUMBER_WORDS.get(token)
    return (value, 1) if value is not None else None


def read_count_word(scan: Scan, draft: Draft, i: int) -> int:
    """Number words at token i: a size ('seven billion', 'sieben Milliarden', 'a billion') or a count ('four
    users', 'a single user', 'zwei GPUs'); tokens read."""
    token = scan.low[i]
    if token in ("a", "an"):  # the most common case by far: "a 70B model", "on a H100", "a single user"
        nxt = scan.next_free(i + 1)
        if nxt != "single" and nxt != "hundred" and nxt not in SPELLED_SIZE_UNITS:
            return 0
    spoken = _spoken_at(scan, i)
    if spoken is not None:
        size_length = _read_spoken_size(scan, draft, i, spoken)
        if size_length:
            return size_length
    start = i
    if token in ("a", "an") and (spoken is None or spoken[1] == 1):
        if scan.next_free(i + 1) != "single":
            return 0
        i += 1
        token = "single"
        spoken = (1, 1)
    if spoken is None:
        return 0
    value, length = spoken
    counted = count_noun(scan, i + length)
    if counted is None:
        return 0
    kind, count_length = counted
    if kind == "gpus" and token in GERMAN_ARTICLES:
        return 0  # "eine GPU für 405B" asks which GPU, it does not fix the count at one
    written = token if length == 1 else scan.span(i, i + length - 1)
    if kind == "batch":
        draft.set_batch(float(value), written)
    else:
        draft.set_gpu_count(value, written)
    return i - start + length + count_length


def _spoken_at(scan: Scan, i: int) -> Spoken | None:
    token = scan.low[i]
    if token in ("a", "an"):
        nxt = scan.next_free(i + 1)
        if nxt == "single":
            return None
        if nxt in SPELLED_SIZE_UNITS:
            return 1, 1  # "a billion parameters"
        return word_number(scan, i)  # "a hundred"
    if token in EN_TENS or token in EN_UNIT_WORDS or token == "hundred":
        return word_number(scan, i)  # may be several words: "seventy two", "four hundred and five"
    return WORD_NUMBERS[token], 1  # one word: "vier", "zweiundsiebzig", "twelve", "eine"


def _read_spoken_size(scan: Scan, draft: Draft, i: int, spoken: Spoken) -> int:
    """'seven billion', 'seven B', 'five hundred million parameters'; but 'ein B200' is no size."""
    value, length = spoken
    unit = scan.next_free(i + length)
    if unit in SIZE_UNITS and (unit in SPELLED_SIZE_UNITS or scan.low[i] not in SIZE_ARTICLES):
        draft.set_size(float(value), str(value), unit)
        return length + 1 + scan.swallow(i + length + 1, PARAM_WORDS)
    if unit in MILLION_WORDS and scan.next_free(i + length + 1) in PARAM_WORDS:
        draft.set_size(value / 1000, f"{value} {unit}", "b")
        return length + 2
    return 0
