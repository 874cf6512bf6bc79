"""One answer end to end (request -> requirement -> fit -> top-up link; a price question -> the card's prices; a
comparison -> both cards' layouts), and its JSON form (DESIGN.md)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from catalog.schema import Card, Catalog
from engine.answer.advice import CardComparison, PrecisionHint, compare_cards, precision_hint
from engine.answer.capacity import Capacity, biggest_model, budget_starts, sequence_capacity
from engine.answer.lead import recommend, runs, within_budget
from engine.answer.open_question import cheapest_layout, family_ids, largest_models, layout_for_money
from engine.answer.target import TargetOutcome, meet_target
from engine.fit.selection import (
    ROOM_GB,
    Layout,
    Selection,
    card_alias_notes,
    price_layout,
    same_layout,
    select,
    smallest_set,
    unknown_card_note,
)
from engine.fit.topup import billing_hours, period_prices, resolve_coin, topup_amount_usd, topup_url
from engine.models.registry import ModelShape, Registry, default_registry
from engine.notes import Note
from engine.serving import ServingCheck
from engine.serving.review import ServingOptions, ServingReview
from engine.sizing.rule import Requirement, ResolvedRequest, SizeRequest, SizingError, resolve, size
from engine.speed.estimate import SpeedEstimate
from engine.speed.layout import layout_speed
from engine.speed.training import TrainingJob, billed_hours, training_job

CARD_VRAM_TOLERANCE_GB = 1.0  # "A100 80GB" names an 80 GB card; "A100 40GB" does not


@dataclass(slots=True)
class Answer:
    catalog: Catalog
    request: SizeRequest
    resolved: ResolvedRequest | None = None
    requirement: Requirement | None = None
    selection: Selection | None = None  # the recommendation (engine.answer.lead): what runs
    rule_selection: Selection | None = None  # the provider's rule alone (engine.fit.selection.select)
    hint: PrecisionHint | None = None  # a named layout that fails, but fits in a narrower precision
    topup_url: str | None = None
    topup_amount_usd: float | None = None
    topup_hours: int | None = None  # the billing period the amount pays for (never below the minimum term)
    topup_minimum_applied: bool = False
    billing_span: int = 1  # how many billing periods the top-up pays for ("for 2 weeks")
    coin: str | None = None
    error: str | None = None
    billing: str | None = None  # the period prices and top-up are for: the question's, else the user's setting
    compare: list[CardComparison] | None = None  # intent "compare": each named card's layout, in the order named
    notes: list[Note] = field(default_factory=list)  # what building the answer noted (a coin not taken)
    review: ServingReview | None = None  # the serving check of the fit and of every layout shown
    capacity: Capacity | None = None  # a reverse question's answer (intents max_context, max_batch, biggest_model)
    capacity_layout: Layout | None = None  # max_context/max_batch: the layout answered, priced, when it runs
    target: TargetOutcome | None = None  # a speed target's outcome (engine.answer.target)
    job: TrainingJob | None = None  # a training job's GPU-hours and price ("on 50M tokens, 3 epochs")

    @property
    def intent(self) -> str:
        return self.request.intent or "size"

    @property
    def fit(self) -> Layout | None:
        return self.selection.fit if self.selection else None

    @property
    def rule_fit(self) -> Layout | None:
        """The rule's own pick (its golden tests read it): the named layout as the rule judges it, else its choice."""
        selection = self.rule_selection or self.selection
        return selection.fit if selection else None

    def rule_answer(self) -> Answer:
        """This answer as the provider's rule alone gives it: `fit` is the rule's pick (the seeds' tables)."""
        return dataclasses.replace(self, selection=self.rule_selection or self.selection)

    @property
    def payable(self) -> Layout | None:
        """The layout a top-up pays for: the named layout when it works, else the recommended one."""
        if self.capacity_layout is not None:
            return self.capacity_layout  # a reverse question is paid for on the layout it was answered for
        if self.selection is None:
            return None
        if self.selection.fit is not None and self.selection.fit.valid:
            return self.selection.fit
        return self.selection.recommended

    @property
    def assumed(self) -> list[str]:
        """Everything assumed on the way, in order: the request's own notes (parser, settings), then what
        resolving, sizing and selecting noted. Each step returns its notes; none writes into the request."""
        notes = list(self.request.assumed)
        if self.resolved is not None:
            notes.extend(self.resolved.notes)
        if self.requirement is not None:
            notes.extend(self.requirement.notes)
        if self.selection is not None:
            notes.extend(self.selection.notes)
        notes.extend(self.notes)
        if self.review is not None:
            notes.extend(self.review.notes)
        return notes

    @property
    def serving_layout(self) -> tuple[Card, int] | None:
        """The card and count the JSON `serving` describes: the fit's, or its card at `--tp` GPUs when no card
        or count was named."""
        fit = self.fit
        if fit is None or self.review is None or unrentable(fit):
            return None  # "more than one 8-GPU host" is not followed by "vLLM starts there"
        tp = self.review.options.tp
        named = self.resolved is not None and (self.resolved.card or self.resolved.gpu_count)
        return (fit.card, tp) if tp and not named else (fit.card, fit.count)

    @property
    def serving(self) -> ServingCheck | None:
        where = self.serving_layout
        return self.review.check(*where) if self.review is not None and where is not None else None

    @property
    def serving_fallback(self) -> Layout | None:
        """When the engine would not start on the fit (a layout the user named): the answer's own recommendation,
        so that "runs on ..." and "Instead: ..." name one layout; else the cheapest that passes the rule and the
        check."""
        fit, where = self.fit, self.serving_layout
        if self.review is None or fit is None or where != (fit.card, fit.count):
            return None
        check = self.review.check_layout(fit)
        if check is None or self.review.runs(check):
            return None
        lead = self.selection.recommended if self.selection is not None else None
        if lead is not None and not same_layout(lead, fit):
            return lead  # no search for the cheapest passing layout: the answer has chosen one
        return self.review.passing(fit)

    def speed(self) -> SpeedEstimate | None:
        """The calibrated speed of the layout `serving` describes, under the engine the serving check runs."""
        where, serving = self.serving_layout, self.serving
        if where is None or self.resolved is None or self.requirement is None:
            return None
        fit = self.fit
        if fit is not None and fit.speed is not None and where == (fit.card, fit.count) \
                and self.request.prompt_tokens is None and (serving is None or serving.engine == fit.speed.engine):
            return fit.speed  # worked out with the layout
        return layout_speed(where[0], where[1], self.resolved, self.requirement,
                            engine=serving.engine if serving is not None else None,
                            prompt_tokens=self.request.prompt_tokens)

    def speed_json(self) -> dict[str, object] | None:
        speed = self.speed()
        if speed is None:
            return None
        data = speed.to_json()
        target = self.request.target_tok_s
        if target is not None:
            data["target_tok_s"] = target
            data["meets_target"] = speed.decode_tok_s_per_user >= target
        return data

    def budget(self) -> dict[str, Any] | None:
        if self.resolved is None or self.resolved.memory_budget_gb is None or self.requirement is None:
            return None
        budget = self.resolved.memory_budget_gb
        resolved = self.resolved
        # "is 48gb enough?": the rule's memory, and whether the engine starts on one card of that memory. Cards
        # sold as that size differ in what the runtime sees (an A40 reports 45,520 MiB, an RTX A6000 48,676): where
        # the catalog has such cards the verdict is theirs, so it never contradicts a lead on one of them.
        starts_on: list[str] = []
        not_on: list[str] = []
        if self.review is not None:
            for card in self.catalog.cards:
                check = self.review.check(card, 1) if card.vram_gb == budget else None
                if check is not None:
                    (starts_on if check.starts else not_on).append(f"1x {card.name}")
        if starts_on or not_on:
            starts: bool | None = True if not not_on else False if not starts_on else None
        else:
            starts = budget_starts(self.review, budget, resolved.context_tokens, resolved.batch)
        return {"budget_gb": budget, "fits": self.requirement.total_gb <= budget,
                "spare_gb": budget - self.requirement.total_gb, "starts": starts,
                "starts_on": starts_on, "not_on": not_on}

    def money(self) -> dict[str, object] | None:
        """The user's money budget ("under $1000/mo") against the price of the layout to pay for, over the billing
        span: within it, or over it (none within the budget runs it: the lead is the cheapest that does)."""
        budget = self.request.budget_usd
        if budget is None:
            return None
        price = self.topup_amount_usd
        return {"budget_usd": budget, "billing": self.billing, "billing_span": self.billing_span,
                "price_usd": price, "within": price is not None and price <= budget + 0.005}

    def to_json(self) -> dict[str, object]:
        serving, fallback = self.serving, self.serving_fallback  # first: their notes join `assumed`
        selection = self.selection
        request = self.resolved.to_json() if self.resolved else _raw_request_json(self.request)
        asked = self.request
        request.update(assumed=self.assumed, ignored=list(asked.ignored), intent=self.intent, billing=self.billing,
                       coin=asked.coin, cheapest=asked.cheapest, count_implied=asked.count_implied,
                       compare_card=asked.compare_card, card_vram_gb=asked.card_vram_gb,
                       followup=asked.followup)
        if asked.budget_usd is not None:
            request["budget_usd"] = asked.budget_usd
        if asked.billing_span is not None:
            request["billing_span"] = asked.billing_span
        if asked.gpu_memory_utilization is not None:
            request["gpu_memory_utilization"] = asked.gpu_memory_utilization
        data: dict[str, object] = {
            "request": request,
            "requirement": self.requirement.to_json() if self.requirement else None,
            "fit": selection.fit.to_json(self.catalog) if selection and selection.fit else None,
            "rule_fit": self.rule_fit.to_json(self.catalog) if self.rule_fit is not None else None,
            "reason": selection.reason if selection else None,
            "alternatives": [layout.to_json(self.catalog) for layout in selection.alternatives] if selection else [],
            "topup_url": self.topup_url,
            "error": self.error,
            "compare": [item.layout.to_json(self.catalog) for item in self.compare] if self.compare is not None
            else None,
        }
        fit = self.fit
        if self.intent == "price" and fit is not None and isinstance(data["fit"], dict):
            data["fit"]["prices"] = period_prices(self.catalog, fit.hourly_usd, fit.monthly_usd)
        budget = self.budget()
        if budget is not None:
            data["budget"] = budget
        data["serving"] = serving.to_json() if serving is not None else None
        data["serving_fallback"] = fallback.to_json(self.catalog) if fallback is not None else None
        data["capacity"] = self.capacity.to_json() if self.capacity is not None else None
        data["speed"] = self.speed_json()
        if self.target is not None:
            data["target"] = self.target.to_json()
        if self.job is not None:
            data["job"] = self.job.to_json()
        money = self.money()
        if money is not None:
            data["money"] = money
        return data


