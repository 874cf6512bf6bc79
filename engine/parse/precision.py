"""Precisions and weight formats: weights ("4-bit", "int4", "fp8", "half precision"), named formats ("q4_k_m",
"Q5_K_M", "exl2 4.65bpw", "gptq int8", "bnb 4bit", "mxfp4", "2-bit", "1.58 bit": engine/formats/table.py) and
the KV cache ("kv cache fp8", "fp8 for the kv cache"). The seeds' precision words keep their bytes (4-bit, int4, q4:
0.5 B); a format word that was an int4 synonym (awq, gptq, nf4, q4_k_m, mxfp4) keeps precision int4 and names its
format too. Widths no format has ("5 bit", "fp6", "int3") read as UNSIZED: an error for the weights, an ignored entry
for the KV cache; "float4" is sized as 4-bit with a note.
"""
from __future__ import annotations

import math
import re

from engine.formats.precision import canonical_precision
from engine.formats.quant import canonical_quant, exl2_name, find_format
from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.lexer import digits
from engine.parse.numbers import number, plain_number, whole
from engine.parse.scan import Scan
from engine.parse.words import (
    ARTICLES,
    BIT_WORDS,
    BITS_TO_PRECISION,
    EXL2_WORDS,
    FORMAT_HEADS,
    FORMAT_ONLY,
    FORMAT_PAIRS,
    FORMAT_SYNONYMS,
    FP4_WORDS,
    KV_FILLERS,
    KV_LINKS,
    KV_WORDS,
    PRECISION_PHRASES,
    PRECISION_PREFIXES,
    PRECISION_WORDS,
    UNSIZED,
    UNSIZED_PREFIXES,
    WORKLOAD_WORDS,
)
from engine.sizing.rule import KV_PRECISION_BYTES, PRECISION_BYTES

# llama.cpp quant names: q4, q4_0, q4_k_m, q4km, q8_0, iq4_xs (no nested repetition: no backtracking blow-up)
_QUANT_RE = re.compile(r"i?q([1-8])(?:_?k)?(?:_?(?:[msl]|xs|xxs|nl|[0-9]))?")
# "4bit", "3bits", "4.5bpw" (bits per weight): a bit width glued to its unit
BITS_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(?:bits?|bpw)")
# Precision words Cardfit does not size: "fp6", "int3", "mxfp6", "float64" (fp4 words are sized as 4-bit)
_UNSIZED_PRECISION_RE = re.compile(r"(?:mx|nv)?(?:u?int|fp|float|bf|bfloat)[0-9]{1,3}")
# "w8a16": weights in 8 bits, activations in 16 -- only the weights matter for memory
_WA_RE = re.compile(r"w([0-9]{1,2})a([0-9]{1,2})")
MAX_KV_FILLERS = 3
MAX_NAME_TOKENS = 3  # a format's name in the table read over at most this many tokens ('hqq 4-bit')

# A precision read at a token: (value, tokens read, the note to add to `assumed` or None, the named format or None);
# value "" when a format names no seed precision ("q5_k_m", "exl2 4.65bpw")
Precision = tuple[str, int, str | None, str | None]
# A named format: (the seed precision it also is, or None; its canonical name; tokens read)
NamedFormat = tuple[str | None, str, int]


def precision_token(token: str) -> str | None:
    """A one-word precision -> 'int4' ...; UNSIZED for one Cardfit does not size ('q5_k_m', '3bit', 'fp6')."""
    value = PRECISION_WORDS.get(token)
    if value is not None:
        return value
    if token in FORMAT_HEADS and token not in PRECISION_WORDS:
        return FORMAT_ONLY
    if token in FP4_WORDS:
        return "int4"
    if not token:
        return None
    first = token[0]
    if first in "iq":
        quant = _QUANT_RE.fullmatch(token)
        if quant:
            return BITS_TO_PRECISION[int(quant.group(1))] if quant.group(1) in ("4", "8") else UNSIZED
    if "0" <= first <= "9":
        bits = BITS_RE.fullmatch(token)
        if bits is None:
            return None
        width = bits.group(1)
        if len(width) <= 2 and digits(width):
            return BITS_TO_PRECISION.get(int(width)) or (UNSIZED if int(width) < 32 else None)
        return bit_width(number(width))
    if "0" <= token[-1] <= "9":
        if first == "w":
            weights = _WA_RE.fullmatch(token)
            if weights:
                return BITS_TO_PRECISION.get(int(weights.group(1)), UNSIZED)
        if _UNSIZED_PRECISION_RE.fullmatch(token):
            return UNSIZED
    return None


