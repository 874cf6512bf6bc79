"""What customers ask for: an anonymous demand record per answered question, and /demand, the operators' report.

`demand_record` turns an answer into a record of classes (no user, chat or text: bot/store/demand.py);
`record_demand` keeps it, where a failing store is logged and counted and never breaks the answer. `demand_report`
sums two periods of equal length (this week and last, or `cardfit demand --since 30d` and the 30 days before);
`render_report` writes it for the chat, `render_png` draws it (matplotlib Agg, imported only when drawn).
"""
from __future__ import annotations

import datetime as dt
import html
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot import metrics
from bot.features.core import Core
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply
from bot.store import DemandRecord, PeriodFigures
from bot.store.demand import DemandRepository
from bot.texts.i18n import fmt_usd, t
from catalog.schema import Catalog
from engine.answer.build import Answer
from engine.fit.selection import Layout
from engine.models.registry import default_registry

log = logging.getLogger(__name__)

REPORT_DAYS = 7  # /demand: this week against the week before
TOP = 5  # rows per list in the report
# The classes a question falls into; a class is what the report groups by, and all a record keeps of a number.
SIZE_CLASSES = ((10, "<10B"), (40, "10-40B"), (100, "40-100B"), (300, "100-300B"))
CONTEXT_CLASSES = ((8_192, "<=8k"), (32_768, "<=32k"), (131_072, "<=128k"))
CONCURRENCY_CLASSES = ((1, "1"), (8, "2-8"), (32, "9-32"))
# A layout that holds no memory for one of these reasons names the reason's card as the one that would have served.
_PROBLEM_REASONS = (("fp8", "fp8"), ("stock", "stock"), ("region", "region"))


def day_of(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).date().isoformat()


def _class(value: float | None, classes: tuple[tuple[float, str], ...], top: str, *, below: bool = False) -> str | None:
    """The label of the first class whose bound holds `value` (<= the bound, or < it with `below`), else `top`."""
    if value is None:
        return None
    return next((label for bound, label in classes if (value < bound if below else value <= bound)), top)


def size_class(params_b: float | None) -> str | None:
    return _class(params_b, SIZE_CLASSES, ">=300B", below=True)


def context_class(tokens: int | None) -> str | None:
    return _class(tokens, CONTEXT_CLASSES, ">128k")


def concurrency_class(batch: int | None) -> str | None:
    return _class(batch, CONCURRENCY_CLASSES, ">32")


def _card_id(catalog: Catalog, name: object) -> str | None:
    """A card named in a note (by its name) as its catalog id."""
    if not isinstance(name, str):
        return None
    return next((card.id for card in catalog.cards if card.name == name or card.id == name), name)


def _key(layout: Layout | None) -> tuple[str, int] | None:
    return (layout.card.id, layout.count) if layout is not None else None


def unmet_of(answer: Answer) -> tuple[str | None, str | None]:
    """Why the question as asked was not served, and the card that would have served it: (reason, card id), or
    (None, None). Nothing holds it: the card a rule (FP8 hardware, stock, region) ruled out, else the biggest
    (memory). A named layout that fails for its card's FP8 hardware, stock or region: that card (one too small is the
    user's mistake, not demand). A speed target no layout meets: the fastest layout's card, the one that came
    closest (a layout the user named and found too slow is the user's choice). Over the user's budget: the card
    recommended."""
    selection = answer.selection
    if selection is None:
        return None, None  # a capacity question: it names no layout to be served on
    if selection.fit is None and answer.capacity_layout is None:
        reason = selection.reason
        code = getattr(reason, "code", None)
        values: dict[str, Any] = getattr(reason, "values", {}) or {}
        if code == "cluster":
            return "memory", _card_id(answer.catalog, values.get("card"))
        if code == "nothing_runs":
            rule = answer.rule_fit
            return "memory", rule.card.id if rule is not None else None
        if code == "unusable":
            problems = [problem for problem in values.get("problems", ()) if hasattr(problem, "code")]
            for problem_code, unmet in _PROBLEM_REASONS:
                for problem in problems:
                    if problem.code == problem_code:
                        return unmet, _card_id(answer.catalog, problem.values.get("card"))
            card = next((problem.values.get("card") for problem in problems if "card" in problem.values), None)
            return "other", _card_id(answer.catalog, card)
        return "other", None
    named = selection.fit
    if named is not None and not named.valid:  # the layout the user named fails: was it the card, or its stock?
        for problem_code, unmet in _PROBLEM_REASONS:
            if any(problem.code == problem_code for problem in named.problems):
                return unmet, named.card.id
    target = answer.target
    if target is not None and not target.met and not target.named:  # no layout reaches the speed asked for
        return "speed", target.layout.card.id if target.layout is not None else None
    money = answer.money()
    payable = answer.payable
    if money is not None and not money["within"]:
        return "budget", payable.card.id if payable is not None else None
    return None, None


