"""Helpers for golden tests: run the engine the way the seeds' tables are built, and round the way they print."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import cache

from catalog.loader import load_catalog
from catalog.schema import Catalog
from engine.answer.build import Answer, build_answer
from engine.sizing.rule import SizeRequest


@cache
def catalog(name: str) -> Catalog:
    return load_catalog(name).catalog


def half_up(value: float, decimals: int = 0) -> float:
    """Round as the seeds print (21.125 -> 21.13), not banker's rounding."""
    quant = Decimal(1).scaleb(-decimals)
    return float(Decimal(repr(float(value))).quantize(quant, rounding=ROUND_HALF_UP))


def ask(catalog_name: str, **fields) -> Answer:
    """The answer as the provider's rule alone gives it (Answer.rule_answer): the seeds' tables are the rule's
    picks, while an answer recommends the cheapest layout on which the engine also starts (engine.answer.lead)."""
    answer = build_answer(SizeRequest(**fields), catalog(catalog_name))
    assert answer.error is None, answer.error
    return answer.rule_answer()


def total(catalog_name: str, **fields) -> float:
    answer = ask(catalog_name, **fields)
    assert answer.requirement is not None
    return answer.requirement.total_gb


def component_gb(answer: Answer, name: str) -> float:
    assert answer.requirement is not None
    component = answer.requirement.component(name)
    assert component is not None, f"no {name} component in {answer.requirement.components}"
    return component.gb
