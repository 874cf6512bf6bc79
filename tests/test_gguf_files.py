"""GGUF files named without a quant type or by unsloth's name for a mix: an Ollama tag or a bare 'gguf' means the
Q4_K_M file (said in a note) unless a precision or format is named, and a dynamic mix (UD-Q2_K_XL, UD-IQ1_S) is sized
at its published file, or at its base type with a note where the registry has no file."""
from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from engine.parse import Vocabulary, parse
from tests.support.seedmath import ask, component_gb

CATALOG = load_catalog("catalog/data/gpurenthub.yaml").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)


def read(text: str):
    return parse(text, VOCABULARY)


def codes(request) -> list[str]:
    return [getattr(note, "code", "") for note in request.assumed]


def sized(text: str):
    result = parse(text)
    assert result.request is not None, result.error
    request = result.request
    return ask("gpurenthub", **{name: getattr(request, name) for name in ("model", "params_b", "precision", "quant",
                                                                         "context_tokens", "batch")})


# -- Ollama tags and a bare 'gguf' mean the Q4_K_M file -------------------------------------------------------------

@pytest.mark.parametrize(("text", "model"), [
    ("llama3.1:70b ollama how much vram", "llama-3.1-70b"),
    ("deepseek-r1:14b ollama", "deepseek-r1-distill-qwen-14b"),
    ("deepseek-r1:14b", "deepseek-r1-distill-qwen-14b"),
    ("llama3.1:8b", "llama-3.1-8b"),
    ("ollama run llama3.1:70b on an H100", "llama-3.1-70b"),
    ("qwen2.5:32b with ollama", "qwen2.5-32b"),
    ("wie viel vram für qwen2.5:32b mit ollama", "qwen2.5-32b"),
    ("llama 3.1 70b in ollama", "llama-3.1-70b"),
    ("Ollama: Llama 3.1 8B, 32k context", "llama-3.1-8b"),
    ("llama3.1:70b-instruct", "llama-3.1-70b"),
    ("ich will llama 3.1 8b mit Ollama laufen lassen", "llama-3.1-8b"),
])
def test_ollama_without_a_quant_tag_is_q4_k_m_with_a_note(text, model):
    result = read(text)
    assert result.request is not None, result.error
    assert result.request.model == model
    assert result.request.quant == "q4_k_m" and result.request.precision == "int4"
    assert "runtime_format_ollama" in codes(result.request)


@pytest.mark.parametrize("text", [
    "llama 3.1 8b instruct gguf", "Llama 3.1 8B GGUF", "qwen2.5 7b gguf on a 4090", "gguf llama 3.1 70b",
    "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "wie viel VRAM für llama 3.1 8b als GGUF",
])
def test_a_bare_gguf_is_q4_k_m_with_a_note(text):
    result = read(text)
    assert result.request is not None and result.request.quant == "q4_k_m"
    assert "runtime_format_gguf" in codes(result.request)


@pytest.mark.parametrize(("text", "quant", "precision"), [
    ("llama3.1:70b-instruct-q8_0", "q8_0", "int8"),
    ("llama3.1:70b-instruct-fp16", None, "fp16"),
    ("ollama llama 3.1 70b fp16", None, "fp16"),
    ("ollama llama 3.1 8b q5_k_m", "q5_k_m", None),
    ("llama 3.1 8b gguf q6_k", "q6_k", None),
    ("llama 3.1 8b gguf 4-bit", None, "int4"),
    ("llama3.1:8b int8", None, "int8"),
])
def test_a_named_precision_or_format_wins(text, quant, precision):
    result = read(text)
    assert result.request is not None
    assert result.request.quant == quant and result.request.precision == precision
    assert not {"runtime_format_ollama", "runtime_format_gguf"} & set(codes(result.request))


@pytest.mark.parametrize("text", [
    "fine-tune llama 3.1 8b gguf", "qlora llama3.1:8b", "model:70b", "size:7b", "llama 3.1 70b", "70B int4",
    "llama 3.1 8b on vllm", "unsloth/DeepSeek-R1-GGUF:UD-Q2_K_XL",
])
def test_no_runtime_format_where_none_is_meant(text):
    result = read(text)
    assert result.request is not None
    assert not {"runtime_format_ollama", "runtime_format_gguf"} & set(codes(result.request))


def test_the_ollama_default_is_sized_as_the_q4_k_m_file():
    weights = component_gb(sized("llama3.1:70b ollama"), "weights")
    assert weights == pytest.approx(42.52, rel=0.01)  # bartowski's Q4_K_M file (tests/test_quant.py), not 140 GB


# -- unsloth's dynamic GGUF mixes -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "quant", "gb"), [
    ("DeepSeek-R1-UD-Q2_K_XL vram", "ud-q2_k_xl", 212),
    ("unsloth/DeepSeek-R1-GGUF UD-Q2_K_XL", "ud-q2_k_xl", 212),
    ("unsloth/DeepSeek-R1-GGUF:UD-Q2_K_XL", "ud-q2_k_xl", 212),
    ("deepseek r1 q2_k_xl", "ud-q2_k_xl", 212),
    ("deepseek r1 UD-IQ1_S", "ud-iq1_s", 131),
    ("deepseek r1 ud iq1_s", "ud-iq1_s", 131),
    ("DeepSeek R1 UD-IQ1_M", "ud-iq1_m", 158),
    ("wie viel VRAM für deepseek r1 UD-IQ2_XXS", "ud-iq2_xxs", 183),
])
def test_a_dynamic_mix_of_the_registry_is_sized_at_its_published_file(text, quant, gb):
    result = parse(text)
    assert result.request is not None and result.request.quant == quant
    assert not result.request.ignored
    answer = sized(text)
    assert component_gb(answer, "weights") == pytest.approx(gb)
    assert "quant_published_file" in [note.code for note in answer.resolved.notes]


def test_a_dynamic_mix_without_a_published_file_is_sized_at_its_base_type_and_says_so():
    answer = sized("llama 3.1 70b UD-Q4_K_XL")
    base = component_gb(sized("llama 3.1 70b Q4_K_M"), "weights")
    assert component_gb(answer, "weights") == pytest.approx(base)
    assert "quant_dynamic_base" in [note.code for note in answer.resolved.notes]


def test_the_llama_cpp_types_keep_their_derived_size():
    assert component_gb(sized("deepseek r1 IQ1_S"), "weights") > 135  # generic IQ1_S, not the UD file's 131
