"""The serving check of vision LLMs: the whole checkpoint (language model + vision tower) as vLLM loads it, the
encoder cache its profile run holds, users and context from them; Llama 3.2 Vision, which vLLM no longer serves,
says so."""
from __future__ import annotations

import pytest

from bot.cli.main import ask_answer
from bot.texts.render import plain, render_answer
from catalog.loader import load_catalog
from engine.models.registry import default_registry
from engine.parse import Vocabulary
from engine.serving import memory
from engine.serving.constants import GB
from engine.serving.memory import ModelDims

CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)


def ask(text: str):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY)
    assert answer is not None and error is None, error
    return answer


def test_mistral_small_32_users_on_an_l40s_are_counted_under_vllm():
    """The vision LLM gets the check its text-only sibling gets, with the vision tower's weights on top."""
    vision = ask("how many users can mistral small 3.2 serve on an L40S in fp8")
    text = ask("how many users can mistral small 2501 serve on an L40S in fp8")
    assert vision.serving is not None and text.serving is not None
    assert vision.serving.starts and vision.serving.max_concurrency
    assert vision.serving.weights_gb > text.serving.weights_gb
    assert vision.capacity is not None and vision.capacity.serving_value
    assert vision.capacity.serving_value <= text.capacity.serving_value
    for lang in ("en", "de"):
        assert "vLLM" in plain(render_answer(vision, lang))


@pytest.mark.parametrize("text", ["mistral small 3.2 on an L40S", "mistral small 3.2 auf einer L40S"])
def test_a_vision_llm_answer_has_an_engine_line_in_english_and_german(text):
    answer = ask(text)
    assert answer.review is not None
    assert answer.serving is not None or answer.fit is not None and answer.review.check_layout(answer.fit)


def test_gemma_3_weights_are_the_whole_checkpoint():
    """Gemma 3's params_b is the language model (27.016B); vLLM loads the SigLIP tower too (27.432B in all)."""
    answer = ask("gemma 3 27b 8k on an H100")
    assert answer.serving is not None
    shape = default_registry().get("gemma-3-27b")
    assert answer.serving.weights_gb == pytest.approx(shape.params_exact_b * 2, rel=0.002)


def test_pixtral_params_b_already_holds_the_vision_tower():
    answer = ask("pixtral 12b 8k on an L40S")
    assert answer.serving is not None
    shape = default_registry().get("pixtral-12b")
    assert answer.serving.weights_gb == pytest.approx(shape.params_b * 2, rel=0.002)


def test_the_encoder_cache_of_the_profile_run_is_counted_for_vision_llms_only():
    text = ModelDims(5120, 32768, 131072)
    vision = ModelDims(5120, 32768, 131072, multimodal=True)
    assert memory.encoder_cache_bytes(text, 8192) == 0
    assert memory.encoder_cache_bytes(vision, 8192) == 8192 * 5120 * 2
    assert memory.activation_peak_bytes(vision, 8192, 1024, 1) - memory.activation_peak_bytes(text, 8192, 1024, 1) \
        == 8192 * 5120 * 2


def test_llama_32_vision_says_vllm_removed_it():
    answer = ask("llama 3.2 11b vision 8k")
    assert answer.serving is None
    assert any("removed it" in note for note in answer.assumed)
    assert answer.requirement.component("kv_cache").gb == pytest.approx(32 * 2 * 8 * 128 * 2 * 8192 / GB)