def bit_width(bits: float | None) -> str | None:
    """4 -> 'int4', 16 -> 'bf16'; a width below 32 that Cardfit does not size (3, 4.5) -> UNSIZED; None above
    ('64-bit' is a CPU, not a weight format)."""
    if bits is None or not math.isfinite(bits):
        return None
    count = whole(bits)
    if count is not None and count in BITS_TO_PRECISION:
        return BITS_TO_PRECISION[count]
    return UNSIZED if bits < 32 else None


def fp4_note(token: str) -> Note:
    return Note(f"{token.upper()} sized as 4-bit (0.5 B per parameter)", "fp4", written=token.upper())


def _fp4_format_note(token: str, quant: str) -> Note:
    """'fp4' was sized as 4-bit at 0.5 B; it names a format now, sized with its real bits (engine/formats/table.py)."""
    fmt = find_format(quant)
    return Note(f"{token.upper()} sized as {fmt.label} ({fmt.bits_per_weight:g} bits per weight)", "fp4_format",
                written=token.upper(), format=fmt.label, bits=fmt.bits_per_weight)


def precision_at(scan: Scan, i: int) -> Precision | None:
    """A precision at token i: one word ('int4'), or two ('int 4', 'fp-4', '4 bit', 'half precision'); a named
    format first ('q5_k_m', 'exl2 4.65bpw')."""
    named = format_at(scan, i)
    token = scan.low[i]
    if named is not None:
        plain, quant, length = named
        return plain or "", length, (_fp4_format_note(token, quant) if token in FP4_WORDS else None), quant
    value = precision_token(token)
    if value == FORMAT_ONLY:  # "bnb" with no width after it
        return None
    if value is not None:
        return value, 1, (fp4_note(token) if token in FP4_WORDS else None), None
    nxt = scan.next_free(i + 1)
    if nxt is None:
        return None
    if token in PRECISION_PREFIXES and digits(nxt):
        joined = _prefixed(token, nxt)
        if joined is not None:
            return joined
    if nxt in BIT_WORDS and "0" <= token[0] <= "9":  # "4 bit", "3-bit", "1.58 bit", "4.5 bpw"
        if len(token) <= 2 and digits(token):
            width = int(token)
            bits = BITS_TO_PRECISION.get(width) or (UNSIZED if width < 32 else None)
        else:
            bits = bit_width(plain_number(token))
        if bits is not None:
            return bits, 2, None, None
    phrase = PRECISION_PHRASES.get((token, nxt))
    if phrase is not None:
        return phrase, 2, None, None
    return None


def _prefixed(token: str, nxt: str) -> Precision | None:
    """'int' + '4', 'fp' + '8', 'q' + '4' (written 'int-4', 'fp 8', 'q-4')."""
    joined = canonical_precision(token + nxt)
    if joined is not None:
        return joined, 2, None, None
    if token + nxt in FP4_WORDS:  # "fp-4"
        return "int4", 2, fp4_note(token + nxt), None
    if token == "q" and nxt in ("4", "8"):
        return ("int4" if nxt == "4" else "int8"), 2, None, None
    if token in UNSIZED_PREFIXES and len(nxt) <= 3:  # "fp-6", "int 3"
        return UNSIZED, 2, None, None
    return None


def read_precision(scan: Scan, draft: Draft, i: int, precision: Precision) -> int:
    """A precision at token i, for the weights or (followed by 'kv cache') for the KV cache; tokens read. A named
    format is always the weights'."""
    value, length, note, quant = precision
    if quant is not None:
        draft.set_format(value or None, quant, scan.span(i, i + length - 1), note)
        return length
    kv_length = _kv_after(scan, i + length, value)
    if kv_length:
        draft.set_kv_precision(value, scan.span(i, i + length - 1))
        return length + kv_length
    draft.set_precision(value, scan.span(i, i + length - 1), note)
    return length


def read_kv(scan: Scan, draft: Draft, i: int) -> int:
    """'kv cache fp8', 'KV-Cache in FP8', 'kv cache in 8 bit', 'kv=fp8'."""
    j = i + 1
    fillers = 0
    while scan.free(j) and scan.low[j] in KV_FILLERS and fillers < MAX_KV_FILLERS:
        j += 1
        fillers += 1
    if scan.free(j):
        precision = precision_at(scan, j)
        if precision is not None:
            value, length, _note, _quant = precision
            draft.set_kv_precision(value, scan.span(j, j + length - 1))
            return j - i + length
    # "kv cache" without a precision: nothing to read, nothing to report
    return 1 + (1 if scan.next_free(i + 1) in ("cache", "caches") else 0)


