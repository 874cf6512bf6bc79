"""Differences between two versions of a catalog: price changes, cards added or removed, stock changes."""
from __future__ import annotations

from dataclasses import dataclass, field

from catalog.schema import Card, Catalog


@dataclass(frozen=True, slots=True)
class PriceChange:
    card_id: str
    card_name: str
    old_hourly_usd: float
    new_hourly_usd: float
    old_monthly_usd: float
    new_monthly_usd: float

    @property
    def percent(self) -> float:
        return (self.new_monthly_usd / self.old_monthly_usd - 1) * 100


@dataclass(frozen=True, slots=True)
class StockChange:
    card_id: str
    card_name: str
    region: str
    old: int | None  # None: not published before
    new: int | None


@dataclass(slots=True)
class CatalogDiff:
    catalog_id: str
    provider: str
    prices: list[PriceChange] = field(default_factory=list)
    added: list[Card] = field(default_factory=list)
    removed: list[Card] = field(default_factory=list)
    stock: list[StockChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.prices or self.added or self.removed or self.stock)

    def changed_card_ids(self) -> set[str]:
        return ({c.card_id for c in self.prices} | {c.id for c in self.added} | {c.id for c in self.removed}
                | {c.card_id for c in self.stock})


def _prices(catalog: Catalog, card: Card) -> tuple[float, float]:
    return catalog.hourly_list_price_usd(card), catalog.monthly_list_price_usd(card)


def diff_catalogs(old: Catalog, new: Catalog) -> CatalogDiff:
    """What a customer would notice between `old` and `new` (list prices per card, before volume discounts)."""
    result = CatalogDiff(new.id, new.provider)
    old_cards = {card.id: card for card in old.cards}
    new_cards = {card.id: card for card in new.cards}
    for card in new.cards:
        before = old_cards.get(card.id)
        if before is None:
            result.added.append(card)
            continue
        old_hourly, old_monthly = _prices(old, before)
        new_hourly, new_monthly = _prices(new, card)
        if abs(old_monthly - new_monthly) > 1e-9:
            result.prices.append(PriceChange(card.id, card.name, old_hourly, new_hourly, old_monthly, new_monthly))
        old_stock, new_stock = before.stock or {}, card.stock or {}
        for region in sorted(set(old_stock) | set(new_stock)):
            if old_stock.get(region) != new_stock.get(region):
                result.stock.append(StockChange(card.id, card.name, region, old_stock.get(region),
                                                new_stock.get(region)))
    result.removed = [card for card_id, card in old_cards.items() if card_id not in new_cards]
    return result
