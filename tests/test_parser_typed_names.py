"""Names as real users type them: a typo that makes an ambiguous family prefix one model ('whisper larg v3',
'llama 4 scot'), a bare version after another family's word ('whisper xyz v3' is never DeepSeek-V3), a short
version that names its release ('mistral 7b v3'), Stable Diffusion 3.5 Large apart from SDXL."""
from __future__ import annotations

import pytest

from engine.models.registry import default_registry
from engine.parse import _parse_strict, default_vocabulary, parse
from engine.parse.names import NameWords
from engine.parse.scan import Scan
from tests.support.seedmath import ask, component_gb


def _read(text: str) -> tuple[str | None, str | None, list[str]]:
    """(model id, error code, ignored) of a text read with the bundled vocabulary."""
    result = _parse_strict(text)
    error = result.error
    code = getattr(error, "code", error) if error is not None else None
    ignored = list(result.request.ignored) if result.request is not None else []
    return result.matched_model, code, ignored


# -- a typo that makes an ambiguous family prefix unique ----------------------------------------------------------

@pytest.mark.parametrize(("text", "model"), [
    ("whisper larg v3", "whisper-large-v3"),
    ("Whisper Larg V3", "whisper-large-v3"),
    ("whisper-larg-v3", "whisper-large-v3"),
    ("whisper lareg v3", "whisper-large-v3"),  # two letters swapped
    ("whisper larg v3 turbo", "whisper-large-v3-turbo"),
    ("whisper mediun", "whisper-medium"),
    ("whisper larg v3 auf einer 4090", "whisper-large-v3"),
    ("llama 4 scot", "llama-4-scout"),
    ("llama4 scot", "llama-4-scout"),
    ("llama-4-scot", "llama-4-scout"),
    ("Llama 4 Scot mit 8k Kontext", "llama-4-scout"),
    ("llama 4 mavrick", "llama-4-maverick"),
    ("qwen3 codr", "qwen3-coder-30b-a3b"),
    ("mistral larg", "mistral-large-2"),
])
def test_a_typo_that_makes_an_ambiguous_prefix_one_model_is_read_with_a_note(text: str, model: str) -> None:
    result = _parse_strict(text)
    assert result.matched_model == model, text
    assert result.model_note is not None and result.model_note.code == "model_fuzzy"
    assert result.request is not None and result.request.ignored == []


@pytest.mark.parametrize("text", ["whisper", "llama 4", "whisper large v2"])
def test_without_a_typo_an_ambiguous_or_unknown_name_still_asks(text: str) -> None:
    model, code, _ignored = _read(text)
    assert model is None and code in {"parse_ambiguous", "parse_ambiguous_more", "parse_unknown_model"}, text


@pytest.mark.parametrize(("text", "model"), [
    ("whisper large v3", "whisper-large-v3"), ("llama 4 scout", "llama-4-scout"), ("whisper v3", "whisper-large-v3"),
])
def test_names_typed_right_stay_exact(text: str, model: str) -> None:
    result = _parse_strict(text)
    assert result.matched_model == model and result.model_note is None


# -- a bare version after another family's word -------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "whisper xyz v3", "whisper foo v3 on a 4090", "Whisper Blah V3 mit fp16", "glm foo v3", "kimi xyz k2",
])
def test_a_bare_version_after_another_familys_word_is_never_that_version_of_another_family(text: str) -> None:
    model, code, _ignored = _read(text)
    assert model is None and code is not None, text  # an honest "which one?" / "unknown model", not DeepSeek-V3


@pytest.mark.parametrize(("text", "model"), [
    ("v3", "deepseek-v3"), ("v3 on 8x h200", "deepseek-v3"), ("r1 auf 8x h200", "deepseek-r1"),
    ("deepseek v3", "deepseek-v3"), ("whisper and deepseek v3", "deepseek-v3"),
    ("whisper or deepseek v3", "deepseek-v3"),
])
def test_a_bare_version_alone_or_after_its_own_family_is_still_read(text: str, model: str) -> None:
    assert _parse_strict(text).matched_model == model, text


def test_family_before_stops_at_a_break_and_names_the_family_word() -> None:
    vocabulary = default_vocabulary()
    names = NameWords(Scan("whisper larg v3", 0), vocabulary)
    assert names.family_before(2) == 0
    assert NameWords(Scan("whisper and v3", 0), vocabulary).family_before(2) is None  # 'and' breaks a name
    assert NameWords(Scan("v3 on 8x h200", 0), vocabulary).family_before(0) is None


# -- a number in millions right after a name is its parameter count, not a context --------------------------------