def demand_record(answer: Answer, language: str, day: str) -> DemandRecord | None:
    """The answer as an anonymous record; None for an answer that sized nothing (an error)."""
    if answer.error is not None:
        return None
    resolved = answer.resolved
    request = answer.request
    model = resolved.model if resolved is not None else request.model
    params_b = resolved.params_b if resolved is not None else request.params_b
    known = model if model and default_registry().get(model) is not None else None  # a Hub repo stays a size
    quant = resolved.to_json().get("quant") if resolved is not None else None
    precision = resolved.precision if resolved is not None else request.precision
    served = answer.payable
    rule = answer.rule_fit
    differs = rule is not None and _key(rule) != _key(answer.fit)
    unmet, unmet_card = unmet_of(answer)
    return DemandRecord(
        day=day, catalog_id=answer.catalog.id, language=language, intent=answer.intent,
        model=known, size_class=size_class(params_b) if known is None else None,
        format=str(quant or precision) if (quant or precision) else None,
        context_class=context_class(resolved.context_tokens if resolved is not None else request.context_tokens),
        concurrency_class=concurrency_class(resolved.batch if resolved is not None else request.batch),
        workload=resolved.workload if resolved is not None else request.workload,
        card=served.card.id if served is not None else None, card_count=served.count if served is not None else None,
        monthly_usd=served.monthly_usd if served is not None else None,
        hourly_usd=served.hourly_usd if served is not None else None,
        rule_card=rule.card.id if differs and rule is not None else None,
        rule_count=rule.count if differs and rule is not None else None,
        unmet=unmet, unmet_card=unmet_card,
    )


async def record_demand(core: Core, answer: Answer, language: str, *, now: dt.datetime | None = None) -> None:
    """Keep the answer's demand record (CARDFIT_DEMAND=0: nothing). Never raises: a store that fails is logged and
    counted, and the answer goes out as if nothing happened."""
    if not core.settings.demand:
        return
    try:
        record = demand_record(answer, language, day_of(now or dt.datetime.now(dt.UTC)))
        if record is None:
            return
        await core.store.keep_demand(record)
    except Exception as exc:  # noqa: BLE001 - a record is worth less than the answer it describes
        log.warning("demand record not kept: %s: %s", exc.__class__.__name__, str(exc)[:120])
        metrics.DEMAND_RECORDS.labels("failed").inc()
        return
    metrics.DEMAND_RECORDS.labels("kept").inc()


# -- the report ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DemandReport:
    now: PeriodFigures
    before: PeriodFigures  # the period of the same length just before
    # Card id -> name in the catalog in service, for the text and the chart (JSON and CSV keep the ids); an id no
    # longer in the catalog is shown as the id.
    names: Mapping[str, str] = field(default_factory=dict)

    def card_name(self, card: str) -> str:
        return self.names.get(card, card)

    @staticmethod
    def model_name(model: str) -> str:
        """A registry id as the answers name the model ("llama-3.1-70b" -> "Llama 3.1 70B"); a size class as it is."""
        shape = default_registry().get(model)
        return shape.name if shape is not None else model

    def to_json(self) -> dict[str, Any]:
        return {"period": self.now.to_json(), "previous": self.before.to_json()}