RENT_PROBLEMS = ("set_sizes", "host")


def unrentable(layout: Layout) -> bool:
    """The layout cannot be rented so at all (its set sizes, one host): no engine runs on it."""
    return any(problem.code in RENT_PROBLEMS for problem in layout.problems)


def _raw_request_json(request: SizeRequest) -> dict[str, object]:
    return {
        "model": request.model, "params_b": request.params_b, "precision": request.precision,
        "kv_precision": request.kv_precision, "context_tokens": request.context_tokens, "batch": request.batch,
        "workload": request.workload, "card": request.card, "gpu_count": request.gpu_count,
    }


def build_answer(
    request: SizeRequest,
    catalog: Catalog,
    *,
    registry: Registry | None = None,
    user_id: int | str | None = None,
    topup_secret: str | None = None,
    billing: str | None = None,
    coin: str | None = None,
    serving: ServingOptions | None = None,
) -> Answer:
    """`billing`, `coin`: the user's settings; a period or coin named in the question wins over them.
    `serving`: the engine and its options for the serving check (default: chosen by the format)."""
    if request.gpu_memory_utilization is not None and (serving is None or serving.gpu_memory_utilization is None):
        # "--gpu-memory-utilization 0.85" in the question: vLLM's share for the check (a CLI flag wins)
        serving = dataclasses.replace(serving or ServingOptions(),
                                      gpu_memory_utilization=request.gpu_memory_utilization)
    answer = Answer(catalog=catalog, request=request, billing=request.billing or billing or catalog.default_billing,
                    billing_span=request.billing_span or 1)
    if request.intent == "price":
        answer.selection = _price_selection(request, catalog)
    elif request.intent == "biggest_model":
        _biggest_model(answer, serving, registry)
        if answer.error or answer.capacity_layout is None:
            return answer
    else:
        try:
            resolved = _named_card(request, resolve(request, catalog.sizing, registry), catalog)
            engine = serving.engine if serving is not None and serving.engine is not None else request.engine
            if engine is not None:  # the speed of every layout is then that engine's (the serving check's)
                resolved = dataclasses.replace(resolved, engine=engine)
            requirement = size(resolved, catalog.sizing)
        except SizingError as exc:
            answer.error = str(exc)
            return answer
        answer.resolved, answer.requirement = resolved, requirement
        answer.selection = select(requirement, resolved, catalog, cheapest=request.cheapest and not resolved.card)
        answer.hint = precision_hint(resolved, answer.selection.fit, catalog, serving)
        answer.review = ServingReview.of(resolved, requirement, catalog, serving)
        answer.rule_selection = answer.selection
        answer.selection = recommend(answer.selection, requirement, resolved, catalog, answer.review)
        if request.target_tok_s and resolved.workload == "inference" and request.intent in (None, "size"):
            answer.selection, answer.target = meet_target(answer.selection, requirement, resolved, catalog,
                                                          answer.review, request.target_tok_s)
        if request.budget_usd is not None and answer.target is None and request.intent in (None, "size"):
            billing, span = answer.billing, answer.billing_span
            answer.selection = within_budget(
                answer.selection, requirement, resolved, catalog, answer.review, request.budget_usd,
                lambda layout: topup_amount_usd(catalog, layout.hourly_usd, layout.monthly_usd, billing, span))
        if request.intent == "compare":
            answer.compare = _compare(answer, resolved, requirement)
            answer.hint = None
            valid = [item.layout for item in answer.compare if item.valid]
            if valid:
                # The answer to "H100 or A100?" is the cheaper of the two that runs (the fit, and what to pay for);
                # the rule's, the cheaper of the two it accepts.
                answer.rule_selection = _cheaper(valid, answer.selection.notes)
                running = [layout for layout in valid if runs(layout, answer.review)]
                if running:
                    answer.selection = _cheaper(running, answer.selection.notes)
        if request.train_tokens and resolved.workload != "inference" and answer.selection.fit is not None:
            fit = answer.selection.fit
            answer.job = training_job(fit.card, fit.count, fit.hourly_usd, resolved.params_b, resolved.workload,
                                      request.train_tokens, request.epochs or 1.0)
        _ = answer.serving  # checked now, so its notes are there for every reader of `assumed`
        if request.intent in ("max_context", "max_batch"):
            answer.capacity = _sequence_capacity(answer, resolved, requirement)
    _topup(answer, user_id, topup_secret, coin)
    return answer


