"""The vocabulary of one catalog version: the registry's model names, the catalog's card names, its region names.

Built once when a catalog is put in service (bot: CatalogHolder; CLI: per run) and passed to every parse; frozen,
so a question never sees two catalog versions and nothing is read or cached while a question is parsed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from catalog.names import normalize_name
from catalog.schema import Card, Catalog, Region
from engine.models.registry import ModelShape, Registry, bundled_index, default_registry
from engine.parse.lexer import TOKEN_RE, flat, words_of
from engine.parse.numbers import context_suffix_value, size_of
from engine.parse.words import DISTINGUISHING, KEYWORDS, STOP_WORDS, UNLISTED_FAMILIES

if TYPE_CHECKING:
    from rapidfuzz import fuzz, process
else:  # imported at the first fuzzy comparison: a start that never fuzzes skips it
    from engine.parse.fuzzy import fuzz, process

HEAD_CUTOFF = 75.0  # a family word with a typo: "lama"/"llama" 88.9, "mistrall"/"mistral" 93.3, "quen"/"qwen" 75
ALPHA_PREFIX_RE = re.compile(r"[^\W\d_]+")
# Size words removed to get a model's size-free name: "70b", "0.5b", "1.6t", "8x7b", "a22b" (active params).
_SIZE_WORD_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?[bt]|[0-9]+x[0-9]+(?:\.[0-9]+)?b|a[0-9]+(?:\.[0-9]+)?b")
_VARIANT_WORDS = frozenset({"instruct", "chat", "hf", "base", "it", "pt", "python", "moe", "transformer"})
# Sizes inside a model's own names: "70b" in "llama-3.1-70b", not "3b" in "a3b" or "7b" in "8x7b".
_NAME_SIZE_RE = re.compile(r"(?<![a-z0-9.])([0-9]+(?:\.[0-9]+)?)b(?![a-z0-9])")
_NAME_MOE_RE = re.compile(r"(?<![a-z0-9])([0-9]+)x([0-9]+(?:\.[0-9]+)?)b(?![a-z0-9])")
_PIECE_RE = re.compile(r"[^\W\d_]+|[0-9]+(?:\.[0-9]+)*")  # "qwen2.5" -> "qwen", "2.5"
SIMILAR_CUTOFF = 60.0  # fuzz.WRatio for "did you mean": "llama4maverick" / "llama3170b" is 64
MAX_SIMILAR = 3

# A region name's first word -> (all its words, region id), longest first: {'dallas': ((('dallas',), 'DFW-1'),)}
RegionNames = Mapping[str, tuple[tuple[tuple[str, ...], str], ...]]


def _names(model: ModelShape) -> tuple[str, ...]:
    return (model.id, model.name, *model.aliases)


def _prefixes(keys: Iterable[str]) -> frozenset[str]:
    return frozenset(key[:i] for key in keys for i in range(1, len(key) + 1))


class ModelNames:
    """The registry's names as the parser compares them: exact keys, size-free keys, family words, sizes."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.exact: Mapping[str, ModelShape] = _exact_names(registry)
        self.prefixes = _prefixes(self.exact)
        self.choices: list[str] = list(self.exact)
        self.choice_models: list[ModelShape] = [self.exact[key] for key in self.choices]
        self.order: Mapping[str, int] = {model.id: index for index, model in enumerate(registry.models)}
        self.sizes: Mapping[str, tuple[float, ...]] = {model.id: _own_sizes(model) for model in registry.models}
        self.moe: Mapping[str, list[ModelShape]] = _moe_names(registry)
        # The words each model's own id and name start with ("magistral" for Magistral Small, never "mistral")
        self.name_heads: Mapping[str, frozenset[str]] = {model.id: _name_heads(model) for model in registry.models}
        heads = _family_heads(registry)
        self.heads = frozenset(word for words in heads.values() for word in words)
        self.heads_by_letter: Mapping[str, list[str]] = {letter: sorted(words) for letter, words in heads.items()}
        # Words a model name starts with, also of families the registry does not list yet ("kimi", "glm")
        self.families = self.heads | UNLISTED_FAMILIES
        # What each model's names are made of ("qwen", "2.5", "coder", "32b"): a typed name must agree with it
        self.pieces: Mapping[str, frozenset[str]] = {
            model.id: name_pieces((*_names(model), model.family)) for model in registry.models}
        self.all_pieces: frozenset[str] = frozenset().union(*self.pieces.values())  # a word some name is made of
        # Other releases of the same shape without an entry of their own: flat key -> (model, the release's name)
        self.variants: Mapping[str, tuple[ModelShape, str]] = _variant_names(registry)
        self.variant_pieces: Mapping[str, frozenset[str]] = {
            name: name_pieces((name,)) for _model, name in self.variants.values()}
        self.prefixes = self.prefixes | _prefixes(self.variants)
        # The same names without their sizes ("llama 3.1 70b" -> "llama31"), for a window that names no size:
        # "llama 3.1" is then equally close to 8B, 70B and 405B, and so ambiguous.
        self.sizeless_index: Mapping[str, list[ModelShape]] = _sizeless_names(registry)
        self.sizeless_choices: list[str] = list(self.sizeless_index)
        self.sizeless_models: list[list[ModelShape]] = [self.sizeless_index[key] for key in self.sizeless_choices]

    def reachable(self, length: int, sizeless: bool, cutoff: float) -> tuple[list[str], list[int]]:
        """The choices (sizeless or not) a query of `length` characters can score `cutoff` against with
        fuzz.ratio, and their places in the whole list. fuzz.ratio is 100 * (1 - indel distance / (m + n)), at
        most 200 * min(m, n) / (m + n): a name much shorter or longer than the query can never reach the
        cutoff, and comparing it costs as much as the rest of the parse. The bound is taken one
        point lower, so no choice that could reach the cutoff is left out. Built once per length and list, kept
        beside the index (not in it: the index stays what the registry builds, compiled or not)."""
        index = _REACHABLE.get(self)
        if index is None:
            index = _REACHABLE[self] = {}
        key = (length, sizeless, cutoff)
        found = index.get(key)
        if found is None:
            choices = self.sizeless_choices if sizeless else self.choices
            places = [place for place, choice in enumerate(choices)
                      if 200 * min(length, len(choice)) >= (cutoff - 1) * (length + len(choice))]
            found = index[key] = ([choices[place] for place in places], places)
        return found

    def is_head(self, token: str) -> bool:
        """Does the token start like a model family name ('llama3', 'qwen2.5', 'lama')?"""
        if "0" <= token[:1] <= "9":
            return False  # no letters before its digits ('70b', '4090'): the look below would find none
        alpha_match = ALPHA_PREFIX_RE.match(token)
        if not alpha_match:
            return False
        alpha = alpha_match.group()
        if alpha in self.heads:
            return True
        if not 3 <= len(alpha) <= 12 or alpha in STOP_WORDS or alpha in KEYWORDS:
            return False
        candidates = self.heads_by_letter.get(alpha[0])
        if not candidates:
            return False
        return process.extractOne(alpha, candidates, scorer=fuzz.ratio, score_cutoff=HEAD_CUTOFF) is not None

    def head_of(self, token: str) -> str | None:
        """The name word a token starts as: itself when typed right ('mistral'), else the closest one by the
        same first letter ('mistrall' -> 'mistral', 'lama' -> 'llama'); None for no name word."""
        alpha_match = ALPHA_PREFIX_RE.match(token)
        if not alpha_match:
            return None
        alpha = alpha_match.group()
        if alpha in self.heads:
            return alpha
        best = process.extractOne(alpha, self.heads_by_letter.get(alpha[0], ()), scorer=fuzz.ratio,
                                  score_cutoff=HEAD_CUTOFF)
        return best[0] if best else None

    def agrees(self, model: ModelShape, size: float | str) -> bool:
        """Does the model have this size ('8x7b', or within 10 % of a number of billions)?"""
        if isinstance(size, str):  # "8x7b"
            return model in self.moe.get(size, ())
        return any(abs(own - size) <= 0.1 * size for own in self.sizes.get(model.id, ()))

    def similar(self, text: str) -> list[str]:
        """Up to three registry model names closest to a name nobody knows ('did you mean'); of its family when
        the name starts with one, none for a family the registry does not list ('Kimi K2')."""
        query = normalize_name(text)
        names: list[str] = []
        first = ALPHA_PREFIX_RE.match(text.lower())
        family = first.group() if first else ""
        if not query or (family in UNLISTED_FAMILIES and family not in self.heads):
            return names
        distinct = {word for word in words_of(text) if word in DISTINGUISHING}  # "r1 distill": distills only
        for _choice, _score, position in process.extract(query, self.choices, scorer=fuzz.WRatio,
                                                          score_cutoff=SIMILAR_CUTOFF, limit=60):
            model = self.choice_models[position]
            name = model.name
            pieces = self.pieces.get(model.id, frozenset())
            if (family in self.heads and family not in pieces) or not distinct <= pieces:
                continue
            if name not in names:
                names.append(name)
                if len(names) == MAX_SIMILAR:
                    break
        return names

    def first(self, models: Iterable[ModelShape]) -> ModelShape:
        return min(models, key=lambda model: self.order.get(model.id, 1 << 30))

    def last(self, models: Iterable[ModelShape]) -> ModelShape:
        return max(models, key=lambda model: self.order.get(model.id, -1))


