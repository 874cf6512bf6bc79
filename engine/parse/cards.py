"""The cards pass: a card name from the catalog ("H100", "rtx 4090", "h100s") with its count ("2x", "on an",
"zwei", "dual") and its own memory ("80GB A100", "RTX 4090 24GB" -- not a budget)."""
from __future__ import annotations

import re
from itertools import compress
from operator import or_

from engine.parse.draft import Draft
from engine.parse.errors import MAX_CARD_MEMORY_GB, MAX_GPU_COUNT, BadValue, card_memory_error, gpu_count_error
from engine.parse.lexer import digits
from engine.parse.numbers import gb_token, shown
from engine.parse.scan import Scan
from engine.parse.vocabulary import Vocabulary
from engine.parse.words import (
    BATCH_FILLERS,
    BATCH_WORDS,
    BIT_WORDS,
    CARD_ARTICLES,
    CARD_MINE,
    CARD_MULTIPLIERS,
    CARD_ONE,
    CARD_THE_ONE,
    CONTEXT_FILLERS,
    CONTEXT_UNIT_WORDS,
    CONTEXT_WORDS,
    GB_UNITS,
    GEFORCE_RE_TEXT,
    GPU_SUFFIXES,
    MILLION_WORDS,
    OTHER_GPU_NAMES,
    OTHER_GPU_PREFIXES,
    SIZE_UNITS,
    TOTAL_WORDS,
    USER_ADJECTIVES,
    USER_NOUNS,
    WORD_NUMBERS,
)

MULT_RE = re.compile(r"([0-9]{1,4})x")  # "2x" before a card, and alone in a follow-up (engine/parse/counts.py)
POST_MULT_RE = re.compile(r"x([0-9]{1,4})")
_GEFORCE_RE = re.compile(GEFORCE_RE_TEXT)
# Where a bare GeForce number ("3060") is a card: after these words, or before its memory ("3060 12gb").
_CARD_LEADS = frozenset({"on", "auf", "with", "mit", "using"})
MAX_CARD_WORDS = 4


def find_cards(scan: Scan, draft: Draft, vocabulary: Vocabulary) -> None:
    """Every card name in the text: the first is the card (with its count), later ones are listed as ignored."""
    flat, n, used = scan.flat, scan.n, scan.used
    prefixes, plurals = vocabulary.card_prefixes, vocabulary.card_plurals
    # a card name starts with a prefix of a card key or a key and an "s" ("h100s"): a text with no such token has
    # no card the catalog lists
    if not prefixes.isdisjoint(flat) or not plurals.isdisjoint(flat):
        after = 0  # the token after the last card read
        for i in compress(range(n), map(or_, map(prefixes.__contains__, flat), map(plurals.__contains__, flat))):
            if i < after or used[i]:
                continue
            match = card_at(scan, vocabulary, i)
            if match is not None:
                after = _take(scan, draft, i, *match)
    _find_other_gpus(scan, draft)


def _take(scan: Scan, draft: Draft, i: int, length: int, name: str) -> int:
    """Card `name` named by tokens i..i+length: the draft takes it (first card wins) with the count around it;
    returns where reading goes on."""
    taken = draft.take_card(name)
    scan.use(i, length)
    if taken:
        _card_count(scan, draft, i, i + length)
    return i + length


def _find_other_gpus(scan: Scan, draft: Draft) -> None:
    """GPUs the catalog does not list ('RTX 3060 12GB', '2x 3060', 'T4'): a card all the same (the engine says it
    is not rented), so its count and memory are not read as a GPU count or a memory budget."""
    i = 0 if not scan.words.isdisjoint(_GPU_STARTS) or _GEFORCE_LIKE_RE.search(scan.lowered) else scan.n
    low, used = scan.low, scan.used
    while i < scan.n:
        found = _other_gpu_at(scan, i) if not used[i] and _may_name_gpu(low[i]) else None
        if found is None:
            i += 1
            continue
        i = _take(scan, draft, i, *found)


_GPU_STARTS = OTHER_GPU_PREFIXES | OTHER_GPU_NAMES
# What every token _may_name_gpu lets through by its digits looks like somewhere in the text: 1-9 and 3 more of
# the characters a token is made of (the first 4 of its 4 to 9)
_GEFORCE_LIKE_RE = re.compile(r"[1-9][\w.,]{3}")


def _may_name_gpu(token: str) -> bool:
    """A cheap look before _other_gpu_at: a prefix, a name, or what _GEFORCE_RE can match (4 digits from 1..9,
    "ti" or "super" after them)."""
    return token in OTHER_GPU_PREFIXES or token in OTHER_GPU_NAMES or ("1" <= token[:1] <= "9" and 4 <= len(token) <= 9)


