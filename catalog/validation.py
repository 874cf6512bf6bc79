"""Validating a catalog file's data against catalog.schema (pydantic): the fields' own rules, then the rules that
tie fields together. Imported only when a file is validated (`catalog check`, an operator's catalog, /reload,
`make install`'s prepared copies), never by `cardfit ask` on a bundled catalog.
"""
from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, TypeAdapter

from catalog import schema


def _consistent(catalog: schema.Catalog) -> schema.Catalog:
    seen: set[str] = set()
    for card in catalog.cards:
        if card.id in seen:
            raise ValueError(f"card id {card.id!r} appears twice")
        seen.add(card.id)
        price = card.price_monthly_usd if catalog.price_unit == "month" else card.price_hourly_usd
        if price is None:
            raise ValueError(
                f"card {card.id}: price_{'monthly' if catalog.price_unit == 'month' else 'hourly'}_usd "
                f"is required in a {catalog.price_unit}ly catalog"
            )
        region_ids = {region.id for region in catalog.regions}
        for region in card.regions:
            if region_ids and region not in region_ids:
                raise ValueError(f"card {card.id}: region {region!r} is not in the catalog's regions")
    if catalog.default_coin not in catalog.coins:
        raise ValueError(f"default_coin {catalog.default_coin!r} is not one of coins {list(catalog.coins)}")
    return catalog


@cache
def _catalog_adapter() -> TypeAdapter[schema.Catalog]:
    return TypeAdapter(Annotated[schema.Catalog, AfterValidator(_consistent)])


@cache
def _card_adapter() -> TypeAdapter[schema.Card]:
    return TypeAdapter(schema.Card)


def validate_catalog(data: Any) -> schema.Catalog:
    """Validate parsed YAML as a catalog (raises pydantic's ValidationError)."""
    return _catalog_adapter().validate_python(data)


def validate_card(data: Any) -> schema.Card:
    """Validate one card's mapping (raises pydantic's ValidationError)."""
    return _card_adapter().validate_python(data)
