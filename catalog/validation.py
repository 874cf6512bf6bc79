"""The catalog's strict validation (pydantic): every rule a catalog file must pass, with the field it breaks.

`catalog check`, operator catalogs and a bundled catalog without its compiled copy come through here
(catalog.loader); what passes becomes catalog.schema's plain objects, which the engine uses. Kept apart from
catalog.schema so that a `cardfit ask` on a bundled catalog, read from its compiled copy, never imports pydantic
(~110 ms of its start, issue #14). Every model here has the same fields, in the same order with the same
defaults, as its namesake there (a test keeps them equal).
"""
from __future__ import annotations

import re
import string
from datetime import date, datetime
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

from catalog import schema
from catalog.schema import LIMITS, MAX_CARDS, MAX_URL_TEMPLATE_CHARS, Interconnect, KvPrecision, Precision

# Numbers the service can serve: finite, never a boolean (YAML `true` is not 1 GB), an int where a float is
# asked is fine. Each field adds its own bounds below; the limits are documented in LIMITS.
Number = Annotated[float, Strict(), AllowInfNan(False)]
Count = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]
Name = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Coin = Annotated[str, StringConstraints(pattern=r"^[A-Z0-9][A-Z0-9._-]{0,9}$")]


def _bounded(name: str, default: Any = ..., *, description: str | None = None, exclusive_low: bool = False) -> Any:
    """A field bounded by LIMITS[name] (`...`: required)."""
    low, high = LIMITS[name]
    if exclusive_low:
        return Field(default, gt=low, le=high, description=description)
    return Field(default, ge=low, le=high, description=description)


class _Strict(BaseModel):
    # str_max_length: no text field feeds a message more than a short paragraph (Telegram's limit is 4,096).
    model_config = ConfigDict(extra="forbid", frozen=True, str_max_length=1000)


class CardSchema(_Strict):
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


class VolumeDiscountSchema(_Strict):
    min_gpus: Count = Field(ge=2, le=LIMITS["set_size"][1])
    percent: Number = _bounded("discount_percent", exclusive_low=True)


class SizingPolicySchema(_Strict):
    """How the provider turns a request into GB (see DESIGN.md, "Sizing")."""

    policy: Literal["breakdown", "headroom"]
    overhead_gb: Number = _bounded("overhead_gb", 2.0)
    headroom_factor: Number = _bounded("headroom_factor", 1.2)
    default_context_tokens: Count = _bounded("context_tokens", 8192)
    default_batch: Count = _bounded("batch", 1)
    default_kv_precision: KvPrecision = "fp16"
    default_precision: Precision = "bf16"
    training_context_tokens: Count = _bounded("context_tokens", 2048)


class SelectionPolicySchema(_Strict):
    policy: Literal["cheapest", "fewest"]
    max_gpus_per_host: Count = _bounded("set_size", 8)
    tight_single_gb: Number = _bounded("tight_gb", 5.0)
    tight_per_card_gb: Number = _bounded("tight_gb", 2.0)


class RegionSchema(_Strict):
    id: Name
    name: Name


PLACEHOLDERS = schema.PLACEHOLDERS
# Not in a URL (RFC 3986) and not safe inside href="...": whitespace, controls, quotes, angle brackets.
_URL_FORBIDDEN = re.compile(r'[\s"<>\\^`|\x00-\x1f\x7f]')


class TopupSchema(_Strict):
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


class CatalogSchema(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    provider: str = Field(min_length=1, max_length=100)
    url: str = Field(default="", max_length=512)
    updated: Annotated[str, BeforeValidator(_iso_date)] = Field(default="", description="YYYY-MM-DD, or empty")
    currency: Literal["USD"] = "USD"
    price_unit: Literal["month", "hour"]
    hours_per_month: Count = _bounded("hours_per_month", 720)
    minimum_term_hours: Count = _bounded("minimum_term_hours", 0)
    default_billing: Literal["hour", "day", "week", "month"] = "month"
    sizing: SizingPolicySchema
    selection: SelectionPolicySchema
    volume_discounts: tuple[VolumeDiscountSchema, ...] = Field(default=(), max_length=16)
    coins: tuple[Coin, ...] = Field(min_length=1, max_length=32)
    default_coin: Coin
    topup: TopupSchema
    regions: tuple[RegionSchema, ...] = Field(default=(), max_length=64)
    cards: tuple[CardSchema, ...] = Field(min_length=1, max_length=MAX_CARDS)

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
    def _consistent(self) -> CatalogSchema:
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


def to_catalog(model: CatalogSchema) -> schema.Catalog:
    """The validated catalog as the engine's plain objects: every field's value as validation left it."""
    return schema.Catalog(**{name: _plain(getattr(model, name)) for name in CatalogSchema.model_fields})


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, BaseModel):
        plain_class = _PLAIN[type(value)]
        return plain_class(**{name: _plain(getattr(value, name)) for name in type(value).model_fields})
    return value


_PLAIN: dict[type[BaseModel], Any] = {
    CardSchema: schema.Card, VolumeDiscountSchema: schema.VolumeDiscount, SizingPolicySchema: schema.SizingPolicy,
    SelectionPolicySchema: schema.SelectionPolicy, RegionSchema: schema.Region, TopupSchema: schema.Topup,
    CatalogSchema: schema.Catalog,
}


def validate_catalog(data: Any) -> schema.Catalog:
    """Validate parsed YAML as a catalog (raises pydantic's ValidationError) and return the plain catalog."""
    return to_catalog(CatalogSchema.model_validate(data))


def validate_card(data: Any) -> schema.Card:
    """Validate one card's mapping (raises pydantic's ValidationError) and return the plain card."""
    card: schema.Card = _plain(CardSchema.model_validate(data))
    return card
