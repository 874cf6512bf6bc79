"""Reading one question: lex it, run the passes in order (region ids, models, cards, fields), build the result.

Besides the request of a whole question, the result carries `partial`: the fields the text sets even when it is
no whole question ("and in fp8?", "with 128k"), and `followup_cue` (engine.parse.cues), so a front end that
keeps the question before can tell a change to it from a new one (engine.answer.followup merges them)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress, filterfalse, repeat
from operator import not_

from engine.parse.capacity import find_capacity_intent
from engine.parse.cards import find_cards
from engine.parse.counts import read_bare_count
from engine.parse.cues import opens_with_cue
from engine.parse.draft import Draft
from engine.parse.errors import NOT_A_QUESTION, BadValue, ambiguous_error
from engine.parse.fields import read_fields
from engine.parse.flags import apply_flag_count, list_unknown_flags, read_flags
from engine.parse.hub import hub_candidate
from engine.parse.launch import note_engine, note_launch, read_engine_words, read_launch
from engine.parse.lexer import COMMAND_RE, as_shown
from engine.parse.models import find_model, resolve_ambiguous, resolve_unknown
from engine.parse.open_question import find_open_question, read_use_case
from engine.parse.regions import find_region_ids
from engine.parse.runtime import assume_runtime_format, read_rope_scaling
from engine.parse.scan import Scan
from engine.parse.speed import read_speed, read_training_job
from engine.parse.talk import decide_intent, find_billing_and_coin
from engine.parse.vocabulary import Vocabulary
from engine.parse.windows import window_as_context
from engine.parse.words import DE_MARKERS, EN_MARKERS, QUIET
from engine.sizing.rule import SizeRequest

_UMLAUT_RE = re.compile(r"[äöüßÄÖÜ]")


@dataclass(slots=True)
class ParseResult:
    request: SizeRequest | None  # None when it is not a sizing question (or a value is nonsense)
    error: str | None  # when request is None: NOT_A_QUESTION, or a Note (code in ERROR_CODES) naming the value
    language: str  # "de" or "en" ("en" also when nothing told: see language_confident)
    matched_model: str | None  # registry id
    model_note: str | None  # fuzzy match: "Llama 3.1 70B (assumed from 'llama3 70b')"; None on exact matches
    # Whether the text itself told the language (more German than English marker words, or the other way
    # round); False for "70B int4", where the bot should keep the user's own language.
    language_confident: bool = False
    # The fields the text sets, also when it is no whole question ("and in fp8?"): the request for a whole
    # question, a request without model or size for a change, None when it sets nothing (or a value is bad).
    partial: SizeRequest | None = None
    followup_cue: bool = False  # opens like a follow-up: "and ...", "what about ...", "und auf einer ..."
    # A Hugging Face repository id as typed ("HuggingFaceTB/SmolLM2-1.7B") that names no registry model: the
    # front end may look it up on the Hub (bot/features/hub_lookup.py) and size it as that shape. Set on errors too.
    hub_candidate: str | None = None
    # A pasted launch line's engine ("vllm serve ..." -> "vllm", "llama-server ..." -> "llama.cpp"), which runs the
    # serving check (engine.parse.launch); None when the text names no launcher.
    launch_engine: str | None = None

    @property
    def told_language(self) -> str | None:
        """The language the text itself told, None when it told none ("70B int4": keep the user's own)."""
        return self.language if self.language_confident else None


def read_question(text: str, vocabulary: Vocabulary) -> ParseResult:
    """A question -> ParseResult. Raises only on a bug (parse() is the safety net)."""
    text = as_shown(text)
    command = COMMAND_RE.match(text)
    offset = command.end() if command else 0
    scan = Scan(text, offset)
    language, confident = detect_language(text, scan.low)
    draft = Draft()
    try:
        if "-" in text:  # every region id has its hyphen
            find_region_ids(scan, draft, vocabulary, offset)
        read_launch(scan, draft)
        read_engine_words(scan, draft)
        read_flags(scan, draft)
        find_billing_and_coin(scan, draft)
        read_rope_scaling(scan, draft)
        name_at = find_model(scan, draft, vocabulary)
        slash = "/" in text  # only a repository id (hub_candidate) asks which tokens the cards pass read
        before_cards = list(scan.used) if slash else None
        find_cards(scan, draft, vocabulary)
        apply_flag_count(draft)
        card_tokens = [now and not before for now, before in zip(scan.used, before_cards, strict=True)] \
            if before_cards is not None else None
        read_speed(scan, draft)  # before the fields: "15 tok/s" is no 15-token context, "50M tokens" no window
        read_training_job(scan, draft)
        read_fields(scan, draft, vocabulary)
        assume_runtime_format(scan, draft)
        read_bare_count(scan, draft)
        if draft.ambiguous:
            resolve_ambiguous(draft, vocabulary.models)
        if draft.unknown is not None:
            resolve_unknown(draft, vocabulary.models)
        if draft.model is not None:
            window_as_context(scan, draft, name_at)
        decide_intent(scan, draft)
        find_capacity_intent(scan, draft)
        find_open_question(scan, draft)
        read_use_case(scan, draft)
        list_unknown_flags(scan, draft)
        note_engine(draft)
        note_launch(draft)
    except BadValue as bad:
        return ParseResult(None, bad.note, language, None, None, confident, hub_candidate=hub_candidate(scan, draft))
    hub = hub_candidate(scan, draft, card_tokens) if slash else None  # every repository id has its slash
    if draft.model is None and draft.ambiguous:
        return ParseResult(None, ambiguous_error(draft.ambiguous_span, draft.ambiguous), language, None, None,
                           confident, hub_candidate=hub)
    cue = opens_with_cue(scan.low)
    low, used = scan.low, scan.used
    # the tokens no pass used that are not stop words (found without a loop in Python)
    draft.list_leftovers(list(filterfalse(QUIET.__contains__, compress(low, map(not_, used)))))
    if not draft.is_question():
        partial = draft.request() if draft.sets_anything() else None
        return ParseResult(None, NOT_A_QUESTION, language, None, None, confident, partial, cue, hub)
    request = draft.request()
    return ParseResult(request, None, language, request.model, draft.model_note, confident, request, cue, hub,
                       draft.launch_engine)


def detect_language(text: str, low: list[str]) -> tuple[str, bool]:
    """('de', True) when German marker words (or an umlaut) outnumber English ones, ('en', True) the other way
    round, ('en', False) when nothing tells (no marker words, or as many of each)."""
    lead = 0 if text.isascii() or not _UMLAUT_RE.search(text) else 1
    lead += sum(map(_LEAD.get, low, repeat(0, len(low))))  # German words count +1, English-only ones -1
    return ("de" if lead > 0 else "en"), lead != 0


# A word on both lists counts as German
_LEAD = {**dict.fromkeys(EN_MARKERS - DE_MARKERS, -1), **dict.fromkeys(DE_MARKERS, 1)}
