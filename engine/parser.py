"""Phrase parser: a question in English or German -> a SizeRequest, what it assumed and what it ignored.

Pure and synchronous: the bundled registry and card lists are read once on first use, never per call.

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
* Regions: ids ("DFW-1", "iad-1") and the names the catalogs give them ("in Dallas", "Ashburn").

Errors: `ParseResult.error` is NOT_A_QUESTION (the plain string "not a sizing question") or an engine.notes.Note
with a code "parse_*" and its values (the value as the user wrote it, the limits), so the bot can say it in German.

How a text is read: it is split into tokens (hyphens and punctuation separate them; "." and "," inside numbers
and "_" do not). Then, in this order, (1) a model name is looked for (exact alias first, then fuzzy),
(2) a card name with its count, (3) everything else left to right: precision, KV cache precision, size,
context, batch, workload, budget, GPU count. Tokens nobody claimed are listed in `ignored` unless they are stop
words; everything the parser inferred rather than read is listed in `assumed`. Values the user did not give
stay None: the engine fills in the provider's defaults and says so.

Model matching (registry ids, names and aliases, compared the way `normalize_name` compares them):
1. Exact: the joined tokens of up to six words equal a name ("Llama-3.1-70B", "llama3.1:8b", "qwen 2.5 32b");
   the longest wins, anywhere in the text. No note.
2. Fuzzy, from a word that looks like a family ("llama", "qwen"; typos within rapidfuzz ratio 75 of a family
   word with the same first letter, e.g. "lama", "mistrall", "quen"); windows of up to five words:
   * with a size ("70b", "8x7b"): `fuzz.ratio` >= 85 against every name, and only models whose size agrees
     (within 10 %) count -- "Llama 70B" can never become an 8B model. If the window names no version
     ("llama 70b"), every generation of that size within 6 points is as likely and the newest (last in the
     registry) is taken; with a version ("lama 3.1 70b") only the best score counts.
   * without a size: `fuzz.ratio` >= 85 against the names with their sizes removed ("llama 3.1 70b" ->
     "llama31"; a family name -> the whole family). One model within 3 points of the best is a match
     ("deepsek v3"); several are ambiguous ("llama 3.1"): a size named elsewhere in the text decides, otherwise
     the parser asks for the size instead of guessing. A single word without a size must be a family or name
     exactly ("qwen3", "mixtral"): "command" or "googled" are words, not models.
   Every fuzzy match is reported: model_note "Llama 3.1 70B (assumed from 'lama 3.1 70b')", also in `assumed`.
A second model in the same text is listed in `ignored` (one model per question).
"""
from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz, process

from engine.memo import by_identity
from engine.notes import Note
from engine.registry import ModelShape, Registry, default_registry
from engine.sizing import (
    KV_PRECISION_BYTES,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    MAX_PARAMS_B,
    PRECISION_SYNONYMS,
    SizeRequest,
    canonical_precision,
)

__all__ = [
    "ParseResult", "parse", "default_cards", "default_regions", "NOT_A_QUESTION", "ERROR_CODES", "TOKENS_PER_K",
]

NOT_A_QUESTION = "not a sizing question"
# The codes of the errors in ParseResult.error (engine.notes.Note; the bot's texts are `note.<code>`).
ERROR_CODES = frozenset({
    "parse_bad_size", "parse_ambiguous", "parse_ambiguous_more", "parse_context_range", "parse_context_too_long",
    "parse_batch_range", "parse_gpu_count_range", "parse_gpu_count_whole", "parse_budget_range", "parse_precision",
})
TOKENS_PER_K = 1024
TOKENS_PER_M = 1024 * 1024
MAX_GPU_COUNT = 64
MAX_BUDGET_GB = 1_000_000
MAX_IGNORED = 20

FUZZY_CUTOFF = 85.0  # fuzz.ratio on normalized strings: "lama3170b" vs "llama3170b" = 94.7
HEAD_CUTOFF = 75.0  # a family word with a typo: "lama"/"llama" 88.9, "mistrall"/"mistral" 93.3, "quen"/"qwen" 75
SIZED_MARGIN = 6.0  # sized window without a version: models this close to the best count as equally likely
TIE_MARGIN = 0.5  # sized window with a version: only a tie counts
SIZELESS_MARGIN = 3.0  # window without a size (compared with size-free names): several this close -> ambiguous
MAX_WINDOW = 5
MAX_FUZZY_TRIES = 6  # fuzzy windows tried per text: a question names one or two models, not hundreds
MIN_FUZZY_CHARS = 4
MAX_NAME_TOKEN = 24  # no model name has a longer word; longer tokens are never compared


@dataclass(slots=True)
class ParseResult:
    request: SizeRequest | None  # None when it is not a sizing question (or a value is nonsense)
    error: str | None  # when request is None: NOT_A_QUESTION, or a Note (code in ERROR_CODES) naming the value
    language: str  # "de" or "en"
    matched_model: str | None  # registry id
    model_note: str | None  # fuzzy match: "Llama 3.1 70B (assumed from 'llama3 70b')"; None on exact matches


# -- lexing -----------------------------------------------------------------------------------------------

# Words and numbers. "_" joins ("q4_k_m"), "." joins before a digit ("qwen2.5", "flux.1", "8.192"), "," joins
# between digits ("1,5b", "32,768"); hyphens, spaces and all other punctuation separate.
_TOKEN_RE = re.compile(r"[^\W_]+(?:(?:_|\.(?=[0-9])|(?<=[0-9]),(?=[0-9]))[^\W_]+)*")
# A comma-joined token is kept whole only when it is a number ("1,5b", "32,768") or a version ("qwen2,5");
# "fp8,32k" is two tokens.
_COMMA_OK_RE = re.compile(r"[0-9]+(?:,[0-9]+)*(?:\.[0-9]+)?[^\W\d_]*|[^\W\d_]+[0-9]+,[0-9]+")
# "2x4090", "8xh100" -- but not "8x7b" or "8x22b", which name mixture-of-experts models.
_GLUED_COUNT_RE = re.compile(r"[0-9]{1,2}x(?:[^\W\d_][^\W_]*|[0-9]{3,}[^\W_]*)")
_GLUED_COUNT_SEARCH_RE = re.compile(r"(?<![^\W_])[0-9]{1,2}x(?:[^\W\d_]|[0-9]{3})")
_COMMAND_RE = re.compile(r"\s*/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?")
_REGION_RE = re.compile(r"(?<![\w-])([A-Za-z]{3}-[0-9]{1,2})(?![\w-])")
_UMLAUT_RE = re.compile(r"[äöüßÄÖÜ]")

_NUMBER_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_NUM_UNIT_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)*)([^\W\d_]+)")
_THOUSANDS_RE = re.compile(r"[0-9]{1,3}(?:(?P<sep>[.,])[0-9]{3})(?:(?P=sep)[0-9]{3})*")
_MOE_RE = re.compile(r"([0-9]{1,3})x([0-9]{1,4}(?:[.,][0-9]+)?)b")
_SIZE_TOKEN_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(?:b|bn)")
# llama.cpp quant names: q4, q4_0, q4_k_m, q4km, q8_0, iq4_xs (no nested repetition: no backtracking blow-up)
_QUANT_RE = re.compile(r"i?q([1-8])(?:_?k)?(?:_?(?:[msl]|xs|xxs|nl|[0-9]))?")
# "4bit", "3bits", "4.5bpw" (bits per weight): a bit width glued to its unit
_BITS_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(?:bits?|bpw)")
# Precision words Cardfit does not size: "fp6", "int3", "mxfp6", "float64" (fp4 words are sized as 4-bit)
_UNSIZED_PRECISION_RE = re.compile(r"(?:mx|nv)?(?:u?int|fp|float|bf|bfloat)[0-9]{1,3}")
# "w8a16": weights in 8 bits, activations in 16 -- only the weights matter for memory
_WA_RE = re.compile(r"w([0-9]{1,2})a([0-9]{1,2})")
# Exponent forms: "10^20", "10 ^ 20", "10**20", "1e+20", "1e-5" (lexed as several tokens and joined); "1e20" is
# already one token. The joined token is written canonically: "10^20", "1e-5".
_EXP_SEARCH_RE = re.compile(r"[0-9]\s{0,2}(?:\^|\*\*)\s{0,2}[-+\u2212]?[0-9]|[0-9][eE][-+\u2212][0-9]")
_EXP_SPAN_RE = re.compile(
    r"(?<![\w.,])([0-9]+(?:[.,][0-9]+)?)(?:\s{0,2}(\^|\*\*)\s{0,2}|([eE]))([-+\u2212]?)([0-9]{1,6})(?![0-9])")
_EXP_NUM_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)(e|\^)(-?[0-9]{1,6})")
_EXP_UNIT_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)?(?:e|\^)-?[0-9]{1,6})([^\W\d_]+)")
# A minus sign: "-" or U+2212 right before a digit, and not right after a letter, digit or one of MINUS_NOT_AFTER:
# not inside a word or range ("gpt-oss-20b", "int-4", "7B-13B"). Checked in Python: a look-behind is slow.
_MINUS_CANDIDATE_RE = re.compile(r"[-\u2212](?=[0-9])")
MINUS_NOT_AFTER = frozenset(".,-_\u2212")
# Spaces that separate groups of three digits: "32 000", "1 000 000" (also the no-break and thin spaces)
GROUP_SPACES = frozenset({" ", "\u00a0", "\u202f", "\u2009"})
MAX_THOUSANDS_GROUPS = 4  # "1 000 000 000 000" at most
_MULT_RE = re.compile(r"([0-9]{1,4})x")
_POST_MULT_RE = re.compile(r"x([0-9]{1,4})")
_BS_RE = re.compile(r"bs([0-9]+)")
_ALPHA_PREFIX_RE = re.compile(r"[^\W\d_]+")
# Size words removed to get a model's size-free name: "70b", "0.5b", "1.6t", "8x7b", "a22b" (active params).
_SIZE_WORD_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?[bt]|[0-9]+x[0-9]+(?:\.[0-9]+)?b|a[0-9]+(?:\.[0-9]+)?b")
VARIANT_WORDS = frozenset({"instruct", "chat", "hf", "base", "it", "pt", "python", "moe", "transformer"})
# Sizes inside a model's own names: "70b" in "llama-3.1-70b", not "3b" in "a3b" or "7b" in "8x7b".
_NAME_SIZE_RE = re.compile(r"(?<![a-z0-9.])([0-9]+(?:\.[0-9]+)?)b(?![a-z0-9])")
_NAME_MOE_RE = re.compile(r"(?<![a-z0-9])([0-9]+)x([0-9]+(?:\.[0-9]+)?)b(?![a-z0-9])")