def _capacity_layout(answer: Answer, resolved: ResolvedRequest) -> tuple[Card, int] | None:
    """The layout a reverse question is about: the card named (at its count, else one), else the fit."""
    if resolved.card is not None:
        card = _rented_card(resolved.card, answer.request.card_vram_gb, answer.catalog)
        if card is not None:
            return card, resolved.gpu_count or 1
    fit = answer.fit
    return (fit.card, fit.count) if fit is not None else None


def _sequence_capacity(answer: Answer, resolved: ResolvedRequest, requirement: Requirement) -> Capacity | None:
    """The reverse answer for its layout; a layout that cannot be rented is refused (no value, nothing to pay),
    one that runs is what the top-up pays for."""
    layout = _capacity_layout(answer, resolved)
    if layout is None:
        return None
    card, count = layout
    priced = price_layout(card, count, answer.catalog)
    capacity = sequence_capacity(answer.intent, resolved, requirement, answer.review, card, count,
                                 refused=priced.problems)
    if capacity.runs:
        answer.capacity_layout = priced
    return capacity


def _biggest_model(answer: Answer, serving: ServingOptions | None, registry: Registry | None) -> Answer:
    """'The biggest model on a 4090 / in 48 GB / on a $300/month budget': no model to size, the layout's capacity
    instead, and on a card the registry's largest models that run there (engine.answer.open_question), priced."""
    request, catalog = answer.request, answer.catalog
    card = None
    count = request.gpu_count or 1
    chosen_by_money: float | None = None  # the money budget that chose the layout (None: it rents nothing)
    if request.card is None and request.memory_budget_gb is None and request.budget_usd is not None:
        found = layout_for_money(catalog, request.budget_usd, answer.billing or catalog.default_billing,
                                 answer.billing_span)
        if found is None:  # the budget rents nothing: the cheapest layout, said so
            found = cheapest_layout(catalog)
            cheapest = price_layout(found[0], found[1], catalog)
            answer.notes.append(Note(f"nothing at {catalog.provider} rents within ${request.budget_usd:,.0f}: the "
                                     f"cheapest, {cheapest.label} (${cheapest.monthly_usd:,.0f}/month), is shown",
                                     "money_rents_nothing", provider=catalog.provider,
                                     budget_usd=request.budget_usd, layout=cheapest.label,
                                     monthly_usd=cheapest.monthly_usd))
        else:
            chosen_by_money = request.budget_usd
        card, count = found
    elif request.card is not None:
        card = _rented_card(request.card, request.card_vram_gb, catalog)
        if card is None:
            answer.error = str(unknown_card_note(catalog, _written_card(request)))
            return answer
    family = family_ids(request.model, registry or default_registry())
    try:
        capacity = biggest_model(request, catalog, card, count, serving, registry)
    except SizingError as exc:
        answer.error = str(exc)
        return answer
    if family:
        capacity = dataclasses.replace(capacity, models=tuple(
            shape.name for shape in _family_below(registry, family, capacity)))
    if card is not None:
        def runs_there(asked: SizeRequest) -> tuple[Layout | None, int] | None:
            answered = build_answer(asked, catalog, registry=registry, serving=serving)
            fit = answered.fit
            if answered.error or fit is None or not fit.valid or answered.resolved is None:
                return None
            return fit, answered.resolved.context_tokens

        picks = largest_models(request, (card, count), registry or default_registry(), runs_there, family)
        capacity = dataclasses.replace(capacity, picks=picks, budget_usd=chosen_by_money)
        priced = price_layout(card, count, catalog)
        if picks and priced.valid:
            answer.capacity_layout = priced
    elif request.memory_budget_gb is not None:
        def runs_in_budget(asked: SizeRequest) -> tuple[Layout | None, int] | None:
            # the user's own memory: the rule with room to spare, and the engine starts on one card of it
            answered = build_answer(asked, catalog, registry=registry, serving=serving)
            budget = answered.budget()
            if answered.error or budget is None or answered.resolved is None or not budget["fits"] \
                    or float(budget["spare_gb"] or 0) < ROOM_GB or budget["starts"] is False:
                return None
            fit = answered.fit if answered.fit is not None and answered.fit.valid else None
            return fit, answered.resolved.context_tokens

        picks = largest_models(request, request.memory_budget_gb, registry or default_registry(), runs_in_budget,
                               family)
        capacity = dataclasses.replace(capacity, picks=picks)
    answer.capacity = capacity
    return answer


