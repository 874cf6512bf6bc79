"""Phrase parser: a question in English or German -> a SizeRequest, what it assumed and what it ignored.

Pure and synchronous. The names a question can use (models, cards, regions) come from a `Vocabulary`, built once
per catalog version (`Vocabulary.of_catalog(catalog)`) and passed to `parse(text, vocabulary)`; nothing is read
from disk while one is parsed, and nothing is kept between questions. `parse(text)` without one uses
`default_vocabulary()`: the bundled model registry with no cards and no regions, built once on first use (reading
the registry's bundled YAML if nothing has yet), so "on an H100" or "in Dallas" are then words it does not know,
listed in `ignored`.
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

from engine.parse.errors import ERROR_CODES, NOT_A_QUESTION
from engine.parse.read import ParseResult, read_question
from engine.parse.vocabulary import Vocabulary, default_vocabulary
from engine.parse.words import TOKENS_PER_K

__all__ = ["ParseResult", "parse", "Vocabulary", "default_vocabulary", "NOT_A_QUESTION", "ERROR_CODES",
           "TOKENS_PER_K"]


def parse(text: str, vocabulary: Vocabulary | None = None) -> ParseResult:
    """Read a sizing question. Never raises: anything unreadable is 'not a sizing question'.

    `vocabulary`: the model, card and region names of the catalog in service; default `default_vocabulary()`
    (the bundled registry's models, no cards, no regions). Every call returns a result of its own: a caller may
    change its request, its lists or its note without changing what the next caller gets."""
    if not isinstance(text, str):
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)
    vocabulary = vocabulary if vocabulary is not None else default_vocabulary()
    try:
        return read_question(text, vocabulary)
    except Exception:  # the contract is "never crash on user text"; a bug here must not take the bot down
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)


def _parse_strict(text: str, vocabulary: Vocabulary | None = None) -> ParseResult:
    """`parse` without the safety net, so tests see a bug as a bug."""
    return read_question(text, vocabulary if vocabulary is not None else default_vocabulary())