def _digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and '٣', which int() and float() refuse."""
    return text.isascii() and text.isdigit()


def _flat(token: str) -> str:
    """A token as `normalize_name` sees it (the lexer already split on the other separators)."""
    return token.replace(".", "").replace(",", "").replace("_", "")


class _Tokens:
    __slots__ = ("low", "flat", "n", "minus", "_matches", "_start", "_end")

    def __init__(self, text: str, offset: int) -> None:
        lowered = text.lower()
        same_length = len(lowered) == len(text)  # lower() can lengthen a few characters ("İ")
        # minus signs and exponent forms: cheap looks first, the regular expressions only for the rare texts
        self.minus: list[int] | None = None  # where the numbers after a minus sign start
        if "-" in text or "\u2212" in text:
            for match in _MINUS_CANDIDATE_RE.finditer(text, offset):
                at = match.start()
                if at and (text[at - 1].isalnum() or text[at - 1] in MINUS_NOT_AFTER):
                    continue  # "gpt-oss-20b", "7B-13B", "1.-2", "--4"
                if self.minus is None:
                    self.minus = []
                self.minus.append(at + 1)
        exponent = ("^" in text or "*" in text or "e-" in lowered or "e+" in lowered or "e\u2212" in lowered) \
            and _EXP_SEARCH_RE.search(text, offset) is not None
        if same_length and not exponent and "," not in text and not _GLUED_COUNT_SEARCH_RE.search(lowered, offset):
            # the common case: one token per match, spans read from the matches only when a note needs them
            matches = list(_TOKEN_RE.finditer(lowered, offset))
            low = [match.group() for match in matches]
            self._matches: list | None = matches
            self._start: list[int] | None = None
            self._end: list[int] | None = None
        else:
            low, starts, ends = self._split(text, lowered, same_length, offset)
            if exponent:
                self._join_exponents(lowered if same_length else text, offset, low, starts, ends)
            self._matches = None
            self._start = starts
            self._end = ends
        self.low = low
        self.flat = [_flat(token) if ("." in token or "," in token or "_" in token) else token for token in low]
        self.n = len(low)

    @staticmethod
    def _split(text: str, lowered: str, same_length: bool, offset: int):
        low: list[str] = []
        start: list[int] = []
        end: list[int] = []
        for match in _TOKEN_RE.finditer(lowered if same_length else text, offset):
            token = match.group() if same_length else match.group().lower()
            first, last = match.span()
            if "," in token and not _COMMA_OK_RE.fullmatch(token):
                position = first
                for piece in match.group().split(","):
                    if piece:
                        low.append(piece.lower())
                        start.append(position)
                        end.append(position + len(piece))
                    position += len(piece) + 1
                continue
            if "x" in token and _GLUED_COUNT_RE.fullmatch(token):  # "2x4090", "8xH100": a count and a card
                cut = token.index("x") + 1
                low.append(token[:cut])
                start.append(first)
                end.append(first + cut)
                low.append(token[cut:])
                start.append(first + cut)
                end.append(last)
                continue
            low.append(token)
            start.append(first)
            end.append(last)
        return low, start, end

    @staticmethod
    def _join_exponents(source: str, offset: int, low: list[str], start: list[int], end: list[int]) -> None:
        """'10^20' + 'b' stays; '10', '20b' -> '10^20b'; '1e', '20' (from '1e+20') -> '1e20'. In place."""
        for match in reversed(list(_EXP_SPAN_RE.finditer(source, offset))):
            first = bisect_left(start, match.start())
            if first >= len(start) or start[first] != match.start():
                continue
            last = bisect_left(start, match.end()) - 1
            if last <= first or end[last] < match.end():
                continue  # one token already ("1e20b"), or the match ends inside a separator
            sign = "-" if match.group(4) in ("-", "\u2212") else ""
            canonical = f"{match.group(1)}{'e' if match.group(3) else '^'}{sign}{match.group(5)}"
            tail = source[match.end():end[last]].lower()
            low[first:last + 1] = [(canonical + tail).lower()]
            end[first:last + 1] = [end[last]]
            del start[first + 1:last + 1]

    @property
    def start(self) -> list[int]:
        if self._start is None:
            self._start = [match.start() for match in self._matches]
        return self._start

    @property
    def end(self) -> list[int]:
        if self._end is None:
            self._end = [match.end() for match in self._matches]
        return self._end


# -- word lists ---------------------------------------------------------------------------------------------

EN_STOP = frozenset("""
a an the for of to with at on in into onto and or but nor i me my mine we us our you your he she they them it
its is are was were be been being am can could would should will shall may might must do does did done doing
much many how what which who whom whose why where when there here this that these those if then than so such as
by from about approx approximately around roughly just only also please pls plz need needs needed needing want
wants wanted wanna like vram memory ram gpu gpus card cards graphics model models llm llms require requires
required requirement requirements have has had having get got getting use using used help estimate estimated
calculate check size sizing fit fits fitting enough big large more less minimum min max maximum least per each
every any some all lot lots whole total overall hey hi hello thanks thank thx cheers ok okay yes no not don t
doesn isn s ll ve re m d quantized quantised quantization quantisation quant weights weight params parameters
parameter precision context tokens token length window instruct chat base hf gguf safetensors version variant
rent rental renting buy price prices cost costs cheap cheapest recommend recommended best setup server machine
node instance cloud want full half single once simultaneously up go going let lets know tell show give me
mode running time long bot cardfit meta vllm ollama llamacpp transformers pytorch really actually maybe
possibly something anything currently exactly float floats month months monthly hour hours hourly day days
daily week weeks weekly
would just still even already right now today quick quickly thing things way
""".split())

DE_STOP = frozenset("""
ich du er sie es wir ihr man mich mir mein meine meinen meinem meiner uns unser unsere wie viel viele vielen
welche welcher welches welchen welchem was wer wo wann warum für fuer mit auf in im ins am an ans zu zum zur bei
beim von vom aus nach über ueber unter und oder aber der die das den dem des dies diese dieser dieses diesem ein
eine einer einem einen eines ist sind war bin bist seid sein kann kannst können koennen könnte koennte würde
wuerde würden soll sollte muss müssen brauche brauchen braucht brauchst benötige benötigen benötigt benoetige
benoetigt nötig noetig will möchte moechte hätte haette habe hast hat haben gibt geben modell modelle modells
karte karten grafikkarte grafikkarten speicher arbeitsspeicher grafikspeicher genug reicht reichen reichts passt
passen paßt rein hinein da dafür dazu denn doch noch schon nur auch etwa ca circa ungefähr ungefaehr mindestens
maximal bitte danke hallo servus moin tschüss groß gross größe groesse grösse wieviel wieviele nicht kein keine
so als wenn dann ob quantisiert quantisierung gewichte parameter kontext länge laenge lassen mal eigentlich bzw
jeweils je pro insgesamt gesamt volle voller volles vollen halbe halber halben gleichzeitig brauch mieten miete
kosten kostet preis günstigste guenstigste empfehlen empfiehlst empfehlung sollte rechnen berechnen
parametern wirklich wollen wollten gerne gern vielleicht monat monate monatlich stunde stunden stündlich tag
tage täglich woche wochen
etwas welchen würdest kannst könnt können um damit dabei davon darauf sowie sodass
""".split())

STOP_WORDS = EN_STOP | DE_STOP

DE_MARKERS = frozenset("""
bei beim zum zur vom im wir mein meine meinen möchte moechte habe haben hat gibt geht welches kosten brauchen
braucht benötigt soll sollte können würde nutzern gleichzeitigen parallelen auch noch schon nur wenn dann
guten morgen abend modelle grafikkarten
ich brauche brauchen benötige benoetige wie viel viele für fuer mit auf einer einem und oder der die das den dem
ein eine einen ist sind kann reichen reicht passt genauigkeit nutzer nutzern benutzer konversationen
konversation gleichzeitige gleichzeitigen milliarden mrd trainieren feintunen ausführen ausfuehren betreiben
hosten inferenz kontext zwei drei vier fünf fuenf sechs sieben acht neun zehn elf zwölf zwoelf karte karten
grafikkarte speicher welche welcher welches danke hallo bitte volle voller volles halbe halber anfragen
gespräche modell mir genug wieviel laufen läuft lassen mich noch ohne nicht gibt kostet preis billionen eins
volles präzision sitzungen unterhaltungen leute personen wieviele grösse größe gleichzeitig parallele
milliarde
""".split())

EN_MARKERS = frozenset("""
how much many need needs for with on and the a an is what which run serve serving train users user
concurrent requests conversations billion precision full half context hello thanks thank
please of at to can i my do does single two three four five six seven eight nine ten eleven twelve memory card
cards weather have fit fits enough parallel sessions people running inference deploy host hosting much
""".split())

NUMBER_WORDS: dict[str, int] = {
    "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "sixteen": 16, "twenty": 20,
    "eins": 1, "ein": 1, "eine": 1, "einer": 1, "einem": 1, "einen": 1, "einzelne": 1, "einzelnen": 1,
    "einzige": 1, "einzigen": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "zwoelf": 12, "sechzehn": 16,
    "zwanzig": 20,
}
# Number words for sizes and counts: "seven billion", "seventy-two billion", "four hundred and five billion",
# "sieben Milliarden", "zweiundsiebzig Milliarden", "vierhundertfünf Milliarden". English numbers above twenty
# are several words (read by _Parser._word_number); German ones are one word, all of 1..999 listed here.
EN_NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
EN_TENS: dict[str, int] = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}
EN_UNIT_WORDS = {word: value for word, value in EN_NUMBER_WORDS.items() if value < 10}


def _german_number_words() -> dict[str, int]:
    units = {1: ["eins"], 2: ["zwei"], 3: ["drei"], 4: ["vier"], 5: ["fünf", "fuenf"], 6: ["sechs"],
             7: ["sieben"], 8: ["acht"], 9: ["neun"]}
    joined = {**units, 1: ["ein"]}  # "einundzwanzig", "einhundert"
    below: dict[int, list[str]] = dict(units)
    below.update({10: ["zehn"], 11: ["elf"], 12: ["zwölf", "zwoelf"], 13: ["dreizehn"], 14: ["vierzehn"],
                  15: ["fünfzehn", "fuenfzehn"], 16: ["sechzehn"], 17: ["siebzehn"], 18: ["achtzehn"],
                  19: ["neunzehn"]})
    tens = {20: ["zwanzig"], 30: ["dreißig", "dreissig"], 40: ["vierzig"], 50: ["fünfzig", "fuenfzig"],
            60: ["sechzig"], 70: ["siebzig"], 80: ["achtzig"], 90: ["neunzig"]}
    for ten, ten_words in tens.items():
        below[ten] = ten_words
        for unit in range(1, 10):
            below[ten + unit] = [f"{head}und{tail}" for head in joined[unit] for tail in ten_words]
    words: dict[str, int] = {}
    for value, forms in below.items():
        for form in forms:
            words[form] = value
    for hundred in range(1, 10):
        heads = ["hundert", "einhundert"] if hundred == 1 else [f"{unit}hundert" for unit in joined[hundred]]
        for head in heads:
            words[head] = hundred * 100
            for value, forms in below.items():
                for form in forms:
                    words[head + form] = hundred * 100 + value
    return words


DE_NUMBER_WORDS: dict[str, int] = _german_number_words()
# Every single word that is a number ("seven", "zweiundsiebzig", "ein", "single"); "hundred" joins English ones.
WORD_NUMBERS: dict[str, int] = {**DE_NUMBER_WORDS, **EN_NUMBER_WORDS, **EN_TENS, **NUMBER_WORDS}
# Before a size these are articles, not numbers: "a 70B", "ein 7B Modell" -- only "a billion" is 1B.
SIZE_ARTICLES = frozenset({"a", "an", "single", "ein", "eine", "einer", "einem", "einen", "einzelne", "einzelnen",
                           "einzige", "einzigen"})
DE_MARKERS = DE_MARKERS | frozenset(DE_NUMBER_WORDS)
EN_MARKERS = EN_MARKERS | frozenset(EN_NUMBER_WORDS) | frozenset(EN_TENS) | {"hundred"}
SPELLED_SIZE_UNITS = frozenset({"billion", "billions", "milliarden", "milliarde", "trillion", "trillions",
                                "billionen"})
# Words that mean "one card" in front of a card name ("on an H100", "auf einer RTX 4090").
CARD_ONE = frozenset({"a", "an", "single", "one", "ein", "eine", "einer", "einem", "einen", "einzelnen",
                      "einzigen", "einzelne", "einzige", "eins"})
GERMAN_ARTICLES = frozenset({"ein", "eine", "einer", "einem", "einen"})
CARD_MULTIPLIERS = {"dual": 2, "quad": 4, "doppel": 2, "doppelte": 2}

SIZE_UNITS: dict[str, float] = {
    "b": 1, "bn": 1, "billion": 1, "billions": 1, "milliarden": 1, "milliarde": 1, "mrd": 1, "mia": 1,
    "t": 1000, "tn": 1000, "trillion": 1000, "trillions": 1000, "billionen": 1000,
}
CONTEXT_SUFFIX: dict[str, int] = {"k": TOKENS_PER_K, "m": TOKENS_PER_M}
CONTEXT_UNIT_WORDS = frozenset({"tokens", "token", "tok", "toks", "ctx", "context", "kontext"})
MILLION_WORDS = frozenset({"million", "millionen", "mio"})
PARAM_WORDS = frozenset({"params", "parameters", "parameter", "parametern"})
GB_UNITS: dict[str, float] = {
    "gb": 1, "gigabyte": 1, "gigabytes": 1, "gib": 1.073741824, "tb": 1000, "terabyte": 1000, "g": 1,
}
BIT_WORDS = frozenset({"bit", "bits", "bpw"})  # bpw: bits per weight ("4.5 bpw", EXL2)
BITS_TO_PRECISION = {4: "int4", 8: "int8", 16: "bf16", 32: "fp32"}
# What _precision_token and _Parser._precision_at return for a precision Cardfit does not size ("3-bit",
# "q5_k_m", "fp6", "4.5bpw"): as weights an error, as a KV cache precision an ignored entry.
UNSIZED = "unsized"
UNSIZED_PREFIXES = frozenset({"int", "fp", "float", "bf", "bfloat"})
SIZED_PRECISIONS = "fp32, bf16, fp16, fp8, int8 or int4"
FP4_WORDS = frozenset({"fp4", "mxfp4", "nvfp4", "float4"})
# Precision words read one by one (not "full"/"half": those only count as "full precision"/"half precision").
PRECISION_WORDS: dict[str, str] = {
    word: value for word, value in PRECISION_SYNONYMS.items() if word not in {"full", "half"}
}
# Other names of sized precisions (without them "mxfp8" and "uint8" would read as formats Cardfit does not size)
PRECISION_WORDS.update({"mxfp8": "fp8", "e5m2": "fp8", "uint8": "int8", "uint4": "int4"})
PRECISION_PREFIXES = frozenset({"int", "fp", "bf", "float", "bfloat", "q", "f"})
PRECISION_PHRASES: dict[tuple[str, str], str] = {
    ("full", "precision"): "fp32", ("single", "precision"): "fp32",
    ("volle", "genauigkeit"): "fp32", ("voller", "genauigkeit"): "fp32", ("vollen", "genauigkeit"): "fp32",
    ("volle", "präzision"): "fp32", ("voller", "präzision"): "fp32", ("volle", "praezision"): "fp32",
    ("half", "precision"): "fp16", ("halbe", "genauigkeit"): "fp16", ("halber", "genauigkeit"): "fp16",
    ("halben", "genauigkeit"): "fp16", ("halbe", "präzision"): "fp16", ("halber", "präzision"): "fp16",
    ("halbe", "praezision"): "fp16",
}
KV_WORDS = frozenset({"kv", "kvcache", "kv_cache"})
KV_FILLERS = frozenset({"cache", "caches", "in", "im", "at", "as", "als", "mit", "to", "auf", "on", "with",
                        "quantized", "quantised", "quantisiert", "of", "set", "use", "using", "precision",
                        "genauigkeit", "is", "ist", "the", "den", "der", "die", "das"})
KV_LINKS = frozenset({"for", "für", "fuer", "in", "im", "of", "on", "as", "als"})
ARTICLES = frozenset({"the", "den", "die", "das", "der", "dem"})

WORKLOAD_WORDS: dict[str, str] = {}
for _word in ("serve serving served serves run running runs inference inferencing infer deploy deploying deployed "
              "deployment host hosting hosted ausführen ausfuehren betreiben betrieb hosten inferenz deployen "
              "bereitstellen laufen läuft laeuft").split():
    WORKLOAD_WORDS[_word] = "inference"
for _word in ("finetune finetunes finetuning finetuned finetunen feintunen feintuning train trains training "
              "trained trainieren trainiert nachtrainieren pretrain pretraining sft").split():
    WORKLOAD_WORDS[_word] = "full"
WORKLOAD_WORDS.update({"lora": "lora", "loras": "lora", "qlora": "qlora"})
WORKLOAD_RANK = {"inference": 1, "full": 2, "lora": 3, "qlora": 4}
WORKLOAD_PHRASES: dict[tuple[str, ...], str] = {}
for _tail in (("fine", "tune"), ("fine", "tuning"), ("fine", "tuned"), ("fine", "tunen"), ("fine", "tunes")):
    WORKLOAD_PHRASES[_tail] = "full"
    for _head in ("full", "volles", "vollständiges", "vollstaendiges", "vollen", "komplettes"):
        WORKLOAD_PHRASES[(_head, *_tail)] = "full"
for _head in ("full", "volles", "vollständiges", "vollstaendiges"):
    WORKLOAD_PHRASES[(_head, "finetune")] = "full"
    WORKLOAD_PHRASES[(_head, "finetuning")] = "full"
    WORKLOAD_PHRASES[(_head, "training")] = "full"
WORKLOAD_PHRASES[("q", "lora")] = "qlora"
WORKLOAD_PHRASE_HEADS = frozenset(phrase[0] for phrase in WORKLOAD_PHRASES)

BATCH_WORDS = frozenset({"batch", "batches", "bs", "batchsize", "batch_size", "batchgröße", "batchgroesse",
                         "batchgrösse", "concurrency", "parallelism", "parallelität"})
BATCH_FILLERS = frozenset({"size", "of", "von", "größe", "groesse", "grösse", "is", "ist", "at", "mit", "with",
                           "from", "auf", "to", "level"})
CONTEXT_WORDS = frozenset({"ctx", "context", "kontext", "kontextlänge", "kontextlaenge", "kontextfenster",
                           "seq", "seqlen", "seq_len", "sequence", "sequenz", "sequenzlänge", "sequenzlaenge",
                           "max_len", "max_model_len", "context_length", "prompt"})
CONTEXT_FILLERS = frozenset({"length", "len", "window", "size", "of", "von", "länge", "laenge", "fenster", "is",
                             "ist", "at", "mit", "with", "from", "up", "to", "auf", "bis", "zu"})
USER_NOUNS = frozenset("""
users user requests request conversations conversation sessions session streams stream chats clients client
sequences sequence seqs prompts people persons customers queries calls agents nutzer nutzern nutzerinnen
benutzer benutzern anwender anwendern anfragen anfrage konversationen konversation gespräche gespräch
gespraeche gespraech unterhaltungen unterhaltung sitzungen sitzung personen leute kunden dialoge
""".split())
USER_ADJECTIVES = frozenset("""
concurrent parallel simultaneous active live gleichzeitige gleichzeitigen gleichzeitiger gleichzeitig
parallele parallelen paralleler simultane simultanen aktive aktiven aktiver parallel-laufende
""".split())
GPU_NOUNS = frozenset({"gpu", "gpus", "cards", "card", "karten", "karte", "grafikkarten", "grafikkarte"})
GPU_NOUN_LEAD = frozenset({"graphics"})

# Words with a meaning of their own: a model-name window never runs over them.
KEYWORDS = (
    frozenset(PRECISION_WORDS) | FP4_WORDS | KV_WORDS | frozenset(WORKLOAD_WORDS) | BATCH_WORDS
    | CONTEXT_WORDS | USER_NOUNS | USER_ADJECTIVES | frozenset(SIZE_UNITS) | CONTEXT_UNIT_WORDS | frozenset(GB_UNITS)
    | BIT_WORDS | frozenset(WORD_NUMBERS) | WORKLOAD_PHRASE_HEADS
    | {"x", "cache", "region", "k", "vs", "versus", "hundred"}
)
# Words that give a plain number its meaning ("70 billion", "32 k", "24 GB", "8 users", "2 x", "4 GPUs").
_AFTER_NUMBER = (frozenset(SIZE_UNITS) | {"k", "m", "x"} | MILLION_WORDS | CONTEXT_UNIT_WORDS | frozenset(GB_UNITS)
                 | USER_ADJECTIVES | USER_NOUNS | GPU_NOUNS | GPU_NOUN_LEAD)
# Stop words that can start nothing: the main pass skips them at once.
_INERT = STOP_WORDS - KEYWORDS - {"a", "an"} - {phrase[0] for phrase in PRECISION_PHRASES} - CONTEXT_WORDS \
    - BATCH_WORDS - KV_WORDS - WORKLOAD_PHRASE_HEADS - frozenset(WORKLOAD_WORDS) - frozenset(WORD_NUMBERS)
# Not worth listing as "ignored" even when nothing used them.
QUIET = STOP_WORDS | {"cache", "x", "region", "fine", "precision", "genauigkeit", "präzision", "vs", "versus"}


# -- numbers ------------------------------------------------------------------------------------------------

def _number(text: str) -> float | None:
    """'70' -> 70, '1,5' -> 1.5, '8.192' -> 8192, '32,768' -> 32768, '1e20' and '10^20' -> 1e20; None for
    '1.2.3'. Huge -> inf."""
    if len(text) > 40:
        return math.inf
    if "^" in text:
        return _exp_number(text)  # float() reads '1e20' and '1.5e3' itself
    if "," not in text and "." not in text:
        return float(text)
    if _THOUSANDS_RE.fullmatch(text):
        return float(text.replace(",", "").replace(".", ""))
    if text.count(",") + text.count(".") == 1:
        return float(text.replace(",", "."))
    return None


def _exp_number(text: str) -> float | None:
    """'1e20' -> 1e20, '1,5e3' -> 1500, '10^20' -> 1e20, '10^-3' -> 0.001; too large -> inf."""
    match = _EXP_NUM_RE.fullmatch(text)
    if match is None:
        return None
    mantissa = _number(match.group(1))
    if mantissa is None:
        return None
    exponent = int(match.group(3))
    try:
        if match.group(2) == "^":
            return math.pow(mantissa, exponent)
        return mantissa * math.pow(10.0, exponent)
    except (OverflowError, ValueError, ZeroDivisionError):  # 10^999, 0^-1
        return math.inf


def _plain_number(token: str) -> float | None:
    """A number standing alone: '70', '8.192', and exponent forms ('1e20', '10^20')."""
    if token and "0" <= token[0] <= "9":
        if _NUMBER_RE.fullmatch(token):
            return _number(token)
        if "e" in token or "^" in token:
            return _exp_number(token)
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 24 else text[:20] + "…"


def _whole(value: float) -> int | None:
    if not math.isfinite(value):
        return None
    rounded = round(value)
    return int(rounded) if abs(value - rounded) < 1e-9 else None


# -- registry and card indexes (built once per registry / card list) ------------------------------------------

class _ModelIndex:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.exact: dict[str, ModelShape] = dict(registry.by_key)
        for model in registry.models:  # "command r+" as the lexer sees it: "commandr" ("+" is not a word)
            for raw in (model.id, model.name, *model.aliases):
                key = "".join(_flat(word) for word in _TOKEN_RE.findall(raw.lower()))
                if key and key not in self.exact:
                    self.exact[key] = model
        self.prefixes: set[str] = {key[:i] for key in self.exact for i in range(1, len(key) + 1)}
        self.choices: list[str] = list(self.exact)
        self.choice_models: list[ModelShape] = [self.exact[key] for key in self.choices]
        self.order: dict[str, int] = {model.id: index for index, model in enumerate(registry.models)}
        self.sizes: dict[str, tuple[float, ...]] = {}
        self.moe: dict[str, list[ModelShape]] = {}
        heads_by_letter: dict[str, set[str]] = {}
        self.heads: set[str] = set()
        for model in registry.models:
            sizes = {float(model.params_b)}
            for raw in (model.id, model.name, *model.aliases):
                lowered = raw.lower()
                for match in _NAME_SIZE_RE.finditer(lowered):
                    sizes.add(float(match.group(1)))
                for match in _NAME_MOE_RE.finditer(lowered):
                    key = f"{match.group(1)}x{match.group(2)}b"
                    bucket = self.moe.setdefault(key, [])
                    if model not in bucket:
                        bucket.append(model)
                first = _TOKEN_RE.search(lowered) if raw in (model.id, model.name) else None
                if first:
                    alpha = _ALPHA_PREFIX_RE.match(first.group())
                    if alpha and len(alpha.group()) >= 2 and alpha.group() not in STOP_WORDS:
                        self.heads.add(alpha.group())
                        heads_by_letter.setdefault(alpha.group()[0], set()).add(alpha.group())
            family = _ALPHA_PREFIX_RE.match(model.family.lower()) if model.family else None
            if family and len(family.group()) >= 2:
                self.heads.add(family.group())
                heads_by_letter.setdefault(family.group()[0], set()).add(family.group())
            self.sizes[model.id] = tuple(sorted(sizes))
        self.heads_by_letter = {letter: sorted(words) for letter, words in heads_by_letter.items()}
        # The same names without their sizes ("llama 3.1 70b" -> "llama31"), for a window that names no size:
        # "llama 3.1" is then equally close to 8B, 70B and 405B, and so ambiguous.
        from engine.registry import normalize_name

        sizeless: dict[str, list[ModelShape]] = {}
        for model in registry.models:
            for raw in (model.id, model.name, *model.aliases):
                words = [word for word in _TOKEN_RE.findall(raw.lower().replace(":", " ").replace("/", " "))
                         if not _SIZE_WORD_RE.fullmatch(word) and word not in VARIANT_WORDS]
                key = normalize_name("".join(words))
                if key:
                    bucket = sizeless.setdefault(key, [])
                    if model not in bucket:
                        bucket.append(model)
            # A bare family word ("llama", "mistral") names the whole family, never the one model that happens
            # to have an alias "llama 405b".
            family_key = normalize_name(model.family)
            if family_key:
                sizeless[family_key] = []
        for model in registry.models:
            family_key = normalize_name(model.family)
            if family_key and model not in sizeless[family_key]:
                sizeless[family_key].append(model)
        self.sizeless_index = sizeless
        self.sizeless_choices: list[str] = list(sizeless)
        self.sizeless_models: list[list[ModelShape]] = [sizeless[key] for key in self.sizeless_choices]
        self._head_cache: dict[str, bool] = {}

    def is_head(self, token: str) -> bool:
        """Does the token start like a model family name ('llama3', 'qwen2.5', 'lama')?"""
        cached = self._head_cache.get(token)
        if cached is not None:
            return cached
        result = False
        alpha_match = _ALPHA_PREFIX_RE.match(token)
        if alpha_match:
            alpha = alpha_match.group()
            if alpha in self.heads:
                result = True
            elif 3 <= len(alpha) <= 12 and alpha not in STOP_WORDS and alpha not in KEYWORDS:
                candidates = self.heads_by_letter.get(alpha[0])
                if candidates:
                    result = process.extractOne(alpha, candidates, scorer=fuzz.ratio,
                                                score_cutoff=HEAD_CUTOFF) is not None
        if len(self._head_cache) > 4096:
            self._head_cache.clear()
        self._head_cache[token] = result
        return result

    def agrees(self, model: ModelShape, size: float | str) -> bool:
        if isinstance(size, str):  # "8x7b"
            return model in self.moe.get(size, ())
        return any(abs(own - size) <= 0.1 * size for own in self.sizes.get(model.id, ()))

    def first(self, models: Iterable[ModelShape]) -> ModelShape:
        return min(models, key=lambda model: self.order.get(model.id, 1 << 30))

    def last(self, models: Iterable[ModelShape]) -> ModelShape:
        return max(models, key=lambda model: self.order.get(model.id, -1))


class _CardIndex:
    def __init__(self, cards: Iterable) -> None:
        self.keys: set[str] = set()
        self.regions: set[str] = set()
        from engine.registry import normalize_name

        for card in cards:
            for raw in (card.id, card.name, *getattr(card, "aliases", ())):
                key = normalize_name(str(raw))
                if key:
                    self.keys.add(key)
            for region in getattr(card, "regions", ()) or ():
                self.regions.add(str(region).upper())
            for region in (getattr(card, "stock", None) or {}):
                self.regions.add(str(region).upper())
        self.prefixes: set[str] = {key[:i] for key in self.keys for i in range(1, len(key) + 1)}
        self.region_names: RegionNames | None = None

    def default_region_names(self) -> RegionNames:
        """The bundled catalogs' region names, for the regions these cards are offered in (built once)."""
        if self.region_names is None:
            self.region_names = _region_names(default_regions(), self.regions) if self.regions else {}
        return self.region_names


