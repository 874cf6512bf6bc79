"""Phrase parser: a question in English or German -> a SizeRequest, what it assumed and what it ignored.

Pure and synchronous. The names a question can use (models, cards, regions) come from a `Vocabulary`, built once
per catalog version (`Vocabulary.of_catalog(catalog)`) and passed to `parse(text, vocabulary)`; nothing is read
from disk while one is parsed, and what is kept between questions is the memo of results per vocabulary (below,
`MEMO_ENTRIES`). `parse(text)` without one uses `default_vocabulary()`:
the bundled model registry with no cards and no regions, built once on first use (reading the registry's bundled
YAML if nothing has yet), so "on an H100" or "in Dallas" are then words it does not know, listed in `ignored`.
Package map: `lexer` (tokens), `words` (word lists), `numbers` (one token -> a value), `errors` (error notes),
`vocabulary`, `names` (how far a typed model name runs, whether a model agrees with it), `scan` (one text's
tokens and which are used), `draft` (the request being filled), the passes
`regions`, `talk`, `models`, `cards`, `fields` (with `precision` and `spoken` for precisions and number words), `read`
(the driver), `cues` (follow-up cues).

Conventions (what the numbers in a question mean):

* Context lengths: "k" is 1,024 tokens, as inference servers count them: 8k = 8,192, 32k = 32,768,
  128K = 131,072 -- and so "200k" = 204,800 tokens, not 200,000 (the parser notes this for any k-value that is
  not a power of two). "1M" = 1,048,576 tokens; a written-out "1 million tokens" is 1,000,000.
* German number formats: "1,5B" = 1.5B (decimal comma); "8.192 Token" = 8,192 (thousands dot). A separator
  followed by groups of exactly three digits is a thousands separator ("32,768", "8.192", "1.000.000");
  otherwise it is a decimal separator.
* Model sizes: B / bn / billion / Milliarden / Mrd = 10^9 parameters; T / trillion / Billionen = 1,000B.
  "8x7b" names a mixture-of-experts model and is looked up in the registry (Mixtral 8x7B has 46.7B in all).
* Memory: GB is decimal; GiB is converted (x 1.073741824); TB = 1,000 GB.
* Minus signs: "-" (or U+2212) right before a number and not inside a word or range is a minus sign, so "-7B",
  "batch -4", "ctx=-32k" are errors that name the value. "gpt-oss-20b", "int-4", "7B-13B" (a range: the first
  value is used, the second listed in `ignored`) and "70B - 4 bit" (a dash between spaces) have none.
* Exponents: "1e20", "10^20", "10**20", "1e+20" are numbers. "10^20 B" is an error ("10^20B is not a model size");
  "1e4 tokens" is 10,000 tokens.
* Spaces between thousands: "32 000 tokens", "1 000 000 Token", "context 32 768" -- groups of exactly three digits
  after one space -- are one number, for a context length only (after a context word or before "tokens"): "batch 4
  512 tokens" is batch 4 and 512 tokens, "2 x H100" and "8 x 7b" ("8x7b") are not numbers.
* Number words: "seven billion", "seventy-two billion", "four hundred and five billion", "sieben Milliarden",
  "zweiundsiebzig Milliarden" are sizes (English one..nineteen, the tens and "hundred"; German 1..999 as one
  word); "twenty four users", "zwölf Nutzer" are counts. "a"/"ein" is a number only in "a billion".
* Precisions Cardfit does not size ("3-bit", "2 bit", "4.5bpw", "q5_k_m", "fp6", "int3") are errors, never a
  silent default; FP4 words (fp4, mxfp4, nvfp4) are sized as 4-bit with a note.
* One value per field: a second, different value for a field already read (size, precision, context, batch,
  GPU count, budget, card, region, model: "8k or 32k context") is listed in `ignored`, never silently dropped.
* Regions: ids ("DFW-1", "iad-1") and the names the vocabulary's catalog gives them ("in Dallas", "Ashburn").
* Card counts: "2x H100", "zwei H100" are counts; "my 4090", "meiner 4090", "a single A100" are exactly one card;
  "a B200", "eine H200", "one L4" are one card read from an article (`count_implied`): the engine gives a card
  rented only in sets its smallest set that works. A memory size next to a card ("RTX 3060 12GB", "A100 40gb")
  is the card's own (`card_vram_gb`, checked against the catalog), never a budget; GPUs no catalog lists ("T4",
  "RTX 3060") are cards all the same, so the engine can say they are not rented.
* Intent (`engine.parse.talk`): two cards with "vs", "compare", "vergleiche" (or one "or"/"oder" between them)
  compare them; a card with no model or size and "price", "cost", "kostet", "how much" or a billing period asks
  its price; "cheapest", "günstigste", "billigste", "lowest price" ask for the cheapest layout of any count.
  Billing periods: "per hour", "for a week", "pro Tag", "im Monat", "monthly"; coins: "BTC", "in Monero", "mit
  ETH zahlen" (as tickers; whether the provider takes one is the engine's call).
* Language: `language` is "de" or "en"; `language_confident` is False when no marker word told ("70B int4");
  `told_language` is the language only when it told.
* Follow-ups (`engine.parse.cues`): `partial` holds the fields a text sets even when it is no question ("and in
  fp8?", "with 128k", "per day": no model or size); `followup_cue` says it opens like one ("and", "what about",
  "und", "with", "auf einer"). engine.answer.followup decides whether it changes the question before and applies it.

Errors: `ParseResult.error` is NOT_A_QUESTION (the plain string "not a sizing question") or an engine.notes.Note
with a code "parse_*" and its values (the value as the user wrote it, the limits), so the bot can say it in German.

How a text is read: it is split into tokens (`lexer`; hyphens and punctuation separate them; "." and "," inside
numbers and "_" do not). Then, in this order, (0) region ids ("DFW-1", `regions`), billing periods and coins
(`talk`), (1) a model name (`models`: exact alias first, then fuzzy), (2) a card name with its count (`cards`),
(3) everything else left to right (`fields`): precision, KV cache precision, size, context, batch, workload,
budget, GPU count, region name, and (4) the intent (`talk`). Each pass fills a `draft.Draft` (first value wins).
Tokens nobody claimed are listed in `ignored` unless they are stop words; everything the parser inferred rather
than read is listed in `assumed`. Values the user did not give
stay None: the engine fills in the provider's defaults and says so.

Model matching (exact, then fuzzy, only models whose names agree with the whole name as typed; same-shape
releases; models nobody knows sized as a generic model or asked for; one model per question) is described in
`engine.parse.models`.
"""
from __future__ import annotations

