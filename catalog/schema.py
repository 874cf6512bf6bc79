"""The provider catalog schema: cards, prices, sizing and selection policies, coins, top-up link.

One description: frozen dataclasses, each field with the rules a catalog file must pass (its bounds, lengths and
checks, as pydantic metadata in the annotations). catalog.validation validates a file's data against them; the
engine reads the objects. The rules are named, not built, here (Rule), so reading a catalog that was validated
before (the prepared copy of a bundled one, catalog.loader) never imports pydantic.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from typing import Annotated, Any, Literal

from catalog.names import normalize_name

Interconnect = Literal["nvswitch", "nvlink", "infinity-fabric", "nvlink-bridge", "pcie"]
# Interconnects good enough for an all-reduce in every training step (DESIGN: "NVLink/NVSwitch-class").
TRAINING_INTERCONNECTS = frozenset({"nvswitch", "nvlink", "infinity-fabric"})
# The precisions the engine has bytes for (engine.sizing.rule PRECISION_BYTES / KV_PRECISION_BYTES; a test keeps
# them equal): a policy default outside them would pass `catalog check` and fail every answer.
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
KvPrecision = Literal["fp32", "fp16", "bf16", "fp8", "int8"]

# The limits: wide enough for any GPU rented today, narrow enough that no answer overflows, divides by ~0 or
# builds a message nobody can read. The bundled catalogs' largest (seed 000 section 06): 192 GB (MI300X),
# 8,000 GB/s (B200), 900 GB/s NVLink (H200), $190-$3,890/month; seed 004: $0.28-$4.61/hour.
LIMITS: dict[str, tuple[float, float]] = {
    "vram_gb": (1, 10_000),                 # GB per card
    "bandwidth_gbps": (1, 100_000),         # GB/s per card (12x a B200)
    "interconnect_gbps": (1, 100_000),      # GB/s per card
    "price_hourly_usd": (0.01, 1_000),      # a cent: the smallest amount a top-up link can charge
    "price_monthly_usd": (10, 1_000_000),   # $7.20 = a cent an hour; $1M ~ $1,389/hour
    "stock": (0, 1_000_000),                # free cards per region
    "overhead_gb": (0, 1_000),
    "headroom_factor": (1, 10),
    "tight_gb": (0, 1_000),
    "discount_percent": (0, 90),            # exclusive of 0; no volume discount gives away 90 %+
    "hours_per_month": (1, 744),            # 31 x 24
    "minimum_term_hours": (0, 8_784),       # a leap year
    "context_tokens": (1, 16_777_216),      # engine.sizing.sequence.MAX_CONTEXT_TOKENS
    "batch": (1, 4_096),                    # engine.sizing.sequence.MAX_BATCH
    "set_size": (1, 64),                    # engine.parse.errors.MAX_GPU_COUNT
    "tflops": (1, 100_000),                 # dense tensor TFLOPS per card (about 20x a B200's FP8)
}
MAX_URL_TEMPLATE_CHARS = 512  # + amount (11), coin (10), 16-char ref: every link well under 600 characters
MAX_CARDS = 200  # selection tries every card x set size per answer; the seeds have 15 and 7
PLACEHOLDERS = frozenset({"amount", "coin", "ref"})  # of the top-up link's url_template


class Rule:
    """pydantic metadata named in an annotation (`Rule("Field", ge=1)` is `pydantic.Field(ge=1)`; `a + b` applies
    both as one Annotated would), made only when pydantic validates the field: pydantic's import is ~60 ms, and
    `cardfit ask` reads a bundled catalog that `make install` validated without it (within 150 ms of
    `python -c pass`)."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.parts: tuple[tuple[str, tuple[Any, ...], dict[str, Any]], ...] = ((name, args, kwargs),)

    def __add__(self, other: Rule) -> Rule:
        both = Rule.__new__(Rule)
        both.parts = self.parts + other.parts
        return both

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        import pydantic

        made = tuple(getattr(pydantic, name)(*args, **kwargs) for name, args, kwargs in self.parts)
        return handler(Annotated[(source, *made)])


