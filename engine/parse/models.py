"""The models pass: model names from the registry, exact first, then fuzzy; one model per question.

Model matching (registry ids, names and aliases, compared the way `catalog.names.normalize_name` compares them):
1. Exact: the joined tokens of up to six words equal a name ("Llama-3.1-70B", "llama3.1:8b", "qwen 2.5 32b");
   the longest wins, anywhere in the text. No note.
2. Fuzzy, from a word that looks like a family ("llama", "qwen"; typos within rapidfuzz ratio 75 of a family
   word with the same first letter, e.g. "lama", "mistrall", "quen"); windows of up to five words:
   * with a size ("70b", "8x7b"): `fuzz.ratio` >= 85 against every name, and only models whose size agrees
     (within 10 %) count -- "Llama 70B" can never become an 8B model. If the window names no version
     ("qwen 7b"), every generation of that size in the family of the best match is as likely, whatever its
     score, and the newest (last in the registry) is taken; with a version ("lama 3.1 70b") only the best
     score counts. The first word stands for the name word it is closest to ("mistral", "mistrall" ->
     "mistral"): only names that start with it match, never a look-alike family ("Magistral").
   * without a size: `fuzz.ratio` >= 85 against the names with their sizes removed ("llama 3.1 70b" ->
     "llama31"; a family name -> the whole family). One model within 3 points of the best is a match
     ("deepsek v3"); several are ambiguous ("llama 3.1"): a size named elsewhere in the text decides, otherwise
     the parser asks for the size instead of guessing. A single word without a size must be a family or name
     exactly ("qwen3", "mixtral"): "command" or "googled" are words, not models.
   Every fuzzy match is reported: model_note "Llama 3.1 70B (assumed from 'lama 3.1 70b')", also in `assumed`.
Both only ever match a model whose names agree with the whole name as typed (`engine.parse.names`): "deepseek r1"
in "deepseek r1 distill qwen 7b", "v3" in "whisper large v3", "phi-3" in "phi-3 medium" are no match; a family
word ("mistral") with a distinguishing word ("large") is the model of that family that has it. A name that says
more than an exact one only by a release tag ("qwen3 32b 2507": Qwen3 32B has no 2507 release) is read fuzzily
among models of the exact one's size only, so never as a release of another size ("Qwen3 30B-A3B 2507", 32 ~ 30.5).
3. Same-shape releases: a registry entry's `variants` (releases without an entry of their own, e.g. "DeepSeek-V3.1"
   in a registry that lists only DeepSeek-V3) match like names and are sized as the entry, with the note
   model_variant "DeepSeek-V3.1 sized as DeepSeek-V3 (same architecture)".
4. Unknown names: a family word (the registry's, or words.UNLISTED_FAMILIES: "kimi", "glm") with more name after
   it that no model agrees with is a model nobody knows (`resolve_unknown`): with a size in the text it is sized
   as a generic model of that size (note unknown_model_sized); without one the parser asks for the size, naming
   up to three registry models of that family (parse_unknown_model, parse_unknown_model_plain). "17B-16E" is a
   mixture of experts whose total size the name does not say: it is asked for (parse_moe_total), never 17B.
A second model in the same text is listed in `ignored` (one model per question).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter, not_
from typing import TYPE_CHECKING

from engine.models.registry import ModelShape
from engine.notes import Note
from engine.parse.cards import card_at
from engine.parse.draft import Draft
from engine.parse.errors import BadValue, UnknownName, moe_total_error, unknown_model_error
from engine.parse.lexer import digits
from engine.parse.names import DATE, EXPERTS_RE, FAMILY, NameWords, agrees, distinguishing_typo, word_kind
from engine.parse.numbers import context_suffix_value, size_of
from engine.parse.precision import precision_token
from engine.parse.repos import RepoReading, RepoSpan, read_repo, repo_spans
from engine.parse.scan import Scan
from engine.parse.vocabulary import ALPHA_PREFIX_RE, ModelNames, Vocabulary
from engine.parse.words import KEYWORDS, NAME_WORD_SPELLINGS, QUIET, STOP_WORDS, UNLISTED_FAMILIES

if TYPE_CHECKING:
    from rapidfuzz import fuzz, process
else:  # imported at the first fuzzy comparison: a start that never fuzzes skips it
    from engine.parse.fuzzy import fuzz, process

FUZZY_CUTOFF = 85.0  # fuzz.ratio on normalized strings: "lama3170b" vs "llama3170b" = 94.7
SIZED_MARGIN = 6.0  # sized window without a version: models this close to the best count as equally likely
TIE_MARGIN = 0.5  # sized window with a version: only a tie counts
SIZELESS_MARGIN = 3.0  # window without a size (compared with size-free names): several this close -> ambiguous
MAX_WINDOW = 5
MAX_FUZZY_TRIES = 6  # fuzzy windows tried per text: a question names one or two models, not hundreds
MIN_FUZZY_CHARS = 4
_SHORT_VERSION_RE = re.compile(r"v[1-9]")  # "v3" written for a release named "v0.3"
SAME_SIZE = 0.03  # headline counts this close are one size (as registry tests compare exact and headline counts)
MAX_NAME_TOKEN = 24  # no model name has a longer word; longer tokens are never compared
_JOINS = frozenset({" ", "-", "_", ""})  # what may stand between two words of one typed name
_MILLIONS_RE = re.compile(r"\d+(?:[.,]\d+)?m")  # a size in millions of parameters: "360m"


@dataclass(slots=True)
class Found:
    """A model name found in the text: tokens start..start+length, and what they name."""

    start: int
    length: int
    span: str
    model: ModelShape | None
    ambiguous: list[ModelShape] | None
    fuzzy: bool
    variant: str | None = None  # read as a release of the same shape ("DeepSeek-V3.1" -> DeepSeek-V3)
    unknown: UnknownName | None = None  # a model name no registry entry agrees with
    size_at: int | None = None  # an unknown name's total size token, left for the fields pass to read
    reading: RepoReading | None = None  # a repo id read whole: its model, and the checkpoint it is


_UNLISTED_INITIALS = frozenset(family[:1] for family in UNLISTED_FAMILIES)
_UNLISTED_HEADS = frozenset(family[:3] for family in UNLISTED_FAMILIES)
assert min(map(len, UNLISTED_FAMILIES)) >= 3
_FIRST_THREE = itemgetter(slice(0, 3))

# The best window of a fuzzy search: (top score, tokens, models ranked best first, the size it names)
_Window = tuple[float, int, list[tuple[ModelShape, float]], float | str | None]


def find_model(scan: Scan, draft: Draft, vocabulary: Vocabulary) -> tuple[int, int] | None:
    """Every model name in the text; the first one is the model, any later one is listed as ignored. Returns
    where the model's name is (first token, token count), None when the text names none."""
    # Each search starts only at certain words: a text with none of them skips it (the same result, no loop)
    exact = not vocabulary.models.prefixes.isdisjoint(scan.flat)
    # only a word that is no stop word or keyword and starts with a letter can be a head (ModelNames.is_head)
    fuzzy = any(map(_LETTER_FIRST_RE.match, scan.words.difference(_NO_HEADS)))
    # a token that starts with a family word starts with its first three letters (a look per word, no search
    # of the whole text for 33 words)
    unlisted = not _UNLISTED_HEADS.isdisjoint(map(_FIRST_THREE, scan.words))
    repos = repo_spans(scan, vocabulary.models.registry) if "/" in scan.text else []
    if not (exact or fuzzy or unlisted or repos):
        return None
    search = _Search(scan, vocabulary)
    found = search.repo_names(repos) if repos else []  # first: no other pass reads a prefix of a repo id
    if exact:
        found.extend(search.exact_names())
    if fuzzy:
        found.extend(search.fuzzy_names())
    if unlisted:
        found.extend(search.unlisted_names())
    if not found:
        return None
    found.sort(key=lambda item: item.start)
    definite = [item for item in found if item.model is not None]
    first = definite[0] if definite else found[0]  # "mixtral or llama 3.1 70b": the one that is clear
    if first.unknown is not None:
        draft.unknown = first.unknown
    elif first.ambiguous:
        draft.set_ambiguous(first.ambiguous, first.span)
    elif first.model is not None:
        draft.set_model(first.model, _model_note(first, first.model))
        if first.reading is not None:
            _set_checkpoint(draft, first.reading, first.span)
    for other in found:
        if other is not first:
            draft.ignored.append(other.span)  # one model per question
            if other.size_at is not None:
                scan.use(other.size_at, 1)
    return first.start, first.length