def _family_below(registry: Registry | None, family: tuple[str, ...], capacity: Capacity) -> list[ModelShape]:
    """The family's models under the capacity's size, largest first."""
    limit = capacity.serving_value if capacity.serving_value is not None else capacity.rule_value
    shapes = [shape for shape in (registry or default_registry()) if shape.id in family
              and limit is not None and shape.params_b <= limit]
    return sorted(shapes, key=lambda shape: -shape.params_b)[:3]


def _rented_card(written: str, vram_gb: float | None, catalog: Catalog) -> Card | None:
    """The catalog's card of that name -- and, when the user gave its memory ("A100 40GB"), of that memory."""
    card = catalog.card(written)
    if card is not None and vram_gb is not None and abs(card.vram_gb - vram_gb) > CARD_VRAM_TOLERANCE_GB:
        return None
    return card


def _written_card(request: SizeRequest) -> str:
    """The card as the user named it, with its memory when they gave one ('rtx 3060 12GB')."""
    written = request.card or ""
    return f"{written} {request.card_vram_gb:g}GB" if request.card_vram_gb is not None else written


def _count(request: SizeRequest, card: Card, catalog: Catalog) -> int | None:
    """The count asked for; None for 'a B200' (an article, and a card rented only in sets): the smallest set
    that works is then chosen."""
    if request.count_implied and request.gpu_count == 1 and 1 not in card.set_sizes:
        return None
    return request.gpu_count


