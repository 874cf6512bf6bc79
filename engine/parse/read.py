"""Reading one question: lex it, run the passes in order (region ids, models, cards, fields), build the result."""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.parse.cards import find_cards
from engine.parse.draft import Draft
from engine.parse.errors import NOT_A_QUESTION, BadValue, ambiguous_error
from engine.parse.fields import read_fields
from engine.parse.lexer import COMMAND_RE
from engine.parse.models import find_model, resolve_ambiguous, resolve_unknown
from engine.parse.regions import find_region_ids
from engine.parse.scan import Scan
from engine.parse.vocabulary import Vocabulary
from engine.parse.words import DE_MARKERS, EN_MARKERS, QUIET
from engine.sizing import SizeRequest

_UMLAUT_RE = re.compile(r"[äöüßÄÖÜ]")


@dataclass(slots=True)
class ParseResult:
    request: SizeRequest | None  # None when it is not a sizing question (or a value is nonsense)
    error: str | None  # when request is None: NOT_A_QUESTION, or a Note (code in ERROR_CODES) naming the value
    language: str  # "de" or "en"
    matched_model: str | None  # registry id
    model_note: str | None  # fuzzy match: "Llama 3.1 70B (assumed from 'llama3 70b')"; None on exact matches


def read_question(text: str, vocabulary: Vocabulary) -> ParseResult:
    """A question -> ParseResult. Raises only on a bug (parse() is the safety net)."""
    command = COMMAND_RE.match(text)
    offset = command.end() if command else 0
    scan = Scan(text, offset)
    language = detect_language(text, scan.low)
    draft = Draft()
    try:
        find_region_ids(scan, draft, vocabulary, offset)
        find_model(scan, draft, vocabulary)
        find_cards(scan, draft, vocabulary)
        read_fields(scan, draft, vocabulary)
        resolve_ambiguous(draft, vocabulary.models)
        resolve_unknown(draft, vocabulary.models)
    except BadValue as bad:
        return ParseResult(None, bad.note, language, None, None)
    if draft.model is None and draft.ambiguous:
        return ParseResult(None, ambiguous_error(draft.ambiguous_span, draft.ambiguous), language, None, None)
    if not draft.is_question():
        return ParseResult(None, NOT_A_QUESTION, language, None, None)
    low, used = scan.low, scan.used
    draft.list_leftovers(low[index] for index in range(scan.n) if not used[index] and low[index] not in QUIET)
    request = draft.request()
    return ParseResult(request, None, language, request.model, draft.model_note)


def detect_language(text: str, low: list[str]) -> str:
    """'de' when German marker words (or an umlaut) outnumber English ones, else 'en'."""
    german = 1 if _UMLAUT_RE.search(text) else 0
    english = 0
    for token in low:
        if token in DE_MARKERS:
            german += 1
        elif token in EN_MARKERS:
            english += 1
    return "de" if german > english else "en"