def _set_checkpoint(draft: Draft, reading: RepoReading, written: str) -> None:
    """A quantized repo named: its repo and its format (the format is one value: the repo's comes first)."""
    if reading.checkpoint is None:
        return
    draft.checkpoint = reading.checkpoint
    if reading.quant is not None:
        draft.set_format(reading.precision, reading.quant, written)


def _same_size(one: ModelShape, other: ModelShape) -> bool:
    """Releases of one size (the headline counts within 3 %): 'mistral small 24b 2501' may be another 24B release
    than the one 'mistral small 24b' names, never a 22B one."""
    return abs(one.params_b - other.params_b) <= SAME_SIZE * other.params_b


def _model_note(found: Found, model: ModelShape) -> Note | None:
    if found.variant is not None:
        return Note(f"{found.variant} sized as {model.name} (same architecture)", "model_variant",
                    variant=found.variant, model=model.name, span=found.span)
    if found.fuzzy:
        return Note(f"{model.name} (assumed from '{found.span}')", "model_fuzzy", model=model.name, span=found.span)
    return None


def resolve_unknown(draft: Draft, models: ModelNames) -> None:
    """A model nobody knows: sized from a size in the text as a generic model, with a note; else ask for it."""
    unknown = draft.unknown
    if unknown is None:
        return
    if draft.model is not None:  # "8x7b" named a registry model after all
        draft.ignored.append(unknown.span)
    elif draft.params_b is None:
        if unknown.moe_written is not None:
            raise BadValue(moe_total_error(unknown))
        raise BadValue(unknown_model_error(unknown.span, models.similar(unknown.span)))
    else:
        draft.assumed.append(Note(f"I don't know {unknown.span}; sized as a generic {draft.params_b:g}B model",
                                  "unknown_model_sized", name=unknown.span, params=draft.params_b))
    draft.unknown = None


