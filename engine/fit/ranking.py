"""The selection policy's ranking order of every card x set size, built once per catalog, and one request's walk
through it (the order does not depend on the request, so it is not sorted per question).

Within one set size the policy ranks by monthly price, then more spare memory, then more bandwidth; spare memory
is the set's VRAM minus the request's total, so "more spare" is "more VRAM" whatever the request. The "cheapest"
policy ranks single cards first, then every set by that key; "fewest" ranks by set size first. Python's sort is
stable, so ties keep the order of card x count as the catalog lists them, as the per-request sort did.

For each set size the entries are also kept in lists by a floor of per-card VRAM, so that a request that needs
80 GB per card starts its walk among the cards that have it (a 1,500-card catalog does not read every card).
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from catalog.schema import TRAINING_INTERCONNECTS, Card, Catalog
from engine.memo import by_identity
from engine.notes import Note
from engine.sizing.rule import Requirement
from engine.speed.estimate import SpeedEstimate

STANDARD_SET_SIZES = (1, 2, 4, 8)
CHUNK = 8  # at most this many entries checked at once by an unbounded walk; its first check reads one (the
# first entry at or above the VRAM floor is usually valid, and most answers need one per count), then doubles
MAX_LEVELS = 48  # VRAM floors per set size; more distinct sizes than this share floors (the walk re-checks)
MAX_REGION_STAIRS = 64  # (count, region) keys kept per catalog; the region is the parser's, from the catalog


@dataclass(frozen=True, slots=True)
class Entry:
    """One card x count that can be rented (its set sizes, one host), with what ranking and the rules read."""

    card: Card
    count: int
    monthly_usd: float
    vram_gb: float  # per card
    vram_total_gb: float
    bandwidth_total: float
    fp8: bool
    training_ok: bool  # the interconnect multi-GPU full fine-tuning needs (a single card needs none)
    position: int  # in the policy's ranking of every entry of the catalog


@dataclass(frozen=True, slots=True)
class Walk:
    """One set size's entries in ranking order, and the same order restricted to each VRAM floor."""

    count: int
    entries: tuple[Entry, ...]
    floors: tuple[float, ...]  # ascending
    by_floor: tuple[tuple[Entry, ...], ...]  # by_floor[i]: the entries with vram_gb >= floors[i]
    prices: tuple[tuple[float, ...], ...]  # prices[i]: by_floor[i]'s monthly prices (ascending, as ranked)
    exact: bool  # every distinct VRAM size is a floor

    def from_need(self, need_gb: float) -> tuple[tuple[Entry, ...], tuple[float, ...]]:
        """The entries that may hold `need_gb` per card, in ranking order (a superset: the caller checks), and
        their prices."""
        if not self.floors:
            return (), ()
        if self.exact:
            i = bisect_left(self.floors, need_gb)
            return (self.by_floor[i], self.prices[i]) if i < len(self.floors) else ((), ())
        i = max(bisect_right(self.floors, need_gb) - 1, 0)
        return self.by_floor[i], self.prices[i]


@dataclass(frozen=True, slots=True)
class Stairs:
    """The entries of one count that the rules treat alike (same VRAM, FP8, interconnect class; in the region
    asked for), kept only where the bandwidth rises along the price order: for a price bound, the last step at or
    below it is the class's fastest layout, its cheapest among equals, the earliest ranked among those."""

    vram_gb: float
    vram_total_gb: float
    fp8: bool
    training_ok: bool
    prices: tuple[float, ...]
    steps: tuple[Entry, ...]
    members: tuple[Entry, ...]  # all of the class, by (price, ranking)

    def fastest(self, price: float, other_than: tuple[str, int] | None = None) -> Entry | None:
        i = bisect_right(self.prices, price) - 1
        found = self.steps[i] if i >= 0 else None
        if found is None or other_than is None or (found.card.id, found.count) != other_than:
            return found
        best = None  # the step is the layout to leave out: the class's next fastest, read member by member
        for entry in self.members:
            if entry.monthly_usd > price:
                break
            if (entry.card.id, entry.count) != other_than and (best is None
                                                               or entry.bandwidth_total > best.bandwidth_total):
                best = entry
        return best


def _stairs(entries: tuple[Entry, ...]) -> tuple[Stairs, ...]:
    classes: dict[tuple[float, bool, bool], list[Entry]] = {}
    for entry in entries:
        classes.setdefault((entry.vram_gb, entry.fp8, entry.training_ok), []).append(entry)
    made = []
    for (vram, fp8, training), members in classes.items():
        steps: list[Entry] = []
        ordered = tuple(sorted(members, key=lambda e: (e.monthly_usd, e.position)))
        for entry in ordered:
            if not steps or entry.bandwidth_total > steps[-1].bandwidth_total:
                steps.append(entry)
        made.append(Stairs(vram, members[0].vram_total_gb, fp8, training, tuple(e.monthly_usd for e in steps),
                           tuple(steps), ordered))
    return tuple(made)


