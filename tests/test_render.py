"""Reply texts: what the renderer says for the cases a QA run found wrong, in English and German."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bot.texts.i18n import texts
from bot.texts.render import describe_shape, plain, render_answer, render_formula
from engine.formula import FORMULAS
from engine.models.registry import default_registry, typical_shape
from tests.support.seedmath import ask

FORMULA_FIXTURE = Path(__file__).resolve().parent / "data" / "formula_renderings.json"


def text(lang: str = "en", catalog: str = "gpurenthub", details: bool = False, **fields) -> str:
    return plain(render_answer(ask(catalog, **fields), lang, details=details, max_alternatives=3))


def test_topup_period_says_the_minimum_term():
    from engine.answer.build import build_answer
    from engine.sizing.rule import SizeRequest
    from tests.support.seedmath import catalog

    answer = build_answer(SizeRequest(params_b=70), catalog("gpurenthub"), billing="hour")
    out = plain(render_answer(answer, "en"))
    assert "(one week — the minimum term)" in out and "amount=371.00" in out
    answer = build_answer(SizeRequest(params_b=70), catalog("gpuwithcrypto"), billing="week")
    assert "(one week)" in plain(render_answer(answer, "en"))


def test_german_details_translate_formulas_and_numbers():
    out = text("de", details=True, params_b=70, precision="int4", context_tokens=32768)
    assert "2 x 80 Layer x 8 KV-Köpfe x 128 x 2 B x 32.768 Token x 1 = 10,7 GB" in out
    english = ask("gpurenthub", params_b=70).requirement.component("kv_cache")
    assert render_formula(english, "en") == english.formula
    assert english.formula == "2 x 80 layers x 8 KV heads x 128 x 2 B x 8,192 tokens x 1 = 2.7 GB"


def _fixture_entries() -> list[dict]:
    return json.loads(FORMULA_FIXTURE.read_text(encoding="utf-8"))["entries"]


@pytest.mark.parametrize("entry", _fixture_entries(),
                         ids=lambda e: f"{e['catalog']}-" + "-".join(f"{k}={v}" for k, v in e["request"].items()))
def test_formulas_render_as_before_in_both_languages(entry):
    """Every component's formula, rendered from formula.<code> in the locale files, reads exactly as the English
    text (the JSON "formula") and the German phrase-table translation did before formulas had codes."""
    answer = ask(entry["catalog"], **entry["request"])
    components = answer.requirement.components
    assert [c.name for c in components] == [c["name"] for c in entry["components"]]
    for component, expected in zip(components, entry["components"], strict=True):
        assert component.formula == expected["en"]
        assert render_formula(component, "en") == expected["en"]
        assert render_formula(component, "de") == expected["de"]


def test_the_fixture_covers_every_formula_code():
    seen = set()
    for entry in _fixture_entries():
        seen |= {c.code for c in ask(entry["catalog"], **entry["request"]).requirement.components}
    assert seen == set(FORMULAS)
    assert {f"formula.{code}" for code in FORMULAS} <= set(texts("en")) & set(texts("de"))


def test_formula_values_are_the_engine_figures():
    """The locale rendering formats the component's own values, not its English text."""
    component = ask("gpurenthub", params_b=70, precision="int4").requirement.component("weights")
    assert (component.code, dict(component.values)) == ("weights", {"params": 70.0, "bytes": 0.5, "weights_gb": 35.0})
    other = dataclasses.replace(component, values={"params": 1234.5, "bytes": 0.5, "weights_gb": 617.25})
    assert render_formula(other, "en") == "1,234.5 x 0.5 B = 617.2 GB"
    assert render_formula(other, "de") == "1.234,5 x 0,5 B = 617,2 GB"


def test_named_card_without_count_uses_the_smallest_working_set():
    out = text(params_b=70, card="b200")
    assert "Yes — 2x B200" in out


def test_a_cheaper_set_is_offered_beside_a_single_card():
    out = text(model="falcon-40b")
    assert "1x MI300X" in out and "2x A40 (96 GB) — $456/month" in out


def test_instead_only_when_it_is_cheaper():
    out = text(model="llama-3.1-70b", precision="fp8", context_tokens=32768, card="rtx-6000-ada", gpu_count=2)
    assert "Yes — 2x RTX 6000 Ada" in out and "Instead" not in out
    out = text(params_b=70, card="rtx-4090", gpu_count=1)
    assert "No — 1x RTX 4090" in out and "Instead: 1x MI300X" in out


def test_flux_has_no_kv_cache_note_and_no_decode_ceiling():
    out = text(model="flux.1-dev")
    assert "KV cache" not in out and "Decode ceiling" not in out and "tokens" not in out


def test_context_beyond_the_models_window_is_noted():
    out = text(model="llama-2-13b", context_tokens=32768)
    assert "32,768 tokens is beyond Llama 2 13B's 4,096-token context window" in out
    out = text("de", model="llama-2-13b", context_tokens=32768)
    assert "über dem Kontextfenster von Llama 2 13B (4.096 Token)" in out


def test_context_that_does_not_enter_the_sizing_is_noted():
    out = text(params_b=70, workload="full", context_tokens=8192)
    assert "the context length does not enter full fine-tuning sizing here" in out


def test_prices_with_cents_show_them():
    out = text(params_b=13, workload="full")
    assert "$3,643.20/month" in out


def test_a_card_we_do_not_rent_says_so_and_offers_what_we_do():
    out = text(params_b=70, precision="int4", card="t4")
    assert "❌ GPU Rent Hub does not rent a 't4'" in out and "Fits on 1x A40" in out
    assert "Nothing in the catalog holds it" not in out


def test_a_card_alias_says_which_card_it_read():
    assert "'h100' read as H100 SXM" in text(params_b=70, card="h100", gpu_count=2)
    assert "read as" not in text(params_b=70, card="rtx 4090", gpu_count=1)


def test_one_shape_description_worded_by_the_engine_and_by_the_locale_alike():
    """engine.models.registry.ShapeSummary is the one description; its English (the JSON note) and the English locale
    rendering agree for every registered model and every typical shape."""
    shapes = [model.summary() for model in default_registry()]
    shapes += [typical_shape(size)[0].summary() for size in (7, 13, 34, 70, 405)]
    assert {shape.kind for shape in shapes} == {"unknown", "mla", "mha", "gqa"}
    for shape in shapes:
        assert describe_shape(shape, "en") == shape.english()
    gemma = default_registry().get("gemma-2-9b").summary()
    assert describe_shape(gemma, "de") == ("42 Layer, GQA mit 8 KV-Köpfen, Kopfdimension 256, "
                                           "21 Layer mit 4.096-Token-Fenster")