def resolve_ambiguous(draft: Draft, models: ModelNames) -> None:
    """'llama 3.1 ... 405b': a size named elsewhere decides between the models a name could be."""
    if draft.model is not None or not draft.ambiguous or draft.params_b is None:
        return
    fitting = [model for model in draft.ambiguous if models.agrees(model, draft.params_b)]
    if fitting:
        chosen = models.last(fitting)
        draft.set_model(chosen, Note(f"{chosen.name} (assumed from '{draft.ambiguous_span}' and {draft.params_b:g}B)",
                                     "model_sized", model=chosen.name, span=draft.ambiguous_span,
                                     size=draft.params_b))
        draft.params_b = None
    else:
        # The size names no model of that family: size it as a typical model of that size.
        draft.ignored.append(draft.ambiguous_span)
    draft.ambiguous = []


_NO_HEADS = STOP_WORDS | KEYWORDS
_FORMAT_WORDS = frozenset({"quantized", "quant", "gguf", "dynamic", "static"})  # beside a format in a repo's name
# Words that join a sentence and never a repo's name (a repo's name may carry "instruct", "gguf", "awq")
_SENTENCE_WORDS = frozenset({"with", "and", "or", "on", "in", "at", "for", "of", "the", "to", "mit", "auf", "und",
                             "oder", "für", "fuer", "bei", "von"})
_LETTER_FIRST_RE = re.compile(r"[^0-9]")  # no head starts with a digit (ModelNames.is_head)


