"""The provider catalog schema: cards, prices, sizing and selection policies, coins, top-up link."""
from __future__ import annotations

import string
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from catalog.names import normalize_name

Interconnect = Literal["nvswitch", "nvlink", "infinity-fabric", "nvlink-bridge", "pcie"]
# Interconnects good enough for an all-reduce in every training step (DESIGN: "NVLink/NVSwitch-class").
TRAINING_INTERCONNECTS = frozenset({"nvswitch", "nvlink", "infinity-fabric"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Card(_Strict):
    """One rentable GPU model."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str = Field(min_length=1)
    vram_gb: float = Field(gt=0, le=10_000)
    bandwidth_gbps: float = Field(gt=0, description="memory bandwidth, GB/s (decimal)")
    price_monthly_usd: float | None = Field(default=None, gt=0)
    price_hourly_usd: float | None = Field(default=None, gt=0)
    fp8: bool = Field(description="hardware FP8 (Ada, Hopper, Blackwell, CDNA 3)")
    interconnect: Interconnect
    interconnect_gbps: float | None = Field(default=None, gt=0)
    architecture: str = ""
    memory: str = ""
    set_sizes: tuple[int, ...] = (1, 2, 4, 8)
    regions: tuple[str, ...] = ()
    stock: dict[str, int] | None = Field(
        default=None, description="free cards per region at the last update; None = not published"
    )
    aliases: tuple[str, ...] = ()
    notes: str = ""
    source: str = ""
    memory_mib: int | None = Field(default=None, gt=0, description="total memory as the runtime reports it, MiB")
    memory_mib_source: str = ""

    @field_validator("set_sizes")
    @classmethod
    def _set_sizes_valid(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value:
            raise ValueError("needs at least one allowed set size")
        for count in value:
            if count < 1 or count > 64:
                raise ValueError(f"set size {count} is outside 1..64")
        return tuple(sorted(set(value)))

    @field_validator("stock")
    @classmethod
    def _stock_non_negative(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        if value is not None:
            for region, count in value.items():
                if count < 0:
                    raise ValueError(f"stock in {region} is negative ({count})")
        return value


class VolumeDiscount(_Strict):
    min_gpus: int = Field(ge=2)
    percent: float = Field(gt=0, lt=100)


class SizingPolicy(_Strict):
    """How the provider turns a request into GB (see DESIGN.md, "Sizing")."""

    policy: Literal["breakdown", "headroom"]
    overhead_gb: float = Field(default=2.0, ge=0)
    headroom_factor: float = Field(default=1.2, ge=1)
    default_context_tokens: int = Field(default=8192, gt=0)
    default_batch: int = Field(default=1, gt=0)
    default_kv_precision: str = "fp16"
    default_precision: str = "bf16"
    training_context_tokens: int = Field(default=2048, gt=0)


class SelectionPolicy(_Strict):
    policy: Literal["cheapest", "fewest"]
    max_gpus_per_host: int = Field(default=8, ge=1)
    tight_single_gb: float = Field(default=5.0, ge=0)
    tight_per_card_gb: float = Field(default=2.0, ge=0)


class Region(_Strict):
    id: str
    name: str


class Topup(_Strict):
    url_template: str

    @field_validator("url_template")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        names = {name for _, name, _, _ in string.Formatter().parse(value) if name}
        unknown = names - {"amount", "coin", "ref"}
        if unknown:
            raise ValueError(f"unknown placeholder(s) {sorted(unknown)}; allowed: amount, coin, ref")
        if "amount" not in names:
            raise ValueError("needs an {amount} placeholder")
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL")
        return value


class Catalog(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    provider: str
    url: str = ""
    updated: str = ""
    currency: Literal["USD"] = "USD"
    price_unit: Literal["month", "hour"]
    hours_per_month: int = Field(default=720, gt=0)
    minimum_term_hours: int = Field(default=0, ge=0)
    default_billing: Literal["hour", "day", "week", "month"] = "month"
    sizing: SizingPolicy
    selection: SelectionPolicy
    volume_discounts: tuple[VolumeDiscount, ...] = ()
    coins: tuple[str, ...] = Field(min_length=1)
    default_coin: str
    topup: Topup
    regions: tuple[Region, ...] = ()
    cards: tuple[Card, ...] = Field(min_length=1)

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