@pytest.mark.parametrize(("text", "params_b"), [
    ("smollm2 360m", 0.36), ("SmolLM2 360M", 0.36), ("smollm2-360m", 0.36), ("smollm2 360m instruct", 0.36),
    ("smollm2 135m", 0.135), ("gpt2 124m", 0.124), ("gpt2 124m on a t4", 0.124), ("bert 110m", 0.11),
    ("smollm2 360m auf einer 4090", 0.36), ("HuggingFaceTB/SmolLM2-360M-Instruct", 0.36), ("124m", 0.124),
    ("360m params", 0.36), ("360 m", 0.36), ("smollm2 360 M", 0.36), ("SmolLM2 mit 360M Parametern", 0.36),
])
def test_a_number_in_millions_with_no_context_cue_is_a_parameter_count(text: str, params_b: float) -> None:
    result = _parse_strict(text)
    assert result.error is None and result.request is not None, (text, result.error)
    assert result.request.model is None and result.request.params_b == pytest.approx(params_b), text
    assert result.request.context_tokens is None, text


@pytest.mark.parametrize(("text", "context"), [
    ("SmolLM2 360M mit 8k Kontext", 8192), ("SmolLM2 360M bei 2k", 2048), ("smollm2 360m at 1m", 1 << 20),
])
def test_the_parameter_count_leaves_the_context_to_its_own_words(text: str, context: int) -> None:
    result = _parse_strict(text)
    assert result.request is not None and result.request.params_b == pytest.approx(0.36), text
    assert result.request.context_tokens == context, text


@pytest.mark.parametrize(("text", "model"), [
    ("1m context", None), ("70b 1m", None), ("70b with 1m", None), ("70b at 1m", None), ("8b mit 1m kontext", None),
    ("llama 3.1 8b 1m", "llama-3.1-8b"),
    ("und mit 1m?", None), ("bei 1m", None),
])
def test_a_million_tokens_where_a_context_is_cued_or_a_size_is_known_stays_a_context(text: str,
                                                                                       model: str | None) -> None:
    result = _parse_strict(text)
    request = result.request if result.request is not None else result.partial
    assert request is not None and request.context_tokens == 1 << 20, text
    assert request.model == model, text


@pytest.mark.parametrize("text", ["qwen2.5 7b 1m", "qwen2.5-7b-instruct-1m", "Qwen/Qwen2.5-7B-Instruct-1M"])
def test_the_1m_release_is_a_model_of_its_own_not_a_context(text: str) -> None:
    """Qwen2.5-7B-Instruct-1M is its own release (max_position_embeddings 1,010,000), not Qwen2.5 7B at 1M tokens."""
    result = _parse_strict(text)
    assert result.request is not None and result.request.model == "qwen2.5-7b-1m", text
    assert result.request.context_tokens is None, text


@pytest.mark.parametrize("text", ["mixtral 360m", "llama 3.1 124m", "smollm2 1.7b 360m", "100m 70b"])
def test_millions_never_become_a_size_no_model_of_the_name_has_or_a_second_size(text: str) -> None:
    result = _parse_strict(text)
    assert result.request is None and getattr(result.error, "code", None) == "parse_context_too_long", text


def test_millions_that_a_model_of_an_ambiguous_name_has_choose_it() -> None:
    assert _parse_strict("qwen2.5 500m").matched_model == "qwen2.5-0.5b"
    assert _parse_strict("gemma 3 270m").matched_model == "gemma-3-270m"  # the registry's own name, as before


def test_a_second_size_in_millions_is_listed_as_written() -> None:
    result = _parse_strict("gpt2 124m 360m params")
    assert result.request is not None and result.request.params_b == pytest.approx(0.124)
    assert "360m" in result.request.ignored


# -- dated releases: the Qwen3 2507 checkpoints are entries of their own ------------------------------------------

@pytest.mark.parametrize(("text", "model"), [
    ("qwen3 235b 2507", "qwen3-235b-a22b-2507"), ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b-2507"),
    ("Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b-2507"), ("qwen3 235b instruct 2507", "qwen3-235b-a22b-2507"),
    ("Qwen3 235B 2507 mit 32k Kontext", "qwen3-235b-a22b-2507"), ("qwen3 30b 2507", "qwen3-30b-a3b-2507"),
    ("qwen3-30b-a3b-thinking-2507", "qwen3-30b-a3b-2507"), ("wie viel VRAM für Qwen3 30B 2507", "qwen3-30b-a3b-2507"),
    ("qwen3 4b 2507", "qwen3-4b-2507"), ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b-2507"),
    ("deepseek r1 0528", "deepseek-r1-0528"),
    # the 2504 names keep their model
    ("qwen3 235b", "qwen3-235b-a22b"), ("qwen 235b", "qwen3-235b-a22b"), ("qwen3 30b", "qwen3-30b-a3b"),
    ("qwen 4b", "qwen3-4b"), ("Qwen3 235B A22B", "qwen3-235b-a22b"),
])
def test_a_dated_release_is_its_own_entry_and_the_undated_name_the_first_release(text: str, model: str) -> None:
    result = _parse_strict(text)
    assert result.matched_model == model, text
    assert result.request is not None and result.request.params_b is None and result.request.ignored == []