# ModelNames -> (query length, sizeless, cutoff) -> the reachable choices and their places; dies with its index
_REACHABLE: WeakKeyDictionary[ModelNames, dict[tuple[int, bool, float], tuple[list[str], list[int]]]] = \
    WeakKeyDictionary()


def _exact_names(registry: Registry) -> dict[str, ModelShape]:
    exact: dict[str, ModelShape] = dict(registry.by_key)
    for model in registry.models:  # "command r+" as the lexer sees it: "commandr" ("+" is not a word)
        for raw in _names(model):
            key = "".join(flat(word) for word in words_of(raw))
            if key and key not in exact:
                exact[key] = model
    return exact


def name_pieces(names: Iterable[str]) -> frozenset[str]:
    """The words and version numbers names are made of: 'Qwen2.5-Coder-32B' -> qwen2.5, qwen, 2.5, coder, 32b."""
    pieces: set[str] = set()
    for raw in names:
        for word in words_of(raw):
            if context_suffix_value(word) is not None:
                continue  # "4k" in "phi-3-mini-4k" is its context, not a version
            pieces.add(word)
            if size_of(word) is None:
                pieces.update(_PIECE_RE.findall(word))
    return frozenset(pieces)


def _variant_names(registry: Registry) -> dict[str, tuple[ModelShape, str]]:
    variants: dict[str, tuple[ModelShape, str]] = {}
    for model in registry.models:
        for name in model.variants:
            key = "".join(flat(word) for word in words_of(name))
            if key:
                variants.setdefault(key, (model, name))
    return variants