def _article_set_note(card: Card, catalog: Catalog) -> Note:
    sizes = ", ".join(str(n) for n in card.set_sizes if n <= catalog.selection.max_gpus_per_host)
    return Note(f"{card.name} is rented in sets of {sizes}: its smallest set that does the job is used",
                "article_set", card=card.name, sizes=sizes)


def _named_card(request: SizeRequest, resolved: ResolvedRequest, catalog: Catalog) -> ResolvedRequest:
    """The card named, as the selection reads it: its memory checked, an article's count made the card's set."""
    if resolved.card is None or request.card is None:
        return resolved
    card = _rented_card(resolved.card, request.card_vram_gb, catalog)
    if card is None:
        return dataclasses.replace(resolved, card=_written_card(request)) if request.card_vram_gb else resolved
    count = _count(request, card, catalog)
    if count == resolved.gpu_count:
        return resolved
    return dataclasses.replace(resolved, gpu_count=count, notes=(*resolved.notes, _article_set_note(card, catalog)))


def _price_selection(request: SizeRequest, catalog: Catalog) -> Selection:
    """A price question: the named card or set with its prices (a card rented only in sets: its smallest set)."""
    assert request.card is not None
    card = _rented_card(request.card, request.card_vram_gb, catalog)
    if card is None:
        return Selection(fit=None, reason=unknown_card_note(catalog, _written_card(request)))
    count = _count(request, card, catalog)
    notes = card_alias_notes(request.card, card)
    if count is None:
        count = smallest_set(card, catalog)
        if request.gpu_count is not None:  # "a B200": said as one card
            notes = (*notes, _article_set_note(card, catalog))
    layout = price_layout(card, count, catalog)
    reason = f"{layout.label} at {catalog.provider}" if layout.valid else "; ".join(layout.problems)
    return Selection(fit=layout, reason=reason, recommended=layout if layout.valid else None, notes=notes)