async def demand_report(store: DemandRepository, today: dt.date, days: int = REPORT_DAYS,
                        catalog: Catalog | None = None) -> DemandReport:
    """The `days` days up to and including `today`, against the `days` days before them; the cards are shown by
    their names in `catalog` (the one in service)."""
    first = today - dt.timedelta(days=days - 1)
    previous_first = first - dt.timedelta(days=days)
    now = await store.demand_figures(first.isoformat(), today.isoformat(), top=TOP)
    # The previous period's every row, so a row of this period finds its count there even if it was not top then.
    before = await store.demand_figures(previous_first.isoformat(), (first - dt.timedelta(days=1)).isoformat(),
                                        top=1_000)
    names = {card.id: card.name for card in catalog.cards} if catalog is not None else {}
    return DemandReport(now, before, names)


async def prune_demand(store: DemandRepository, retention_days: int, today: dt.date) -> int:
    """Delete the records older than `retention_days` days (the retention job, bot/telegram/app.py)."""
    return await store.prune_demand((today - dt.timedelta(days=retention_days - 1)).isoformat())


CSV_HEADER = ("period", "first_day", "last_day", "section", "name", "count", "answers", "monthly_usd")


def csv_rows(report: DemandReport) -> list[tuple[object, ...]]:
    """The report as CSV rows (`cardfit demand --csv`): one per figure, each period's, under CSV_HEADER."""
    rows: list[tuple[object, ...]] = [CSV_HEADER]
    for period, figures in (("period", report.now), ("previous", report.before)):
        head = (period, figures.first_day, figures.last_day)
        rows.append((*head, "answers", "", "", figures.answers, ""))
        rows += [(*head, "model", name, "", n, "") for name, n in figures.models]
        rows += [(*head, "format", name, "", n, "") for name, n in figures.formats]
        rows += [(*head, "card", card, count, n, round(usd, 2)) for card, count, n, usd in figures.cards]
        rows += [(*head, f"unmet:{reason}", card, "", n, "") for reason, card, n in figures.unmet]
        rows.append((*head, "disagreements", "", "", figures.disagreements, ""))
        rows.append((*head, "with_layout", "", "", figures.with_layout, ""))
    return rows


def _share(lang: str, share: float | None) -> str:
    if share is None:
        return "–"
    return f"{share * 100:.0f} %" if lang == "de" else f"{share * 100:.0f}%"


def render_report(report: DemandReport, lang: str) -> str:
    """The report as the chat shows it (HTML): each figure with last period's beside it."""
    now, before = report.now, report.before
    earlier_models, earlier_formats = dict(before.models), dict(before.formats)
    earlier_cards = {(card, count): n for card, count, n, _ in before.cards}
    earlier_unmet = {(reason, card): n for reason, card, n in before.unmet}
    esc = html.escape
    none = t(lang, "demand.none")
    lines = [t(lang, "demand.title", first=now.first_day, last=now.last_day, before_first=before.first_day,
               before_last=before.last_day),
             t(lang, "demand.answers", now=now.answers, before=before.answers), "", t(lang, "demand.models")]
    lines += [t(lang, "demand.row", name=esc(report.model_name(name)), now=n, before=earlier_models.get(name, 0))
              for name, n in now.models] or [none]
    lines += ["", t(lang, "demand.formats")]
    lines += [t(lang, "demand.row", name=esc(name), now=n, before=earlier_formats.get(name, 0))
              for name, n in now.formats] or [none]
    lines += ["", t(lang, "demand.cards", revenue=fmt_usd(lang, now.revenue_usd),
                    before=fmt_usd(lang, before.revenue_usd))]
    lines += [t(lang, "demand.card_row", card=esc(f"{count}x {report.card_name(card)}"), now=n,
                revenue=fmt_usd(lang, usd), before=earlier_cards.get((card, count), 0))
              for card, count, n, usd in now.cards] or [none]
    lines += ["", t(lang, "demand.unmet")]
    lines += [t(lang, "demand.unmet_row", reason=t(lang, f"demand.reason.{reason}"),
                card=esc(report.card_name(card)) if card else "–", now=n, before=earlier_unmet.get((reason, card), 0))
              for reason, card, n in now.unmet] or [none]
    lines += ["", t(lang, "demand.disagree", share=_share(lang, now.disagreement_share), n=now.disagreements,
                    of=now.with_layout, before=_share(lang, before.disagreement_share))]
    return "\n".join(lines)