def _own_sizes(model: ModelShape) -> tuple[float, ...]:
    sizes = {float(model.params_b)}
    for raw in _names(model):
        for match in _NAME_SIZE_RE.finditer(raw.lower()):
            sizes.add(float(match.group(1)))
    return tuple(sorted(sizes))


def _moe_names(registry: Registry) -> dict[str, list[ModelShape]]:
    """'8x7b' -> the models that name themselves so (Mixtral 8x7B)."""
    moe: dict[str, list[ModelShape]] = {}
    for model in registry.models:
        for raw in _names(model):
            for match in _NAME_MOE_RE.finditer(raw.lower()):
                bucket = moe.setdefault(f"{match.group(1)}x{match.group(2)}b", [])
                if all(other is not model for other in bucket):  # == compares every field of the shapes
                    bucket.append(model)
    return moe


def _name_heads(model: ModelShape) -> frozenset[str]:
    heads = set()
    for raw in (model.id, model.name):
        first = TOKEN_RE.search(raw.lower())
        alpha = ALPHA_PREFIX_RE.match(first.group()) if first else None
        if alpha:
            heads.add(alpha.group())
    return frozenset(heads)


def _family_heads(registry: Registry) -> dict[str, set[str]]:
    """The words a model name starts with ('llama', 'qwen', 'mixtral') and the family names, by first letter."""
    by_letter: dict[str, set[str]] = {}
    for model in registry.models:
        starts = [TOKEN_RE.search(raw.lower()) for raw in _names(model) if raw in (model.id, model.name)]
        for first in starts:
            alpha = ALPHA_PREFIX_RE.match(first.group()) if first else None
            if alpha and len(alpha.group()) >= 2 and alpha.group() not in STOP_WORDS:
                by_letter.setdefault(alpha.group()[0], set()).add(alpha.group())
        family = ALPHA_PREFIX_RE.match(model.family.lower()) if model.family else None
        if family and len(family.group()) >= 2:
            by_letter.setdefault(family.group()[0], set()).add(family.group())
    return by_letter