def _other_gpu_at(scan: Scan, i: int) -> tuple[int, str] | None:
    low = scan.low
    j = i
    while j < scan.n and j - i < 2 and scan.free(j) and low[j] in OTHER_GPU_PREFIXES:
        j += 1
    if not scan.free(j):
        return None
    token = low[j]
    if token in OTHER_GPU_NAMES:
        pass
    elif _GEFORCE_RE.fullmatch(token):
        prefixed = j > i
        before = low[i - 1] if i > 0 else ""
        after = low[j + 1] if j + 1 < scan.n else ""
        counted = bool(MULT_RE.fullmatch(before)) or before in CARD_MINE or before in CARD_ARTICLES \
            or before in _CARD_LEADS
        sized = gb_token(after) is not None or (digits(after) and j + 2 < scan.n and low[j + 2] in GB_UNITS)
        if not (prefixed or counted or sized) or _number_not_card(scan, j, 1) and not sized:
            return None
    else:
        return None
    end = j + 1
    if scan.free(end) and low[end] in GPU_SUFFIXES:
        end += 1
    return end - i, " ".join(low[i:end])


def card_at(scan: Scan, vocabulary: Vocabulary, i: int) -> tuple[int, str] | None:
    """A card name starting at token i -> (tokens, the name as written in lower case), longest first."""
    found = _card_words(scan, vocabulary, i)
    if found is None or _number_not_card(scan, i, found[0]):
        return None
    return found


def _card_words(scan: Scan, vocabulary: Vocabulary, i: int) -> tuple[int, str] | None:
    low, flat, used = scan.low, scan.flat, scan.used
    keys, prefixes = vocabulary.card_keys, vocabulary.card_prefixes
    found: tuple[int, str] | None = None
    joined = ""
    for j in range(i, min(scan.n, i + MAX_CARD_WORDS)):
        if used[j]:
            break
        joined += flat[j]
        if joined in keys:
            found = (j + 1 - i, " ".join(low[i:j + 1]))
        elif joined.endswith("s") and joined[:-1] in keys and digits(low[j][-2:-1]):
            found = (j + 1 - i, " ".join(low[i:j + 1])[:-1])  # "h100s", "4090s"
        if joined not in prefixes:
            break
    return found


def _number_not_card(scan: Scan, i: int, length: int) -> bool:
    """'a 40 GB budget', '4090 tokens', 'batch 4090': a number with a unit or after a keyword is not a card."""
    low = scan.low
    last = i + length - 1
    if not digits(low[last]) or not (length == 1 or len(low[i]) == 1):
        return False
    if length == 1 and i > 0 and MULT_RE.fullmatch(low[i - 1]):
        return False  # "6x 3090, tokens per second?": a count names the card, whatever follows
    nxt = low[last + 1] if last + 1 < scan.n else ""
    if nxt and "," in scan.text[scan.tokens.end[last]:scan.tokens.start[last + 1]]:
        nxt = ""  # "on a 3090, tokens per second?": a unit after a comma is not the number's
    if length > 1 and len(nxt) == 3 and digits(nxt) and digits(low[i]):
        return True  # "3 090 001 tokens": the groups of a space-grouped number, not an RTX 3090
    if nxt in GB_UNITS or nxt in SIZE_UNITS or nxt in CONTEXT_UNIT_WORDS or nxt in BIT_WORDS \
            or nxt in USER_NOUNS or nxt in USER_ADJECTIVES or nxt in MILLION_WORDS or nxt == "k":
        return True
    k = i - 1
    while k >= 0 and i - k <= 3 and (low[k] in BATCH_FILLERS or low[k] in CONTEXT_FILLERS):
        k -= 1
    return k >= 0 and (low[k] in BATCH_WORDS or low[k] in CONTEXT_WORDS)


def _card_count(scan: Scan, draft: Draft, first: int, after: int) -> None:
    """The count around the card at tokens first..after-1: '2x H100', 'zwei H100', 'H100 x4', 'an H100'.

    'my 4090' is exactly one card; 'a B200' is one card read from an article (`count_implied`: a card rented
    only in sets takes its smallest set that works)."""
    k, memory = _own_memory_before(scan, first - 1)
    implied = scan.free(k) and (scan.low[k] in CARD_ARTICLES or scan.low[k] in CARD_THE_ONE)
    count = _count_before(scan, k)
    nxt = after
    if count is None:
        count, nxt = _count_after(scan, after)
    after_memory = _own_memory_after(scan, nxt)
    if after_memory is not None and count is not None and count > 1 and _total_after(scan, nxt):
        after_memory /= count  # "2x 3090 (48gb total)": the memory of all the cards together, not one card's
    memory = memory if memory is not None else after_memory
    if memory is not None:
        draft.card_vram_gb = memory
    if count is not None:
        draft.set_gpu_count(count)
        draft.count_implied = implied and draft.gpu_count == count