def _kv_after(scan: Scan, j: int, value: str) -> int:
    """After a precision: 'fp8 kv [cache]', 'fp8 for the kv cache' -> tokens to consume (0: not KV).

    'int4, kv cache fp8' and 'int4 kv cache fp8' are weights int4 and a KV cache in FP8: the KV words belong
    to the precision that follows them when a comma separates them from this one, or when this one cannot
    be a KV cache precision and another follows."""
    if j >= scan.n or scan.separated(j - 1, j):
        return 0
    length = 0
    token = scan.next_free(j)
    if token in KV_LINKS:
        length += 1
        if scan.next_free(j + length) in ARTICLES:
            length += 1
        token = scan.next_free(j + length)
    if token not in KV_WORDS:
        return 0
    length += 1
    if scan.next_free(j + length) in ("cache", "caches"):
        length += 1
    if value not in KV_PRECISION_BYTES:
        after = j + length
        while scan.free(after) and scan.low[after] in KV_FILLERS and after - j - length < MAX_KV_FILLERS:
            after += 1
        if scan.free(after) and precision_at(scan, after) is not None:
            return 0
    return length


def format_at(scan: Scan, i: int) -> NamedFormat | None:
    """A named weight format at token i: 'Q5_K_M', 'awq', 'gptq int8', 'bnb 4bit', 'exl2 4.65bpw', '4.65 bpw',
    '2-bit', '1.58 bit'. None for the seeds' precision words ('int4', '4-bit', 'q4', 'fp8') and for widths no
    format has ('5 bit')."""
    token = scan.low[i]
    nxt = scan.next_free(i + 1)
    if token in FORMAT_HEADS and nxt is not None and (token, nxt) in FORMAT_PAIRS:
        name = FORMAT_PAIRS[(token, nxt)]
        return ("int8" if name.endswith("int8") else "int4"), name, 2
    if token == "ud" and nxt is not None:  # unsloth's dynamic GGUF: 'UD-Q2_K_XL', 'UD-IQ1_S'
        dynamic = canonical_quant(f"ud-{nxt}")
        return None if dynamic is None else (None, dynamic, 2)
    if token in EXL2_WORDS:
        bits = _bits_at(scan, i + 1) if nxt is not None else None
        if bits is not None and bits[0] is not None and 0 < bits[0] <= 16:
            return None, exl2_name(bits[0]), 1 + bits[2]
        return None, exl2_name(), 1
    written = _bits_at(scan, i) if "0" <= token[:1] <= "9" else None  # a bit width starts with its digits
    if written is not None:
        return _bits_format(scan, i, written)
    if (token in PRECISION_WORDS and token not in FORMAT_SYNONYMS) or token in WORKLOAD_WORDS or token == "qlora":
        return None
    quant = canonical_quant(token)
    if quant is None:
        return None
    plain = precision_token(token)
    if plain is None and nxt is not None:
        return None, quant, _name_length(scan, i, quant)
    return (plain if plain in PRECISION_BYTES else None), quant, 1


def _name_length(scan: Scan, i: int, quant: str) -> int:
    """The tokens of the longest name of format `quant` in the table that starts at token i: 'hqq 4-bit' is one
    name of three tokens when the table lists it, so a format's names of several words need no code here."""
    joined, length = scan.low[i], 1
    for j in range(i + 1, min(i + MAX_NAME_TOKENS, scan.n)):
        nxt = scan.next_free(j)
        if nxt is None or scan.separated(j - 1, j):
            break
        joined += nxt
        if canonical_quant(joined) == quant:
            length = j - i + 1
    return length


def _bits_at(scan: Scan, i: int) -> tuple[float | None, str, int] | None:
    """A bit width at token i: ('4.65bpw' | '4.65 bpw' | '2-bit') -> (bits, unit, tokens read)."""
    if not scan.free(i):
        return None
    token = scan.low[i]
    if not token or not "0" <= token[0] <= "9":
        return None
    glued = BITS_RE.fullmatch(token)
    if glued is not None:
        return number(glued.group(1)), token[glued.end(1):], 1
    nxt = scan.next_free(i + 1)
    if nxt in BIT_WORDS:
        return plain_number(token), str(nxt), 2
    return None


def _bits_format(scan: Scan, i: int, written: tuple[float | None, str, int]) -> NamedFormat | None:
    """'4.65 bpw' is EXL2 at 4.65 (exllamav2's unit), '2-bit'/'3 bit'/'1.58-bit' the shorthands of
    engine/formats/formats.yaml; 4, 8, 16 and 32 bits stay the seeds' precisions."""
    bits, unit, length = written
    if bits is None or not math.isfinite(bits) or whole(bits) in BITS_TO_PRECISION:
        return None
    if unit == "bpw":
        if not 0 < bits <= 16:
            return None
        if scan.next_free(i + length) in EXL2_WORDS:  # "4.65bpw exl2"
            length += 1
        return None, exl2_name(bits), length
    quant = canonical_quant(f"{bits:g}bit")
    return None if quant is None else (None, quant, length)
