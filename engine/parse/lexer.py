"""The lexer: a question -> lower-case tokens with their places in the text, minus signs and exponents found.

Words and numbers are tokens. "_" joins ("q4_k_m"), "." joins before a digit ("qwen2.5", "flux.1", "8.192"), ","
joins between digits ("1,5b", "32,768"); hyphens, spaces and all other punctuation separate. "2x4090" is two
tokens ("2x", "4090"); "10^20", "10 ** 20" and "1e+20" are one ("10^20", "1e20").
"""
from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate, repeat
from operator import add

TOKEN_RE = re.compile(r"[^\W_]+(?:(?:_|\.(?=[0-9])|(?<=[0-9]),(?=[0-9]))[^\W_]+)*")
# A comma-joined token is kept whole only when it is a number ("1,5b", "32,768") or a version ("qwen2,5");
# "fp8,32k" is two tokens.
_COMMA_OK_RE = re.compile(r"[0-9]+(?:,[0-9]+)*(?:\.[0-9]+)?[^\W\d_]*|[^\W\d_]+[0-9]+,[0-9]+")
# "2x4090", "8xh100" -- but not "8x7b" or "8x22b", which name mixture-of-experts models.
_GLUED_COUNT_RE = re.compile(r"[0-9]{1,2}x(?:[^\W\d_][^\W_]*|[0-9]{3,}[^\W_]*)")
# Where a glued count may start; the character before it is checked in Python (a look-behind first would be
# tried at every position of every text: slower than the whole lexing)
_GLUED_COUNT_SEARCH_RE = re.compile(r"[0-9]{1,2}x(?:[^\W\d_]|[0-9]{3})")
_TOKEN_CHAR_RE = re.compile(r"[^\W_]")
COMMAND_RE = re.compile(r"\s*/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?")
# Exponent forms: "10^20", "10 ^ 20", "10**20", "1e+20", "1e-5" (lexed as several tokens and joined); "1e20" is
# already one token. The joined token is written canonically: "10^20", "1e-5".
_EXP_SEARCH_RE = re.compile(r"[0-9]\s{0,2}(?:\^|\*\*)\s{0,2}[-+\u2212]?[0-9]|[0-9][eE][-+\u2212][0-9]")
_EXP_SPAN_RE = re.compile(
    r"(?<![\w.,])([0-9]+(?:[.,][0-9]+)?)(?:\s{0,2}(\^|\*\*)\s{0,2}|([eE]))([-+\u2212]?)([0-9]{1,6})(?![0-9])")
# A minus sign: "-" or U+2212 right before a digit, and not right after a letter, digit or one of MINUS_NOT_AFTER:
# not inside a word or range ("gpt-oss-20b", "int-4", "7B-13B"). Checked in Python: a look-behind is slow.
_MINUS_CANDIDATE_RE = re.compile(r"[-\u2212](?=[0-9])")
MINUS_NOT_AFTER = frozenset(".,-_\u2212")
# Characters that show as nothing (zero-width space, non-joiner, joiner, word joiner, byte order mark, soft
# hyphen): the text is read as it shows, so "7\u200b0B" is 70B, never "0B" after a separator no one can see.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def as_shown(text: str) -> str:
    """The text without the characters that show as nothing (an ASCII text has none: returned as it is)."""
    return text if text.isascii() else text.translate(_INVISIBLE)


def digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and '٣', which int() and float() refuse."""
    return text.isascii() and text.isdigit()


def flat(token: str) -> str:
    """A token as catalog.names.normalize_name sees it (the lexer already split on the other separators)."""
    return token.replace(".", "").replace(",", "").replace("_", "")


def words_of(text: str) -> list[str]:
    """The lower-case words of a name as the lexer splits a question ('Llama-3.1 70B' -> ['llama', '3.1', '70b'])."""
    return TOKEN_RE.findall(text.lower())


class Tokens:
    """The tokens of one text: `low` (lower case), `flat` (without '.', ',', '_'), their spans, the minus signs."""

    __slots__ = ("low", "flat", "n", "minus", "lowered", "_lowered", "_offset", "_start", "_end")

    def __init__(self, text: str, offset: int) -> None:
        self.lowered = lowered = text.lower()
        same_length = len(lowered) == len(text)  # lower() can lengthen a few characters ("İ")
        self.minus: list[int] | None = _minus_signs(text, offset)  # where the numbers after a minus sign start
        # exponent forms: cheap looks first, the regular expression only for the rare texts
        exponent = ("^" in text or "*" in text or "e-" in lowered or "e+" in lowered or "e\u2212" in lowered) \
            and _EXP_SEARCH_RE.search(text, offset) is not None
        self._lowered: str | None = None
        self._offset = offset
        self._start: list[int] | None = None
        self._end: list[int] | None = None
        if same_length and not exponent and "," not in text and not _glued_count(lowered, offset):
            # the common case: one token per match; the spans are found again only when a pass needs them (the
            # same expression over the same text finds the same matches)
            # ASCII words of letters and digits only, between spaces, are the tokens themselves: the lexer's
            # expression would find each as one match, at several times the cost of the split. A question mark
            # or full stop at the end joins no token (a "." joins only before a digit).
            words = lowered.rstrip("?!.").split() if not offset and lowered.isascii() else None
            low = words if words is not None and all(map(str.isalnum, words)) \
                else TOKEN_RE.findall(lowered, offset)
            self._lowered = lowered
        else:
            low, starts, ends = _split(text, lowered, same_length, offset)
            if exponent:
                _join_exponents(lowered if same_length else text, offset, low, starts, ends)
            self._start = starts
            self._end = ends
        self.low = low
        # "." and "_" only ever join inside a token ("," is the rare path's): a text without them has flat == low
        self.flat = [flat(token) if ("." in token or "," in token or "_" in token) else token for token in low] \
            if ("." in lowered or "_" in lowered or "," in lowered) else low
        self.n = len(low)

    def _spans(self) -> tuple[list[int], list[int]]:
        """The spans of the common case's tokens: each is the first place its text occurs after the token before
        it, as nothing between two tokens can start one (a token starts with a letter or digit, and every letter
        or digit is inside a token)."""
        lowered = self._lowered or ""
        if not self._offset and self.low and lowered.startswith(" ".join(self.low)):
            self._start, self._end = _spaced_spans(self.low)  # one space between tokens: most questions
            return self._start, self._end
        find = lowered.find
        starts: list[int] = []
        ends: list[int] = []
        position = self._offset
        for token in self.low:
            position = find(token, position)
            starts.append(position)
            position += len(token)
            ends.append(position)
        self._start, self._end = starts, ends
        return starts, ends

    @property
    def start(self) -> list[int]:
        return self._start if self._start is not None else self._spans()[0]

    @property
    def end(self) -> list[int]:
        return self._end if self._end is not None else self._spans()[1]

    def span_of(self, index: int) -> tuple[int, int]:
        """Where token `index` is in the text."""
        return self.start[index], self.end[index]


def _spaced_spans(low: list[str]) -> tuple[list[int], list[int]]:
    """The spans of tokens that open the text one space apart: their lengths say it all."""
    lengths = list(map(len, low))
    starts = list(accumulate(map(add, lengths[:-1], repeat(1)), initial=0))
    return starts, list(map(add, starts, lengths))


def _glued_count(lowered: str, offset: int) -> bool:
    """Is there a glued count ('2x4090', '8xh100', not 'a2x4090') in the text? The matches of the search that
    start right after a token character are no such count; nothing inside one can start another."""
    if "x" not in lowered:
        return False
    for match in _GLUED_COUNT_SEARCH_RE.finditer(lowered, offset):
        at = match.start()
        if not at or not _TOKEN_CHAR_RE.match(lowered, at - 1):
            return True
    return False


def _minus_signs(text: str, offset: int) -> list[int] | None:
    if "-" not in text and "\u2212" not in text:
        return None
    found: list[int] | None = None
    for match in _MINUS_CANDIDATE_RE.finditer(text, offset):
        at = match.start()
        if at and (text[at - 1].isalnum() or text[at - 1] in MINUS_NOT_AFTER):
            continue  # "gpt-oss-20b", "7B-13B", "1.-2", "--4"
        if found is None:
            found = []
        found.append(at + 1)
    return found


def _split(text: str, lowered: str, same_length: bool, offset: int) -> tuple[list[str], list[int], list[int]]:
    low: list[str] = []
    start: list[int] = []
    end: list[int] = []
    for match in TOKEN_RE.finditer(lowered if same_length else text, offset):
        token = match.group() if same_length else match.group().lower()
        first, last = match.span()
        if "," in token and not _COMMA_OK_RE.fullmatch(token):
            position = first
            for piece in match.group().split(","):
                if piece:
                    low.append(piece.lower())
                    start.append(position)
                    end.append(position + len(piece))
                position += len(piece) + 1
            continue
        if "x" in token and _GLUED_COUNT_RE.fullmatch(token):  # "2x4090", "8xH100": a count and a card
            cut = token.index("x") + 1
            low.append(token[:cut])
            start.append(first)
            end.append(first + cut)
            low.append(token[cut:])
            start.append(first + cut)
            end.append(last)
            continue
        low.append(token)
        start.append(first)
        end.append(last)
    return low, start, end


def _join_exponents(source: str, offset: int, low: list[str], start: list[int], end: list[int]) -> None:
    """'10^20' + 'b' stays; '10', '20b' -> '10^20b'; '1e', '20' (from '1e+20') -> '1e20'. In place."""
    for match in reversed(list(_EXP_SPAN_RE.finditer(source, offset))):
        first = bisect_left(start, match.start())
        if first >= len(start) or start[first] != match.start():
            continue
        last = bisect_left(start, match.end()) - 1
        if last <= first or end[last] < match.end():
            continue  # one token already ("1e20b"), or the match ends inside a separator
        sign = "-" if match.group(4) in ("-", "\u2212") else ""
        canonical = f"{match.group(1)}{'e' if match.group(3) else '^'}{sign}{match.group(5)}"
        tail = source[match.end():end[last]].lower()
        low[first:last + 1] = [(canonical + tail).lower()]
        end[first:last + 1] = [end[last]]
        del start[first + 1:last + 1]
