"""The provider catalog schema: cards, prices, sizing and selection policies, coins, top-up link."""
from __future__ import annotations

import re
import string
from datetime import date, datetime
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    field_validator,
    model_validator,
)

from catalog.names import normalize_name

Interconnect = Literal["nvswitch", "nvlink", "infinity-fabric", "nvlink-bridge", "pcie"]
# Interconnects good enough for an all-reduce in every training step (DESIGN: "NVLink/NVSwitch-class").
TRAINING_INTERCONNECTS = frozenset({"nvswitch", "nvlink", "infinity-fabric"})
# The precisions the engine has bytes for (engine.sizing PRECISION_BYTES / KV_PRECISION_BYTES; a test keeps
# them equal): a policy default outside them would pass `catalog check` and fail every answer.
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
KvPrecision = Literal["fp32", "fp16", "bf16", "fp8", "int8"]

# Numbers the service can serve: finite, never a boolean (YAML `true` is not 1 GB), an int where a float is
# asked is fine. Each field adds its own bounds below; the limits are documented in LIMITS.
Number = Annotated[float, Strict(), AllowInfNan(False)]
Count = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]
Name = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Coin = Annotated[str, StringConstraints(pattern=r"^[A-Z0-9][A-Z0-9._-]{0,9}$")]

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
    "context_tokens": (1, 10_000_000),      # engine.sizing.MAX_CONTEXT_TOKENS
    "batch": (1, 4_096),                    # engine.sizing.MAX_BATCH
    "set_size": (1, 64),                    # engine.parse.errors.MAX_GPU_COUNT
}
MAX_URL_TEMPLATE_CHARS = 512  # + amount (11), coin (10), 16-char ref: every link well under 600 characters
MAX_CARDS = 200  # selection tries every card x set size per answer; the seeds have 15 and 7


def _bounded(name: str, default: Any = ..., *, description: str | None = None, exclusive_low: bool = False) -> Any:
    """A field bounded by LIMITS[name] (`...`: required)."""
    low, high = LIMITS[name]
    if exclusive_low:
        return Field(default, gt=low, le=high, description=description)
    return Field(default, ge=low, le=high, description=description)


class _Strict(BaseModel):
    # str_max_length: no text field feeds a message more than a short paragraph (Telegram's limit is 4,096).
    model_config = ConfigDict(extra="forbid", frozen=True, str_max_length=1000)