@dataclass(frozen=True, slots=True)
class Plan:
    """A catalog's ranking, per set size (ascending), and every (price, count, id) option in price order."""

    policy: str
    walks: tuple[Walk, ...]
    by_price: tuple[tuple[float, int, str, Card], ...]  # every card x count <= host, cheapest first
    _stairs: dict[tuple[int, str | None], tuple[Stairs, ...]]  # built on first use per count and region
    _usable: dict[tuple[int, str | None, bool, bool], tuple[tuple[float, ...], tuple[Stairs, ...]]]

    def stairs(self, walk: Walk, region: str | None, rules: Rules) -> tuple[Stairs, ...]:
        """The count's classes for the fastest-layout search, restricted to what the region offers."""
        key = (walk.count, region)
        found = self._stairs.get(key)
        if found is None:
            entries = walk.entries
            if region:
                entries = tuple(entry for entry in entries if rules.in_region(entry.card, walk.count))
            if len(self._stairs) >= MAX_REGION_STAIRS:
                self._stairs.clear()
            found = self._stairs[key] = _stairs(entries)
        return found

    def usable_stairs(self, walk: Walk, rules: Rules) -> tuple[tuple[float, ...], tuple[Stairs, ...]]:
        """stairs() without the classes the FP8 and training-interconnect rules exclude, cheapest first step
        first, with those first prices (the search stops at the first class dearer than its bound)."""
        region, needs_fp8, full = rules.region, rules.needs_fp8, rules.full
        key = (walk.count, region, needs_fp8, full)
        found = self._usable.get(key)
        if found is None:
            kept = sorted((stairs for stairs in self.stairs(walk, region, rules)
                           if not (needs_fp8 and not stairs.fp8 or full and not stairs.training_ok)),
                          key=lambda stairs: stairs.prices[0])
            if len(self._usable) >= MAX_REGION_STAIRS:
                self._usable.clear()
            found = self._usable[key] = (tuple(stairs.prices[0] for stairs in kept), tuple(kept))
        return found


