"""What an answer recommends: the cheapest layout on which the workload really runs (DESIGN.md, "Beyond the seeds'
arithmetic"). The provider's rule picks first (engine.fit.selection.select, with its golden tests); a layout it
picks or the user names runs when, besides the rule, it has room to spare (engine.fit.selection.ROOM_GB) and the
engine that would serve it starts there (engine.serving.review). Training is judged by what the trainer needs:
ZeRO-3 / FSDP shard parameters, so the tensor-parallel head rule does not apply to it."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from catalog.schema import Catalog
from engine.fit.ranking import plan
from engine.fit.selection import (
    ROOM_GB,
    Layout,
    Rules,
    Selection,
    evaluate_layout,
    has_room,
    same_layout,
    without_tensor_parallel,
)
from engine.notes import Note
from engine.serving import ServingCheck
from engine.serving.review import NOWHERE, ServingReview, cheapest_running
from engine.sizing.rule import Requirement, ResolvedRequest


def why_not(layout: Layout, review: ServingReview | None) -> Note | None:
    """Why a layout the rule accepts does not run: the engine would not start there, or no room is left; None
    when it runs (or the rule refuses it: its problems say why)."""
    if not layout.valid:
        return None
    check = review.check_layout(layout) if review is not None else None
    if check is not None and not check.starts:
        return serving_refusal(check, review)
    if check is not None and review is not None and not review.runs(check):
        return holds_fewer(check, review.resolved.batch)
    if not has_room(layout):
        spare = layout.spare_gb if layout.per_gpu is None else min(layout.spare_gb, layout.per_gpu.spare_gb)
        return Note(f"{max(spare, 0.0):.1f} GB spare is no room to run it (at least 0.5 GB)", "no_room",
                    spare_gb=max(spare, 0.0))
    return None


def serving_refusal(check: ServingCheck, review: ServingReview | None) -> Note:
    engine = "vLLM" if check.engine == "vllm" else check.engine
    context = review.resolved.context_tokens if review is not None else 0
    return Note(f"{engine} would not start there at {context:,} tokens", "serving_wont_start", engine=engine,
                tokens=context)


def holds_fewer(check: ServingCheck, batch: int) -> Note:
    engine = "vLLM" if check.engine == "vllm" else check.engine
    users = math.floor(check.max_concurrency or 0.0)
    return Note(f"{engine} holds only {users} of the {batch} requests at once there", "serving_holds_fewer",
                engine=engine, users=users, batch=batch)


def runs(layout: Layout | None, review: ServingReview | None) -> bool:
    return layout is not None and layout.valid and why_not(layout, review) is None


def _running(layout: Layout, review: ServingReview | None, requirement: Requirement, resolved: ResolvedRequest,
             catalog: Catalog) -> Layout | None:
    """The cheapest layout that runs, searched when `layout` (valid by the rule) does not."""
    check = review.check_layout(layout) if review is not None else None
    if check is not None and review is not None and not review.runs(check):
        if any(note.code in NOWHERE for note in check.notes):
            return None  # refused on every layout (the context is over the model's maximum)
        return review.passing(layout)
    return cheapest_running(requirement, resolved, catalog, review)


def recommend(rule: Selection, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
              review: ServingReview | None) -> Selection:
    """The answer's selection: `rule` (the rule's own) where its layouts run, else the named layout marked as not
    running and the recommendation moved to the cheapest layout that does."""
    if review is not None and review.options.tp and not resolved.card:
        return rule  # `--tp N`: the user asked for the check of the rule's card at N GPUs (the JSON's serving)
    fit, recommended = rule.fit, rule.recommended
    if resolved.workload != "inference":
        fit = without_tensor_parallel(fit) if fit is not None else None
    lead = recommended
    if recommended is not None and not runs(recommended, review):
        lead = _running(recommended, review, requirement, resolved, catalog)
    if not resolved.card:
        moved, rule = _stated_count(rule, lead, requirement, resolved, catalog, review)
        if moved is not None:
            return moved
        sharded = _sharded(rule, lead, requirement, resolved, catalog)
        if sharded is not None:
            return sharded
    if resolved.card:
        named = fit
        if fit is not None:
            problem = why_not(fit, review)
            if problem is not None:
                named = dataclasses.replace(fit, valid=False, problems=(*fit.problems, problem))
        # The rule's choice leads the alternatives of a named layout: the recommendation takes its place.
        alternatives: list[Layout] = []
        for option in rule.alternatives:
            shown = lead if recommended is not None and same_layout(option, recommended) else option
            if shown is None or named is not None and same_layout(shown, named) \
                    or shown.valid and not has_room(shown) \
                    or any(same_layout(shown, other) for other in alternatives):
                continue
            alternatives.append(shown)
        return dataclasses.replace(rule, fit=named, recommended=lead, alternatives=alternatives[:3])
    if fit is None or lead is fit:
        return rule
    if lead is None:
        problem = why_not(fit, review)
        return Selection(fit=None, reason=Note(f"no layout on which it runs: {problem}", "nothing_runs",
                                               problem=problem),
                         recommended=None, notes=rule.notes)
    alternatives = [a for a in rule.alternatives if not same_layout(a, lead) and not same_layout(a, fit)
                    and not (a.valid and not has_room(a))]  # 0.0 GB spare: as little an option as the lead's
    engine = review.engine if review is not None else None
    reason = Note(f"cheapest layout on which {engine or 'it'} runs with room to spare", "runs_lead",
                  engine={"vllm": "vLLM"}.get(engine or "", engine or ""))
    return Selection(fit=lead, reason=reason, alternatives=alternatives, recommended=lead, notes=rule.notes)


def cheapest_sharded(requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog) -> Layout | None:
    """Full fine-tuning with no layout named: the cheapest layout of any count that the rule accepts with room to
    spare once the tensor-parallel head rule is dropped (ZeRO-3 / FSDP, see without_tensor_parallel); a multi-GPU
    set still needs the interconnect the rule asks for training (the rule's own check, kept)."""
    rules = Rules(resolved, catalog)
    for _, count, _, card in plan(catalog).by_price:
        if card.vram_gb * count < requirement.total_gb + ROOM_GB:
            continue
        layout = without_tensor_parallel(evaluate_layout(card, count, requirement, resolved, catalog, rules))
        if layout.valid and has_room(layout):
            return layout
    return None


def cheapest_at_count(count: int, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
                      review: ServingReview | None) -> Layout | None:
    """The GPU count the user gave with no card ("--tensor-parallel-size 4", "on 4 GPUs"): the cheapest layout of
    that count on which it runs (the rule with room to spare, and the engine starts there; full fine-tuning sharded,
    as cheapest_sharded)."""
    rules = Rules(resolved, catalog)
    for _, n, _, card in plan(catalog).by_price:
        if n != count or card.vram_gb * count < requirement.total_gb + ROOM_GB:
            continue
        layout = evaluate_layout(card, count, requirement, resolved, catalog, rules)
        if resolved.workload == "full":
            layout = without_tensor_parallel(layout)
        if not layout.valid or not has_room(layout):
            continue
        check = review.check(card, count) if review is not None else None
        if check is None or review is not None and review.runs(check):
            return layout
    return None


def _stated_count(rule: Selection, lead: Layout | None, requirement: Requirement, resolved: ResolvedRequest,
                  catalog: Catalog, review: ServingReview | None) -> tuple[Selection | None, Selection]:
    """A GPU count given with no card: (the selection led by the cheapest layout of that count that runs, `rule`),
    or (None, `rule` with a note that no layout of that count runs it); (None, `rule`) when no count was given."""
    count = resolved.gpu_count
    if not count or lead is not None and lead.count == count:
        return None, rule
    counted = cheapest_at_count(count, requirement, resolved, catalog, review)
    if counted is None:
        return None, dataclasses.replace(rule, notes=(*rule.notes, Note(
            f"no layout of {count} GPUs runs it: the cheapest of any count is shown", "count_none", count=count)))
    alternatives: list[Layout] = []
    for option in (lead, *rule.alternatives):
        if option is not None and not same_layout(option, counted) \
                and not any(same_layout(option, other) for other in alternatives):
            alternatives.append(option)
    reason = Note(f"cheapest layout of {count} GPUs (the count you gave) on which it runs", "count_lead",
                  count=count)
    return Selection(fit=counted, reason=reason, alternatives=alternatives[:3], recommended=counted,
                     notes=rule.notes), rule


def _sharded(rule: Selection, lead: Layout | None, requirement: Requirement, resolved: ResolvedRequest,
             catalog: Catalog) -> Selection | None:
    """Full fine-tuning with no layout named: the cheapest sharded layout when it costs less than `lead`."""
    if resolved.workload != "full" or lead is None or resolved.gpu_count:
        return None
    sharded = cheapest_sharded(requirement, resolved, catalog)
    if sharded is None or sharded.monthly_usd >= lead.monthly_usd - 0.005:
        return None
    alternatives = [lead, *(a for a in rule.alternatives if not same_layout(a, lead) and not same_layout(a, sharded))]
    reason = Note("cheapest layout on which the trainer runs: ZeRO-3 / FSDP shard the parameters over the GPUs, so "
                  "no tensor-parallel head rule applies", "sharded_lead")
    return Selection(fit=sharded, reason=reason, alternatives=alternatives[:3], recommended=sharded,
                     notes=rule.notes)


def within_budget(selection: Selection, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
                  review: ServingReview | None, budget_usd: float, price: Callable[[Layout], float]) -> Selection:
    """A money budget with no layout named ("Budget 500 $ im Monat"): when the lead costs more than the budget
    (`price`: a layout's price over the billing span), the cheapest layout that runs leads instead where it is
    within the budget -- never "nothing within $500 runs it" above an alternative at $456 that does."""
    lead = selection.fit
    if resolved.card or lead is None or not lead.valid or price(lead) <= budget_usd + 0.005:
        return selection
    cheapest = cheapest_running(requirement, resolved, catalog, review)
    if cheapest is None or same_layout(cheapest, lead) or price(cheapest) > budget_usd + 0.005:
        return selection
    alternatives = [lead, *(a for a in selection.alternatives if not same_layout(a, lead)
                            and not same_layout(a, cheapest))]
    reason = Note(f"cheapest layout on which it runs, within the budget of ${budget_usd:,.0f}", "budget_lead",
                  budget_usd=budget_usd)
    return Selection(fit=cheapest, reason=reason, alternatives=alternatives[:3], recommended=cheapest,
                     notes=selection.notes)