RegionNames = dict[str, list[tuple[tuple[str, ...], str]]]


def _region_names(regions: Mapping[str, str], allowed: set[str] | None = None) -> RegionNames:
    """{'Dallas': 'DFW-1'} -> {'dallas': [(('dallas',), 'DFW-1')]}: first word -> (words, id), longest first."""
    index: RegionNames = {}
    for name, region in regions.items():
        region = str(region).upper()
        if allowed is not None and region not in allowed:
            continue
        words = tuple(_TOKEN_RE.findall(str(name).lower()))
        if not words or words[0] in STOP_WORDS:
            continue
        bucket = index.setdefault(words[0], [])
        if (words, region) not in bucket:
            bucket.append((words, region))
    for bucket in index.values():
        bucket.sort(key=lambda item: -len(item[0]))
    return index


@by_identity()
def _region_index(regions: Mapping[str, str]) -> RegionNames:
    return _region_names(regions)


@lru_cache(maxsize=1)
def default_regions() -> dict[str, str]:
    """Region names of every bundled catalog -> region id ({'Dallas': 'DFW-1', ...}), read once."""
    from catalog.loader import BUNDLED, load_catalog

    names: dict[str, str] = {}
    for bundled in BUNDLED:
        for region in load_catalog(bundled).catalog.regions:
            names.setdefault(region.name, region.id)
    return names