class _Search:
    """The model names of one text. Marks the tokens of each name it finds as used."""

    __slots__ = ("scan", "vocabulary", "models", "names", "_heads", "_said_more")

    def __init__(self, scan: Scan, vocabulary: Vocabulary) -> None:
        self.scan = scan
        self.vocabulary = vocabulary
        self.models = vocabulary.models
        self.names = NameWords(scan, vocabulary)
        self._heads: dict[str, bool] = {}  # is_head per word of this text: a long text repeats its words
        # first token -> the model whose exact name the typed name begins with and says more than ('qwen3 32b 2507')
        self._said_more: dict[int, ModelShape] = {}

    def is_head(self, token: str) -> bool:
        known = self._heads.get(token)
        if known is None:
            known = self._heads[token] = self.models.is_head(token)
        return known

    def repo_names(self, repos: list[RepoSpan]) -> list[Found]:
        """0. Repo ids, each read whole (engine.parse.repos): the model and checkpoint the registry says it names,
        else, when its name looks like a model's (a family word or a size: 'deepseek-ai/DeepSeek-R1-0528-Qwen3-8B'
        in a registry without the distill), a model nobody knows -- never the model a prefix of it names. A slash
        pair whose first half is a model or has a size ('llama-3.1-70b/405b') is left to the other passes."""
        scan = self.scan
        low, used = scan.low, scan.used
        found: list[Found] = []
        for span in repos:
            if any(used[span.start:span.stop]):
                continue
            if span.reading is not None:
                scan.use(span.start, span.stop - span.start)
                found.append(Found(span.start, span.stop - span.start, scan.span(span.start, span.stop - 1),
                                   span.reading.model, None, False, reading=span.reading))
                continue
            owner = low[span.start:span.name_start]
            if any(size_of(word) is not None for word in owner) or self.models.registry.get("-".join(owner)):
                continue
            named = self._named_before_format(span)
            if named is not None:  # "RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w8a8": the model, then "w8a8"
                found.append(named)
                continue
            name = low[span.name_start:span.stop]
            if any(word in _SENTENCE_WORDS or (word in KEYWORDS and precision_token(word) is None) for word in name):
                continue  # "deepseek-ai/DeepSeek-V3.1.with.128k.context": words of a sentence, no repo's name
            if self.is_head(name[0]) or any(size_of(word) is not None for word in name):
                unknown = self._unknown(span.start, span.stop)
                self._take(unknown)
                found.append(unknown)
        return found

    def _named_before_format(self, span: RepoSpan) -> Found | None:
        """A repo id whose name is a registry model's, then only precision or format words that name no
        published checkpoint of it ("...-quantized.w8a8"): the model, its words left for the precision pass."""
        scan = self.scan
        low, starts, ends = scan.low, scan.tokens.start, scan.tokens.end
        for cut in range(span.stop - 1, span.name_start, -1):
            if not all(precision_token(word) is not None or word in _FORMAT_WORDS for word in low[cut:span.stop]):
                return None
            reading = read_repo(scan.text[starts[span.start]:ends[cut - 1]], self.models.registry)
            if reading is not None and reading.checkpoint is None:
                scan.use(span.start, cut - span.start)
                return Found(span.start, cut - span.start, scan.span(span.start, cut - 1), reading.model, None, False,
                             reading=reading)
        return None

    def exact_names(self) -> list[Found]:
        """1. Exact names, longest first, anywhere; a typo right before one makes it fuzzy ('deepsek v3').
        A name whose typed words say more than the model's names ('deepseek r1' in 'deepseek r1 distill qwen
        7b', 'v3' in 'whisper large v3') is no match: the fuzzy and unknown-name passes read it."""
        scan = self.scan
        low, flat, n, used = scan.low, scan.flat, scan.n, scan.used
        prefixes = self.models.prefixes
        found: list[Found] = []
        for i in compress(range(n), map(prefixes.__contains__, flat)):
            if used[i]:
                continue
            match = self._exact_at(i)
            if match is None:
                continue
            model, end, variant, typo = match
            start, stop = self._begin(i, model), self.names.end(i, end)
            extra = self.models.variant_pieces.get(variant, frozenset()) if variant else frozenset()
            if not agrees(self.models, model, low[start:stop], extra):
                if start == i < end < stop and all(word_kind(word, self.models) == DATE for word in low[end:stop]):
                    self._said_more.setdefault(start, model)  # a release tag the model does not have
                if not self.is_head(low[start]) and stop - start > end - i:
                    # "r1 distill qwen 1.5b", "whisper large v3": a name that says more than 'r1' or 'v3'
                    unknown = self._unknown(start, stop)
                    self._take(unknown)
                    found.append(unknown)
                continue
            before = start - 1
            if (before >= 0 and not used[before] and low[before] not in STOP_WORDS and low[before] not in KEYWORDS
                    and self.is_head(low[before])):
                fuzzy = self.fuzzy_at(before)
                if fuzzy is not None:  # "deepsek v3": the typo belongs to the name, so say what it was read as
                    self._take(fuzzy)
                    found.append(fuzzy)
                    continue
            scan.use(start, stop - start)
            found.append(Found(start, stop - start, scan.span(start, stop - 1), model, None, typo, variant))
        return found

    def _begin(self, i: int, model: ModelShape) -> int:
        """Where the typed name of a match at token i begins. A match from a version ('v3', 'r1') after another
        family's word ('whisper larg v3', 'glm foo v3') begins at that word: the whole name is then checked against
        the model and, saying more than 'v3', is no match, never DeepSeek-V3 with 'whisper' not understood."""
        start = self.names.begin(i)
        if start < i or word_kind(self.scan.low[i], self.models) == FAMILY:
            return start
        family = self.names.family_before(i)
        if family is None or agrees(self.models, model, self.scan.low[family:family + 1]):
            return start  # no family word before it, or the model's own ('deepseek chat v3')
        return family

    def _exact_at(self, i: int) -> tuple[ModelShape, int, str | None, bool] | None:
        """The longest name (or same-shape release) starting at token i -> (model, the token after it, the
        release's name, whether a typo was read as a name word); a size right after it that confirms it is
        included. A word one typo away from a distinguishing word of five letters or more ("mediun", "smal"; not a
        stop word such as "shall", not after a comma) that continues the name ("phi 3" + "medium") is read as that
        word: "phi-3 mediun 14b" is Phi-3 Medium, said in a note, never Phi-3 Mini with "14B ignored". So is one
        that makes a prefix several models share one name ("whisper" + "large" + "v3", "llama 4" + "scout"):
        "whisper larg v3" is Whisper large-v3, "llama 4 scot" Llama 4 Scout, each said in a note."""
        scan, models = self.scan, self.models
        low, flat, n, used = scan.low, scan.flat, scan.n, scan.used
        joined = ""
        best: tuple[ModelShape, int, str | None, bool] | None = None
        typo = False
        for j in range(i, min(n, i + MAX_WINDOW + 1)):
            if used[j]:
                break
            corrected = None
            if j > i and flat[j] not in models.all_pieces and low[j] not in QUIET \
                    and low[j] not in KEYWORDS and scan.text[scan.tokens.end[j - 1]:scan.tokens.start[j]] in _JOINS:
                corrected = NAME_WORD_SPELLINGS.get(flat[j])
                if corrected is None or joined + corrected not in models.prefixes:
                    corrected = distinguishing_typo(flat[j], joined, models.prefixes)
            if corrected is not None:
                joined += corrected
                typo = True
            elif joined + flat[j] not in models.prefixes and _SHORT_VERSION_RE.fullmatch(flat[j]) \
                    and joined + "v0" + flat[j][1:] in models.prefixes:
                joined += "v0" + flat[j][1:]  # "mistral 7b v3" is v0.3: Mistral numbers its 7B releases v0.1..v0.3
            else:
                joined += flat[j]
            if joined not in models.prefixes:
                break
            model = models.exact.get(joined)
            if model is not None:
                best = (model, j + 1, None, typo)
            elif joined in models.variants:
                model, name = models.variants[joined]
                best = (model, j + 1, name, typo)
        if best is None:
            return None
        model, end, variant, typo = best
        if end < n and not used[end]:
            size = size_of(low[end])
            if size is not None:
                experts_next = end + 1 < n and EXPERTS_RE.fullmatch(low[end + 1]) is not None
                if not experts_next and not models.agrees(model, size):
                    return None  # "llama3 70b" must not stop at an alias "llama3" of an 8B model
                if not experts_next:
                    end += 1  # "phi-4 14b": the size confirms the model
        return model, end, variant, typo

    def fuzzy_names(self) -> list[Found]:
        """2. Fuzzy, from a token that looks like a family name (a bounded number of tries: O(n) on any input);
        a family word whose name no model agrees with is an unknown name ('llama 4 scout 17b-16e')."""
        scan = self.scan
        low, used = scan.low, scan.used
        found: list[Found] = []
        tries = 0
        for i in compress(range(scan.n), map(not_, map(_NO_HEADS.__contains__, low))):
            if used[i] or not self.is_head(low[i]):
                continue
            tries += 1
            if tries > MAX_FUZZY_TRIES:
                break
            fuzzy = self.fuzzy_at(i)
            if fuzzy is None and word_kind(low[i], self.models) == FAMILY:
                fuzzy = self.unknown_at(i)
            if fuzzy is not None:
                self._take(fuzzy)
                found.append(fuzzy)
        return found

    def unlisted_names(self) -> list[Found]:
        """3. Names of families the registry does not list ('Kimi K2', 'GLM-4.5-Air'): unknown names."""
        scan = self.scan
        low, used = scan.low, scan.used
        found: list[Found] = []
        for i in range(scan.n):
            if used[i] or low[i][:1] not in _UNLISTED_INITIALS:  # the first letter rules most words out
                continue
            alpha = ALPHA_PREFIX_RE.match(low[i])
            if alpha is None or alpha.group() not in UNLISTED_FAMILIES:
                continue
            unknown = self.unknown_at(i)
            if unknown is not None:
                self._take(unknown)
                found.append(unknown)
        return found

    def unknown_at(self, i: int) -> Found | None:
        """The typed name from family word i, when it says more than the family ('kimi k2', not 'command')."""
        stop = self.names.end(i, i + 1)
        if stop - i < 2 and not any("0" <= ch <= "9" for ch in self.scan.low[i]):
            return None  # a family word alone is a word ("command", "whisper") or the whole family ("llama")
        return self._unknown(self.names.org(i), stop)

    def _unknown(self, start: int, stop: int) -> Found:
        """Tokens start..stop name a model no registry entry agrees with; find its size or its MoE size."""
        scan = self.scan
        low = scan.low
        size_at = None
        moe_written = None
        active_b = None
        experts = 0
        for j in range(start, stop):
            size = size_of(low[j])
            if size is None and _MILLIONS_RE.fullmatch(low[j]):  # "SmolLM2-360M-Instruct": the fields pass reads it
                size = "m"
            if size is None or size_at is not None or moe_written is not None:
                continue
            expert_match = EXPERTS_RE.fullmatch(low[j + 1]) if j + 1 < stop else None
            if expert_match and isinstance(size, float):  # "17b-16e": the total size is not in the name
                moe_written = scan.span(j, j + 1)
                active_b = size
                experts = int(expert_match.group(1))
            else:
                size_at = j
        span = scan.span(start, stop - 1)
        unknown = UnknownName(span, moe_written, active_b, experts)
        return Found(start, stop - start, span, None, None, False, unknown=unknown, size_at=size_at)

    def _take(self, found: Found) -> None:
        """Mark a found name's tokens used; an unknown name's size is left for the fields pass."""
        self.scan.use(found.start, found.length)
        if found.size_at is not None:
            self.scan.used[found.size_at] = False

    def window_end(self, i: int) -> int:
        """Where a model name starting at token i must end: before a keyword, a card, a precision, a context."""
        scan = self.scan
        low, flat, used, n = scan.low, scan.flat, scan.used, scan.n
        card_prefixes = self.vocabulary.card_prefixes
        j = i + 1
        while j < n and j - i < MAX_WINDOW and not used[j]:
            token = low[j]
            if token in STOP_WORDS or token in KEYWORDS or len(token) > MAX_NAME_TOKEN:
                break
            if flat[j] in card_prefixes and card_at(scan, self.vocabulary, j) is not None:
                break
            if precision_token(token) is not None:
                break
            if context_suffix_value(token) is not None:
                break  # "32k" is a context; a model name that contains one ("phi-3-mini-4k") matched exactly
            j += 1
        return j

    def fuzzy_at(self, i: int) -> Found | None:
        best = self._best_window(i, self.window_end(i))
        if best is None:
            return None
        _top, length, ranked, size = best
        # the name as typed may run on ("mistral large", "phi-3 medium"): every model must agree with all of it
        stop = self.names.end(i, i + length)
        typed = self.scan.low[i:stop]
        if stop > i + length:  # "deepseek r1 distill": the whole name scores the models, not "deepseek r1"
            typed_size = next((size_of(token) for token in typed if size_of(token) is not None), None)
            longer = self._scores("".join(self.scan.flat[i:stop]), stop - i, typed_size)
            rescored = sorted(longer.values(), key=lambda item: (-item[1], self.models.order.get(item[0].id, 0)))
            rescored = [(model, score) for model, score in rescored if agrees(self.models, model, typed)]
            if rescored:
                ranked, size = rescored, typed_size
        ranked = [(model, score) for model, score in ranked if agrees(self.models, model, typed)]
        named = self._said_more.get(i)
        if named is not None:  # "qwen3 32b 2507" is Qwen3 32B with a tag, never the 30B-A3B 2507 (32 ~ 30.5)
            ranked = [(model, score) for model, score in ranked if _same_size(model, named)]
        head = self.models.head_of(typed[0]) if typed else None
        if head is not None:  # "mistral" or "mistrall" is no typo of another name word ("magistral")
            ranked = [(model, score) for model, score in ranked if head in self.models.name_heads[model.id]]
        if not ranked:
            return None
        top = ranked[0][1]
        i = self.names.org(i)  # "deepseek-ai/DeepSeek-..." names one model
        length = stop - i
        span = self.scan.span(i, stop - 1)
        models = self.models
        if size is None:
            close = [model for model, score in ranked if score >= top - SIZELESS_MARGIN]
            close.sort(key=lambda model: models.order.get(model.id, 0))
            if len(close) > 1:
                return Found(i, length, span, None, close, True)
            return Found(i, length, span, close[0], None, True)
        # Without a version ("qwen 7b") every generation of that size is as likely, however its name scores
        # ("qwen27b" is closer to "qwen7b" than "qwen257b"): take the newest of the best one's family (the
        # registry lists a family oldest first). With one ("lama 3.1 70b") only the best score counts.
        low = self.scan.low
        versioned = any(digits(ch) for j in range(i, i + length) if size_of(low[j]) is None for ch in low[j])
        family = ranked[0][0].family
        if versioned:
            close = [model for model, score in ranked if score >= top - TIE_MARGIN]
        elif family:
            close = [model for model, _score in ranked if model.family == family]
        else:
            close = [model for model, score in ranked if score >= top - SIZED_MARGIN]
        return Found(i, length, span, models.last(close), None, True)

    def _best_window(self, i: int, end: int) -> _Window | None:
        """The window from token i (up to `end`) that scores best against the names; the longest on a tie."""
        models, low, flat = self.models, self.scan.low, self.scan.flat
        size_positions = [j for j in range(i, end) if size_of(low[j]) is not None]
        first_length = (size_positions[0] - i + 1) if size_positions else 1
        best: _Window | None = None
        for length in range(first_length, end - i + 1):
            query = "".join(flat[i:i + length])
            if len(query) < MIN_FUZZY_CHARS and not (length == 1 and query in models.sizeless_index):
                continue
            size = None
            for j in size_positions:
                if j < i + length:
                    size = size_of(low[j])
            scored = self._scores(query, length, size)
            if not scored:
                continue
            top = max(score for _, score in scored.values())
            if best is None or top >= best[0]:
                ranked = sorted(scored.values(), key=lambda item: (-item[1], models.order.get(item[0].id, 0)))
                best = (top, length, ranked, size)
        return best

    def _scores(self, query: str, length: int, size: float | str | None) -> dict[str, tuple[ModelShape, float]]:
        """Model id -> (model, best score) for one window."""
        models = self.models
        scored: dict[str, tuple[ModelShape, float]] = {}
        if size is None and length == 1:
            # one word and no size: only an exact family or name ("qwen3", "mixtral"); a fuzzy single word
            # ("command", "googled") is far more often an ordinary word than a model
            for model in models.sizeless_index.get(query, ()):
                scored[model.id] = (model, 100.0)
        elif size is None:
            choices, places = models.reachable(len(query), True, FUZZY_CUTOFF)
            for _choice, score, position in process.extract(
                query, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
            ):
                for model in models.sizeless_models[places[position]]:
                    if model.id not in scored or scored[model.id][1] < score:
                        scored[model.id] = (model, score)
        else:
            choices, places = models.reachable(len(query), False, FUZZY_CUTOFF)
            for _choice, score, position in process.extract(
                query, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
            ):
                model = models.choice_models[places[position]]
                if models.agrees(model, size) and (model.id not in scored or scored[model.id][1] < score):
                    scored[model.id] = (model, score)
        return scored
