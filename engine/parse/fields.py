"""The fields pass: every token no model or card claimed, left to right -- precision, KV cache precision, size,
context, batch, workload, memory budget, GPU count, region name.

Numbers: "k" is 1,024 tokens (8k = 8,192; "200k" = 204,800, with a note for any k-value that is not a power of
two); "1M" = 1,048,576 tokens, a written-out "1 million tokens" is 1,000,000. Spaces between groups of exactly
three digits ("32 000 tokens", "context 32 768") make one number, for a context length only: "batch 4 512
tokens" is batch 4 and 512 tokens. A minus sign right before a number makes it an error that names the value.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import compress
from operator import not_

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.errors import BadValue, gpu_count_whole_error, size_error
from engine.parse.lexer import digits
from engine.parse.numbers import (
    EXP_UNIT_RE,
    MOE_RE,
    NUM_UNIT_RE,
    context_suffix_value,
    gb_token,
    number,
    plain_number,
    shown,
    size_of,
    whole,
)
from engine.parse.precision import BITS_RE, precision_at, read_kv, read_precision
from engine.parse.regions import read_region_name
from engine.parse.scan import Scan
from engine.parse.spoken import count_noun, read_count_word, word_number
from engine.parse.vocabulary import Vocabulary
from engine.parse.words import (
    AFTER_NUMBER,
    BATCH_FILLERS,
    BATCH_WORDS,
    BIT_WORDS,
    CONTEXT_FILLERS,
    CONTEXT_SUFFIX,
    CONTEXT_UNIT_WORDS,
    CONTEXT_WORDS,
    GB_UNITS,
    GPU_NOUNS,
    INERT,
    KV_WORDS,
    MILLION_WORDS,
    PARAM_WORDS,
    SIZE_UNITS,
    TOKENS_PER_K,
    TOKENS_PER_M,
    USER_NOUNS,
    WORD_NUMBERS,
    WORKLOAD_PHRASE_HEADS,
    WORKLOAD_PHRASES,
    WORKLOAD_WORDS,
)
from engine.sizing.sequence import MAX_CONTEXT_TOKENS

MIB_TOKENS = 1 << 20  # '10m' as a context: 10 x 1,048,576 tokens (as '32k' is 32 x 1,024)

_BS_RE = re.compile(r"bs([0-9]+)")
# Spaces that separate groups of three digits: "32 000", "1 000 000" (also the no-break and thin spaces)
GROUP_SPACES = frozenset({" ", "\u00a0", "\u202f", "\u2009"})
MAX_THOUSANDS_GROUPS = 4  # "1 000 000 000 000" at most
MAX_KEYWORD_FILLERS = 3  # "batch size of 8", "context length is up to 32k"


_CONTEXT_PREPOSITIONS = frozenset({"at", "bei", "with", "mit"})
_CONTEXT_BEFORE = _CONTEXT_PREPOSITIONS | CONTEXT_WORDS  # words before a number that make it a context
_CONTEXT_AFTER = CONTEXT_WORDS | CONTEXT_UNIT_WORDS  # words after one that do


def _power_of_two_tokens(value: float) -> bool:
    """1,024 to 1,048,576 and a power of two: how context lengths are written without a unit ("at 4096")."""
    count = whole(value)  # None for a fraction or an overflow ("at 999…9", 400 digits, is inf)
    return count is not None and 1024 <= count <= 1 << 20 and count & (count - 1) == 0


def read_fields(scan: Scan, draft: Draft, vocabulary: Vocabulary) -> None:
    """Everything the earlier passes left, left to right; a token that starts a value uses the tokens it reads."""
    fields = _Fields(scan, draft, vocabulary)
    used = scan.used
    after = 0  # the token after the last value read
    # an inert word starts nothing (read_at would say 0): the others are found without a loop in Python
    for i in compress(range(scan.n), map(not_, map(INERT.__contains__, scan.low))):
        if i < after or used[i]:
            continue
        consumed = fields.read_at(i)
        if consumed:
            scan.use(i, consumed)
            after = i + consumed


class _Fields:
    __slots__ = ("scan", "draft", "vocabulary", "_last_size")

    def __init__(self, scan: Scan, draft: Draft, vocabulary: Vocabulary) -> None:
        self.scan = scan
        self.draft = draft
        self.vocabulary = vocabulary
        self._last_size: int | None = None  # the last token written as a size ('8b'), -1 for none; found once

    def read_at(self, i: int) -> int:
        """Read what starts at token i; the number of tokens read (0: nothing starts here)."""
        scan = self.scan
        token = scan.low[i]
        if token in INERT:
            return 0
        if token in WORKLOAD_PHRASE_HEADS:
            phrase = self._workload_phrase(i)
            if phrase:
                return phrase
        if token in KV_WORDS:
            return read_kv(scan, self.draft, i)
        if "0" <= token[0] <= "9" and scan.next_free(i + 1) not in BIT_WORDS and not BITS_RE.fullmatch(token):
            return self.read_number(i)  # numbers are the bulk of long inputs: skip the word checks below
        precision = precision_at(scan, i)
        if precision is not None:
            return read_precision(scan, self.draft, i, precision)
        return self._read_word(i, token)

    def _workload_phrase(self, i: int) -> int:
        """Multi-word workloads: 'full fine-tuning', 'volles Fine-Tuning', 'q-lora'."""
        low = self.scan.low
        for length in (3, 2):
            phrase = tuple(low[i:i + length])
            if len(phrase) == length and phrase in WORKLOAD_PHRASES and all(
                self.scan.free(j) for j in range(i, i + length)
            ):
                self.draft.set_workload(WORKLOAD_PHRASES[phrase])
                return length
        return 0

    def _read_word(self, i: int, token: str) -> int:
        """A workload word, a batch or context keyword with its value, a number, number words, a region name."""
        workload = WORKLOAD_WORDS.get(token)
        if workload is not None:
            self.draft.set_workload(workload)
            return 1
        if token in BATCH_WORDS:
            return self._read_after_keyword(i, BATCH_FILLERS, self._batch_value)
        bs = _BS_RE.fullmatch(token)
        if bs:
            self.draft.set_batch(float(bs.group(1)), bs.group(1))
            return 1
        if token in CONTEXT_WORDS:
            return self._read_after_keyword(i, CONTEXT_FILLERS, self._context_value)
        if "0" <= token[0] <= "9":
            return self.read_number(i)
        if token in WORD_NUMBERS or token in ("a", "an", "hundred"):
            return read_count_word(self.scan, self.draft, i)
        if token in self.vocabulary.region_names:
            return read_region_name(self.scan, self.draft, self.vocabulary, i)
        return 0

    # ---- numbers

    def read_number(self, i: int) -> int:
        """A token that starts with a digit: '70b', '8x7b', '32k', '24gb', '2x', or a number the next word
        explains ('70 billion', '32 k', '24 GB', '8 users', '2 x', '4 GPUs')."""
        token = self.scan.low[i]
        negative = i in self.scan.negative
        moe = MOE_RE.fullmatch(token)
        if moe:
            if negative:
                raise BadValue(size_error(f"-{token}"))
            self._read_moe(moe, token)
            return 1
        plain = plain_number(token)
        if plain is None:
            return self._read_glued(i, token, negative)
        return self._read_plain(i, token, -plain if negative else plain)

    def _read_moe(self, match: re.Match[str], token: str) -> None:
        """'8x7b': the registry's model of that name (Mixtral 8x7B), else experts x expert size."""
        draft = self.draft
        if draft.model is not None:
            draft.ignored.append(token)  # a second model
            return
        experts = int(match.group(1))
        models = self.vocabulary.models
        found = models.moe.get(f"{experts}x{match.group(2).replace(',', '.')}b")
        if found:
            draft.set_moe_model(models.first(found), token)
            return
        draft.set_moe_params(experts, number(match.group(2)) or 0.0, token)

    def _read_glued(self, i: int, token: str, negative: bool) -> int:
        """A number with its unit in one token: '70b', '1e20b', '32k', '10M', '24gb', '2x'."""
        scan, draft = self.scan, self.draft
        unit_match = NUM_UNIT_RE.fullmatch(token)
        if unit_match is None and ("e" in token or "^" in token):
            unit_match = EXP_UNIT_RE.fullmatch(token)  # "1e20b", "10^20b"
        if unit_match is None:
            return 0
        written, unit = unit_match.group(1), unit_match.group(2)
        value = number(written)
        if value is None:
            return 0
        sign = "-" if negative else ""
        if negative:
            value = -value
        if unit in SIZE_UNITS:
            draft.set_size(value, sign + written, unit)
            return 1 + scan.swallow(i + 1, PARAM_WORDS)
        if unit == "m" and self._millions_of_params(i, i + 1, value):  # "smollm2 360m", "gpt2 124M"
            draft.set_size(value / 1000, sign + scan.raw(i), "b")
            return 1 + scan.swallow(i + 1, PARAM_WORDS)
        if unit in CONTEXT_SUFFIX:  # "10M" as written ("10m" reads as metres); "k" and "K" read alike
            shown_as = scan.raw(i) if unit == "m" else token
            return self._context_from(i, value * CONTEXT_SUFFIX[unit], sign + shown_as, 1)
        if unit in GB_UNITS:
            draft.set_budget(value * GB_UNITS[unit], sign + scan.raw(i), unit)
            return 1
        if unit == "x":
            return self._read_multiplier(i, whole(value))
        return 0  # a bit width ("4bit") was read as a precision already; other units mean nothing here

    def _read_plain(self, i: int, token: str, plain: float) -> int:
        """A plain number: what follows says what it is."""
        scan, draft = self.scan, self.draft
        sign = scan.signed(i)
        nxt = scan.next_free(i + 1)
        if nxt is None or nxt not in AFTER_NUMBER:
            if nxt is not None and len(nxt) == 3 and len(token) <= 3 and digits(nxt) and digits(token):
                return self._grouped_context(i, False)  # "32 000 tokens"
            if not sign and i > 0 and scan.low[i - 1] in _CONTEXT_PREPOSITIONS and _power_of_two_tokens(plain):
                draft.set_context(plain, token)  # "70B at 4096", "und bei 8192?": a context length
                return 1
            return 0
        if nxt in SIZE_UNITS:
            draft.set_size(plain, sign + token, nxt)
            return 2 + scan.swallow(i + 2, PARAM_WORDS)
        if nxt == "k":
            return self._context_from(i, plain * TOKENS_PER_K, f"{sign}{token}k", 2)
        if nxt in MILLION_WORDS or nxt == "m":
            if self._millions_of_params(i, i + 2, plain):  # "500 million parameters", "smollm2 360 M"
                draft.set_size(plain / 1000, f"{sign}{token} {scan.raw(i + 1)}", "b")
                return 2 + scan.swallow(i + 2, PARAM_WORDS)
            factor = 1_000_000 if nxt in MILLION_WORDS else TOKENS_PER_M
            return self._context_from(i, plain * factor, f"{sign}{scan.raw(i)} {scan.raw(i + 1)}", 2)
        if nxt in CONTEXT_UNIT_WORDS:
            draft.set_context(plain, sign + token)
            return 2 + scan.swallow(i + 2, CONTEXT_UNIT_WORDS)
        if nxt in GB_UNITS:
            draft.set_budget(plain * GB_UNITS[nxt], f"{sign}{scan.raw(i)} {scan.raw(i + 1)}", nxt)
            return 2
        if nxt == "x":
            return self._read_multiplier_x(i, plain)
        return self._read_counted(i, sign + token, plain)

    def _millions_of_params(self, i: int, after: int, millions: float) -> bool:
        """Is the number at token i, in millions ('360m', '360 M', '500 million'; `after`: the token after it), a
        parameter count? Yes before 'params'; else only when nothing cues a context -- no context word after it
        ('1m context', '1m tokens'), no 'at'/'with'/'bei'/'mit' or context word before it -- and no size is known
        or written after it: 'smollm2 360m' is a 360M model, 'qwen2.5 7b 1m' and '70b 1m' a million-token
        context; after a name several models share only when one of them has that size ('qwen2.5 500m', not
        'mixtral 360m'). Up to MAX_CONTEXT_TOKENS (16M) an uncued number stays a context: 'scout 10m' is Llama 4
        Scout's window, and a 10-16M-parameter model is no rental question ('scout 10m' was read as a 0.0B model)."""
        scan = self.scan
        nxt = scan.next_free(after)
        if nxt in PARAM_WORDS:
            return True
        if nxt in _CONTEXT_AFTER or (i > 0 and scan.low[i - 1] in _CONTEXT_BEFORE):
            return False
        draft = self.draft
        if draft.params_b is not None or draft.model is not None or millions * MIB_TOKENS <= MAX_CONTEXT_TOKENS:
            return False
        if self._last_size is None:
            self._last_size = next((j for j in range(scan.n - 1, -1, -1) if size_of(scan.low[j]) is not None), -1)
        if self._last_size > i:
            return False  # '405m 8B mit LoRA': the size is written as one
        agrees = self.vocabulary.models.agrees
        return not draft.ambiguous or any(agrees(model, millions / 1000) for model in draft.ambiguous)

    def _read_counted(self, i: int, written: str, plain: float) -> int:
        """'8 users', '32 concurrent', '4 GPUs'."""
        counted = count_noun(self.scan, i + 1)
        if not counted:
            return 0
        kind, length = counted
        if kind == "batch":
            self.draft.set_batch(plain, written)
        else:
            count = whole(plain)
            if count is None:
                raise BadValue(gpu_count_whole_error(shown(written)))
            self.draft.set_gpu_count(count, written)
        return 1 + length

    def _grouped_context(self, i: int, after_keyword: bool) -> int:
        """'32 000 tokens', '1 000 000 Token', 'context 32 000': a space between groups of three digits is a
        thousands separator -- for a context length only (after a context keyword or before 'tokens'), so
        'batch 4 512 tokens' (the batch keyword reads its number first) and '2 x 512' stay apart."""
        scan = self.scan
        low, tokens = scan.low, scan.tokens
        last = i
        while (scan.free(last + 1) and len(low[last + 1]) == 3 and digits(low[last + 1])
               and scan.text[tokens.end[last]:tokens.start[last + 1]] in GROUP_SPACES):
            last += 1
            if last - i > MAX_THOUSANDS_GROUPS:
                return 0  # "000 000 000 ...": no context length, and O(n) per token would make long texts O(n²)
        if last == i:
            return 0
        if not after_keyword and scan.next_free(last + 1) not in CONTEXT_UNIT_WORDS:
            return 0
        value = float("".join(low[i:last + 1]))
        sign = scan.signed(i)
        self.draft.set_context(-value if sign else value, sign + scan.span(i, last))
        return last - i + 1 + scan.swallow(last + 1, CONTEXT_UNIT_WORDS)

    def _read_multiplier(self, i: int, count: int | None) -> int:
        """'2x' before a budget ('2x 24GB') or GPUs ('4x GPUs')."""
        if count is None:
            return 0
        scan, draft = self.scan, self.draft
        j = i + 1
        token = scan.next_free(j)
        if token is None:
            return 0
        gb = gb_token(token)
        if gb is not None:
            value, unit = gb
            draft.set_budget(count * value, f"{count}x {token}", unit, product=True)
            return 2
        if digits(token) and scan.next_free(j + 1) in GB_UNITS:
            unit = scan.low[j + 1]
            draft.set_budget(count * float(token) * GB_UNITS[unit], f"{count}x {token} {unit}", unit, product=True)
            return 3
        if token in GPU_NOUNS:
            draft.set_gpu_count(count)
            return 2
        return 0

    def _read_multiplier_x(self, i: int, plain: float) -> int:
        """'8 x 7b' is '8x7b'; '2 x 24GB', '4 x GPUs' are multipliers."""
        count = whole(plain)
        if count is None:
            return 0
        scan = self.scan
        after = scan.next_free(i + 2)
        if after is not None and "0" <= after[0] <= "9":
            moe = MOE_RE.fullmatch(f"{scan.low[i]}x{after}")
            if moe:
                if i in scan.negative:
                    raise BadValue(size_error(f"-{scan.span(i, i + 2)}"))
                self._read_moe(moe, scan.span(i, i + 2))
                return 3
        consumed = self._read_multiplier(i + 1, count)
        return consumed + 1 if consumed else 0

    # ---- keyword + value ("batch 32", "batch size of 8", "context 200k", "ctx=32k")

    def _read_after_keyword(self, i: int, fillers: frozenset[str], reader: Callable[[int], int]) -> int:
        scan = self.scan
        j = i + 1
        while scan.free(j) and scan.low[j] in fillers and j - i <= MAX_KEYWORD_FILLERS:
            j += 1
        if not scan.free(j):
            return 0
        consumed = reader(j)
        return (j - i) + consumed if consumed else 0

    def _batch_value(self, j: int) -> int:
        scan = self.scan
        token = scan.low[j]
        value = plain_number(token)
        length = 1
        if value is not None:
            sign = scan.signed(j)
            self.draft.set_batch(-value if sign else value, sign + token)
        else:
            spoken = word_number(scan, j)
            if spoken is None:
                return 0
            length = spoken[1]
            self.draft.set_batch(float(spoken[0]), scan.span(j, j + length - 1))
        return length + (1 if scan.next_free(j + length) in USER_NOUNS else 0)

    def _context_value(self, j: int) -> int:
        scan = self.scan
        token = scan.low[j]
        sign = scan.signed(j)
        suffix = context_suffix_value(token)
        if suffix is not None:
            written = scan.raw(j) if token[-1] == "m" else token
            return self._context_from(j, -suffix if sign else suffix, sign + written, 1)
        value = plain_number(token)
        if value is None:
            return 0
        if sign:
            value = -value
        nxt = scan.next_free(j + 1)
        if nxt == "k":
            return self._context_from(j, value * TOKENS_PER_K, f"{sign}{token}k", 2)
        if nxt is not None and (nxt in MILLION_WORDS or nxt == "m"):
            factor = 1_000_000 if nxt in MILLION_WORDS else TOKENS_PER_M
            return self._context_from(j, value * factor, f"{sign}{token} {scan.raw(j + 1)}", 2)
        if nxt is not None and len(nxt) == 3 and len(token) <= 3 and digits(nxt) and digits(token):
            grouped = self._grouped_context(j, True)  # "context 32 000"
            if grouped:
                return grouped
        self.draft.set_context(value, sign + token)
        return 1 + scan.swallow(j + 1, CONTEXT_UNIT_WORDS)

    def _context_from(self, i: int, tokens: float, written: str, length: int) -> int:
        """A context length read from `written`; notes a k-value that is not a power of two ('200k')."""
        draft = self.draft
        count = whole(tokens)
        if count is None and math.isfinite(tokens):
            count = int(round(tokens))
        draft.set_context(float(count) if count is not None else tokens, written)
        if (count is not None and ("k" in written or "K" in written) and count & (count - 1)
                and draft.context_tokens == count):
            draft.assumed.append(Note(f"{written} read as {count:,} tokens (1k = {TOKENS_PER_K:,} tokens)",
                                      "k_tokens", written=written, tokens=count))
        return length + self.scan.swallow(i + length, CONTEXT_UNIT_WORDS)