def _own_memory_before(scan: Scan, k: int) -> tuple[int, float | None]:
    """'an 80GB A100', 'an 80 GB A100': the card's own memory, not a budget. Returns where a count may be, and
    the memory in GB."""
    low, used = scan.low, scan.used
    if scan.free(k):
        glued = gb_token(low[k])
        if glued is not None:
            used[k] = True
            return k - 1, _card_memory(glued[0], scan, k, k)
    if scan.free(k) and low[k] in GB_UNITS and scan.free(k - 1) and digits(low[k - 1]):
        used[k] = used[k - 1] = True
        return k - 2, _card_memory(float(low[k - 1]) * GB_UNITS[low[k]], scan, k - 1, k)
    return k, None


def _card_memory(gb: float, scan: Scan, first: int, last: int) -> float:
    """The card's own memory as written in tokens first..last; a size no card has is refused, not carried on."""
    if not gb <= MAX_CARD_MEMORY_GB:  # also inf and nan
        raise BadValue(card_memory_error(shown(scan.span(first, last))))
    return gb


def _count_before(scan: Scan, k: int) -> int | None:
    if not scan.free(k):
        return None
    low, used = scan.low, scan.used
    token = low[k]
    if k in scan.negative and "0" <= token[0] <= "9":  # "-2 H100", "-2x H100"
        raise BadValue(gpu_count_error(f"-{shown(token.rstrip('x'))}"))
    mult = MULT_RE.fullmatch(token)
    if mult:
        used[k] = True
        return int(mult.group(1))
    if token == "x" and scan.free(k - 1) and digits(low[k - 1]) and len(low[k - 1]) <= 4:
        used[k] = used[k - 1] = True
        return int(low[k - 1])
    if digits(token) and int(token) <= MAX_GPU_COUNT:  # "2024 H100 prices" is no count
        used[k] = True
        return int(token)
    if token in CARD_MINE or token in CARD_THE_ONE:
        used[k] = True
        return 1
    if token in CARD_ONE:
        used[k] = True
        if token == "single" and scan.free(k - 1) and low[k - 1] in ("a", "an"):
            used[k - 1] = True
        return 1
    if token in WORD_NUMBERS:
        used[k] = True
        return WORD_NUMBERS[token]
    if token in CARD_MULTIPLIERS:
        used[k] = True
        return CARD_MULTIPLIERS[token]
    return None


def _count_after(scan: Scan, after: int) -> tuple[int | None, int]:
    """'H100 x4', 'H100 x 4' -> (count, the token after it)."""
    if not scan.free(after):
        return None, after
    low, used = scan.low, scan.used
    token = low[after]
    post = POST_MULT_RE.fullmatch(token)
    if post:
        used[after] = True
        return int(post.group(1)), after + 1
    if token == "x" and scan.free(after + 1) and digits(low[after + 1]) and len(low[after + 1]) <= 4:
        used[after] = used[after + 1] = True
        return int(low[after + 1]), after + 2
    return None, after


def _own_memory_after(scan: Scan, nxt: int) -> float | None:
    """'RTX 4090 24GB', 'A100 (80 GB)': the card's own memory in GB, not a budget."""
    low, used = scan.low, scan.used
    if not scan.free(nxt):
        return None
    glued = gb_token(low[nxt])
    if glued is not None:
        used[nxt] = True
        return _card_memory(glued[0], scan, nxt, nxt)
    if scan.free(nxt + 1) and digits(low[nxt]) and low[nxt + 1] in GB_UNITS:
        used[nxt] = used[nxt + 1] = True
        return _card_memory(float(low[nxt]) * GB_UNITS[low[nxt + 1]], scan, nxt, nxt + 1)
    return None


def _total_after(scan: Scan, nxt: int) -> bool:
    """'2x 3090 (48gb total)', '(48 GB insgesamt)', '(48 GB in total)': the memory read at token nxt (one token
    or a number and its unit) is what the cards hold together. Uses the word that says so."""
    k = nxt + 1 if gb_token(scan.low[nxt]) is not None else nxt + 2  # past the memory just read
    if k < scan.n and scan.low[k] == "in" and scan.next_free(k + 1) in TOTAL_WORDS:
        scan.use(k, 2)
        return True
    if scan.next_free(k) in TOTAL_WORDS:
        scan.use(k, 1)
        return True
    return False
