"""Weight formats: published checkpoint sizes from config fields, the words people write, the data."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine.formats.table import (
    WeightFormat,
    WeightParts,
    all_formats,
    build_table,
    canonical_format,
    default_table,
    docs_table,
    weights_bytes,
)
from engine.sizing import rule as sizing

FIXTURE = yaml.safe_load((Path(__file__).parent / "data" / "formats_published.yaml").read_text(encoding="utf-8"))
MODELS: dict[str, dict[str, Any]] = FIXTURE["models"]
DOC = Path(__file__).resolve().parents[1] / "docs" / "formats.md"

# research/scripts/check_formats_yaml.py: the per-part formula with the table's bits reproduces the 112
# published GGUF sizes within 1.48 % (worst: Mistral-7B IQ1_S; mradermacher's 1-decimal 72B sizes are rounded up).
# Safetensors layouts are exact; HF shows shard sizes to 3 significant digits, so 0.2 % covers the rounding.
GGUF_TOLERANCE = 0.015
SAFETENSORS_TOLERANCE = 0.002
_FIELDS = ("layers", "hidden", "intermediate", "vocab", "heads", "kv_heads", "head_dim", "tied", "experts",
           "norms_per_layer", "qkv_bias", "o_bias", "expert_bias", "qk_norm")


def parts_of(model: str, **override: Any) -> WeightParts:
    config = {**MODELS[model], **override}
    return WeightParts.from_config(**{key: config[key] for key in _FIELDS if key in config})


def fmt(word: str, engine: str | None = None) -> WeightFormat:
    found = canonical_format(word, engine)
    assert found is not None, word
    return found


def _id(row: dict[str, Any]) -> str:
    return f"{row['model']}-{row['format']}-{row['repo']}-{row['gb']}GB"


# --- published sizes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(MODELS))
def test_parts_from_config_reproduce_the_reference_parameter_count(model: str) -> None:
    # params_computed_b in /work/shared/reference/models.yaml, 3 decimals; gpt-oss's attention sinks (64 per layer)
    # are the only tensors from_config leaves out.
    assert parts_of(model).total / 1e9 == pytest.approx(MODELS[model]["params_computed_b"], abs=6e-4)


@pytest.mark.parametrize("row", FIXTURE["gguf"], ids=_id)
def test_gguf_file_size_reproduces_the_published_one(row: dict[str, Any]) -> None:
    estimate = weights_bytes(fmt(row["format"]), parts_of(row["model"])).gb
    assert estimate == pytest.approx(row["gb"], rel=GGUF_TOLERANCE)


@pytest.mark.parametrize("row", FIXTURE["safetensors"], ids=_id)
def test_safetensors_checkpoint_reproduces_the_published_one(row: dict[str, Any]) -> None:
    override = {"intermediate": row["intermediate"]} if "intermediate" in row else {}
    estimate = weights_bytes(fmt(row["format"]), parts_of(row["model"], **override)).gb
    assert estimate == pytest.approx(row["gb"], rel=SAFETENSORS_TOLERANCE)


@pytest.mark.parametrize("row", FIXTURE["derived"], ids=_id)
def test_the_per_part_formula_agrees_with_the_per_tensor_derivation(row: dict[str, Any]) -> None:
    # research/scripts/derive_repos.py sizes every tensor with its real shape (GPTQ's g_idx is 32/out_features
    # per weight, FP8 block scales ceil(in/128) x ceil(out/128)); the table's one bpw per format stays within 0.2 %.
    override = {"intermediate": row["intermediate"]} if "intermediate" in row else {}
    estimate = weights_bytes(fmt(row["format"]), parts_of(row["model"], **override)).gb
    assert estimate == pytest.approx(row["gb"], rel=SAFETENSORS_TOLERANCE)


def test_the_fixture_covers_the_common_models_in_gguf_and_safetensors() -> None:
    gguf = {(row["model"], row["format"]) for row in FIXTURE["gguf"]}
    for model in ("llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.3", "qwen2.5-7b", "qwen2.5-32b", "qwen2.5-72b"):
        assert {(model, "Q4_K_M"), (model, "Q3_K_M")} <= gguf
    assert {("gemma-2-9b", "Q4_K_M"), ("llama-3.1-70b", "IQ1_S"), ("mistral-7b-v0.3", "IQ4_XS")} <= gguf
    assert len(gguf) == len(FIXTURE["gguf"]) == 112
    assert {row["repo"] for row in FIXTURE["safetensors"]} >= {
        "Qwen/Qwen2.5-7B-Instruct-AWQ", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
        "openai/gpt-oss-20b", "openai/gpt-oss-120b", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"}


def test_llama_70b_q4_k_m_is_42_5_gb_not_the_flat_half_byte_35() -> None:
    # bartowski/Meta-Llama-3.1-70B-Instruct-GGUF: Q4_K_M 42.52 GB; 0.5 B/param gives 35.3 GB.
    parts = parts_of("llama-3.1-70b")
    q4 = weights_bytes(fmt("Q4_K_M"), parts)
    assert q4.gb == pytest.approx(42.52, abs=0.1)
    assert q4.gb > 1.18 * parts.total * 0.5 / 1e9
    assert weights_bytes(fmt("awq"), parts).gb == pytest.approx(39.77, abs=0.05)


def test_qwen_72b_ffn_down_falls_back_because_29568_is_not_a_multiple_of_256() -> None:
    # mradermacher/Qwen2.5-72B-Instruct-GGUF Q4_K_M 47.5 GB; without the fallback the estimate would be ~9 % low.
    parts = parts_of("qwen2.5-72b")
    assert parts.ffn_not_multiple_of_256 and parts.ffn_down == 80 * 29568 * 8192
    q4 = weights_bytes(fmt("Q4_K_M"), parts)
    without = weights_bytes(fmt("Q4_K_M"), WeightParts(**{**_as_dict(parts), "ffn_not_multiple_of_256": False}))
    assert q4.ffn_down_fallback == pytest.approx(parts.ffn_down * (7.0 - 5.5312) / 8)
    assert q4.gb == pytest.approx(47.5, rel=GGUF_TOLERANCE)
    assert without.gb < 0.93 * 47.5
    assert weights_bytes(fmt("Q4_K_M"), parts_of("qwen2.5-32b")).ffn_down_fallback == 0


def _as_dict(parts: WeightParts) -> dict[str, Any]:
    return {name: getattr(parts, name) for name in WeightParts.__slots__}


def test_tied_gemma_stores_its_one_matrix_at_the_output_type() -> None:
    parts = parts_of("gemma-2-9b")
    assert parts.tied and parts.lm_head == 0
    q4 = weights_bytes(fmt("Q4_K_M"), parts)
    assert q4.lm_head == 0
    assert q4.embedding == pytest.approx(256000 * 3584 * 6.5625 / 8)
    # A safetensors format keeps the tied matrix at 16 bit, once.
    assert weights_bytes(fmt("awq"), parts).embedding == 256000 * 3584 * 2


def test_gguf_keeps_one_d_tensors_at_f32_and_safetensors_at_16_bit() -> None:
    parts = parts_of("qwen2.5-7b")
    assert weights_bytes(fmt("Q4_K_M"), parts).one_d == parts.one_d * 4
    assert weights_bytes(fmt("awq"), parts).one_d == parts.one_d * 2


def test_mxfp4_quantizes_only_the_gpt_oss_experts() -> None:
    parts = parts_of("gpt-oss-20b")
    assert parts.experts == 24 * 32 * 3 * 2880 * 2880 and parts.router == 24 * 2880 * 32
    out = weights_bytes(fmt("mxfp4"), parts)
    assert out.body == pytest.approx(parts.experts * 4.25 / 8 + (parts.body - parts.experts) * 2)
    assert out.embedding == out.lm_head == 201088 * 2880 * 2
    assert out.router == parts.router * 2
    assert out.gb == pytest.approx(13.76, rel=SAFETENSORS_TOLERANCE)


def test_a_dense_model_in_an_experts_only_format_quantizes_every_linear() -> None:
    parts = parts_of("llama-3.1-8b")
    assert weights_bytes(fmt("mxfp4"), parts).body == parts.body * 4.25 / 8


def test_breakdown_adds_up() -> None:
    out = weights_bytes(fmt("IQ3_M"), parts_of("llama-3.1-70b"))
    assert out.total == out.body + out.embedding + out.lm_head + out.one_d + out.router
    assert out.gb == out.total / 1e9


def test_exl2_bits_are_the_named_target_and_the_head_is_separate() -> None:
    parts = parts_of("llama-3.1-8b")
    low, high = weights_bytes(fmt("exl2:4.0"), parts), weights_bytes(fmt("8.0bpw exl2"), parts)
    assert high.body - low.body == pytest.approx(parts.body * 4.0 / 8)
    assert low.lm_head == high.lm_head == pytest.approx(parts.lm_head * 6.344 / 8)
    assert low.embedding == parts.embedding * 2


# --- the words people write ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("Q4_K_M", "q4_k_m"), ("q4km", "q4_k_m"), ("q4_k_m", "q4_k_m"), ("Q4-K-M", "q4_k_m"), ("q4_k", "q4_k_m"),
        ("Q4_K_M.gguf", "q4_k_m"), ("gguf q4_k_m", "q4_k_m"), ("Q4_K_S", "q4_k_s"), ("Q4_0", "q4_0"),
        ("Q5_K_M", "q5_k_m"), ("q6_k", "q6_k"), ("Q8_0", "q8_0"), ("q2_k", "q2_k"), ("Q3_K_L", "q3_k_l"),
        ("iq4_xs", "iq4_xs"), ("IQ4_XS", "iq4_xs"), ("IQ2_XXS", "iq2_xxs"), ("iq2_xs", "iq2_xs"), ("IQ1_S", "iq1_s"),
        ("awq", "awq"), ("AWQ-INT4", "awq"), ("gptq", "gptq"), ("GPTQ-Int4", "gptq"), ("gptq-int8", "gptq_int8"),
        ("w4a16", "w4a16"), ("nf4", "bnb_nf4"), ("bnb-4bit", "bnb_nf4"), ("load_in_4bit", "bnb_nf4"),
        ("qlora", "bnb_nf4"), ("bnb-8bit", "bnb_int8"), ("LLM.int8()", "bnb_int8"), ("load_in_8bit", "bnb_int8"),
        ("fp8", "fp8"), ("FP8-dynamic", "fp8_dynamic"), ("fp8_block", "fp8_block"), ("mxfp4", "mxfp4"),
        ("NVFP4", "nvfp4"),
        ("2-bit", "q2_k"), ("3-bit", "q3_k_m"), ("4-bit", "q4_k_m"), ("4bit", "q4_k_m"), ("8-bit", "q8_0"),
        ("1.58-bit", "iq1_s"), ("1.58 bit", "iq1_s"),
    ],
)
def test_canonical_format_accepts_the_ways_people_write_it(word: str, name: str) -> None:
    assert fmt(word).name == name


@pytest.mark.parametrize(
    ("word", "engine", "name"),
    [("4-bit", "vllm", "awq"), ("4-bit", "llama.cpp", "q4_k_m"), ("4-bit", "ollama", "q4_k_m"),
     ("8-bit", "vllm", "fp8_dynamic"), ("2-bit", "vllm", "q2_k"), ("Q4_K_M", "vllm", "q4_k_m")],
)
def test_a_shorthand_resolves_per_engine(word: str, engine: str, name: str) -> None:
    assert fmt(word, engine).name == name


@pytest.mark.parametrize(
    ("word", "bits"),
    [("exl2:4.65", 4.65), ("4.65bpw exl2", 4.65), ("exl2 6.0bpw", 6.0), ("EXL2_2.5", 2.5), ("exl2", 4.125)],
)
def test_exl2_takes_its_bpw_as_a_parameter(word: str, bits: float) -> None:
    found = fmt(word)
    assert found.family == "exl2" and found.bits_per_weight == bits and found.output_layer_bits == 6.344


@pytest.mark.parametrize("word", ["", "   ", "q9_k", "exl2:abc", "exl2:0", "exl2:20", "4.65bpw", "gguf", "llama"])
def test_unknown_words_are_none(word: str) -> None:
    assert canonical_format(word) is None


@given(st.text(max_size=40), st.sampled_from([None, "vllm", "llama.cpp", "", "sglang"]))
def test_any_text_gives_a_format_or_none(word: str, engine: str | None) -> None:
    found = canonical_format(word, engine)
    assert found is None or isinstance(found, WeightFormat)


def test_negative_or_inconsistent_parts_are_refused() -> None:
    with pytest.raises(ValueError):
        WeightParts(body=-1, embedding=0, lm_head=0, one_d=0)
    with pytest.raises(ValueError):
        WeightParts(body=10, embedding=0, lm_head=0, one_d=0, experts=11)
    with pytest.raises(ValueError):
        WeightParts.from_config(layers=32, hidden=4096, intermediate=14336, vocab=128256, heads=0, kv_heads=8)


def test_non_text_is_none_not_a_crash() -> None:
    assert canonical_format(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "word", ["fp32", "float32", "bf16", "BF16", "fp16", "float16", "half", "int8", "int4", "16-bit"]
)
def test_plain_seed_precisions_are_not_this_modules_business(word: str) -> None:
    assert canonical_format(word) is None


def test_the_seed_precisions_stay_in_sizing_at_their_bytes() -> None:
    # Seed 000 section 02: "4 bei FP32, 2 bei BF16 oder FP16, 1 bei FP8 und 0,5 bei INT4"; seed 004: FP8 / INT8 = 1.
    assert {key: sizing.PRECISION_BYTES[key] for key in ("fp32", "bf16", "fp16", "fp8", "int8", "int4")} == {
        "fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


# --- the data -------------------------------------------------------------------------------------------------------


def test_every_format_names_its_source() -> None:
    for item in all_formats():
        assert item.source.strip() and item.cite.strip(), item.name


def test_block_types_are_the_ggml_struct_sizes() -> None:
    # ggml-common.h static_asserts: bytes per block / weights per block.
    blocks = default_table().block_bits
    assert blocks["ggml_q4_k"] == 144 * 8 / 256
    assert blocks["ggml_q6_k"] == 210 * 8 / 256
    assert blocks["ggml_q8_0"] == 34 * 8 / 32
    assert blocks["ggml_q2_k"] == 84 * 8 / 256
    assert blocks["ggml_iq4_xs"] == 136 * 8 / 256
    assert blocks["ggml_mxfp4"] == fmt("mxfp4").bits_per_weight == 17 * 8 / 32


def test_gguf_mixes_store_embeddings_and_output_in_real_block_types() -> None:
    blocks = set(default_table().block_bits.values())
    for item in all_formats():
        if item.is_gguf:
            assert {item.embedding_bits, item.output_layer_bits, item.tied_embedding_bits} <= blocks, item.name
            assert item.unquantized_bits == 32 and not item.keeps_16bit


def test_kept_at_16_bit_agrees_with_the_bits() -> None:
    for item in all_formats():
        if item.is_gguf:
            continue
        assert ("embeddings" in item.keeps_16bit) == (item.embedding_bits == 16), item.name
        assert ("lm_head" in item.keeps_16bit) == (item.output_layer_bits == 16), item.name
        assert item.unquantized_bits == 16


def test_awq_bits_are_its_tensor_layout() -> None:
    # AutoAWQ gemm.py: qweight 4 bit, qzeros 4 bit and fp16 scales per group of 128 input rows.
    assert fmt("awq").bits_per_weight == 4 + 4 / 128 + 16 / 128


def test_fp8_and_fp4_formats_say_they_need_the_hardware() -> None:
    for item in all_formats():
        assert item.needs_fp8_hardware == (item.family == "fp8"), item.name
        assert item.needs_fp4_hardware == (item.family in ("mxfp4", "nvfp4")), item.name


def test_one_word_naming_two_formats_is_an_error_in_the_data() -> None:
    entry = {key: 0 for key in ("bits_per_weight", "embedding_bits", "output_layer_bits", "tied_embedding_bits",
                                "unquantized_bits")}
    entry.update(kind="k", family="f", experts_only=False, needs_fp8_hardware=False, needs_fp4_hardware=False,
                 source="s")
    data = {"formats": [{**entry, "name": "a", "label": "A", "aliases": ["x"]},
                        {**entry, "name": "b", "label": "B", "aliases": ["X"]}],
            "shorthands": [], "block_types": []}
    with pytest.raises(ValueError, match="names both"):
        build_table(data)


def test_the_docs_table_is_the_modules() -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = "<!-- formats-table:start -->\n", "<!-- formats-table:end -->"
    assert text.split(start, 1)[1].split(end, 1)[0] == docs_table()


# -- the precision rows: every fact a consumer reads is there and consistent --------------------------------------

def test_each_precision_row_names_what_its_readers_need() -> None:
    from engine.formats.precision import precision_words, precisions
    from engine.serving.constants import LLAMA_CPP_KV_TYPE_BYTES, VLLM_KV_DTYPE_BYTES

    rows = precisions()
    assert [row.name for row in rows] == ["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
    assert len({row.payload for row in rows}) == len(rows)  # a deep link's code names one precision
    for row in rows:
        for word in row.format_aliases:  # "awq" is INT4 and names the AWQ format too
            assert canonical_format(word) is not None, word
        if row.kv_cache is not None:
            assert row.kv_cache.vllm in VLLM_KV_DTYPE_BYTES and row.kv_cache.llama_cpp in LLAMA_CPP_KV_TYPE_BYTES
        load = row.vllm
        assert load.release or load.checkpoints, row.name  # vLLM loads it from something
        if load.in_flight is not None:
            made = canonical_format(load.in_flight)
            assert made is not None and made.vllm_quantization is not None
    words = precision_words()
    assert set(words.widths) == {4, 8, 16, 32} and words.widths[16] == "bf16"
    assert not set(words.question_words) & {"full", "half"}  # a question says "full precision"