@by_identity()
def _model_index(registry: Registry) -> _ModelIndex:
    return _ModelIndex(registry)


@by_identity()
def _card_index(cards) -> _CardIndex:
    return _CardIndex(cards)


@lru_cache(maxsize=1)
def default_cards() -> tuple:
    """The cards of every bundled catalog (GPU Rent Hub first), read once."""
    from catalog.loader import BUNDLED, load_catalog

    cards: list = []
    for name in BUNDLED:
        cards.extend(load_catalog(name).catalog.cards)
    return tuple(cards)


# -- the parser ---------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Found:
    """A model name found in the text: tokens start..start+length, and what they name."""

    start: int
    length: int
    span: str
    model: ModelShape | None
    ambiguous: list[ModelShape] | None
    fuzzy: bool


_NO_INDEXES: frozenset[int] = frozenset()
MAX_AMBIGUOUS_NAMES = 5


class _BadValue(Exception):
    """A value that is nonsense as written ("0B", "batch 0"); the Note is the user-facing error."""

    def __init__(self, note: Note) -> None:
        super().__init__(note)
        self.note = note


class _Parser:
    def __init__(self, text: str, models: _ModelIndex, cards: _CardIndex, region_names: RegionNames) -> None:
        self.text = text
        self.models = models
        self.cards = cards
        self.region_names = region_names
        self.model: ModelShape | None = None
        self.model_note: str | None = None
        self.ambiguous: list[ModelShape] = []
        self.ambiguous_span = ""
        self.params_b: float | None = None
        self.precision: str | None = None
        self.kv_precision: str | None = None
        self.context_tokens: int | None = None
        self.batch: int | None = None
        self.workload: str | None = None
        self.card: str | None = None
        self.gpu_count: int | None = None
        self.budget_gb: float | None = None
        self.region: str | None = None
        self.assumed: list[str] = []
        self.ignored: list[str] = []

    # ---- driver

    def run(self) -> ParseResult:
        text = self.text
        command = _COMMAND_RE.match(text)
        offset = command.end() if command else 0
        tokens = _Tokens(text, offset)
        self.tokens = tokens
        self.low = low = tokens.low
        self.used = [False] * tokens.n
        self.negative: frozenset[int] | set[int] = _NO_INDEXES
        if tokens.minus:
            self._minus_signs(tokens.minus)
        language = self._language(text, low)

        try:
            self._regions(text, offset)
            self._find_model()
            self._find_cards()
            self._main_pass()
            self._resolve_ambiguous()
        except _BadValue as bad:
            return ParseResult(None, bad.note, language, None, None)

        if self.model is None and self.ambiguous:
            names = [model.name for model in self.ambiguous[:MAX_AMBIGUOUS_NAMES]]
            more = len(self.ambiguous) - len(names)
            span = self.ambiguous_span
            if more:
                error = Note(f"'{span}' could be {', '.join(names)} and {more} more: add the size",
                             "parse_ambiguous_more", span=span, models=names, more=more)
            else:
                error = Note(f"'{span}' could be {', '.join(names)}: add the size", "parse_ambiguous",
                             span=span, models=names)
            return ParseResult(None, error, language, None, None)

        is_question = (
            self.model is not None
            or self.params_b is not None
            or ((self.card is not None or self.budget_gb is not None)
                and (self.workload is not None or self.precision is not None))
        )
        if not is_question:
            return ParseResult(None, NOT_A_QUESTION, language, None, None)

        self._collect_ignored()
        request = SizeRequest(
            model=self.model.id if self.model else None,
            params_b=self.params_b,
            precision=self.precision,
            kv_precision=self.kv_precision,
            context_tokens=self.context_tokens,
            batch=self.batch,
            workload=self.workload,
            card=self.card,
            gpu_count=self.gpu_count,
            memory_budget_gb=self.budget_gb,
            region=self.region,
            assumed=self.assumed,
            ignored=self.ignored,
        )
        return ParseResult(request, None, language, request.model, self.model_note)

    @staticmethod
    def _language(text: str, low: list[str]) -> str:
        german = 1 if _UMLAUT_RE.search(text) else 0
        english = 0
        for token in low:
            if token in DE_MARKERS:
                german += 1
            elif token in EN_MARKERS:
                english += 1
        return "de" if german > english else "en"

    def _span(self, first: int, last: int) -> str:
        return self.text[self.tokens.start[first]:self.tokens.end[last]].strip()

    def _raw(self, index: int) -> str:
        """Token `index` as the user wrote it (case kept): '10M', not '10m'."""
        matches = self.tokens._matches
        if matches is not None:
            first, last = matches[index].span()
        else:
            first, last = self.tokens.start[index], self.tokens.end[index]
        return self.text[first:last]

    def _signed(self, index: int) -> str:
        """'-' for a token after a minus sign ('-7B', 'batch -4'), else ''."""
        return "-" if index in self.negative else ""

    def _minus_signs(self, positions: list[int]) -> None:
        """The tokens right after a minus sign (found by the lexer: a hyphen inside a name or range, 'gpt-oss-20b',
        '7B-13B', and a dash between spaces, '70B - 4 bit', are no minus signs)."""
        negative: set[int] = set()
        starts = self.tokens.start
        for position in positions:
            index = bisect_left(starts, position)
            if index < self.tokens.n and starts[index] == position:
                negative.add(index)
        if negative:
            self.negative = negative

    def _use(self, first: int, count: int) -> None:
        used = self.used
        for index in range(first, first + count):
            used[index] = True

    def _free(self, index: int) -> bool:
        return 0 <= index < self.tokens.n and not self.used[index]

    # ---- region

    def _regions(self, text: str, offset: int) -> None:
        if "-" not in text:
            return
        for match in _REGION_RE.finditer(text, offset):
            name = match.group(1).upper()
            if name not in self.cards.regions:
                before = text[max(offset, match.start() - 8):match.start()].lower()
                if "region" not in before:
                    continue
            self._set_region(name, match.group(1))
            starts = self.tokens.start
            index = bisect_left(starts, match.start())
            while index < self.tokens.n and starts[index] < match.end():
                self.used[index] = True
                index += 1

    def _set_region(self, region: str, written: str) -> None:
        if self.region is None:
            self.region = region
        elif self.region != region:
            self.ignored.append(written)

    def _read_region_name(self, i: int) -> int:
        """'Dallas', 'in Ashburn' -> the region's id (names from the catalogs, longest first)."""
        low = self.low
        for words, region in self.region_names[low[i]]:
            length = len(words)
            if all(self._free(i + k) and low[i + k] == words[k] for k in range(1, length)):
                self._set_region(region, self._span(i, i + length - 1))
                return length
        return 0

    # ---- models

    def _find_model(self) -> None:
        """Every model name in the text; the first one is the model, any later one is listed as ignored."""
        models = self.models
        low, flat, n, used = self.low, self.tokens.flat, self.tokens.n, self.used
        prefixes, exact = models.prefixes, models.exact
        found: list[_Found] = []
        # 1. exact alias, longest first, anywhere
        for i in range(n):
            if used[i] or flat[i] not in prefixes:
                continue
            joined = ""
            best: tuple[ModelShape, int] | None = None
            for j in range(i, min(n, i + MAX_WINDOW + 1)):
                if used[j]:
                    break
                joined += flat[j]
                if joined not in prefixes:
                    break
                model = exact.get(joined)
                if model is not None:
                    best = (model, j + 1)
            if best is None:
                continue
            model, end = best
            if end < n and not used[end]:
                size = _size_of(low[end])
                if size is not None:
                    if not models.agrees(model, size):
                        continue  # "llama3 70b" must not stop at an alias "llama3" of an 8B model
                    end += 1  # "phi-4 14b": the size confirms the model
            before = i - 1
            if (before >= 0 and not used[before] and low[before] not in STOP_WORDS and low[before] not in KEYWORDS
                    and models.is_head(low[before])):
                fuzzy = self._fuzzy_at(before)
                if fuzzy is not None:  # "deepsek v3": the typo belongs to the name, so say what it was read as
                    self._use(fuzzy.start, fuzzy.length)
                    found.append(fuzzy)
                    continue
            self._use(i, end - i)
            found.append(_Found(i, end - i, self._span(i, end - 1), model, None, False))
        # 2. fuzzy, from a token that looks like a family name (a bounded number of tries: O(n) on any input)
        tries = 0
        for i in range(n):
            if used[i] or low[i] in STOP_WORDS or low[i] in KEYWORDS or not models.is_head(low[i]):
                continue
            tries += 1
            if tries > MAX_FUZZY_TRIES:
                break
            fuzzy = self._fuzzy_at(i)
            if fuzzy is not None:
                self._use(fuzzy.start, fuzzy.length)
                found.append(fuzzy)
        if not found:
            return
        found.sort(key=lambda item: item.start)
        definite = [item for item in found if item.model is not None]
        first = definite[0] if definite else found[0]  # "mixtral or llama 3.1 70b": the one that is clear
        if first.ambiguous:
            self.ambiguous = first.ambiguous
            self.ambiguous_span = first.span
        elif first.model is not None:
            self.model = first.model
            if first.fuzzy:
                self.model_note = Note(f"{first.model.name} (assumed from '{first.span}')", "model_fuzzy",
                                       model=first.model.name, span=first.span)
                self.assumed.append(self.model_note)
        for other in found:
            if other is not first:
                self.ignored.append(other.span)  # one model per question

    def _window_end(self, i: int) -> int:
        low, flat, used, n = self.low, self.tokens.flat, self.used, self.tokens.n
        card_prefixes = self.cards.prefixes
        j = i + 1
        while j < n and j - i < MAX_WINDOW and not used[j]:
            token = low[j]
            if token in STOP_WORDS or token in KEYWORDS or len(token) > MAX_NAME_TOKEN:
                break
            if flat[j] in card_prefixes and self._card_at(j) is not None:
                break
            if _precision_token(token) is not None:
                break
            if _context_suffix_value(token) is not None:
                break  # "32k" is a context; a model name that contains one ("phi-3-mini-4k") matched exactly
            j += 1
        return j

    def _fuzzy_at(self, i: int) -> _Found | None:
        models = self.models
        low, flat = self.low, self.tokens.flat
        end = self._window_end(i)
        size_positions = [j for j in range(i, end) if _size_of(low[j]) is not None]
        first_length = (size_positions[0] - i + 1) if size_positions else 1
        best: tuple[float, int, list[tuple[ModelShape, float]], float | str | None] | None = None
        for length in range(first_length, end - i + 1):
            query = "".join(flat[i:i + length])
            if len(query) < MIN_FUZZY_CHARS and not (length == 1 and query in models.sizeless_index):
                continue
            size = None
            for j in size_positions:
                if j < i + length:
                    size = _size_of(low[j])
            scored: dict[str, tuple[ModelShape, float]] = {}
            if size is None and length == 1:
                # one word and no size: only an exact family or name ("qwen3", "mixtral"); a fuzzy single word
                # ("command", "googled") is far more often an ordinary word than a model
                for model in models.sizeless_index.get(query, ()):
                    scored[model.id] = (model, 100.0)
            elif size is None:
                for _choice, score, position in process.extract(
                    query, models.sizeless_choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
                ):
                    for model in models.sizeless_models[position]:
                        if model.id not in scored or scored[model.id][1] < score:
                            scored[model.id] = (model, score)
            else:
                for _choice, score, position in process.extract(
                    query, models.choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
                ):
                    model = models.choice_models[position]
                    if not models.agrees(model, size):
                        continue
                    if model.id not in scored or scored[model.id][1] < score:
                        scored[model.id] = (model, score)
            if not scored:
                continue
            top = max(score for _, score in scored.values())
            if best is None or top >= best[0]:
                ranked = sorted(scored.values(), key=lambda item: (-item[1], models.order.get(item[0].id, 0)))
                best = (top, length, ranked, size)
        if best is None:
            return None
        top, length, ranked, size = best
        span = self._span(i, i + length - 1)
        if size is None:
            close = [model for model, score in ranked if score >= top - SIZELESS_MARGIN]
            close.sort(key=lambda model: models.order.get(model.id, 0))
            if len(close) > 1:
                return _Found(i, length, span, None, close, True)
            chosen = close[0]
        else:
            # Without a version ("llama 70b") every generation of that size is as likely: take the newest (the
            # registry lists a family oldest first). With one ("lama 3.1 70b") only the best score counts.
            versioned = any(
                _digits(ch) for j in range(i, i + length) if _size_of(low[j]) is None for ch in low[j]
            )
            margin = TIE_MARGIN if versioned else SIZED_MARGIN
            close = [model for model, score in ranked if score >= top - margin]
            chosen = models.last(close)
        return _Found(i, length, span, chosen, None, True)

    def _resolve_ambiguous(self) -> None:
        if self.model is not None or not self.ambiguous:
            return
        if self.params_b is not None:
            fitting = [model for model in self.ambiguous if self.models.agrees(model, self.params_b)]
            if fitting:
                chosen = self.models.last(fitting)
                self.model = chosen
                self.model_note = Note(f"{chosen.name} (assumed from '{self.ambiguous_span}' and {self.params_b:g}B)",
                                       "model_sized", model=chosen.name, span=self.ambiguous_span,
                                       size=self.params_b)
                self.assumed.append(self.model_note)
                self.params_b = None
                self.ambiguous = []
                return
            # The size names no model of that family: size it as a typical model of that size.
            self.ignored.append(self.ambiguous_span)
            self.ambiguous = []

    # ---- cards

    def _find_cards(self) -> None:
        flat, n, used = self.tokens.flat, self.tokens.n, self.used
        keys, prefixes = self.cards.keys, self.cards.prefixes
        i = 0
        while i < n:
            if used[i] or (flat[i] not in prefixes and not (flat[i].endswith("s") and flat[i][:-1] in keys)):
                i += 1
                continue
            match = self._card_at(i)
            if match is None:
                i += 1
                continue
            length, name = match
            if self.card is None:
                self.card = name
                self._use(i, length)
                self._card_count(i, i + length)
            else:
                self.ignored.append(name)
                self._use(i, length)
            i += length

    def _card_at(self, i: int) -> tuple[int, str] | None:
        low, flat, n, used = self.low, self.tokens.flat, self.tokens.n, self.used
        keys, prefixes = self.cards.keys, self.cards.prefixes
        found: tuple[int, str] | None = None
        joined = ""
        for j in range(i, min(n, i + 4)):
            if used[j]:
                break
            joined += flat[j]
            words = low[i:j + 1]
            if joined in keys:
                found = (j + 1 - i, " ".join(words))
            elif joined.endswith("s") and joined[:-1] in keys and _digits(low[j][-2:-1]):
                found = (j + 1 - i, " ".join(words)[:-1])  # "h100s", "4090s"
            if joined not in prefixes:
                break
        if found is None:
            return None
        length = found[0]
        last = i + length - 1
        nxt = low[last + 1] if last + 1 < n else ""
        # "a 40 GB budget", "4090 tokens", "batch 4090": a number with a unit or after a keyword is not a card.
        if _digits(low[last]) and (length == 1 or len(low[i]) == 1):
            if nxt in GB_UNITS or nxt in SIZE_UNITS or nxt in CONTEXT_UNIT_WORDS or nxt in BIT_WORDS \
                    or nxt in USER_NOUNS or nxt in USER_ADJECTIVES or nxt in MILLION_WORDS or nxt == "k":
                return None
            k = i - 1
            while k >= 0 and i - k <= 3 and (low[k] in BATCH_FILLERS or low[k] in CONTEXT_FILLERS):
                k -= 1
            if k >= 0 and (low[k] in BATCH_WORDS or low[k] in CONTEXT_WORDS):
                return None
        return found

    def _card_count(self, first: int, after: int) -> None:
        low, used = self.low, self.used
        count: int | None = None
        k = first - 1
        # "an 80GB A100": the card's own memory, not a budget
        if self._free(k) and _gb_token(low[k]) is not None:
            used[k] = True
            k -= 1
        elif self._free(k) and low[k] in GB_UNITS and self._free(k - 1) and _digits(low[k - 1]):
            used[k] = used[k - 1] = True
            k -= 2
        if self._free(k):
            token = low[k]
            if k in self.negative and "0" <= token[0] <= "9":  # "-2 H100", "-2x H100"
                raise _BadValue(_gpu_count_error(f"-{_shown(token.rstrip('x'))}"))
            mult = _MULT_RE.fullmatch(token)
            if mult:
                count = int(mult.group(1))
                used[k] = True
            elif token == "x" and self._free(k - 1) and _digits(low[k - 1]) and len(low[k - 1]) <= 4:
                count = int(low[k - 1])
                used[k] = used[k - 1] = True
            elif _digits(token) and int(token) <= MAX_GPU_COUNT:  # "2024 H100 prices" is no count
                count = int(token)
                used[k] = True
            elif token in CARD_ONE:
                count = 1
                used[k] = True
                if token == "single" and self._free(k - 1) and low[k - 1] in ("a", "an"):
                    used[k - 1] = True
            elif token in WORD_NUMBERS:
                count = WORD_NUMBERS[token]
                used[k] = True
            elif token in CARD_MULTIPLIERS:
                count = CARD_MULTIPLIERS[token]
                used[k] = True
        nxt = after
        if count is None and self._free(after):
            token = low[after]
            post = _POST_MULT_RE.fullmatch(token)
            if post:
                count = int(post.group(1))
                used[after] = True
                nxt = after + 1
            elif token == "x" and self._free(after + 1) and _digits(low[after + 1]) and len(low[after + 1]) <= 4:
                count = int(low[after + 1])
                used[after] = used[after + 1] = True
                nxt = after + 2
        # "RTX 4090 24GB", "A100 (80 GB)": the card's own memory, not a budget.
        if self._free(nxt):
            if _gb_token(low[nxt]) is not None:
                used[nxt] = True
            elif self._free(nxt + 1) and _digits(low[nxt]) and low[nxt + 1] in GB_UNITS:
                used[nxt] = used[nxt + 1] = True
        if count is not None:
            self._set_gpu_count(count)

    def _set_gpu_count(self, count: int, written: str | None = None) -> None:
        if not 1 <= count <= MAX_GPU_COUNT:
            raise _BadValue(_gpu_count_error(written if written is not None else str(count)))
        if self.gpu_count is None:
            self.gpu_count = count
        elif self.gpu_count != count:
            self.ignored.append(f"{written if written is not None else count} GPUs")

    # ---- everything else, left to right

    def _main_pass(self) -> None:
        n, used = self.tokens.n, self.used
        i = 0
        while i < n:
            if used[i]:
                i += 1
                continue
            consumed = self._read_at(i)
            if consumed:
                self._use(i, consumed)
                i += consumed
            else:
                i += 1

    def _next_free(self, j: int) -> str | None:
        return self.low[j] if self._free(j) else None

    def _read_at(self, i: int) -> int:
        low = self.low
        token = low[i]
        if token in _INERT:
            return 0

        # multi-word workloads ("full fine-tuning", "volles Fine-Tuning", "q-lora")
        if token in WORKLOAD_PHRASE_HEADS:
            for length in (3, 2):
                phrase = tuple(low[i:i + length])
                if len(phrase) == length and phrase in WORKLOAD_PHRASES and all(
                    self._free(j) for j in range(i, i + length)
                ):
                    self._set_workload(WORKLOAD_PHRASES[phrase])
                    return length

        if token in KV_WORDS:
            return self._read_kv(i)

        if "0" <= token[0] <= "9" and self._next_free(i + 1) not in BIT_WORDS and not _BITS_RE.fullmatch(token):
            return self._read_number(i)  # numbers are the bulk of long inputs: skip the word checks below

        precision = self._precision_at(i)
        if precision is not None:
            value, length, note = precision
            kv_length = self._kv_after(i + length, value)
            if kv_length:
                self._set_kv_precision(value, self._span(i, i + length - 1))
                return length + kv_length
            self._set_precision(value, self._span(i, i + length - 1), note)
            return length

        workload = WORKLOAD_WORDS.get(token)
        if workload is not None:
            self._set_workload(workload)
            return 1

        if token in BATCH_WORDS:
            return self._read_after_keyword(i, BATCH_FILLERS, self._batch_value)
        bs = _BS_RE.fullmatch(token)
        if bs:
            self._set_batch(float(bs.group(1)), bs.group(1))
            return 1

        if token in CONTEXT_WORDS:
            consumed = self._read_after_keyword(i, CONTEXT_FILLERS, self._context_value)
            if consumed:
                return consumed
            return 0

        first = token[0] if token else ""
        if "0" <= first <= "9":
            return self._read_number(i)
        if token in WORD_NUMBERS or token in ("a", "an", "hundred"):
            return self._read_count_word(i)
        if token in self.region_names:
            return self._read_region_name(i)
        return 0

    # numbers

    def _read_number(self, i: int) -> int:
        low = self.low
        token = low[i]
        nxt = self._next_free(i + 1)
        negative = i in self.negative
        sign = "-" if negative else ""

        moe = _MOE_RE.fullmatch(token)
        if moe:
            if negative:
                raise _BadValue(_size_error(f"-{token}"))
            self._set_moe(moe, token)
            return 1

        plain = _plain_number(token)
        if plain is None:
            unit_match = _NUM_UNIT_RE.fullmatch(token)
            if unit_match is None and ("e" in token or "^" in token):
                unit_match = _EXP_UNIT_RE.fullmatch(token)  # "1e20b", "10^20b"
            if unit_match is None:
                return 0
            digits, unit = unit_match.group(1), unit_match.group(2)
            value = _number(digits)
            if value is None:
                return 0
            if negative:
                value = -value
            if unit in SIZE_UNITS:
                self._set_size(value, sign + digits, unit)
                return 1 + self._swallow(i + 1, PARAM_WORDS)
            if unit in CONTEXT_SUFFIX:  # "10M" as written ("10m" reads as metres); "k" and "K" read alike
                written = self._raw(i) if unit == "m" else token
                return self._context_from(i, value * CONTEXT_SUFFIX[unit], sign + written, 1)
            if unit in GB_UNITS:
                self._set_budget(value * GB_UNITS[unit], sign + self._raw(i), unit)
                return 1
            if unit in BIT_WORDS:
                return 0  # read as a precision already
            if unit == "x":
                return self._read_multiplier(i, _whole(value))
            return 0

        if negative:
            plain = -plain
        # a plain number: what follows says what it is
        if nxt is None or nxt not in _AFTER_NUMBER:
            if nxt is not None and len(nxt) == 3 and len(token) <= 3 and _digits(nxt) and _digits(token):
                return self._grouped_context(i, False)  # "32 000 tokens"
            return 0
        if nxt in SIZE_UNITS:
            self._set_size(plain, sign + token, nxt)
            return 2 + self._swallow(i + 2, PARAM_WORDS)
        if nxt in ("k",):
            return self._context_from(i, plain * TOKENS_PER_K, f"{sign}{token}k", 2)
        if nxt in MILLION_WORDS or nxt == "m":
            if nxt in MILLION_WORDS and self._next_free(i + 2) in PARAM_WORDS:  # "500 million parameters"
                self._set_size(plain / 1000, f"{sign}{token} {nxt}", "b")
                return 3
            factor = 1_000_000 if nxt in MILLION_WORDS else TOKENS_PER_M
            return self._context_from(i, plain * factor, f"{sign}{self._raw(i)} {self._raw(i + 1)}", 2)
        if nxt in CONTEXT_UNIT_WORDS:
            self._set_context(plain, sign + token)
            return 2 + self._swallow(i + 2, CONTEXT_UNIT_WORDS)
        if nxt in GB_UNITS:
            self._set_budget(plain * GB_UNITS[nxt], f"{sign}{self._raw(i)} {self._raw(i + 1)}", nxt)
            return 2
        if nxt == "x":
            return self._read_multiplier_x(i, plain)
        counted = self._count_noun(i + 1)
        if counted:
            kind, length = counted
            if kind == "batch":
                self._set_batch(plain, sign + token)
            else:
                whole = _whole(plain)
                if whole is None:
                    shown = _shown(sign + token)
                    raise _BadValue(Note(f"GPU count {shown} is not a whole number", "parse_gpu_count_whole",
                                         written=shown))
                self._set_gpu_count(whole, sign + token)
            return 1 + length
        return 0

    def _grouped_context(self, i: int, after_keyword: bool) -> int:
        """'32 000 tokens', '1 000 000 Token', 'context 32 000': a space between groups of three digits is a
        thousands separator -- for a context length only (after a context keyword or before 'tokens'), so
        'batch 4 512 tokens' (the batch keyword reads its number first) and '2 x 512' stay apart."""
        low, tokens = self.low, self.tokens
        last = i
        while (self._free(last + 1) and len(low[last + 1]) == 3 and _digits(low[last + 1])
               and self.text[tokens.end[last]:tokens.start[last + 1]] in GROUP_SPACES):
            last += 1
            if last - i > MAX_THOUSANDS_GROUPS:
                return 0  # "000 000 000 ...": no context length, and O(n) per token would make long texts O(n²)
        if last == i:
            return 0
        unit = self._next_free(last + 1)
        if not after_keyword and unit not in CONTEXT_UNIT_WORDS:
            return 0
        value = float("".join(low[i:last + 1]))
        sign = self._signed(i)
        self._set_context(-value if sign else value, sign + self._span(i, last))
        return last - i + 1 + self._swallow(last + 1, CONTEXT_UNIT_WORDS)

    def _count_noun(self, j: int) -> tuple[str, int] | None:
        """After a number: '[concurrent] users' -> ('batch', n), '[graphics] GPUs' -> ('gpus', n)."""
        length = 0
        while self._free(j + length) and self.low[j + length] in USER_ADJECTIVES and length < 2:
            length += 1
        token = self._next_free(j + length)
        if token in USER_NOUNS:
            return "batch", length + 1
        if length:
            return "batch", length  # "32 concurrent", "8 parallel"
        if length == 0:
            if token in GPU_NOUN_LEAD and self._next_free(j + 1) in GPU_NOUNS:
                return "gpus", 2
            if token in GPU_NOUNS:
                return "gpus", 1
        return None

    def _word_number(self, i: int) -> tuple[int, int] | None:
        """A number in words at token i -> (value, tokens): 'seven', 'seventy two' ('seventy-two'),
        'four hundred and five', 'a hundred', 'zweiundsiebzig', 'vierhundertfünf', 'ein'."""
        token = self.low[i]
        value = DE_NUMBER_WORDS.get(token)
        if value is not None:
            return value, 1
        hundreds = 0
        after = i
        if token == "hundred":
            hundreds, after = 100, i + 1
        elif (token in EN_UNIT_WORDS or token in ("a", "an")) and self._next_free(i + 1) == "hundred":
            hundreds, after = 100 * EN_UNIT_WORDS.get(token, 1), i + 2
        if hundreds:
            rest_at = after + (1 if self._next_free(after) == "and" else 0)
            rest = self._below_hundred(rest_at)
            if rest is not None:
                return hundreds + rest[0], rest_at - i + rest[1]
            return hundreds, after - i
        rest = self._below_hundred(i)
        if rest is not None:
            return rest
        value = NUMBER_WORDS.get(token)
        return (value, 1) if value is not None else None

    def _below_hundred(self, j: int) -> tuple[int, int] | None:
        token = self._next_free(j)
        if token is None:
            return None
        tens = EN_TENS.get(token)
        if tens is not None:
            unit = self._next_free(j + 1)
            if unit is not None and unit in EN_UNIT_WORDS:
                return tens + EN_UNIT_WORDS[unit], 2
            return tens, 1
        value = EN_NUMBER_WORDS.get(token)
        return (value, 1) if value is not None else None

    def _read_count_word(self, i: int) -> int:
        """Number words: a size ('seven billion', 'sieben Milliarden', 'a billion') or a count ('four users',
        'a single user', 'zwei GPUs')."""
        low = self.low
        token = low[i]
        start = i
        if token in ("a", "an"):  # the most common case by far: "a 70B model", "on a H100", "a single user"
            nxt = self._next_free(i + 1)
            if nxt == "single":
                spoken = None
            elif nxt in SPELLED_SIZE_UNITS:
                spoken = (1, 1)  # "a billion parameters"
            elif nxt == "hundred":
                spoken = self._word_number(i)
            else:
                return 0
        elif token in EN_TENS or token in EN_UNIT_WORDS or token == "hundred":
            spoken = self._word_number(i)  # may be several words: "seventy two", "four hundred and five"
        else:
            spoken = (WORD_NUMBERS[token], 1)  # one word: "vier", "zweiundsiebzig", "twelve", "eine"
        if spoken is not None:
            value, length = spoken
            unit = self._next_free(i + length)
            # "seven billion", "seven B"; but "ein B200" is no size, and "a"/"ein" count only as "a billion"
            if unit in SIZE_UNITS and (unit in SPELLED_SIZE_UNITS or token not in SIZE_ARTICLES):
                self._set_size(float(value), str(value), unit)
                return length + 1 + self._swallow(i + length + 1, PARAM_WORDS)
            if unit in MILLION_WORDS and self._next_free(i + length + 1) in PARAM_WORDS:
                self._set_size(value / 1000, f"{value} {unit}", "b")  # "five hundred million parameters"
                return length + 2
        if token in ("a", "an") and (spoken is None or spoken[1] == 1):
            if self._next_free(i + 1) != "single":
                return 0
            i += 1
            token = "single"
            spoken = (1, 1)
        if spoken is None:
            return 0
        value, length = spoken
        counted = self._count_noun(i + length)
        if counted is None:
            return 0
        kind, count_length = counted
        if kind == "gpus" and token in GERMAN_ARTICLES:
            return 0  # "eine GPU für 405B" asks which GPU, it does not fix the count at one
        written = token if length == 1 else self._span(i, i + length - 1)
        if kind == "batch":
            self._set_batch(float(value), written)
        else:
            self._set_gpu_count(value, written)
        return i - start + length + count_length

    def _read_multiplier(self, i: int, count: int | None) -> int:
        """'2x' before a budget ('2x 24GB') or GPUs ('4x GPUs')."""
        if count is None:
            return 0
        j = i + 1
        token = self._next_free(j)
        if token is None:
            return 0
        gb = _gb_token(token)
        if gb is not None:
            value, unit = gb
            self._set_budget(count * value, f"{count}x {token}", unit, product=True)
            return 2
        if _digits(token) and self._next_free(j + 1) in GB_UNITS:
            unit = self.low[j + 1]
            self._set_budget(count * float(token) * GB_UNITS[unit], f"{count}x {token} {unit}", unit, product=True)
            return 3
        if token in GPU_NOUNS:
            self._set_gpu_count(count)
            return 2
        return 0

    def _read_multiplier_x(self, i: int, plain: float) -> int:
        whole = _whole(plain)
        if whole is None:
            return 0
        after = self._next_free(i + 2)
        if after is not None and "0" <= after[0] <= "9":
            moe = _MOE_RE.fullmatch(f"{self.low[i]}x{after}")  # "8 x 7b" is "8x7b"
            if moe:
                if i in self.negative:
                    raise _BadValue(_size_error(f"-{self._span(i, i + 2)}"))
                self._set_moe(moe, self._span(i, i + 2))
                return 3
        consumed = self._read_multiplier(i + 1, whole)
        return consumed + 1 if consumed else 0

    def _swallow(self, j: int, words: Iterable[str]) -> int:
        token = self._next_free(j)
        return 1 if token is not None and token in words else 0

    # keyword + value ("batch 32", "batch size of 8", "context 200k", "ctx=32k")

    def _read_after_keyword(self, i: int, fillers: frozenset, reader) -> int:
        j = i + 1
        while self._free(j) and self.low[j] in fillers and j - i <= 3:
            j += 1
        if not self._free(j):
            return 0
        consumed = reader(j)
        return (j - i) + consumed if consumed else 0

    def _batch_value(self, j: int) -> int:
        token = self.low[j]
        value = _plain_number(token)
        length = 1
        if value is not None:
            sign = self._signed(j)
            self._set_batch(-value if sign else value, sign + token)
        else:
            spoken = self._word_number(j)
            if spoken is None:
                return 0
            length = spoken[1]
            self._set_batch(float(spoken[0]), self._span(j, j + length - 1))
        return length + (1 if self._next_free(j + length) in USER_NOUNS else 0)

    def _context_value(self, j: int) -> int:
        token = self.low[j]
        sign = self._signed(j)
        suffix = _context_suffix_value(token)
        if suffix is not None:
            written = self._raw(j) if token[-1] == "m" else token
            return self._context_from(j, -suffix if sign else suffix, sign + written, 1)
        value = _plain_number(token)
        if value is None:
            return 0
        if sign:
            value = -value
        nxt = self._next_free(j + 1)
        if nxt is None:
            pass
        elif nxt == "k":
            return self._context_from(j, value * TOKENS_PER_K, f"{sign}{token}k", 2)
        elif nxt in MILLION_WORDS or nxt == "m":
            factor = 1_000_000 if nxt in MILLION_WORDS else TOKENS_PER_M
            return self._context_from(j, value * factor, f"{sign}{token} {self._raw(j + 1)}", 2)
        elif len(nxt) == 3 and len(token) <= 3 and _digits(nxt) and _digits(token):
            grouped = self._grouped_context(j, True)  # "context 32 000"
            if grouped:
                return grouped
        self._set_context(value, sign + token)
        return 1 + self._swallow(j + 1, CONTEXT_UNIT_WORDS)

    def _context_from(self, i: int, tokens: float, written: str, length: int) -> int:
        whole = _whole(tokens)
        if whole is None and math.isfinite(tokens):
            whole = int(round(tokens))
        self._set_context(float(whole) if whole is not None else tokens, written)
        if (whole is not None and ("k" in written or "K" in written) and whole & (whole - 1)
                and self.context_tokens == whole):
            self.assumed.append(Note(f"{written} read as {whole:,} tokens (1k = {TOKENS_PER_K:,} tokens)", "k_tokens",
                                     written=written, tokens=whole))
        return length + self._swallow(i + length, CONTEXT_UNIT_WORDS)

    # KV cache

    def _read_kv(self, i: int) -> int:
        """'kv cache fp8', 'KV-Cache in FP8', 'kv cache in 8 bit', 'kv=fp8'."""
        j = i + 1
        fillers = 0
        while self._free(j) and self.low[j] in KV_FILLERS and fillers < 3:
            j += 1
            fillers += 1
        if self._free(j):
            precision = self._precision_at(j)
            if precision is not None:
                value, length, _note = precision
                self._set_kv_precision(value, self._span(j, j + length - 1))
                return j - i + length
        # "kv cache" without a precision: nothing to read, nothing to report
        return 1 + (1 if self._next_free(i + 1) in ("cache", "caches") else 0)

    def _separated(self, left: int, right: int) -> bool:
        """Is there a comma, full stop ... between token `left` and token `right`?"""
        between = self.text[self.tokens.end[left]:self.tokens.start[right]]
        return any(mark in between for mark in ",;.:!?()|/")

    def _kv_after(self, j: int, value: str) -> int:
        """After a precision: 'fp8 kv [cache]', 'fp8 for the kv cache' -> tokens to consume (0: not KV).

        'int4, kv cache fp8' and 'int4 kv cache fp8' are weights int4 and a KV cache in FP8: the KV words belong
        to the precision that follows them when a comma separates them from this one, or when this one cannot
        be a KV cache precision and another follows."""
        if j >= self.tokens.n or self._separated(j - 1, j):
            return 0
        length = 0
        token = self._next_free(j)
        if token in KV_LINKS:
            length += 1
            if self._next_free(j + length) in ARTICLES:
                length += 1
            token = self._next_free(j + length)
        if token not in KV_WORDS:
            return 0
        length += 1
        if self._next_free(j + length) in ("cache", "caches"):
            length += 1
        if value not in KV_PRECISION_BYTES:
            after = j + length
            while self._free(after) and self.low[after] in KV_FILLERS and after - j - length < 3:
                after += 1
            if self._free(after) and self._precision_at(after) is not None:
                return 0
        return length

    def _precision_at(self, i: int) -> tuple[str, int, str | None] | None:
        low = self.low
        token = low[i]
        value = _precision_token(token)
        if value is not None:
            return value, 1, (_fp4_note(token) if token in FP4_WORDS else None)
        nxt = self._next_free(i + 1)
        if nxt is None:
            return None
        if token in PRECISION_PREFIXES and _digits(nxt):
            joined = canonical_precision(token + nxt)
            if joined is not None:
                return joined, 2, None
            if token + nxt in FP4_WORDS:  # "fp-4"
                return "int4", 2, _fp4_note(token + nxt)
            if token == "q" and nxt in ("4", "8"):
                return ("int4" if nxt == "4" else "int8"), 2, None
            if token in UNSIZED_PREFIXES and len(nxt) <= 3:  # "fp-6", "int 3"
                return UNSIZED, 2, None
        if nxt in BIT_WORDS and "0" <= token[0] <= "9":  # "4 bit", "3-bit", "1.58 bit", "4.5 bpw"
            if len(token) <= 2 and _digits(token):
                width = int(token)
                bits = BITS_TO_PRECISION.get(width) or (UNSIZED if width < 32 else None)
            else:
                bits = _bit_width(_plain_number(token))
            if bits is not None:
                return bits, 2, None
        phrase = PRECISION_PHRASES.get((token, nxt))
        if phrase is not None:
            return phrase, 2, None
        return None

    # setters (first value wins; nonsense raises)

    def _set_size(self, value: float, digits: str, unit: str) -> None:
        factor = SIZE_UNITS[unit]
        params = value * factor
        label = "T" if factor == 1000 else "" if " " in digits else "B"  # "500 million" carries its own unit
        if not math.isfinite(params) or params <= 0 or params > MAX_PARAMS_B:
            raise _BadValue(_size_error(f"{_shown(digits)}{label}"))
        if self.params_b is None:
            self.params_b = params
            if factor == 1000:
                self.assumed.append(Note(f"{digits}{label} read as {params:,g}B parameters", "trillion",
                                         written=f"{digits}{label}", params=params))
        elif abs(self.params_b - params) > 1e-9:
            self.ignored.append(f"{digits}{label}")

    def _set_moe(self, match: re.Match, token: str) -> None:
        experts = int(match.group(1))
        expert_b = _number(match.group(2)) or 0.0
        key = f"{experts}x{match.group(2).replace(',', '.')}b"
        if self.model is not None:
            self.ignored.append(token)  # a second model
            return
        found = self.models.moe.get(key)
        if found:
            model = self.models.first(found)
            self.model = model
            self.model_note = Note(f"{model.name} (assumed from '{token}')", "model_fuzzy", model=model.name, span=token)
            self.assumed.append(Note(f"{token} read as {model.name}", "moe_model", written=token, model=model.name))
            return
        params = experts * expert_b
        if params <= 0 or params > MAX_PARAMS_B:
            raise _BadValue(_size_error(_shown(token)))
        if self.params_b is not None:
            if abs(self.params_b - params) > 1e-9:
                self.ignored.append(token)
            return
        if self.params_b is None:
            self.params_b = params
            self.assumed.append(Note(
                f"{token} read as {experts} x {expert_b:g}B = {params:g}B (not in the model registry; "
                "shared layers make a real mixture-of-experts model smaller)",
                "moe_params", written=token, experts=experts, expert_b=expert_b, params=params,
            ))

    def _set_precision(self, value: str, written: str, note: str | None) -> None:
        if value == UNSIZED:
            raise _BadValue(_precision_error(_shown(written)))
        if self.precision is None:
            self.precision = value
            if note:
                self.assumed.append(note)
        elif self.precision != value:
            self.ignored.append(written.lower())

    def _set_kv_precision(self, value: str, written: str) -> None:
        if value not in KV_PRECISION_BYTES:
            self.ignored.append(f"KV cache {written} (use fp16, bf16, fp8 or int8)")
            return
        if self.kv_precision is None:
            self.kv_precision = value
        elif self.kv_precision != value:
            self.ignored.append(f"KV cache {written}")

    def _set_context(self, tokens: float, written: str) -> None:
        """`written` is the value as the user wrote it ('10M', '-32k', '32 000'): errors and ignored show it."""
        whole = _whole(tokens) if math.isfinite(tokens) else None
        if whole is None or not 0 < whole <= MAX_CONTEXT_TOKENS:
            shown = _shown(written)
            if whole is not None and whole > MAX_CONTEXT_TOKENS:
                raise _BadValue(Note(
                    f"context {shown} ({whole:,} tokens) is out of range: at most {MAX_CONTEXT_TOKENS:,} tokens",
                    "parse_context_too_long", written=shown, tokens=whole, max_tokens=MAX_CONTEXT_TOKENS,
                ))
            raise _BadValue(Note(f"context {shown} is out of range (1 to {MAX_CONTEXT_TOKENS:,} tokens)",
                                 "parse_context_range", written=shown, max_tokens=MAX_CONTEXT_TOKENS))
        if self.context_tokens is None:
            self.context_tokens = whole
        elif self.context_tokens != whole:
            self.ignored.append(_shown(written))  # "8k or 32k": the second value is not used, and says so

    def _set_batch(self, value: float, written: str) -> None:
        whole = _whole(value)
        if whole is None or not 0 < whole <= MAX_BATCH:
            shown = _shown(written)
            raise _BadValue(Note(f"batch {shown} is out of range (1 to {MAX_BATCH:,})", "parse_batch_range",
                                 written=shown, max_batch=MAX_BATCH))
        if self.batch is None:
            self.batch = whole
        elif self.batch != whole:
            self.ignored.append(f"batch {_shown(written)}")

    def _set_workload(self, workload: str) -> None:
        if self.workload is None or WORKLOAD_RANK[workload] > WORKLOAD_RANK[self.workload]:
            self.workload = workload

    def _set_budget(self, gb: float, written: str, unit: str, product: bool = False) -> None:
        if not math.isfinite(gb) or not 0 < gb <= MAX_BUDGET_GB:
            shown = _shown(written)
            raise _BadValue(Note(f"memory budget {shown} is out of range", "parse_budget_range", written=shown))
        if self.budget_gb is not None:
            if abs(self.budget_gb - gb) > 1e-9:
                self.ignored.append(_shown(written))
            return
        self.budget_gb = gb
        if unit == "gib":
            self.assumed.append(Note(f"{written} read as {gb:.1f} GB (1 GiB = 1.074 GB)", "gib", written=written,
                                     budget_gb=gb))
        elif product:
            self.assumed.append(Note(f"{written} read as a {gb:g} GB budget", "budget_product", written=written,
                                     budget_gb=gb))

    # ---- leftovers

    def _collect_ignored(self) -> None:
        seen: set[str] = set()
        unique = []
        for entry in self.ignored:
            if entry not in seen:
                seen.add(entry)
                unique.append(entry)
        self.ignored = unique[:MAX_IGNORED]
        low, used = self.low, self.used
        extra = max(0, len(unique) - MAX_IGNORED)
        for index in range(self.tokens.n):
            token = low[index]
            if used[index] or token in QUIET:
                continue
            if token in seen:
                continue
            if len(self.ignored) >= MAX_IGNORED:
                extra += 1
                continue
            seen.add(token)
            self.ignored.append(_shown(token))
        if extra:
            self.ignored.append(f"... ({extra} more)")


