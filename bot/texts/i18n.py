"""Texts in English and German behind one `t(lang, key, **values)`, and locale-aware number formatting."""
from __future__ import annotations

import math
from functools import cache
from pathlib import Path

from catalog.bundled_yaml import load_bundled_file

LOCALES_DIR = Path(__file__).resolve().parent / "locales"
LANGUAGES = ("en", "de")
DEFAULT_LANGUAGE = "en"


@cache
def texts(lang: str) -> dict[str, str]:
    data = load_bundled_file(LOCALES_DIR / f"{lang}.yaml")
    return {str(key): str(value) for key, value in data.items()}


def normalize_language(code: str | None) -> str:
    """Telegram `language_code` ('de-DE', 'de', 'en-US', None) -> 'de' or 'en'."""
    if code in LANGUAGES:  # Telegram's usual case
        return code
    if not code:
        return DEFAULT_LANGUAGE
    base = code.replace("_", "-").split("-")[0].lower()
    return base if base in LANGUAGES else DEFAULT_LANGUAGE


def t(lang: str, key: str, /, **values: object) -> str:
    """The text for `key` in `lang` (falling back to English), with {placeholders} filled."""
    lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
    template = texts(lang).get(key)
    if template is None:
        template = texts(DEFAULT_LANGUAGE)[key]
    return template.format(**values) if values else template


def placeholders(template: str) -> set[str]:
    import string  # here: only the locale checks need it, not a start

    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def fmt_number(lang: str, value: float, decimals: int | None = 1) -> str:
    """1,234.5 in English, 1.234,5 in German (half-up rounding, as the seeds print); decimals=None writes whole
    numbers without decimals and others with one (70 / 1.5)."""
    try:
        value = float(value)
    except OverflowError:  # an int beyond any float (10^400): written out whole
        return localize_digits(lang, f"{int(value):,}")
    if not math.isfinite(value):  # never from the engine (its inputs are bounded); say so rather than raise
        return "∞" if value > 0 else "-∞" if value < 0 else "?"
    if decimals is None:
        decimals = 0 if value.is_integer() else 1
    text = f"{value:,.{decimals}f}"
    # A tie as written (21.125, 2.675): round half up like the seeds. Only below 2^53 can a float hold a half;
    # above it (and at 1e308 x 10 = inf) there is nothing to round.
    scaled = abs(value) * 10.0 ** decimals if 0 <= decimals <= 15 else math.inf
    if scaled < 2.0 ** 53 and abs(scaled - int(scaled) - 0.5) < 1e-6:
        from decimal import ROUND_HALF_UP, Decimal  # here: a tie is rare, the import ~1 ms of a start (#14)

        rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
        text = f"{rounded:,.{decimals}f}"
    return localize_digits(lang, text)


def params_label(lang: str, params_b: float) -> str:
    """A model size as people write it: "70B", "1.5B", and below 1B in millions ("124M", where "0.1B" said too
    little and a 17M model read "0.0B")."""
    if params_b < 1:
        return f"{fmt_number(lang, params_b * 1000, 0)}M"
    return f"{fmt_number(lang, params_b, None)}B"


def localize_digits(lang: str, number: str) -> str:
    """A number written with English separators (8,192.5) in the reader's locale (8.192,5 in German)."""
    if lang == "de":
        return number.replace(",", "\u0000").replace(".", ",").replace("\u0000", ".")
    return number


def fmt_gb(lang: str, value: float, decimals: int | None = 1) -> str:
    """A size for the reader: one decimal by default; decimals=None as in fmt_number (48 GB, 47.7 GB).

    The GB inside a formula follow the engine's formula rule instead (engine.formula.formula_number, with
    localize_digits), so a formula shows the same digits in every language as in the JSON."""
    return f"{fmt_number(lang, value, decimals)} GB"


def fmt_usd(lang: str, value: float) -> str:
    """$1,590 / $0.33 / $3,643.20 in English; 1.590 $ / 0,33 $ in German. Cents below $100 and whenever the
    amount has them (a top-up button must show what the link charges)."""
    decimals = 2 if abs(value) < 100 or abs(value - round(value)) >= 0.005 else 0
    number = fmt_number(lang, value, decimals)
    return f"{number} $" if lang == "de" else f"${number}"


def fmt_tokens(lang: str, tokens: int) -> str:
    return fmt_number(lang, tokens, 0)