def within(name: str, *, exclusive_low: bool = False) -> Rule:
    """The bounds LIMITS[name]."""
    low, high = LIMITS[name]
    return Rule("Field", gt=low, le=high) if exclusive_low else Rule("Field", ge=low, le=high)


# Numbers the service can serve: finite, never a boolean (YAML `true` is not 1 GB), an int where a float is
# asked is fine. Each field adds its own bounds.
Number = Annotated[float, Rule("Strict"), Rule("AllowInfNan", False)]
Count = Annotated[int, Rule("Strict")]
Flag = Annotated[bool, Rule("Strict")]
Name = Annotated[str, Rule("StringConstraints", min_length=1, max_length=64)]
Coin = Annotated[str, Rule("StringConstraints", pattern=r"^[A-Z0-9][A-Z0-9._-]{0,9}$")]
Id = Annotated[str, Rule("Field", pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]


def _set_sizes_valid(value: tuple[int, ...]) -> tuple[int, ...]:
    if not value:
        raise ValueError("needs at least one allowed set size")
    low, high = (int(limit) for limit in LIMITS["set_size"])
    for count in value:
        if count < low or count > high:
            raise ValueError(f"set size {count} is outside {low}..{high}")
    return tuple(sorted(set(value)))


# Not in a URL (RFC 3986) and not safe inside href="...": whitespace, controls, quotes, angle brackets.
_URL_FORBIDDEN = re.compile(r'[\s"<>\\^`|\x00-\x1f\x7f]')


def _url_template_valid(value: str) -> str:
    if not value.startswith("https://"):
        raise ValueError("must be an https:// URL")
    import string  # here: only validation needs it, never `cardfit ask`

    names = set()
    for _, name, spec, conversion in string.Formatter().parse(value):  # ValueError on a lone brace
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            raise ValueError(f"unknown placeholder {{{name}}}; allowed: {{amount}}, {{coin}}, {{ref}}")
        if spec or conversion:
            raise ValueError(f"placeholder {{{name}}} takes no format spec or conversion "
                             f"(write {{{name}}} alone)")
        names.add(name)
    if "amount" not in names:
        raise ValueError("needs an {amount} placeholder")
    bad = _URL_FORBIDDEN.search(value)
    if bad:
        raise ValueError(f"{bad.group()!r} at position {bad.start()} is not allowed in a URL")
    if re.search(r"%7[bd]", value, re.IGNORECASE):  # engine.fit.topup decodes the query: %7B would become "{"
        raise ValueError("percent-encoded braces (%7B, %7D) are not allowed")
    return value


def _iso_date(value: object) -> object:
    """YAML reads an unquoted 2026-09-01 as a date: keep it as the ISO text the catalog means."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _real_date(value: str) -> str:
    if value:
        try:
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
                raise ValueError
            date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a date (write YYYY-MM-DD)") from None
    return value


class _Plain:
    """The calls of pydantic's models that callers use on catalog objects (unvalidated, as pydantic's are)."""

    # Read by pydantic when it validates these dataclasses. str_max_length: no text field feeds a message more
    # than a short paragraph (Telegram's limit is 4,096).
    __pydantic_config__ = {"extra": "forbid", "str_max_length": 1000}

    @classmethod
    def model_construct(cls, **values: Any) -> Any:
        return cls(**values)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with `update` applied."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]

    def model_dump(self) -> dict[str, Any]:
        dumped: dict[str, Any] = dataclasses.asdict(self)  # type: ignore[call-overload]
        return dumped


@dataclass(frozen=True, slots=True, kw_only=True)
class Card(_Plain):
    """One rentable GPU model."""

    id: Id
    name: Name
    vram_gb: Annotated[Number, within("vram_gb")]
    bandwidth_gbps: Annotated[Number, within("bandwidth_gbps")]  # memory bandwidth, GB/s (decimal)
    price_monthly_usd: Annotated[Number, within("price_monthly_usd")] | None = None
    price_hourly_usd: Annotated[Number, within("price_hourly_usd")] | None = None
    fp8: Flag  # hardware FP8 (Ada, Hopper, Blackwell, CDNA 3)
    interconnect: Interconnect
    interconnect_gbps: Annotated[Number, within("interconnect_gbps")] | None = None
    architecture: Annotated[str, Rule("Field", max_length=64)] = ""
    memory: Annotated[str, Rule("Field", max_length=64)] = ""
    set_sizes: Annotated[tuple[Count, ...],
                         Rule("Field", max_length=64) + Rule("AfterValidator", _set_sizes_valid)] = (1, 2, 4, 8)
    regions: Annotated[tuple[Name, ...], Rule("Field", max_length=64)] = ()
    # free cards per region at the last update; None = not published
    stock: Annotated[dict[Name, Annotated[Count, within("stock")]], Rule("Field", max_length=64)] | None = None
    aliases: Annotated[tuple[Name, ...], Rule("Field", max_length=32)] = ()
    notes: Annotated[str, Rule("Field", max_length=500)] = ""
    source: str = ""
    memory_mib: Annotated[int, Rule("Field", gt=0)] | None = None  # total memory as the runtime reports it, MiB
    memory_mib_source: str = ""
    # Dense (no 2:4 sparsity) tensor-core TFLOPS, FP32 accumulate where the vendor tells the two apart: prefill
    # and batched decode are compute bound (engine.speed). None: no source found, and no prefill figure is given.
    fp16_tflops: Annotated[Number, within("tflops")] | None = None
    fp8_tflops: Annotated[Number, within("tflops")] | None = None
    tflops_source: Annotated[str, Rule("Field", max_length=500)] = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeDiscount(_Plain):
    """`percent` off the price of a set of at least `min_gpus` cards."""

    min_gpus: Annotated[Count, Rule("Field", ge=2, le=LIMITS["set_size"][1])]
    percent: Annotated[Number, within("discount_percent", exclusive_low=True)]


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingPolicy(_Plain):
    """How the provider turns a request into GB (see DESIGN.md, "Sizing")."""

    policy: Literal["breakdown", "headroom"]
    overhead_gb: Annotated[Number, within("overhead_gb")] = 2.0
    headroom_factor: Annotated[Number, within("headroom_factor")] = 1.2
    default_context_tokens: Annotated[Count, within("context_tokens")] = 8192
    default_batch: Annotated[Count, within("batch")] = 1
    default_kv_precision: KvPrecision = "fp16"
    default_precision: Precision = "bf16"
    training_context_tokens: Annotated[Count, within("context_tokens")] = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectionPolicy(_Plain):
    """How the provider picks the card set (see DESIGN.md, "Selection")."""

    policy: Literal["cheapest", "fewest"]
    max_gpus_per_host: Annotated[Count, within("set_size")] = 8
    tight_single_gb: Annotated[Number, within("tight_gb")] = 5.0
    tight_per_card_gb: Annotated[Number, within("tight_gb")] = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Region(_Plain):
    """A region id ('DFW-1') and the name people use for it ('Dallas')."""

    id: Name
    name: Name


@dataclass(frozen=True, slots=True, kw_only=True)
class Topup(_Plain):
    """The top-up link's template ({amount}, {coin}, {ref})."""

    url_template: Annotated[str, Rule("Field", max_length=MAX_URL_TEMPLATE_CHARS)
                            + Rule("AfterValidator", _url_template_valid)]


