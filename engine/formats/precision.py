"""The seeds' plain precisions (fp32 ... int4) as the rows of the formats table say them: their bytes, the words that
name each, their KV cache types, deep-link codes and buttons. The parser, sizing, settings, deep links and the serving
check read them here; none keeps a list of its own."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.formats.table import FormatTable, Precision, default_table


@dataclass(frozen=True, slots=True)
class PrecisionWords:
    """Every lookup of one table's precisions, built once per table."""

    by_name: dict[str, Precision]
    bytes: dict[str, float]  # name -> bytes per parameter, in the table's order
    kv_bytes: dict[str, float]  # name -> bytes per KV cache element, for those that can be a KV cache precision
    synonyms: dict[str, str]  # a setting's or the CLI's word (normalized) -> name
    question_words: dict[str, str]  # a question's one-word name -> name
    format_synonyms: frozenset[str]  # question words that also name a format ("awq": INT4 and AWQ)
    phrases: dict[tuple[str, str], str]  # ("half", "precision") -> name
    widths: dict[int, str]  # a bare bit width -> name
    payload_codes: dict[str, str]  # name -> its deep-link code


def _key(word: str) -> str:
    return word.strip().lower().replace("-", "").replace(" ", "").replace("_", "")


@lru_cache(maxsize=4)
def _words_of(table: FormatTable) -> PrecisionWords:
    rows = table.precisions
    synonyms: dict[str, str] = {}
    question: dict[str, str] = {}
    for row in rows:
        for word in (*row.aliases, *row.format_aliases):
            synonyms[_key(word)] = question[_key(word)] = row.name
        for word in row.setting_aliases:
            synonyms[_key(word)] = row.name
        for word in row.question_aliases:
            question[_key(word)] = row.name
    return PrecisionWords(
        by_name={row.name: row for row in rows},
        bytes={row.name: row.bytes_per_weight for row in rows},
        kv_bytes={row.name: row.kv_cache.bytes for row in rows if row.kv_cache is not None},
        synonyms=synonyms,
        question_words=question,
        format_synonyms=frozenset(_key(word) for row in rows for word in row.format_aliases),
        phrases={phrase: row.name for row in rows for phrase in row.phrases},
        widths={row.width: row.name for row in rows if row.width is not None},
        payload_codes={row.name: row.payload for row in rows},
    )


def precision_words() -> PrecisionWords:
    """The lookups of the table in use (engine.formats.table.default_table)."""
    return _words_of(default_table())


def precisions() -> tuple[Precision, ...]:
    return default_table().precisions


def find_precision(name: str) -> Precision | None:
    """The row of a canonical precision name ('int4'), or None."""
    return precision_words().by_name.get(name)


def canonical_precision(word: str) -> str | None:
    """A user's word for a precision ('BF16', 'float-16', '4bit', 'half') -> its name, or None."""
    return precision_words().synonyms.get(_key(word))


def canonical_kv_precision(word: str) -> str | None:
    """canonical_precision, for a precision the KV cache can be in (not int4)."""
    precision = canonical_precision(word)
    return precision if precision in precision_words().kv_bytes else None


def button_precisions() -> tuple[tuple[str, str], ...]:
    """(name, label) of the precisions offered as toggles under an answer."""
    return tuple((row.name, row.label) for row in precisions() if row.button)


def precision_label(name: str) -> str:
    """How an answer writes a precision: its row's label ('BF16'); a release's own format as written upper-case
    ('MXFP4')."""
    row = find_precision(name)
    return row.label if row is not None else name.upper()
