"""A speed target ("70B for 20 users at ≥ 15 tok/s each"): the lead becomes the cheapest layout that runs the
workload (the rule, room to spare, the engine starts: engine.answer.lead) and whose calibrated per-user decode at
the request's users meets the target (engine.speed); the layout the answer had before stays an alternative."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from catalog.schema import Catalog
from engine.fit.selection import Layout, Selection, same_layout
from engine.notes import Note
from engine.serving.review import ServingReview, running_layouts
from engine.sizing.rule import Requirement, ResolvedRequest
from engine.speed.layout import layout_speed


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    target_tok_s: float
    users: int
    met: bool  # the lead meets it
    layout: Layout | None  # the cheapest layout that meets it (the lead), else the fastest that runs
    per_user_tok_s: float | None  # that layout's calibrated per-user decode
    named: bool = False  # the layout is the one the user named (answered as named, met or not)

    def to_json(self) -> dict[str, object]:
        return {"target_tok_s": self.target_tok_s, "users": self.users, "met": self.met,
                "card": self.layout.card.id if self.layout else None,
                "count": self.layout.count if self.layout else None, "per_user_tok_s": self.per_user_tok_s}


def _per_user(layout: Layout, resolved: ResolvedRequest, requirement: Requirement,
              review: ServingReview | None) -> float | None:
    speed = layout_speed(layout.card, layout.count, resolved, requirement,
                         engine=review.engine if review is not None else None)
    return speed.decode_tok_s_per_user if speed is not None else None


def meet_target(selection: Selection, requirement: Requirement, resolved: ResolvedRequest, catalog: Catalog,
                review: ServingReview | None, target: float) -> tuple[Selection, TargetOutcome]:
    """The selection led by the cheapest running layout at `target` tok/s per user, and what was found."""
    lead = selection.fit
    users = resolved.batch
    if resolved.card:  # a layout the user named is answered as named: met or not
        speed = _per_user(lead, resolved, requirement, review) if lead is not None else None
        met = lead is not None and lead.valid and speed is not None and speed >= target  # valid: it runs there
        if not met:  # "Instead:" names the cheapest layout that runs it and meets the target, where one does
            meeting = next((layout for layout in running_layouts(requirement, resolved, catalog, review)
                            if (_per_user(layout, resolved, requirement, review) or 0.0) >= target), None)
            if meeting is not None:
                selection = dataclasses.replace(selection, recommended=meeting)
        return selection, TargetOutcome(target, users, met, lead, speed, True)
    if lead is not None and lead.valid:
        speed = _per_user(lead, resolved, requirement, review)
        if speed is not None and speed >= target:
            return selection, TargetOutcome(target, users, True, lead, speed)
    fastest: tuple[float, Layout] | None = None
    # cheapest first: the first that meets the target leads
    for layout in running_layouts(requirement, resolved, catalog, review):
        speed = _per_user(layout, resolved, requirement, review)
        if speed is None:
            continue
        if speed >= target:
            return _led_by(selection, layout, target, users, speed), TargetOutcome(target, users, True, layout, speed)
        if fastest is None or speed > fastest[0]:
            fastest = (speed, layout)
    if fastest is None:
        return selection, TargetOutcome(target, users, False, None, None)
    return selection, TargetOutcome(target, users, False, fastest[1], fastest[0])


def _led_by(selection: Selection, layout: Layout, target: float, users: int, speed: float) -> Selection:
    if selection.fit is not None and same_layout(selection.fit, layout):
        return selection
    reason = Note(f"cheapest layout that runs it at ≥ {target:g} tok/s for each of {users} users "
                  f"(≈ {speed:.0f})", "speed_target_lead", target=target, users=users, tok_s=speed)
    before = [selection.fit] if selection.fit is not None and selection.fit.valid else []
    alternatives = [a for a in (*before, *selection.alternatives) if not same_layout(a, layout)][:3]
    return dataclasses.replace(selection, fit=layout, reason=reason, alternatives=alternatives, recommended=layout)