def test_the_2507_releases_have_the_2504_shapes_and_their_own_window() -> None:
    registry = default_registry()
    for old, new in (("qwen3-4b", "qwen3-4b-2507"), ("qwen3-30b-a3b", "qwen3-30b-a3b-2507"),
                     ("qwen3-235b-a22b", "qwen3-235b-a22b-2507")):
        first, second = registry.get(old), registry.get(new)
        assert first is not None and second is not None
        assert second.summary() == first.summary() and second.params_b == first.params_b
        assert (second.experts_total, second.active_params_b) == (first.experts_total, first.active_params_b)
        assert first.context_max == 40960 and second.context_max == 262144


@pytest.mark.parametrize("text", ["qwen3 32b 2507", "qwen3 8b 2507", "llama 3.1 70b 2507"])
def test_a_release_tag_a_model_has_no_entry_for_is_an_unknown_model_never_another_size(text: str) -> None:
    result = _parse_strict(text)
    assert result.matched_model is None, text  # "qwen3 32b 2507" is not the 30B-A3B 2507 (32 ~ 30.5)
    assert result.request is not None and [note.code for note in result.request.assumed
                                           if hasattr(note, "code")][:1] == ["unknown_model_sized"]


# -- a short version names its release; Stable Diffusion 3.5 Large is its own entry ---------------------------------

def sized(text: str):
    result = parse(text)
    assert result.request is not None, result.error
    request = result.request
    return ask("gpurenthub", **{name: getattr(request, name) for name in ("model", "params_b", "precision", "quant",
                                                                         "context_tokens", "batch")})


@pytest.mark.parametrize(("text", "model"), [
    ("mistral 7b v3", "mistral-7b-v0.3"), ("mistral-7b-v3 fp8", "mistral-7b-v0.3"),
    ("Mistral 7B Instruct v3 auf einer RTX 4090", "mistral-7b-v0.3"), ("mistral 7b v2", "mistral-7b-v0.2"),
    ("mistral 7b v0.3", "mistral-7b-v0.3"), ("mistral 7b", "mistral-7b"), ("mistrall 7b", "mistral-7b"),
    ("mistral 7b instruct v0.2", "mistral-7b-v0.2"), ("wie viel vram für mistral 7b v3", "mistral-7b-v0.3"),
    ("whisper large v3", "whisper-large-v3"), ("deepseek v3", "deepseek-v3"),
])
def test_a_short_version_names_its_release(text, model):
    result = parse(text, default_vocabulary())
    assert result.request is not None and result.request.model == model
    assert not result.request.ignored


@pytest.mark.parametrize("text", [
    "stable diffusion 3.5 large vram", "sd3.5 large", "SD 3.5 Large on a 4090", "stable diffusion 3.5 large turbo",
    "Wie viel VRAM braucht Stable Diffusion 3.5 Large?", "stabilityai/stable-diffusion-3.5-large",
])
def test_sd35_large_is_its_own_entry(text):
    result = parse(text, default_vocabulary())
    assert result.request is not None and result.request.model == "sd3.5-large"


@pytest.mark.parametrize("text", ["stable diffusion 3.5 medium", "stable diffusion 3", "stable diffusion 2.1",
                                  "stable diffusion 1.5", "sd 3.5 medium"])
def test_another_stable_diffusion_is_never_sdxl(text):
    result = parse(text, default_vocabulary())
    assert result.request is None or result.request.model != "sdxl-base-1.0"


@pytest.mark.parametrize("text", ["sdxl", "stable diffusion xl", "stable diffusion", "SDXL base 1.0"])
def test_sdxl_stays_sdxl(text):
    result = parse(text, default_vocabulary())
    assert result.request is not None and result.request.model == "sdxl-base-1.0"


def test_sd35_large_is_sized_at_its_8_1b_transformer():
    weights = component_gb(sized("stable diffusion 3.5 large"), "weights")
    assert weights == pytest.approx(8.1 * 2)  # BF16, the published checkpoint's dtype; SDXL's UNet is 5.1 GB