def _precision_token(token: str) -> str | None:
    """A one-word precision -> 'int4' ...; UNSIZED for one Cardfit does not size ('q5_k_m', '3bit', 'fp6')."""
    value = PRECISION_WORDS.get(token)
    if value is not None:
        return value
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
        bits = _BITS_RE.fullmatch(token)
        if bits is None:
            return None
        width = bits.group(1)
        if len(width) <= 2 and _digits(width):
            return BITS_TO_PRECISION.get(int(width)) or (UNSIZED if int(width) < 32 else None)
        return _bit_width(_number(width))
    if "0" <= token[-1] <= "9":
        if first == "w":
            weights = _WA_RE.fullmatch(token)
            if weights:
                return BITS_TO_PRECISION.get(int(weights.group(1)), UNSIZED)
        if _UNSIZED_PRECISION_RE.fullmatch(token):
            return UNSIZED
    return None


def _bit_width(bits: float | None) -> str | None:
    """4 -> 'int4', 16 -> 'bf16'; a width below 32 that Cardfit does not size (3, 4.5) -> UNSIZED; None above
    ('64-bit' is a CPU, not a weight format)."""
    if bits is None or not math.isfinite(bits):
        return None
    whole = _whole(bits)
    if whole is not None and whole in BITS_TO_PRECISION:
        return BITS_TO_PRECISION[whole]
    return UNSIZED if bits < 32 else None


