"""One sizing answer end to end (request -> requirement -> fit -> top-up link), and its JSON form (DESIGN.md)."""
from __future__ import annotations

from dataclasses import dataclass

from catalog.schema import Catalog
from engine.advice import PrecisionHint, precision_hint
from engine.fit import Layout, Selection, select
from engine.registry import Registry
from engine.sizing import Requirement, ResolvedRequest, SizeRequest, SizingError, resolve, size
from engine.topup import billing_hours, resolve_coin, topup_amount_usd, topup_url


@dataclass(slots=True)
class Answer:
    catalog: Catalog
    request: SizeRequest
    resolved: ResolvedRequest | None = None
    requirement: Requirement | None = None
    selection: Selection | None = None
    hint: PrecisionHint | None = None  # a named layout that fails, but fits in a narrower precision
    topup_url: str | None = None
    topup_amount_usd: float | None = None
    topup_hours: int | None = None  # the billing period the amount pays for (never below the minimum term)
    topup_minimum_applied: bool = False
    coin: str | None = None
    error: str | None = None

    @property
    def fit(self) -> Layout | None:
        return self.selection.fit if self.selection else None

    @property
    def payable(self) -> Layout | None:
        """The layout a top-up pays for: the named layout when it works, else the recommended one."""
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
        return notes

    def budget(self) -> dict[str, float | bool] | None:
        if self.resolved is None or self.resolved.memory_budget_gb is None or self.requirement is None:
            return None
        budget = self.resolved.memory_budget_gb
        return {"budget_gb": budget, "fits": self.requirement.total_gb <= budget,
                "spare_gb": budget - self.requirement.total_gb}

    def to_json(self) -> dict[str, object]:
        selection = self.selection
        request = self.resolved.to_json() if self.resolved else _raw_request_json(self.request)
        request.update(assumed=self.assumed, ignored=list(self.request.ignored))
        data: dict[str, object] = {
            "request": request,
            "requirement": self.requirement.to_json() if self.requirement else None,
            "fit": selection.fit.to_json(self.catalog) if selection and selection.fit else None,
            "reason": selection.reason if selection else None,
            "alternatives": [layout.to_json(self.catalog) for layout in selection.alternatives] if selection else [],
            "topup_url": self.topup_url,
            "error": self.error,
        }
        budget = self.budget()
        if budget is not None:
            data["budget"] = budget
        return data


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
) -> Answer:
    answer = Answer(catalog=catalog, request=request)
    try:
        resolved = resolve(request, catalog.sizing, registry)
        requirement = size(resolved, catalog.sizing)
    except SizingError as exc:
        answer.error = str(exc)
        return answer
    answer.resolved, answer.requirement = resolved, requirement
    answer.selection = select(requirement, resolved, catalog)
    answer.hint = precision_hint(resolved, answer.selection.fit, catalog)
    payable = answer.payable
    if payable is not None:
        amount = topup_amount_usd(catalog, payable.hourly_usd, payable.monthly_usd, billing)
        answer.topup_amount_usd = amount
        answer.topup_hours = billing_hours(catalog, billing)
        answer.topup_minimum_applied = answer.topup_hours > billing_hours(catalog, billing, minimum=False)
        answer.coin = resolve_coin(catalog, coin)
        answer.topup_url = topup_url(catalog, amount, answer.coin, user_id, topup_secret)
    return answer