def _cheaper(layouts: list[Layout], notes: tuple[Note, ...]) -> Selection:
    best = min(layouts, key=lambda layout: layout.monthly_usd)
    return Selection(fit=best, reason=f"cheaper of the cards compared: {best.label}", recommended=best, notes=notes)


def _compare(answer: Answer, resolved: ResolvedRequest, requirement: Requirement) -> list[CardComparison]:
    """Both cards named, each with its best set; a card the catalog does not rent is noted and left out."""
    catalog, request = answer.catalog, answer.request
    cards: list[Card] = []
    for written in (resolved.card, request.compare_card):
        if written is None:
            continue
        card = catalog.card(written)
        if card is None:
            answer.notes.append(unknown_card_note(catalog, written))
        elif all(card.id != other.id for other in cards):
            cards.append(card)
    return compare_cards(resolved, requirement, catalog, cards)


def _topup(answer: Answer, user_id: int | str | None, secret: str | None, coin: str | None) -> None:
    """The top-up link for the layout to pay for, in the question's coin when the catalog takes it."""
    catalog, asked = answer.catalog, answer.request.coin
    if asked is not None and asked.upper() not in catalog.coins:
        answer.notes.append(Note(f"{catalog.provider} does not take {asked.upper()}; the top-up is in "
                                 f"{resolve_coin(catalog, coin)}", "coin_not_taken", provider=catalog.provider,
                                 coin=asked.upper(), used=resolve_coin(catalog, coin),
                                 coins=", ".join(catalog.coins)))
        asked = None
    payable = answer.payable
    if payable is None:
        return
    billing, span = answer.billing, answer.billing_span
    if answer.job is not None and answer.fit is not None and same_layout(payable, answer.fit):
        # A training job is paid for its own hours (whole hours, never below the minimum term), by the hour.
        answer.topup_hours = billed_hours(answer.job.hours, catalog.minimum_term_hours)
        amount = payable.hourly_usd * answer.topup_hours
        answer.topup_minimum_applied = answer.topup_hours > max(1, math.ceil(answer.job.hours))
    else:
        amount = topup_amount_usd(catalog, payable.hourly_usd, payable.monthly_usd, billing, span)
        answer.topup_hours = billing_hours(catalog, billing, span=span)
        answer.topup_minimum_applied = answer.topup_hours > billing_hours(catalog, billing, minimum=False, span=span)
    answer.topup_amount_usd = amount
    answer.coin = resolve_coin(catalog, asked or coin)
    answer.topup_url = topup_url(catalog, amount, answer.coin, user_id, secret)