class Card(_Strict):
    """One rentable GPU model."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    name: Name
    vram_gb: Number = _bounded("vram_gb")
    bandwidth_gbps: Number = _bounded("bandwidth_gbps", description="memory bandwidth, GB/s (decimal)")
    price_monthly_usd: Number | None = _bounded("price_monthly_usd", None)
    price_hourly_usd: Number | None = _bounded("price_hourly_usd", None)
    fp8: Flag = Field(description="hardware FP8 (Ada, Hopper, Blackwell, CDNA 3)")
    interconnect: Interconnect
    interconnect_gbps: Number | None = _bounded("interconnect_gbps", None)
    architecture: str = Field(default="", max_length=64)
    memory: str = Field(default="", max_length=64)
    set_sizes: tuple[Count, ...] = Field(default=(1, 2, 4, 8), max_length=64)
    regions: tuple[Name, ...] = Field(default=(), max_length=64)
    stock: dict[Name, Annotated[Count, _bounded("stock")]] | None = Field(
        default=None, max_length=64, description="free cards per region at the last update; None = not published"
    )
    aliases: tuple[Name, ...] = Field(default=(), max_length=32)
    notes: str = Field(default="", max_length=500)
    source: str = ""
    memory_mib: int | None = Field(default=None, gt=0, description="total memory as the runtime reports it, MiB")
    memory_mib_source: str = ""

    @field_validator("set_sizes")
    @classmethod
    def _set_sizes_valid(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value:
            raise ValueError("needs at least one allowed set size")
        low, high = (int(limit) for limit in LIMITS["set_size"])
        for count in value:
            if count < low or count > high:
                raise ValueError(f"set size {count} is outside {low}..{high}")
        return tuple(sorted(set(value)))


class VolumeDiscount(_Strict):
    min_gpus: Count = Field(ge=2, le=LIMITS["set_size"][1])
    percent: Number = _bounded("discount_percent", exclusive_low=True)


class SizingPolicy(_Strict):
    """How the provider turns a request into GB (see DESIGN.md, "Sizing")."""

    policy: Literal["breakdown", "headroom"]
    overhead_gb: Number = _bounded("overhead_gb", 2.0)
    headroom_factor: Number = _bounded("headroom_factor", 1.2)
    default_context_tokens: Count = _bounded("context_tokens", 8192)
    default_batch: Count = _bounded("batch", 1)
    default_kv_precision: KvPrecision = "fp16"
    default_precision: Precision = "bf16"
    training_context_tokens: Count = _bounded("context_tokens", 2048)


class SelectionPolicy(_Strict):
    policy: Literal["cheapest", "fewest"]
    max_gpus_per_host: Count = _bounded("set_size", 8)
    tight_single_gb: Number = _bounded("tight_gb", 5.0)
    tight_per_card_gb: Number = _bounded("tight_gb", 2.0)


class Region(_Strict):
    id: Name
    name: Name


PLACEHOLDERS = frozenset({"amount", "coin", "ref"})
# Not in a URL (RFC 3986) and not safe inside href="...": whitespace, controls, quotes, angle brackets.
_URL_FORBIDDEN = re.compile(r'[\s"<>\\^`|\x00-\x1f\x7f]')


class Topup(_Strict):
    url_template: str = Field(max_length=MAX_URL_TEMPLATE_CHARS)

    @field_validator("url_template")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL")
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
        if re.search(r"%7[bd]", value, re.IGNORECASE):  # engine.topup decodes the query: %7B would become "{"
            raise ValueError("percent-encoded braces (%7B, %7D) are not allowed")
        return value


def _iso_date(value: object) -> object:
    """YAML reads an unquoted 2026-09-01 as a date: keep it as the ISO text the catalog means."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


class Catalog(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    provider: str = Field(min_length=1, max_length=100)
    url: str = Field(default="", max_length=512)
    updated: Annotated[str, BeforeValidator(_iso_date)] = Field(default="", description="YYYY-MM-DD, or empty")
    currency: Literal["USD"] = "USD"
    price_unit: Literal["month", "hour"]
    hours_per_month: Count = _bounded("hours_per_month", 720)
    minimum_term_hours: Count = _bounded("minimum_term_hours", 0)
    default_billing: Literal["hour", "day", "week", "month"] = "month"
    sizing: SizingPolicy
    selection: SelectionPolicy
    volume_discounts: tuple[VolumeDiscount, ...] = Field(default=(), max_length=16)
    coins: tuple[Coin, ...] = Field(min_length=1, max_length=32)
    default_coin: Coin
    topup: Topup
    regions: tuple[Region, ...] = Field(default=(), max_length=64)
    cards: tuple[Card, ...] = Field(min_length=1, max_length=MAX_CARDS)

    @field_validator("updated")
    @classmethod
    def _real_date(cls, value: str) -> str:
        if value:
            try:
                if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
                    raise ValueError
                date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a date (write YYYY-MM-DD)") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Catalog:
        seen: set[str] = set()
        for card in self.cards:
            if card.id in seen:
                raise ValueError(f"card id {card.id!r} appears twice")
            seen.add(card.id)
            price = card.price_monthly_usd if self.price_unit == "month" else card.price_hourly_usd
            if price is None:
                raise ValueError(
                    f"card {card.id}: price_{'monthly' if self.price_unit == 'month' else 'hourly'}_usd "
                    f"is required in a {self.price_unit}ly catalog"
                )
            region_ids = {region.id for region in self.regions}
            for region in card.regions:
                if region_ids and region not in region_ids:
                    raise ValueError(f"card {card.id}: region {region!r} is not in the catalog's regions")
        if self.default_coin not in self.coins:
            raise ValueError(f"default_coin {self.default_coin!r} is not one of coins {list(self.coins)}")
        return self

    # -- derived values (one place for the price arithmetic of both seeds) --------------------

    def card(self, name: str) -> Card | None:
        """A card by id, name or alias as people write them ('RTX 4090', 'rtx4090', 'h100-sxm')."""
        return self._cards_by_key.get(normalize_name(name))

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
