"""One text being read: its tokens, which of them a pass has used, and where the minus signs are."""
from __future__ import annotations

from bisect import bisect_left

from engine.parse.lexer import Tokens

_NO_INDEXES: frozenset[int] = frozenset()
_TRUE = [True]
_MARKS = frozenset(",;.:!?()|/")  # what separates two values ("int4, kv cache fp8")


class Scan:
    """The tokens of one question and the passes' marks on them. A pass `use`s the tokens it reads, so the next
    pass never reads them again, and what no pass used is listed in `ignored`."""

    __slots__ = ("text", "lowered", "tokens", "low", "flat", "n", "used", "negative", "words")

    def __init__(self, text: str, offset: int) -> None:
        self.text = text
        self.tokens = tokens = Tokens(text, offset)
        self.lowered = tokens.lowered
        self.low = tokens.low
        self.flat = tokens.flat
        self.n = tokens.n
        self.used = [False] * tokens.n
        # The distinct tokens: a pass whose words are not among them has nothing to read (one set look, no loop)
        self.words = frozenset(tokens.low)
        # The tokens right after a minus sign (found by the lexer: a hyphen inside a name or range,
        # 'gpt-oss-20b', '7B-13B', and a dash between spaces, '70B - 4 bit', are no minus signs).
        self.negative: frozenset[int] | set[int] = _NO_INDEXES
        if tokens.minus:
            negative: set[int] = set()
            starts = tokens.start
            for position in tokens.minus:
                index = bisect_left(starts, position)
                if index < tokens.n and starts[index] == position:
                    negative.add(index)
            if negative:
                self.negative = negative

    def free(self, index: int) -> bool:
        return 0 <= index < self.n and not self.used[index]

    def next_free(self, index: int) -> str | None:
        """Token `index` when no pass has used it, else None."""
        return self.low[index] if 0 <= index < self.n and not self.used[index] else None

    def swallow(self, index: int, words: frozenset[str]) -> int:
        """1 when token `index` is free and one of `words` ('70B params', '32k tokens'), else 0."""
        return 1 if 0 <= index < self.n and not self.used[index] and self.low[index] in words else 0

    def use(self, first: int, count: int) -> None:
        end = first + count
        if 0 <= first <= end <= self.n:
            self.used[first:end] = _TRUE * count  # one slice store, not a loop in Python
            return
        used = self.used
        for index in range(first, end):  # what a pass outside the tokens gets (an IndexError: a bug) stays
            used[index] = True

    def span(self, first: int, last: int) -> str:
        """Tokens first..last as the user wrote them, with what is between them."""
        return self.text[self.tokens.start[first]:self.tokens.end[last]].strip()

    def raw(self, index: int) -> str:
        """Token `index` as the user wrote it (case kept): '10M', not '10m'."""
        first, last = self.tokens.span_of(index)
        return self.text[first:last]

    def signed(self, index: int) -> str:
        """'-' for a token after a minus sign ('-7B', 'batch -4'), else ''."""
        return "-" if index in self.negative else ""

    def separated(self, left: int, right: int) -> bool:
        """Is there a comma, full stop ... between token `left` and token `right`?"""
        return not _MARKS.isdisjoint(self.text[self.tokens.end[left]:self.tokens.start[right]])