def render_png(report: DemandReport, lang: str) -> bytes:
    """Two panels: the top recommended cards and the unmet demand by card, this period beside the last."""
    from io import BytesIO

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    now, before = report.now, report.before
    figure = Figure(figsize=(9, 4.2), dpi=100)
    FigureCanvasAgg(figure)
    earlier_cards = {(card, count): n for card, count, n, _ in before.cards}
    earlier_unmet = {(reason, card): n for reason, card, n in before.unmet}
    panels = (
        (t(lang, "demand.chart.cards"), [f"{count}x {report.card_name(card)}" for card, count, _, _ in now.cards],
         [n for _, _, n, _ in now.cards], [earlier_cards.get((card, count), 0) for card, count, _, _ in now.cards]),
        (t(lang, "demand.chart.unmet"),
         [f"{t(lang, f'demand.reason.{reason}')}\n{report.card_name(card) if card else '–'}"
          for reason, card, _ in now.unmet],
         [n for _, _, n in now.unmet], [earlier_unmet.get((reason, card), 0) for reason, card, _ in now.unmet]),
    )
    for index, (title, labels, counts, earlier) in enumerate(panels):
        axes = figure.add_subplot(1, 2, index + 1)
        positions = list(range(len(labels)))
        axes.barh([p + 0.2 for p in positions], earlier, height=0.4, color="#b8c4d6",
                  label=t(lang, "demand.chart.before"))
        axes.barh([p - 0.2 for p in positions], counts, height=0.4, color="#2f6db5",
                  label=t(lang, "demand.chart.now"))
        axes.set_yticks(positions, labels, fontsize=8)
        axes.invert_yaxis()
        axes.set_title(title, fontsize=10)
        axes.set_xlabel(t(lang, "demand.chart.answers"), fontsize=8)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of answers: no 0.5
        if not labels:
            axes.text(0.5, 0.5, t(lang, "demand.none"), ha="center", va="center", transform=axes.transAxes)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles[::-1], labels[::-1], fontsize=8, loc="lower center", ncol=2, frameon=False)
    figure.suptitle(t(lang, "demand.chart.title", first=now.first_day, last=now.last_day), fontsize=11)
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    buffer = BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


async def demand_command(core: Core, given: CommandInput) -> Reply:
    """The operators' report: admins only (the command's scope), and only in a private chat, since customers'
    questions are the provider's business."""
    lang = given.caller.language
    if given.shared:
        return Reply(t(lang, "demand.private_only"))
    report = await demand_report(core.store, dt.datetime.now(dt.UTC).date(), catalog=core.catalog)
    text = render_report(report, lang)
    if not core.settings.demand:
        text = t(lang, "demand.disabled") + "\n\n" + text
    import asyncio  # here: `cardfit ask` imports the features and never draws

    png = await asyncio.to_thread(render_png, report, lang)  # matplotlib is CPU-bound: off the event loop
    return Reply(text, photo=png)


FEATURE = Feature("demand", commands=(Command("demand", Scope.ADMIN, demand_command, "command.demand"),))
