"""The ask path's shortcuts give what the long way gives: a walk's candidate as a layout, a formula
written from cached per-model pieces, a set's prices from the per-catalog table -- over every corpus question that
sizes, in both bundled catalogs."""
from __future__ import annotations

from collections.abc import Mapping

import pytest

from catalog.loader import load_catalog
from catalog.schema import Catalog
from engine.fit.selection import _layout, _ranked, _Rules, set_facts, valid_layout
from engine.formula import FORMULAS, FormulaValue, english_formula, formula_number
from engine.parse import Vocabulary, parse
from engine.sizing.rule import Requirement, ResolvedRequest, SizingError, resolve, size
from tests.test_answers_identical import corpus_texts

CATALOGS = ("gpurenthub", "gpuwithcrypto")


def _sized(catalog: Catalog) -> list[tuple[ResolvedRequest, Requirement]]:
    vocabulary = Vocabulary.of_catalog(catalog)
    found = []
    for text in corpus_texts():
        request = parse(text, vocabulary).request
        if request is None or request.intent in ("price", "biggest_model"):
            continue
        try:
            resolved = resolve(request, catalog.sizing)
            found.append((resolved, size(resolved, catalog.sizing)))
        except SizingError:
            continue
    return found


def _reference_formula(code: str, values: Mapping[str, FormulaValue]) -> str:
    return FORMULAS[code].format_map({name: formula_number(name, value) for name, value in values.items()})


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_candidates_become_the_layouts_the_long_way_builds(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    compared = 0
    for resolved, requirement in _sized(catalog):
        ranked = _ranked(requirement, resolved, catalog, _Rules(resolved, catalog))
        for candidate in ranked:
            quick = valid_layout(candidate, requirement, resolved.shape.kv_heads, catalog)
            slow = _layout(candidate.card, candidate.count, requirement, resolved, catalog, [])
            assert quick == slow and repr(quick) == repr(slow)
            compared += 1
    assert compared > 1000


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_formulas_read_as_written_value_by_value(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    codes = set()
    for _ in range(2):  # the second pass reads the cached pieces
        for _, requirement in _sized(catalog):
            for component in requirement.components:
                assert component.formula == _reference_formula(component.code, component.values)
                codes.add(component.code)
    assert len(codes) >= 5


def test_formula_pieces_keep_braces_types_and_signed_zero() -> None:
    values: dict[str, FormulaValue] = {"model": "odd {name}", "format": "Q4", "weights_gb": -0.0}
    for _ in range(2):
        assert english_formula("weights_published", values) == _reference_formula("weights_published", values)
    values["weights_gb"] = 0.0
    assert english_formula("weights_published", values) == "odd {name} as published (Q4) = 0.0 GB"
    for params in (2, 2.0, 2.5, True):
        values = {"params": params, "bytes": 2, "weights_gb": 4.0}
        assert english_formula("weights", values) == _reference_formula("weights", values)


@pytest.mark.parametrize("catalog_id", CATALOGS)
def test_set_facts_are_the_catalogs_arithmetic(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    for card in catalog.cards:
        for count in (1, 2, 3, 4, 8, 16):
            facts = set_facts(catalog, card, count)
            assert (facts.hourly_usd, facts.monthly_usd) == catalog.set_price_usd(card, count)
            assert facts.discount_percent == catalog.discount_percent(count)
            assert facts.gbps_per_usd_month == card.bandwidth_gbps / catalog.monthly_list_price_usd(card)
