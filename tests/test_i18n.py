"""Both locale files have the same keys and placeholders; numbers are formatted per locale."""
from __future__ import annotations

from bot.i18n import fmt_gb, fmt_number, fmt_usd, normalize_language, placeholders, t, texts


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