def _walk(count: int, entries: list[Entry]) -> Walk:
    sizes = sorted({entry.vram_gb for entry in entries})
    exact = len(sizes) <= MAX_LEVELS
    floors = sizes if exact else [sizes[i * len(sizes) // MAX_LEVELS] for i in range(MAX_LEVELS)]
    by_floor = tuple(tuple(entry for entry in entries if entry.vram_gb >= floor) for floor in floors)
    prices = tuple(tuple(entry.monthly_usd for entry in floor) for floor in by_floor)
    return Walk(count, tuple(entries), tuple(floors), by_floor, prices, exact)


# Built once per catalog object (catalogs are immutable): without it `cardfit ask --json -` answers about 1,300
# distinct questions/s, not 3,400 (target 1,000: benchmarks/bench_ask.py).
@by_identity()
def plan(catalog: Catalog) -> Plan:
    """The catalog's ranking of every card x standard set size, and its walks by set size."""
    host = catalog.selection.max_gpus_per_host
    sizes = [n for n in STANDARD_SET_SIZES if n <= host]
    listed: list[tuple[Card, int, float]] = []  # count-major, then the catalog's order: the old sort's input
    for count in sizes:
        for card in catalog.cards:
            if count in card.set_sizes:
                listed.append((card, count, catalog.set_price_usd(card, count)[1]))

    def key(item: tuple[Card, int, float]) -> tuple[float, ...]:
        card, count, monthly = item
        price = (monthly, -card.vram_gb * count, -card.bandwidth_gbps * count)
        if catalog.selection.policy == "cheapest":
            return (0.0 if count == 1 else 1.0, *price)
        return (float(count), *price)

    ranked = sorted(listed, key=key)
    entries = [Entry(card, count, monthly, card.vram_gb, card.vram_gb * count, card.bandwidth_gbps * count,
                     card.fp8, count == 1 or card.interconnect in TRAINING_INTERCONNECTS, position)
               for position, (card, count, monthly) in enumerate(ranked)]
    walks = tuple(_walk(count, [entry for entry in entries if entry.count == count]) for count in sizes)
    by_price = sorted(((catalog.set_price_usd(card, n)[1], n, card.id, card) for card in catalog.cards
                       for n in sizes), key=lambda option: option[:3])
    return Plan(catalog.selection.policy, walks, tuple(by_price), {}, {})


class SetFacts(NamedTuple):
    """What a catalog says of `count` x a card whatever the request: prices, discount, bandwidth per dollar."""

    hourly_usd: float
    monthly_usd: float
    discount_percent: float
    gbps_per_usd_month: float


def set_facts(catalog: Catalog, card: Card, count: int) -> SetFacts:
    """The catalog's prices for `count` x `card`."""
    hourly, monthly = catalog.set_price_usd(card, count)
    return SetFacts(hourly, monthly, catalog.discount_percent(count),
                    card.bandwidth_gbps / catalog.monthly_list_price_usd(card))


def _position(candidate: Candidate) -> int:
    return candidate.position


def merged(streams: list[Iterator[Candidate]], policy: str) -> Iterator[Candidate]:
    """Per-count streams in the policy's order: sets by price across counts ("cheapest"), else count by count."""
    if streams and policy == "cheapest":
        first, *sets = streams
        yield from first
        yield from heapq.merge(*sets, key=lambda entry: entry.position)
        return
    for stream in streams:
        yield from stream


@dataclass(slots=True)
class Candidate:
    """A valid layout's ranking numbers, built cheaply (not frozen: a frozen dataclass pays object.__setattr__
    per field, and no one changes a candidate); only the few shown become full Layouts."""

    card: Card
    count: int
    monthly_usd: float
    spare_gb: float
    tight: bool
    decode_tokens_per_s: float | None
    position: int = 0  # in the catalog's ranking: the order of ties
    # The calibrated speed, worked out only for the few candidates shown or compared (engine.speed)
    estimate: Callable[[Card, int], SpeedEstimate | None] | None = field(default=None, compare=False)

    @property
    def speed(self) -> SpeedEstimate | None:
        return self.estimate(self.card, self.count) if self.estimate is not None else None


class Rules(Protocol):
    """What the walk reads of engine.fit.selection's per-request rules."""

    needs_fp8: bool
    full: bool
    region: str | None

    def tensor_parallel(self, count: int) -> Note | None: ...
    def in_region(self, card: Card, count: int) -> bool: ...


class Ranked:
    """The valid layouts for one request in the policy's order, found lazily along the catalog's plan: the first
    fitting entry is what most answers need, not every card x count."""

    __slots__ = ("plan", "requirement", "kv_heads", "rules", "total", "decode_base", "tight_single", "tight_card",
                 "speed", "layer_split", "_streams", "_counts", "_order")

    def __init__(self, plan: Plan, requirement: Requirement, kv_heads: int | None, rules: Rules,
                 decode_base: float, tight_single: float, tight_card: float,
                 speed: Callable[[Card, int], SpeedEstimate | None] | None = None, layer_split: bool = False) -> None:
        self.plan = plan
        self.requirement = requirement
        self.kv_heads = kv_heads
        self.rules = rules
        self.total = requirement.total_gb
        self.decode_base = decode_base  # resident weights read per token; 0: no decode ceiling
        self.tight_single = tight_single
        self.tight_card = tight_card
        self.speed = speed  # a layout's calibrated speed (engine.speed); None: no decode figure
        # llama.cpp's layer split reads the weights one card after another: a set decodes no faster than its card
        self.layer_split = layer_split
        self._streams: dict[int, Stream] = {}
        self._counts: list[Stream] | None = None
        self._order: tuple[list[Candidate], Iterator[Candidate]] | None = None

    def stream(self, walk: Walk) -> Stream:
        found = self._streams.get(walk.count)
        if found is None:
            found = self._streams[walk.count] = Stream(self, walk)
        return found

    def counts(self) -> list[Stream]:
        """One stream per set size the tensor-parallel rule allows (decided once per count, not per card)."""
        if self._counts is None:
            self._counts = [self.stream(walk) for walk in self.plan.walks
                            if walk.count == 1 or self.rules.tensor_parallel(walk.count) is None]
        return self._counts

    def __iter__(self) -> Iterator[Candidate]:
        """Every valid layout in the policy's order; the merge runs once, later passes read what it found."""
        if self._order is None:
            self._order = ([], merged([iter(stream) for stream in self.counts()], self.plan.policy))
        found, source = self._order
        yield from found
        index = len(found)
        while True:
            if index < len(found):  # another pass moved the merge on meanwhile
                yield found[index]
                index += 1
                continue
            item = next(source, None)
            if item is None:
                return
            found.append(item)
            index += 1
            yield item

    def first(self) -> Candidate | None:
        """The first valid layout in the policy's order, read off each count's first (no merge: most answers
        need only this one)."""
        if self._order is not None:
            return next(iter(self), None)
        streams = self.counts()
        if self.plan.policy == "cheapest":
            if streams and streams[0].count == 1:
                single = streams[0].first()
                if single is not None:
                    return single
                streams = streams[1:]
            firsts = [found for found in (stream.first() for stream in streams) if found is not None]
            return min(firsts, key=_position) if firsts else None
        for stream in streams:
            found = stream.first()
            if found is not None:
                return found
        return None

    def fastest(self, price: float, other_than: tuple[str, int]) -> Candidate | None:
        """The fastest valid layout at most `price` a month other than the (card id, count) given: the most
        bandwidth (decode speed is bandwidth over the same weights), then the cheapest, then the earliest ranked,
        from each rule class's fastest."""
        best: Entry | None = None
        best_need = 0.0
        rules, total, plan = self.rules, self.total, self.plan
        # The key (-bandwidth, price, position) orders distinct entries totally, so the order the classes are
        # read in does not change the winner: they are read cheapest first step first, up to the price bound.
        for stream in self.counts():
            walk, need = stream.walk, stream.need
            firsts, usable = plan.usable_stairs(walk, rules)
            for stairs in usable[:bisect_right(firsts, price)]:
                if stairs.vram_total_gb - total < 0 or stairs.vram_gb < need:
                    continue
                entry = stairs.fastest(price, other_than if other_than[1] == walk.count else None)
                if entry is not None and (best is None or (-self._bandwidth(entry), entry.monthly_usd, entry.position)
                                          < (-self._bandwidth(best), best.monthly_usd, best.position)):
                    best, best_need = entry, need
        return next(iter(self.valid((best,), best_need)), None) if best is not None else None

    def _bandwidth(self, entry: Entry) -> float:
        """What one stream's decode reads at: every card's bandwidth at once, or one card's under a layer split."""
        return entry.card.bandwidth_gbps if self.layer_split else entry.bandwidth_total

    def need_gb(self, count: int) -> float:
        return self.requirement.per_gpu_gb(count, self.kv_heads) if count > 1 else self.total

    def valid(self, entries: tuple[Entry, ...], need: float) -> list[Candidate]:
        """The entries (of one count) that hold the request per card and in total and meet the rules."""
        total, rules, found = self.total, self.rules, []
        needs_fp8, full, region, decode_base = rules.needs_fp8, rules.full, rules.region, self.decode_base
        layer_split, estimate = self.layer_split, self.speed if decode_base > 0 else None
        for entry in entries:
            spare = entry.vram_total_gb - total
            if spare < 0 or entry.vram_gb < need:
                continue
            if needs_fp8 and not entry.fp8 or full and not entry.training_ok:
                continue
            count = entry.count
            if region and not rules.in_region(entry.card, count):
                continue
            tight = (entry.vram_gb - need < self.tight_card) if count > 1 else spare < self.tight_single
            # The ceiling (engine.speed.estimate.ceiling_decode): every card's bandwidth at once, or one card's
            # under a layer split
            decode = (entry.card.bandwidth_gbps if layer_split else entry.bandwidth_total) / decode_base \
                if decode_base > 0 else None
            found.append(Candidate(entry.card, count, entry.monthly_usd, spare, tight, decode, entry.position,
                                   estimate))
        return found


class Stream:
    """One count's valid layouts, checked a few entries at a time as a walk needs them and kept, so a second
    pass costs no rule checks; a walk bounded by a price checks only the entries up to it."""

    __slots__ = ("count", "walk", "need", "found", "_ranked", "_entries", "_prices", "_next")

    def __init__(self, ranked: Ranked, walk: Walk) -> None:
        self.count = walk.count
        self.walk = walk
        self.need = ranked.need_gb(walk.count)
        self.found: list[Candidate] = []
        self._ranked = ranked
        self._entries, self._prices = walk.from_need(self.need)
        self._next = 0  # the first entry not checked yet

    def _fill(self, end: int) -> bool:
        start = self._next
        if start >= len(self._entries):
            return False
        if end > start:
            self._next = end
            self.found += self._ranked.valid(self._entries[start:end], self.need)
        return True

    def first(self) -> Candidate | None:
        """The count's first valid layout (its cheapest)."""
        if self.found or self._fill(self._next + 1) and self.found:
            return self.found[0]
        return next(iter(self), None)

    def first_below(self, price: float) -> Candidate | None:
        """first() when it costs less than `price` a month, else None: only the entries below the price are
        checked (a set dearer than the single card is most answers' case, and costs no rule check).
        The count's entries are in price order, so its first valid one below the price is among them."""
        bound = bisect_left(self._prices, price)
        while not self.found and self._next < bound:  # in chunks, as __iter__: a big catalog has many below it
            self._fill(min(bound, self._next + min(max(self._next, 1), CHUNK)))
        found = self.found
        return found[0] if found and found[0].monthly_usd < price else None

    def __iter__(self) -> Iterator[Candidate]:
        index = 0
        while True:
            found = self.found
            while index < len(found):
                yield found[index]
                index += 1
            if not self._fill(self._next + min(max(self._next, 1), CHUNK)):
                return