def _sizeless_names(registry: Registry) -> dict[str, list[ModelShape]]:
    sizeless: dict[str, list[ModelShape]] = {}
    for model in registry.models:
        for raw in _names(model):
            words = [word for word in TOKEN_RE.findall(raw.lower().replace(":", " ").replace("/", " "))
                     if not _SIZE_WORD_RE.fullmatch(word) and word not in _VARIANT_WORDS]
            key = normalize_name("".join(words))
            if key:
                bucket = sizeless.setdefault(key, [])
                if all(other is not model for other in bucket):  # == compares every field of the shapes
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
    return sizeless


@dataclass(frozen=True, slots=True, weakref_slot=True)  # weakref: engine.parse keeps its memo per vocabulary
class Vocabulary:
    """What names a question can use: models (registry), cards and regions (one catalog). Build with `build`."""

    models: ModelNames
    card_keys: frozenset[str]  # card ids, names and aliases, normalize_name'd
    card_prefixes: frozenset[str]
    region_ids: frozenset[str]  # the regions the cards are offered in ('DFW-1'): 'in DFW-1' needs no 'region'
    region_names: RegionNames
    card_plurals: frozenset[str] = frozenset()  # each card key with an "s" ('h100s'): a card name all the same

    @classmethod
    def build(cls, registry: Registry, cards: Iterable[Card] = (),
              regions: Mapping[str, str] | Iterable[Region] = ()) -> Vocabulary:
        """`regions`: region names -> ids ({'Dallas': 'DFW-1'}) or a catalog's regions. A name counts only for a
        region the cards are offered in, when the cards name any ('in Dallas' means nothing to a card list
        that is offered in Ashburn only)."""
        card_keys: set[str] = set()
        offered: set[str] = set()
        for card in cards:
            card_keys.update(key for key in map(normalize_name, (card.id, card.name, *card.aliases)) if key)
            offered.update(region.upper() for region in card.regions)
            offered.update(region.upper() for region in card.stock or {})
        if not isinstance(regions, Mapping):
            named: dict[str, str] = {}
            for region in regions:
                named.setdefault(region.name, region.id)
            regions = named
        return cls(_model_names(registry), frozenset(card_keys), _prefixes(card_keys), frozenset(offered),
                   _region_names(regions, offered or None), frozenset(key + "s" for key in card_keys))

    @classmethod
    def of_catalog(cls, catalog: Catalog, registry: Registry | None = None) -> Vocabulary:
        """The vocabulary of one catalog: its cards and its regions (and the bundled registry by default)."""
        return cls.build(registry if registry is not None else default_registry(), catalog.cards, catalog.regions)


def _model_names(registry: Registry) -> ModelNames:
    """The bundled registry's index is built once per run."""
    if registry is default_registry():
        return bundled_index("engine-parse-model-names", ModelNames)
    return ModelNames(registry)


def _region_names(regions: Mapping[str, str], allowed: set[str] | None) -> RegionNames:
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for name, region_id in regions.items():
        region = str(region_id).upper()
        if allowed is not None and region not in allowed:
            continue
        words = tuple(words_of(str(name)))
        if not words or words[0] in STOP_WORDS:
            continue
        bucket = index.setdefault(words[0], [])
        if (words, region) not in bucket:
            bucket.append((words, region))
    return {first: tuple(sorted(bucket, key=lambda item: -len(item[0]))) for first, bucket in index.items()}


@cache
def default_vocabulary() -> Vocabulary:
    """What `parse(text)` reads without a vocabulary: the bundled registry's models, no cards, no regions.

    Built once on first use from the engine's bundled data (never a catalog: the engine does not load one)."""
    return Vocabulary.build(default_registry())
