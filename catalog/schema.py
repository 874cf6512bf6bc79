"""The provider catalog schema: cards, prices, sizing and selection policies, coins, top-up link.

These are the plain objects the engine reads (frozen dataclasses, no pydantic): a validated catalog, or the
compiled copy of a bundled one (catalog.loader). What a catalog file must satisfy to become one is
catalog.validation (strict, pydantic; `validate_catalog(data)`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from catalog.names import normalize_name

Interconnect = Literal["nvswitch", "nvlink", "infinity-fabric", "nvlink-bridge", "pcie"]
# Interconnects good enough for an all-reduce in every training step (DESIGN: "NVLink/NVSwitch-class").
TRAINING_INTERCONNECTS = frozenset({"nvswitch", "nvlink", "infinity-fabric"})
# The precisions the engine has bytes for (engine.sizing.rule PRECISION_BYTES / KV_PRECISION_BYTES; a test keeps
# them equal): a policy default outside them would pass `catalog check` and fail every answer.
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
KvPrecision = Literal["fp32", "fp16", "bf16", "fp8", "int8"]

# The limits (issue 15): wide enough for any GPU rented today, narrow enough that no answer overflows,
# divides by ~0 or builds a message nobody can read. The bundled catalogs' largest (seed 000 section 06):
# 192 GB (MI300X), 8,000 GB/s (B200), 900 GB/s NVLink (H200), $190-$3,890/month; seed 004: $0.28-$4.61/hour.
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
}
MAX_URL_TEMPLATE_CHARS = 512  # + amount (11), coin (10), 16-char ref: every link well under 600 characters
MAX_CARDS = 200  # selection tries every card x set size per answer; the seeds have 15 and 7
PLACEHOLDERS = frozenset({"amount", "coin", "ref"})  # of the top-up link's url_template


class _Plain:
    """The calls of pydantic's models that callers used on catalog objects (unvalidated, as pydantic's are);
    validation itself is catalog.validation.validate_catalog."""

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

    id: str
    name: str
    vram_gb: float
    bandwidth_gbps: float  # memory bandwidth, GB/s (decimal)
    price_monthly_usd: float | None = None
    price_hourly_usd: float | None = None
    fp8: bool  # hardware FP8 (Ada, Hopper, Blackwell, CDNA 3)
    interconnect: Interconnect
    interconnect_gbps: float | None = None
    architecture: str = ""
    memory: str = ""
    set_sizes: tuple[int, ...] = (1, 2, 4, 8)
    regions: tuple[str, ...] = ()
    stock: dict[str, int] | None = None  # free cards per region at the last update; None = not published
    aliases: tuple[str, ...] = ()
    notes: str = ""
    source: str = ""
    memory_mib: int | None = None  # total memory as the runtime reports it, MiB
    memory_mib_source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeDiscount(_Plain):
    """`percent` off the price of a set of at least `min_gpus` cards."""

    min_gpus: int
    percent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingPolicy(_Plain):
    """How the provider turns a request into GB (see DESIGN.md, "Sizing")."""

    policy: Literal["breakdown", "headroom"]
    overhead_gb: float = 2.0
    headroom_factor: float = 1.2
    default_context_tokens: int = 8192
    default_batch: int = 1
    default_kv_precision: KvPrecision = "fp16"
    default_precision: Precision = "bf16"
    training_context_tokens: int = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectionPolicy(_Plain):
    """How the provider picks the card set (see DESIGN.md, "Selection")."""

    policy: Literal["cheapest", "fewest"]
    max_gpus_per_host: int = 8
    tight_single_gb: float = 5.0
    tight_per_card_gb: float = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Region(_Plain):
    """A region id ('DFW-1') and the name people use for it ('Dallas')."""

    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Topup(_Plain):
    """The top-up link's template ({amount}, {coin}, {ref})."""

    url_template: str


@dataclass(frozen=True, kw_only=True)  # not slots: _cards_by_key is a cached_property
class Catalog(_Plain):
    """One provider's catalog: its cards, prices, policies, coins and top-up link."""

    id: str
    provider: str
    url: str = ""
    updated: str = ""  # YYYY-MM-DD, or empty
    currency: Literal["USD"] = "USD"
    price_unit: Literal["month", "hour"]
    hours_per_month: int = 720
    minimum_term_hours: int = 0
    default_billing: Literal["hour", "day", "week", "month"] = "month"
    sizing: SizingPolicy
    selection: SelectionPolicy
    volume_discounts: tuple[VolumeDiscount, ...] = ()
    coins: tuple[str, ...]
    default_coin: str
    topup: Topup
    regions: tuple[Region, ...] = ()
    cards: tuple[Card, ...]

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
