"""Number reading: one token -> its value ('70', '1,5', '8.192', '1e20', '10^20', '32k', '70b', '24gb').

German formats: a separator followed by groups of exactly three digits is a thousands separator ("32,768",
"8.192", "1.000.000"); otherwise it is a decimal separator ("1,5"). Pure functions of the token.
"""
from __future__ import annotations

import math
import re

from engine.parse.words import CONTEXT_SUFFIX, GB_UNITS

NUMBER_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
NUM_UNIT_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)*)([^\W\d_]+)")
MOE_RE = re.compile(r"([0-9]{1,3})x([0-9]{1,4}(?:[.,][0-9]+)?)b")
EXP_UNIT_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?(?:e|\^)-?[0-9]{1,6})([^\W\d_]+)")
# A thousands group never starts with 0: '0.124b' is 0.124B, '0,500' is 0.5 (never 124B or 500)
_THOUSANDS_RE = re.compile(r"(?!0[.,])[0-9]{1,3}(?:(?P<sep>[.,])[0-9]{3})(?:(?P=sep)[0-9]{3})*")
_SIZE_TOKEN_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(?:b|bn)")
_EXP_NUM_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(e|\^)(-?[0-9]{1,6})")


def number(text: str) -> float | None:
    """'70' -> 70, '1,5' -> 1.5, '8.192' -> 8192, '32,768' -> 32768, '1e20' and '10^20' -> 1e20; None for
    '1.2.3'. Huge -> inf."""
    if len(text) > 40:
        return math.inf
    if "^" in text:
        return exp_number(text)  # float() reads '1e20' and '1.5e3' itself
    if "," not in text and "." not in text:
        return float(text)
    if _THOUSANDS_RE.fullmatch(text):
        return float(text.replace(",", "").replace(".", ""))
    if text.count(",") + text.count(".") == 1:
        return float(text.replace(",", "."))
    return None


def exp_number(text: str) -> float | None:
    """'1e20' -> 1e20, '1,5e3' -> 1500, '10^20' -> 1e20, '10^-3' -> 0.001; too large -> inf."""
    match = _EXP_NUM_RE.fullmatch(text)
    if match is None:
        return None
    mantissa = number(match.group(1))
    if mantissa is None:
        return None
    exponent = int(match.group(3))
    try:
        if match.group(2) == "^":
            return math.pow(mantissa, exponent)
        return mantissa * math.pow(10.0, exponent)
    except (OverflowError, ValueError, ZeroDivisionError):  # 10^999, 0^-1
        return math.inf


def plain_number(token: str) -> float | None:
    """A number standing alone: '70', '8.192', and exponent forms ('1e20', '10^20')."""
    if token and "0" <= token[0] <= "9":
        if NUMBER_RE.fullmatch(token):
            return number(token)
        if "e" in token or "^" in token:
            return exp_number(token)
    return None


def shown(text: str) -> str:
    """A value as errors and `ignored` show it: cut after 20 characters."""
    return text if len(text) <= 24 else text[:20] + "…"


def whole(value: float) -> int | None:
    if not math.isfinite(value):
        return None
    rounded = round(value)
    return int(rounded) if abs(value - rounded) < 1e-9 else None


def context_suffix_value(token: str) -> float | None:
    """'32k' -> 32768.0, '1m' -> 1048576.0; None for anything else."""
    if not token or not "0" <= token[0] <= "9" or token[-1] not in "km":
        return None
    digits = token[:-1]
    if not NUMBER_RE.fullmatch(digits):
        return None
    value = number(digits)
    return None if value is None else value * CONTEXT_SUFFIX[token[-1]]


def size_of(token: str) -> float | str | None:
    """'70b' -> 70.0, '1,5b' -> 1.5, '8x7b' -> '8x7b' (a mixture-of-experts name); None otherwise."""
    if not token or not "0" <= token[0] <= "9":
        return None
    match = _SIZE_TOKEN_RE.fullmatch(token)
    if match:
        value = number(match.group(1))
        return value if value and math.isfinite(value) else None
    moe = MOE_RE.fullmatch(token)
    if moe:
        return f"{moe.group(1)}x{moe.group(2).replace(',', '.')}b"
    return None


def gb_token(token: str) -> tuple[float, str] | None:
    """'24gb' -> (24.0, 'gb'), '24gib' -> (25.77..., 'gib'); None when the token is no memory size."""
    match = NUM_UNIT_RE.fullmatch(token)
    if match and match.group(2) in GB_UNITS:
        value = number(match.group(1))
        if value is not None:
            return value * GB_UNITS[match.group(2)], match.group(2)
    return None
