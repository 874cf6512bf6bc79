"""A card count with no card after it, as a follow-up says it: '2x', 'x2', 'on 4', 'und auf zwei?', 'two of them',
'2 of those', 'zwei davon'. engine.answer.followup puts the count on the card of the question before.

Read only in a message that names no model, size or card (a follow-up): in a whole question, 'on 2' or '2x' with
nothing counted stays an ignored word as before.
"""
from __future__ import annotations

from engine.parse.cards import MULT_RE, POST_MULT_RE
from engine.parse.draft import Draft
from engine.parse.errors import MAX_GPU_COUNT
from engine.parse.lexer import digits
from engine.parse.scan import Scan
from engine.parse.spoken import word_number
from engine.parse.words import GERMAN_ARTICLES, QUIET

# The words before a count that put it on cards: 'on 2', 'auf zwei', 'across 4'
_ON_WORDS = frozenset({"on", "auf", "across", "über", "ueber"})
# What counts the cards of the question before: 'of them', 'of those', 'davon'
_OF_THEM = frozenset({"them", "those", "these"})
_NOT_COUNTS = GERMAN_ARTICLES | {"a", "an"}


def read_bare_count(scan: Scan, draft: Draft) -> None:
    """The count of a follow-up with no card named ('what about 2 of them', '2x', 'und auf zwei?')."""
    if draft.card is not None or draft.gpu_count is not None or draft.model is not None \
            or draft.params_b is not None or draft.ambiguous or draft.unknown is not None:
        return
    for i in range(scan.n):
        if not scan.free(i):
            continue
        found = _count_at(scan, i)
        if found is not None:
            count, length = found
            draft.set_gpu_count(count, scan.span(i, i + length - 1))
            scan.use(i, length)
            return


def _count_at(scan: Scan, i: int) -> tuple[int, int] | None:
    """(count, tokens read) of a count at token i, or None."""
    token = scan.low[i]
    times = MULT_RE.fullmatch(token) or POST_MULT_RE.fullmatch(token)  # '2x', 'x2' (cards' own multipliers)
    if times is not None:
        return _bounded(int(times.group(1)), 1)
    if token in _ON_WORDS:
        number = _number_at(scan, i + 1)
        if number is not None and _nothing_after(scan, i + 1 + number[1]):
            return _bounded(number[0], 1 + number[1])
        return None
    number = _number_at(scan, i)
    if number is None:
        return None
    value, length = number
    after = i + length
    if scan.next_free(after) == "of" and scan.next_free(after + 1) in _OF_THEM:
        return _bounded(value, length + 2)
    if scan.next_free(after) == "davon":
        return _bounded(value, length + 1)
    return None


def _number_at(scan: Scan, i: int) -> tuple[int, int] | None:
    token = scan.next_free(i)
    if token is None or token in _NOT_COUNTS:
        return None
    if digits(token) and len(token) <= 2:
        return int(token), 1
    return word_number(scan, i)


def _nothing_after(scan: Scan, j: int) -> bool:
    """Only stop words after token j ('auf zwei?', 'on 4 please'): the count ends the message."""
    return all(scan.low[k] in QUIET for k in range(j, scan.n))


def _bounded(count: int, length: int) -> tuple[int, int] | None:
    return (count, length) if 1 <= count <= MAX_GPU_COUNT else None