import dataclasses
import weakref
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING

from engine.notes import Note
from engine.parse.errors import ERROR_CODES, NOT_A_QUESTION
from engine.parse.read import ParseResult, read_question
from engine.parse.vocabulary import Vocabulary, default_vocabulary
from engine.parse.words import TOKENS_PER_K
from engine.sizing.rule import SizeRequest

if TYPE_CHECKING:
    from functools import _lru_cache_wrapper

__all__ = ["ParseResult", "parse", "clear_parse_memo", "Vocabulary", "default_vocabulary", "NOT_A_QUESTION",
           "ERROR_CODES", "TOKENS_PER_K", "MEMO_ENTRIES", "MEMO_MAX_CHARS"]

# The parse memo. read_question is a pure function of (text, vocabulary), and the same texts come back
# ("70B int4" from many users, a question asked again, lines repeated in a batch on stdin), so `parse` keeps its
# results per Vocabulary object: a new catalog's vocabulary starts empty, and an old one's memo goes with it
# (weakref.finalize). Bounds: MEMO_ENTRIES results per vocabulary, least recently used dropped; texts longer than
# MEMO_MAX_CHARS are parsed every time (a paste is rarely sent twice, and its entry would cost more).
# Measured with tracemalloc over the parser corpus's 763 texts (both bundled catalogs' vocabularies): 643 bytes
# per entry on average (the result, its request and lists, the key of 76 bytes, the LRU link), so a full memo
# is about 0.7 MB per vocabulary, and at most about 2 MB with every key at 256 characters outside Latin-1.
# 1,024 entries hold every distinct corpus text and a day's worth of repeated short questions; the corpus's texts
# run to 75 characters, Telegram's to 4,096: 256 keeps every question typed as one and skips pasted documents.
MEMO_ENTRIES = 1024
MEMO_MAX_CHARS = 256