def _fp4_note(token: str) -> Note:
    return Note(f"{token.upper()} sized as 4-bit (0.5 B per parameter)", "fp4", written=token.upper())


def _size_error(written: str) -> Note:
    return Note(f"{written} is not a model size", "parse_bad_size", written=written)


def _gpu_count_error(written: str) -> Note:
    return Note(f"GPU count {written} is out of range (1 to {MAX_GPU_COUNT})", "parse_gpu_count_range",
                written=written, max_count=MAX_GPU_COUNT)


def _precision_error(written: str) -> Note:
    return Note(f"{written} is not a precision Cardfit sizes: use {SIZED_PRECISIONS}", "parse_precision",
                written=written)


def _context_suffix_value(token: str) -> float | None:
    if not token or not "0" <= token[0] <= "9" or token[-1] not in "km":
        return None
    digits = token[:-1]
    if not _NUMBER_RE.fullmatch(digits):
        return None
    value = _number(digits)
    return None if value is None else value * CONTEXT_SUFFIX[token[-1]]


def _size_of(token: str) -> float | str | None:
    """'70b' -> 70.0, '1,5b' -> 1.5, '8x7b' -> '8x7b' (a mixture-of-experts name); None otherwise."""
    if not token or not "0" <= token[0] <= "9":
        return None
    match = _SIZE_TOKEN_RE.fullmatch(token)
    if match:
        value = _number(match.group(1))
        return value if value and math.isfinite(value) else None
    moe = _MOE_RE.fullmatch(token)
    if moe:
        return f"{moe.group(1)}x{moe.group(2).replace(',', '.')}b"
    return None


