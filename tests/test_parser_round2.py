"""Wrong answers QA found (round 2 of the parser): Ollama tags and a bare 'gguf', unsloth's dynamic GGUF mixes,
a follow-up that changes only the card count, YaRN, and small readings ('0.124b', 'mistral 7b v3', SD 3.5)."""
from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.answer.followup import apply_followup, delta_of, shown_of
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


# -- 1. Ollama tags and a bare 'gguf' mean the Q4_K_M file ------------------------------------------------------

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


# -- 2. unsloth's dynamic GGUF mixes ----------------------------------------------------------------------------

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


# -- 3. a follow-up on the card count ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "count"), [
    ("what about 2 of them", 2), ("and 2 of those?", 2), ("two of them", 2), ("on 4 of them", 4), ("2x", 2),
    ("and on 2 of them?", 2), ("und auf zwei?", 2), ("und auf 2?", 2), ("zwei davon", 2), ("mit 4 davon", 4),
    ("x2", 2), ("4x?", 4), ("on two", 2), ("and on 8?", 8), ("und auf acht", 8), ("what about 3 of these", 3),
    ("how about two of them", 2), ("und 2x?", 2), ("und mit zwei davon?", 2), ("on 2 please", 2),
    ("what about 2 cards?", 2),
])
def test_a_count_alone_is_read(text, count):
    result = read(text)
    assert result.request is None and result.partial is not None
    assert result.partial.gpu_count == count and result.partial.card is None
    assert not result.partial.ignored


@pytest.mark.parametrize("text", ["auf 0?", "on 99", "und auf einer?", "and at 4k?", "and on 2 users?", "hello 2"])
def test_no_count_where_none_is_said(text):
    result = read(text)
    assert result.partial is None or result.partial.gpu_count is None


@pytest.mark.parametrize("text", ["what about 2 of them", "und auf zwei?", "2x", "on 4 of them", "and 2 of those?"])
def test_the_count_goes_on_the_card_of_the_question_before(text):
    first = read("llama 3.1 70b fp8 on an h100")
    assert first.request is not None
    answer = build_answer(first.request, CATALOG)
    delta = delta_of(read(text))
    assert delta is not None
    merged = apply_followup(first.request, delta, shown_of(answer), catalog=CATALOG).request
    assert CATALOG.card(merged.card).name == CATALOG.card(first.request.card).name
    assert merged.gpu_count == read(text).partial.gpu_count
    assert merged.model == "llama-3.1-70b" and merged.precision == "fp8"


# -- 4. YaRN / rope scaling: the user extends the window --------------------------------------------------------

@pytest.mark.parametrize("text", [
    "qwen3 8b with 128k context yarn", "qwen3 8b 128k rope scaling", "Qwen3 8B mit 128k Kontext und YaRN",
    "qwen3 8b with YaRN at 128k", "qwen3 8b 128k rope-scaling", "Qwen3 8B mit RoPE-Skalierung und 128k Kontext",
    "qwen3 8b, 128k, yarn", "qwen3 8b 128k rope_scaling",
])
def test_yarn_is_read_and_carried(text):
    result = read(text)
    assert result.request is not None and result.request.rope_scaling == "yarn"
    assert result.request.context_tokens == 131072 and not result.request.ignored
    assert "rope_scaling" in codes(result.request)


@pytest.mark.parametrize("text", ["qwen3 8b with 128k context", "rope 8b", "llama 3.1 8b with a rope of 32k"])
def test_no_yarn_where_none_is_said(text):
    result = read(text)
    request = result.request or result.partial
    assert request is None or request.rope_scaling is None


def test_a_yarn_follow_up_keeps_the_flag_and_a_later_one_keeps_it_too():
    first = read("qwen3 8b with 128k context")
    assert first.request is not None
    delta = delta_of(read("and with yarn?"))
    assert delta is not None and delta.rope_scaling == "yarn"
    merged = apply_followup(first.request, delta).request
    assert merged.rope_scaling == "yarn" and merged.context_tokens == 131072
    again = apply_followup(merged, delta_of(read("and in fp8?"))).request
    assert again.rope_scaling == "yarn" and again.precision == "fp8"


# -- 5. '0.124b', 'mistral 7b v3', Stable Diffusion 3.5 Large ---------------------------------------------------

@pytest.mark.parametrize(("text", "params"), [
    ("0.124b", 0.124), ("0,124B", 0.124), ("0.124B in bf16", 0.124), ("a 0.5b model", 0.5), ("0,360B", 0.36),
    ("1.024b", 1024), ("1.5B", 1.5), ("0.9b", 0.9),
])
def test_a_leading_zero_group_is_never_thousands(text, params):
    result = read(text)
    assert result.request is not None and result.request.params_b == pytest.approx(params)


@pytest.mark.parametrize("text", ["8.192 Token für 7B", "32.768 tokens 7b", "1.000.000 Token 7b"])
def test_thousands_groups_stay(text):
    result = read(text)
    assert result.request is not None and result.request.context_tokens in (8192, 32768, 1_000_000)


@pytest.mark.parametrize(("text", "model"), [
    ("mistral 7b v3", "mistral-7b-v0.3"), ("mistral-7b-v3 fp8", "mistral-7b-v0.3"),
    ("Mistral 7B Instruct v3 auf einer RTX 4090", "mistral-7b-v0.3"), ("mistral 7b v2", "mistral-7b-v0.2"),
    ("mistral 7b v0.3", "mistral-7b-v0.3"), ("mistral 7b", "mistral-7b"), ("mistrall 7b", "mistral-7b"),
    ("mistral 7b instruct v0.2", "mistral-7b-v0.2"), ("wie viel vram für mistral 7b v3", "mistral-7b-v0.3"),
    ("whisper large v3", "whisper-large-v3"), ("deepseek v3", "deepseek-v3"),
])
def test_a_short_version_names_its_release(text, model):
    result = read(text)
    assert result.request is not None and result.request.model == model
    assert not result.request.ignored


@pytest.mark.parametrize("text", [
    "stable diffusion 3.5 large vram", "sd3.5 large", "SD 3.5 Large on a 4090", "stable diffusion 3.5 large turbo",
    "Wie viel VRAM braucht Stable Diffusion 3.5 Large?", "stabilityai/stable-diffusion-3.5-large",
])
def test_sd35_large_is_its_own_entry(text):
    result = read(text)
    assert result.request is not None and result.request.model == "sd3.5-large"


@pytest.mark.parametrize("text", ["stable diffusion 3.5 medium", "stable diffusion 3", "stable diffusion 2.1",
                                  "stable diffusion 1.5", "sd 3.5 medium"])
def test_another_stable_diffusion_is_never_sdxl(text):
    result = read(text)
    assert result.request is None or result.request.model != "sdxl-base-1.0"


@pytest.mark.parametrize("text", ["sdxl", "stable diffusion xl", "stable diffusion", "SDXL base 1.0"])
def test_sdxl_stays_sdxl(text):
    result = read(text)
    assert result.request is not None and result.request.model == "sdxl-base-1.0"


def test_sd35_large_is_sized_at_its_8_1b_transformer():
    weights = component_gb(sized("stable diffusion 3.5 large"), "weights")
    assert weights == pytest.approx(8.1 * 2)  # BF16, the published checkpoint's dtype; SDXL's UNet is 5.1 GB
