"""What customers ask for, kept anonymously: one demand record per answered question, and the sums of a period.

A record holds no user or chat id and no text: the day (no time of day), the language, what was asked in classes
(model id of the registry or a size class, format, context and concurrency classes, workload), what was recommended
and at what list price, the rule's pick when it differs, and why nothing served when nothing did.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any

from bot.store.database import Repository

DEMAND_RETENTION_DAYS = 180
# Why a question went unserved: no layout holds the memory, the format needs FP8 hardware, no stock, not in the
# region, over the user's money budget, under the user's speed target, or another rule (set sizes, interconnect).
UNMET_REASONS = ("memory", "fp8", "stock", "region", "budget", "speed", "other")


@dataclass(frozen=True, slots=True)
class DemandRecord:
    """One answered question, anonymous by construction: every field is a class or a catalog name."""

    day: str  # YYYY-MM-DD (UTC)
    catalog_id: str
    language: str
    intent: str
    model: str | None  # a registry id; None for a bare size or a Hub repository (size_class says how big)
    size_class: str | None
    format: str | None  # the weight format or precision
    context_class: str | None
    concurrency_class: str | None
    workload: str | None
    card: str | None  # the recommended layout: card id, count, list price
    card_count: int | None
    monthly_usd: float | None
    hourly_usd: float | None
    rule_card: str | None  # the rule's own pick, only when it differs from the recommendation
    rule_count: int | None
    unmet: str | None  # one of UNMET_REASONS, None when the question was served
    unmet_card: str | None  # the card that would have served it


COLUMNS = tuple(field.name for field in fields(DemandRecord))
_INSERT = f"INSERT INTO demand ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"


@dataclass(frozen=True, slots=True)
class PeriodFigures:
    """The sums of one period [first_day, last_day]."""

    first_day: str
    last_day: str
    answers: int
    models: list[tuple[str, int]]  # model id or size class, count; most asked first
    formats: list[tuple[str, int]]
    cards: list[tuple[str, int, int, float]]  # card id, count per set, answers, monthly list price summed
    unmet: list[tuple[str, str, int]]  # reason, card ('' when none), answers
    with_layout: int  # answers where the rule or the engine chose a layout
    disagreements: int  # of those, where the rule's pick differs

    @property
    def disagreement_share(self) -> float | None:
        return self.disagreements / self.with_layout if self.with_layout else None

    @property
    def revenue_usd(self) -> float:
        return sum(row[3] for row in self.cards)

    def to_json(self) -> dict[str, Any]:
        return {
            "first_day": self.first_day, "last_day": self.last_day, "answers": self.answers,
            "models": [{"model": name, "answers": n} for name, n in self.models],
            "formats": [{"format": name, "answers": n} for name, n in self.formats],
            "cards": [{"card": card, "count": count, "answers": n, "monthly_usd": usd}
                      for card, count, n, usd in self.cards],
            "unmet": [{"reason": reason, "card": card or None, "answers": n} for reason, card, n in self.unmet],
            "with_layout": self.with_layout, "disagreements": self.disagreements,
            "disagreement_share": self.disagreement_share,
        }


class DemandRepository(Repository):
    async def keep_demand(self, record: DemandRecord) -> None:
        await self._database.write_one(_INSERT, astuple(record))

    async def prune_demand(self, before_day: str) -> int:
        """Delete the records of days before `before_day` (YYYY-MM-DD); return how many went."""
        rows = await self._database.write_returning("DELETE FROM demand WHERE day < ? RETURNING id", (before_day,))
        return len(rows)

    async def demand_records(self, first_day: str, last_day: str) -> list[DemandRecord]:
        rows = await self._database.fetch(
            f"SELECT {', '.join(COLUMNS)} FROM demand WHERE day >= ? AND day <= ? ORDER BY day, id",
            (first_day, last_day))
        return [DemandRecord(*(row[name] for name in COLUMNS)) for row in rows]

    async def demand_figures(self, first_day: str, last_day: str, *, top: int = 5) -> PeriodFigures:
        """The sums of the days first_day..last_day (inclusive), each list cut to its `top` rows: most answers
        first (cards: then the most revenue), ties by name."""
        window = "day >= ? AND day <= ?"
        span = (first_day, last_day)
        fetch = self._database.fetch
        totals = (await fetch(
            f"""SELECT count(*) AS answers,
                       sum(CASE WHEN card IS NOT NULL OR rule_card IS NOT NULL THEN 1 ELSE 0 END) AS with_layout,
                       sum(CASE WHEN rule_card IS NOT NULL THEN 1 ELSE 0 END) AS disagreements
                FROM demand WHERE {window}""", span))[0]
        models = await fetch(
            f"""SELECT coalesce(model, size_class, '?') AS name, count(*) AS n FROM demand WHERE {window}
                GROUP BY coalesce(model, size_class, '?')""", span)
        formats = await fetch(
            f"""SELECT format AS name, count(*) AS n FROM demand WHERE {window} AND format IS NOT NULL
                GROUP BY format""", span)
        cards = await fetch(
            f"""SELECT card, card_count, count(*) AS n, sum(monthly_usd) AS usd FROM demand
                WHERE {window} AND card IS NOT NULL
                GROUP BY card, card_count""", span)
        unmet = await fetch(
            f"""SELECT unmet, coalesce(unmet_card, '') AS card, count(*) AS n FROM demand
                WHERE {window} AND unmet IS NOT NULL
                GROUP BY unmet, coalesce(unmet_card, '')""", span)
        # Ordered and cut here, not in SQL: the engines order text differently (PostgreSQL by its locale).
        return PeriodFigures(
            first_day, last_day, int(totals["answers"] or 0),
            sorted(((str(row["name"]), int(row["n"])) for row in models), key=lambda r: (-r[1], r[0]))[:top],
            sorted(((str(row["name"]), int(row["n"])) for row in formats), key=lambda r: (-r[1], r[0]))[:top],
            sorted(((str(row["card"]), int(row["card_count"] or 1), int(row["n"]), float(row["usd"] or 0.0))
                    for row in cards), key=lambda r: (-r[2], -r[3], r[0], r[1]))[:top],
            sorted(((str(row["unmet"]), str(row["card"]), int(row["n"])) for row in unmet),
                   key=lambda r: (-r[2], r[0], r[1]))[:top],
            int(totals["with_layout"] or 0), int(totals["disagreements"] or 0),
        )