def _gb_token(token: str) -> tuple[float, str] | None:
    match = _NUM_UNIT_RE.fullmatch(token)
    if match and match.group(2) in GB_UNITS:
        value = _number(match.group(1))
        if value is not None:
            return value * GB_UNITS[match.group(2)], match.group(2)
    return None


def parse(text: str, *, registry: Registry | None = None, cards=None,
          regions: Mapping[str, str] | None = None) -> ParseResult:
    """Read a sizing question. Never raises: anything unreadable is 'not a sizing question'.

    `regions` maps region names to region ids ({"Dallas": "DFW-1"}); by default the names of the bundled
    catalogs' regions, limited to the regions the cards are offered in."""
    if not isinstance(text, str):
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)
    try:
        return _parse_strict(text, registry=registry, cards=cards, regions=regions)
    except Exception:  # the contract is "never crash on user text"; a bug here must not take the bot down
        return ParseResult(None, NOT_A_QUESTION, "en", None, None)


def _parse_strict(text: str, *, registry: Registry | None = None, cards=None,
                  regions: Mapping[str, str] | None = None) -> ParseResult:
    """`parse` without the safety net, so tests see a bug as a bug."""
    models = _model_index(registry if registry is not None else default_registry())
    card_index = _card_index(cards if cards is not None else default_cards())
    if regions is None:
        names = card_index.region_names or card_index.default_region_names()
    else:
        names = _region_index(regions)
    return _Parser(text, models, card_index, names).run()
