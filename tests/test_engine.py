"""Engine rules beyond the seed tables: KV refinements, registry integrity, validation, properties."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.texts.render import render_answer, render_parse_error
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.models.registry import default_registry, typical_shape
from engine.notes import Note
from engine.parse import ERROR_CODES, parse
from engine.sizing.rule import MIN_PARAMS_B, SizeRequest, SizingError, kv_cache, resolve, size
from tests.support.seedmath import ask, component_gb

RH = load_catalog("gpurenthub").catalog
WC = load_catalog("gpuwithcrypto").catalog


def test_70b_int4_at_32k_components_and_formula():
    answer = ask("gpurenthub", params_b=70, precision="int4", context_tokens=32768)
    parts = {c.name: round(c.gb, 1) for c in answer.requirement.components}
    assert parts == {"weights": 35.0, "kv_cache": 10.7, "overhead": 2.0}
    assert round(answer.requirement.total_gb, 1) == 47.7
    assert answer.requirement.component("weights").formula == "70 x 0.5 B = 35.0 GB"


# -- registry ------------------------------------------------------------------------------------------------

def test_registry_has_30_plus_models_each_with_a_source():
    registry = default_registry()
    assert len(registry) >= 30
    for model in registry:
        assert model.source, model.id
        assert model.params_b > 0 and model.active_params_b <= model.params_b, model.id


@pytest.mark.parametrize("model_id", [
    "llama-3.1-70b", "llama-3.1-8b", "llama-3.1-405b", "qwen2.5-32b", "qwen2.5-72b", "mistral-7b", "gpt-oss-120b",
    "deepseek-v3", "deepseek-r1", "deepseek-v4-flash", "deepseek-v4-pro", "flux.1-dev", "llama-2-7b", "llama-3.2-3b",
    "llama-3.3-70b", "mixtral-8x7b", "qwen3-32b", "gemma-2-27b", "gemma-3-27b", "phi-3-mini-4k", "phi-4",
])
def test_design_ids_present(model_id):
    assert default_registry().get(model_id).id == model_id


def test_head_dim_from_config_not_hidden_over_heads():
    registry = default_registry()
    assert registry.get("qwen3-32b").head_dim == 128
    assert registry.get("gemma-2-27b").head_dim == 128
    assert registry.get("gemma-2-9b").head_dim == 256
    assert registry.get("gpt-oss-120b").head_dim == 64
    assert registry.get("mistral-small-24b").head_dim == 128


def test_aliases_resolve():
    registry = default_registry()
    for alias, model_id in (("Llama 3.1 70B", "llama-3.1-70b"), ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),
                            ("gpt oss 120b", "gpt-oss-120b"), ("FLUX.1 [dev]", "flux.1-dev"),
                            ("deepseek v4 flash", "deepseek-v4-flash"), ("mixtral 8x7b", "mixtral-8x7b")):
        assert registry.get(alias).id == model_id, alias


def test_moe_uses_total_params_for_memory_and_active_for_speed():
    answer = ask("gpurenthub", model="mixtral-8x7b", precision="bf16")
    assert component_gb(answer, "weights") == pytest.approx(46.7 * 2)
    assert answer.requirement.active_weights_gb == pytest.approx(12.9 * 2)


# -- KV cache refinements -----------------------------------------------------------------------------------

def test_sliding_window_caps_mistral_7b_v01_at_4096_tokens():
    shape = default_registry().get("mistral-7b")
    at_4k = kv_cache(shape, 2, 4096, 1).gb
    assert kv_cache(shape, 2, 32768, 1).gb == pytest.approx(at_4k)
    v03 = default_registry().get("mistral-7b-v0.3")
    assert kv_cache(v03, 2, 32768, 1).gb == pytest.approx(8 * at_4k)


def test_gemma_2_half_the_layers_windowed():
    shape = default_registry().get("gemma-2-9b")
    assert shape.sliding_layers == shape.layers // 2 and shape.sliding_window == 4096
    full = 2 * shape.kv_heads * shape.head_dim * 2
    expected = full * (21 * 8192 + 21 * 4096)
    assert kv_cache(shape, 2, 8192, 1).gb * 1e9 == pytest.approx(expected)


def test_gemma_3_five_of_six_layers_windowed():
    shape = default_registry().get("gemma-3-27b")
    assert shape.sliding_window == 1024 and shape.sliding_layers > shape.layers * 0.8
    at_128k = kv_cache(shape, 2, 131072, 1).gb
    naive = 2 * shape.layers * shape.kv_heads * shape.head_dim * 2 * 131072 / 1e9
    assert at_128k < naive / 4


def test_mla_deepseek_v3_latent_cache():
    shape = default_registry().get("deepseek-v3")
    component = kv_cache(shape, 2, 131072, 1)
    assert component.gb * 1e9 == pytest.approx(61 * (512 + 64) * 2 * 131072)
    assert "MLA latent" in component.formula


def test_diffusion_model_has_no_kv_cache():
    answer = ask("gpurenthub", model="flux.1-dev")
    assert answer.requirement.component("kv_cache") is None


def test_v4_kv_unknown_is_said_not_guessed():
    answer = ask("gpurenthub", model="deepseek-v4-flash", context_tokens=131072)
    assert answer.requirement.component("kv_cache") is None
    assert any("KV cache not included" in a for a in answer.assumed)


# -- bare sizes -----------------------------------------------------------------------------------------------

def test_a_seed_size_keeps_the_seed_typical_shape_and_says_so():
    """The seeds' rows (7, 13, 34, 70, 405 B) keep the seeds' 2023 shapes: their golden cells depend on them."""
    for size_b, layers, kv_heads in ((7, 32, 8), (13, 40, 40), (34, 60, 8), (70, 80, 8), (405, 126, 8)):
        shape, nominal = typical_shape(size_b)
        assert (nominal, shape.layers, shape.kv_heads, shape.derived_from) == (size_b, layers, kv_heads, ())
    answer = ask("gpurenthub", params_b=70)
    assert any("typical 70B model" in a for a in answer.assumed)


def test_a_size_off_the_seed_rows_gets_a_shape_of_today_from_the_registry():
    """'a 12b model in 8bit for 8 users': not the seed's 13B multi-head shape (53.7 GB of KV) but that of a real
    model near 12B with grouped KV heads, named in the answer."""
    registry = default_registry()
    shape, nominal = typical_shape(12)
    assert nominal == 12 and shape.params_b == 12 and shape.typical
    assert shape.kv_heads < shape.attention_heads  # grouped KV heads
    model = shape.derived_from[0]
    real = next(m for m in registry if m.name == model)
    assert (shape.layers, shape.kv_heads, shape.head_dim) == (real.layers, real.kv_heads, real.head_dim)
    assert len(shape.derived_from) == 3 and all(0.5 < next(m for m in registry if m.name == name).params_b / 12 < 2
                                                  for name in shape.derived_from)
    answer = ask("gpurenthub", params_b=12, precision="int8", batch=8)
    assert any(f"shape of today for 12B, that of {model}" in a for a in answer.assumed)
    assert component_gb(answer, "kv_cache") < 15  # the seed's 13B MHA shape gave 53.7 GB
    one_and_a_half = typical_shape(1.5)[0]
    assert one_and_a_half.derived_from and one_and_a_half.layers < 32  # no longer a 7B's 32 layers


# -- validation -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields,message", [
    ({"params_b": 0}, "params 0B"), ({"params_b": -3}, "params -3B"), ({"params_b": 100_001}, "params 100,001B"),
    ({"params_b": 7, "context_tokens": 0}, "context 0"), ({"params_b": 7, "context_tokens": 16_777_217}, "context"),
    ({"params_b": 7, "batch": 0}, "batch 0"), ({"params_b": 7, "batch": 4097}, "batch 4,097"),
    ({"model": "llama-9000"}, "unknown model"), ({"params_b": 7, "precision": "fp5"}, "unknown precision"),
    ({"params_b": 7, "kv_precision": "int4"}, "unknown KV cache precision"),
    ({"params_b": 7, "workload": "dance"}, "unknown workload"), ({}, "no model"),
])
def test_bad_values_are_named(fields, message):
    with pytest.raises(SizingError, match=message):
        resolve(SizeRequest(**fields), RH.sizing)


def test_limits_are_inclusive():
    resolve(SizeRequest(params_b=100_000, context_tokens=16_777_216, batch=4096), RH.sizing)


# -- properties -----------------------------------------------------------------------------------------------

def _total(catalog, **fields):
    return size(resolve(SizeRequest(**fields), catalog.sizing), catalog.sizing).total_gb


@settings(max_examples=60, deadline=None)
@given(st.floats(0.1, 5000), st.floats(0.1, 5000), st.sampled_from(["bf16", "fp8", "int4", "fp32"]),
       st.sampled_from(["inference", "full", "lora", "qlora"]))
def test_total_grows_with_params(a, b, precision, workload):
    low, high = sorted((a, b))
    for catalog in (RH, WC):
        assert _total(catalog, params_b=low, precision=precision, workload=workload) <= \
            _total(catalog, params_b=high, precision=precision, workload=workload) + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2_000_000), st.integers(1, 2_000_000), st.integers(1, 256),
       st.sampled_from(["llama-3.1-70b", "mistral-7b", "gemma-3-27b", "deepseek-v3", None]))
def test_total_grows_with_context_and_batch(c1, c2, batch, model):
    low, high = sorted((c1, c2))
    fields = {"model": model} if model else {"params_b": 13}
    for catalog in (RH, WC):
        assert _total(catalog, context_tokens=low, batch=batch, **fields) <= \
            _total(catalog, context_tokens=high, batch=batch, **fields) + 1e-9
        assert _total(catalog, context_tokens=low, batch=batch, **fields) <= \
            _total(catalog, context_tokens=low, batch=batch + 1, **fields) + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 1_000_000), st.integers(1, 64),
       st.sampled_from(["llama-3.1-70b", "qwen2.5-72b", "gemma-2-9b", "deepseek-r1", "gpt-oss-120b"]))
def test_fp8_kv_halves_the_cache(tokens, batch, model):
    shape = default_registry().get(model)
    assert kv_cache(shape, 1, tokens, batch).gb == pytest.approx(kv_cache(shape, 2, tokens, batch).gb / 2)


# -- inputs bounded from below; every answer is strict JSON ----------------------------------------

@pytest.mark.parametrize("params_b", [1e-7, 1e-306, 5e-324, 0.0099])
def test_a_model_under_10m_parameters_is_not_sized(params_b):
    with pytest.raises(SizingError, match=r"is too small to size: at least 0\.01B \(10M parameters\)"):
        resolve(SizeRequest(params_b=params_b), RH.sizing)
    answer = build_answer(SizeRequest(params_b=params_b), RH)
    assert answer.requirement is None and "too small" in answer.error


def test_the_smallest_size_is_answered_with_finite_numbers():
    answer = build_answer(SizeRequest(params_b=MIN_PARAMS_B), RH)
    assert answer.error is None and answer.selection.fit is not None
    json.dumps(answer.to_json(), allow_nan=False)
    assert answer.selection.fit.to_json(RH)["decode_tokens_per_s"] < 1e6  # 8 TB/s over 20 MB, not billions


@pytest.mark.parametrize("params_b", [5e-324, 1e-306, 0.01, 1e6])
def test_typical_shape_has_a_nearest_shape_for_any_positive_size(params_b):
    shape, nominal = typical_shape(params_b)
    assert nominal == params_b and shape.params_b == params_b and shape.derived_from and shape.layers


@pytest.mark.parametrize("params_b", [0, -1, float("inf"), float("nan")])
def test_typical_shape_refuses_what_is_no_size(params_b):
    with pytest.raises(ValueError, match="no typical shape"):
        typical_shape(params_b)


@pytest.mark.parametrize("text, written", [
    ("0.0000001B", "0.0000001B"), ("1e-306B", "1e-306B"), ("5e-324b", "5e-324B"), ("5 million parameters", "5 million"),
])
def test_the_parser_says_too_small_in_both_languages(text, written, bundled_vocabulary):
    error = parse(text, bundled_vocabulary).error
    assert isinstance(error, Note) and error.code == "parse_size_too_small" and error.code in ERROR_CODES
    assert error.values == {"written": written, "min_params_m": 10}
    assert str(error) == f"{written} is too small to size: Cardfit sizes models from 10 million parameters (0.01B) up"
    assert "from 10 million parameters (0.01B)" in render_parse_error("en", error)
    assert "ab 10 Millionen Parametern (0,01B)" in render_parse_error("de", error)


_REQUESTS = st.builds(
    SizeRequest,
    model=st.one_of(st.none(), st.sampled_from(["llama-3.1-70b", "deepseek-v3", "flux.1-dev", "mixtral-8x7b"])),
    params_b=st.one_of(st.none(), st.floats(min_value=0, max_value=2e5), st.sampled_from([5e-324, 1e-306, 0.01])),
    precision=st.sampled_from([None, "int4", "fp8", "bf16", "fp32"]),
    kv_precision=st.sampled_from([None, "fp8", "fp16"]),
    context_tokens=st.one_of(st.none(), st.integers(min_value=0, max_value=20_000_000)),
    batch=st.one_of(st.none(), st.integers(min_value=0, max_value=5000)),
    workload=st.sampled_from([None, "inference", "full", "lora", "qlora"]),
    card=st.sampled_from([None, "h100-sxm", "rtx-4090", "b200", "mi300x"]),
    gpu_count=st.one_of(st.none(), st.integers(min_value=0, max_value=70)),
    memory_budget_gb=st.one_of(st.none(), st.floats(min_value=1e-300, max_value=2e6)),
)


@given(request=_REQUESTS, catalog=st.sampled_from([RH, WC]))
@settings(max_examples=150, deadline=None)
def test_every_answer_is_strict_json_and_renders(request, catalog):
    if request.card is not None and request.gpu_count is None:
        request.gpu_count = 1
    answer = build_answer(request, catalog, user_id=42, topup_secret="s" * 16)
    json.dumps(answer.to_json(), allow_nan=False)  # no Infinity, no NaN
    for lang in ("en", "de"):
        assert render_answer(answer, lang, details=True)


@pytest.mark.parametrize("model, code, words", [
    ("glm-5", "kv_unmodelled_indexer", "also caches its sparse-attention indexer keys per token"),
])
def test_a_published_shape_whose_cache_is_not_modelled_says_why_not_that_it_is_unpublished(model, code, words):
    """A model whose config.json is in the registry is never called "not published": the answer says which part of
    the cache the formula does not size."""
    from bot.texts.render import plain, render_answer

    answer = ask("gpurenthub", model=model)
    assert answer.requirement.component("kv_cache") is None
    [note] = [n for n in answer.requirement.notes if n.code.startswith("kv_un")]
    assert note.code == code and words in str(note) and "not published" not in str(note)
    assert words in plain(render_answer(answer, "en"))
    assert "KV-Cache nicht enthalten" in plain(render_answer(answer, "de"))
