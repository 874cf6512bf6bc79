"""Both locale files have the same keys and placeholders; numbers are formatted per locale."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.texts.i18n import fmt_gb, fmt_number, fmt_usd, normalize_language, placeholders, t, texts


def test_same_keys_and_placeholders():
    en, de = texts("en"), texts("de")
    assert set(en) == set(de)
    for key in en:
        assert placeholders(en[key]) == placeholders(de[key]), key


def test_language_codes():
    assert normalize_language("de-DE") == "de" and normalize_language("de") == "de"
    assert normalize_language("en-US") == "en" and normalize_language("fr") == "en" and normalize_language(None) == "en"


def test_number_formats():
    assert fmt_number("en", 1234.55, 1) == "1,234.6" and fmt_number("de", 1234.55, 1) == "1.234,6"
    assert fmt_number("en", 21.125, 2) == "21.13"  # half-up, as the seeds print
    assert fmt_usd("en", 11448) == "$11,448" and fmt_usd("de", 0.33) == "0,33 $"
    assert fmt_gb("de", 47.737) == "47,7 GB"


def test_fallback_and_unknown_language():
    assert t("fr", "workload.full") == "full fine-tuning"


@given(value=st.floats(allow_nan=False, allow_infinity=False), decimals=st.sampled_from([0, 1, 2, None]),
       lang=st.sampled_from(["en", "de"]))
@settings(max_examples=300, deadline=None)
def test_fmt_number_never_raises_on_a_finite_float(value, decimals, lang):
    text = fmt_number(lang, value, decimals)
    assert isinstance(text, str) and text and "inf" not in text and "nan" not in text


def test_fmt_number_at_the_ends_of_the_float_range():
    # 1e308 x 10 overflowed to inf and int(inf) raised; the decode ceiling of a 1e-306B model did it
    assert fmt_number("en", 1e308, 1).startswith("100,000,000,") and fmt_number("en", 1e308, 1).endswith(".0")
    assert fmt_number("de", 1.7976931348623157e308, 2).endswith(",00")
    assert fmt_number("en", 5e-324, 2) == "0.00" and fmt_number("en", -1e308, 0).startswith("-100,000")
    assert fmt_number("de", 10**400, 0).startswith("10.000.000")  # an int beyond any float, written whole
    assert fmt_number("en", float("inf"), 1) == "∞" and fmt_number("en", float("nan"), 1) == "?"
    assert fmt_number("en", 2.675, 2) == "2.68" and fmt_number("en", 0.125, 2) == "0.13"  # half-up as before