@dataclass(frozen=True, kw_only=True)  # not slots: _cards_by_key is a cached_property
class Catalog(_Plain):
    """One provider's catalog: its cards, prices, policies, coins and top-up link (the rules that tie fields
    together, such as a price for every card, are catalog.validation's)."""

    id: Id
    provider: Annotated[str, Rule("Field", min_length=1, max_length=100)]
    url: Annotated[str, Rule("Field", max_length=512)] = ""
    # YYYY-MM-DD, or empty
    updated: Annotated[str, Rule("BeforeValidator", _iso_date) + Rule("AfterValidator", _real_date)] = ""
    currency: Literal["USD"] = "USD"
    price_unit: Literal["month", "hour"]
    hours_per_month: Annotated[Count, within("hours_per_month")] = 720
    minimum_term_hours: Annotated[Count, within("minimum_term_hours")] = 0
    default_billing: Literal["hour", "day", "week", "month"] = "month"
    sizing: SizingPolicy
    selection: SelectionPolicy
    volume_discounts: Annotated[tuple[VolumeDiscount, ...], Rule("Field", max_length=16)] = ()
    coins: Annotated[tuple[Coin, ...], Rule("Field", min_length=1, max_length=32)]
    default_coin: Coin
    topup: Topup
    regions: Annotated[tuple[Region, ...], Rule("Field", max_length=64)] = ()
    cards: Annotated[tuple[Card, ...], Rule("Field", min_length=1, max_length=MAX_CARDS)]

    # -- derived values (one place for the price arithmetic of both seeds) --------------------

    def card(self, name: str) -> Card | None:
        """A card by id, name or alias as people write them ('RTX 4090', 'rtx4090', 'h100-sxm')."""
        return self._cards_by_key.get(normalize_name(name))

    def card_pair(self, words: Sequence[str]) -> tuple[Card, Card] | str | None:
        """'/compare A40 RTX 4090' -> (A40, RTX 4090), trying every split point of the words; else the first word
        that names no card (or all of them), or None for fewer than two words."""
        if len(words) < 2:
            return None
        for cut in range(1, len(words)):
            first, second = self.card(" ".join(words[:cut])), self.card(" ".join(words[cut:]))
            if first and second:
                return first, second
        for word in words:
            if self.card(word) is None:
                return word
        return " ".join(words)

    @cached_property
    def _cards_by_key(self) -> dict[str, Card]:
        index: dict[str, Card] = {}
        for card in reversed(self.cards):  # earlier cards win a shared alias
            for key in (card.id, card.name, *card.aliases):
                index[normalize_name(key)] = card
        index.pop("", None)
        return index

    def monthly_list_price_usd(self, card: Card) -> float:
        """Per-card list price per month: the catalog's own, or hourly x hours_per_month."""
        if card.price_monthly_usd is not None and self.price_unit == "month":
            return card.price_monthly_usd
        assert card.price_hourly_usd is not None
        return card.price_hourly_usd * self.hours_per_month

    def hourly_list_price_usd(self, card: Card) -> float:
        """Per-card list price per hour: the catalog's own, or monthly / hours_per_month (seed 06)."""
        if card.price_hourly_usd is not None and self.price_unit == "hour":
            return card.price_hourly_usd
        assert card.price_monthly_usd is not None
        return card.price_monthly_usd / self.hours_per_month

    def discount_percent(self, count: int) -> float:
        best = 0.0
        for discount in self.volume_discounts:
            if count >= discount.min_gpus:
                best = max(best, discount.percent)
        return best

    def set_price_usd(self, card: Card, count: int) -> tuple[float, float]:
        """(hourly, monthly) for `count` cards with the volume discount applied."""
        factor = count * (1 - self.discount_percent(count) / 100)
        if self.price_unit == "month":
            monthly = self.monthly_list_price_usd(card) * factor
            return monthly / self.hours_per_month, monthly
        hourly = self.hourly_list_price_usd(card) * factor
        return hourly, hourly * self.hours_per_month


_NESTED: dict[str, Any] = {"sizing": SizingPolicy, "selection": SelectionPolicy, "topup": Topup}
_NESTED_TUPLES: dict[str, Any] = {"volume_discounts": VolumeDiscount, "regions": Region, "cards": Card}


def catalog_to_plain(catalog: Catalog) -> dict[str, Any]:
    """A validated catalog as plain data (dicts, tuples, strings, numbers): what catalog_from_plain takes back."""
    return {field.name: _to_plain(getattr(catalog, field.name)) for field in dataclasses.fields(catalog)}


def _to_plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_plain(item) for item in value)
    if dataclasses.is_dataclass(value):
        return {field.name: _to_plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    return value


def catalog_from_plain(data: dict[str, Any]) -> Catalog:
    """The catalog catalog_to_plain was given (its values already validated: no check here)."""
    values = dict(data)
    for name, kind in _NESTED.items():
        values[name] = kind(**values[name])
    for name, kind in _NESTED_TUPLES.items():
        values[name] = tuple(kind(**item) for item in values[name])
    return Catalog(**values)