_REQUEST_FIELDS = attrgetter(*(item.name for item in dataclasses.fields(SizeRequest)))
_RESULT_FIELDS = attrgetter(*(item.name for item in dataclasses.fields(ParseResult)))
_MEMOS: dict[int, _lru_cache_wrapper[ParseResult]] = {}  # id(vocabulary) -> its memo, gone with the vocabulary


def parse(text: str, vocabulary: Vocabulary | None = None, *, memo: bool = True) -> ParseResult:
    """Read a sizing question. Never raises: anything unreadable is 'not a sizing question'.

    `vocabulary`: the model, card and region names of the catalog in service; default `default_vocabulary()`
    (the bundled registry's models, no cards, no regions). `memo=False` reads the text afresh and leaves the memo
    as it is (the benchmarks' cold figures; tests). Every call returns a result of its own: a caller may change
    its request, its lists or its note without changing what the next caller gets."""
    if not isinstance(text, str):
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)
    vocabulary = vocabulary if vocabulary is not None else default_vocabulary()
    try:
        if memo and type(text) is str and len(text) <= MEMO_MAX_CHARS:
            return _copy_result(_memo_of(vocabulary)(text))
        return read_question(text, vocabulary)
    except Exception:  # the contract is "never crash on user text"; a bug here must not take the bot down
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)


def clear_parse_memo() -> None:
    """Forget every memoized parse (all vocabularies): the next parse of each text reads it afresh."""
    for memo in list(_MEMOS.values()):
        memo.cache_clear()


def _memo_of(vocabulary: Vocabulary) -> _lru_cache_wrapper[ParseResult]:
    memo = _MEMOS.get(id(vocabulary))
    if memo is None:
        # The memo must not keep its vocabulary alive (it would never die): it reads it through a weak reference.
        vocabulary_ref = weakref.ref(vocabulary)

        def read(text: str) -> ParseResult:
            alive = vocabulary_ref()
            if alive is None:  # unreachable while a caller holds the vocabulary; raising keeps it out of the memo
                raise ReferenceError("vocabulary gone")
            return read_question(text, alive)

        memo = _MEMOS[id(vocabulary)] = lru_cache(maxsize=MEMO_ENTRIES)(read)
        weakref.finalize(vocabulary, _MEMOS.pop, id(vocabulary), None)  # before its id can be reused
    return memo


def _copy_request(request: SizeRequest) -> SizeRequest:
    """A copy that shares nothing mutable: the fields are numbers, strings, booleans and None, but for two lists."""
    copied = SizeRequest(*_REQUEST_FIELDS(request))
    copied.assumed = list(request.assumed)
    copied.ignored = list(request.ignored)
    return copied


def _copy_result(result: ParseResult) -> ParseResult:
    """A memoized result for one caller: the request and partial copied (one copy when they are the same object,
    as for a whole question), the error and model notes with values of their own (an error's list of names too);
    the rest is immutable, but for the Notes inside `assumed`, shared with the memo: read-only, as every caller
    treats a note (bot/texts/render.py reads them; a caller that must change one makes a new Note)."""
    copied = ParseResult(*_RESULT_FIELDS(result))
    request, partial = result.request, result.partial
    if request is not None:
        copied.request = _copy_request(request)
    if partial is not None:
        copied.partial = copied.request if partial is request else _copy_request(partial)
    error, model_note = result.error, result.model_note
    if isinstance(error, Note):
        copied.error = _copy_note(error)
    if isinstance(model_note, Note):
        copied.model_note = _copy_note(model_note)
    return copied


def _copy_note(note: Note) -> Note:
    """A Note with values of its own: the parser's values are strings and numbers, or lists of names."""
    values = {name: list(value) if isinstance(value, list) else value for name, value in note.values.items()}
    return Note(str(note), note.code, **values)


def _parse_strict(text: str, vocabulary: Vocabulary | None = None) -> ParseResult:
    """`parse` without the safety net and without the memo, so tests see a bug as a bug."""
    return read_question(text, vocabulary if vocabulary is not None else default_vocabulary())
