"""A model's context window in the answer: the default context never beyond it (engine/sequence.py), and the
release whose window holds the asked context (engine/parse/windows.py)."""
from __future__ import annotations

import pytest

from bot.render import plain, render_answer
from engine.parse import default_vocabulary, parse
from tests.support.seedmath import ask


def notes_of(answer) -> list[str]:
    return [note.code for note in answer.resolved.notes]


# -- the default context, capped at the window ---------------------------------------------------------------

@pytest.mark.parametrize("model, window", [("llama-2-70b", 4096), ("falcon-180b", 2048), ("phi-3-mini-4k", 4096),
                                           ("yi-1.5-34b", 4096)])
def test_a_default_context_beyond_the_window_is_the_window(model, window):
    answer = ask("gpurenthub", model=model)
    assert answer.resolved.context_tokens == window
    assert "window_context" in notes_of(answer) and "default_context" not in notes_of(answer)
    kv = answer.requirement.component("kv_cache")
    assert kv.values["tokens"] == window and f"{window:,}" in kv.formula


def test_the_window_note_reads_in_both_languages():
    answer = ask("gpurenthub", model="llama-2-70b")
    assert "4,096 tokens (Llama 2 70B's whole context window; the default 8,192 is beyond it)" in plain(
        render_answer(answer, "en"))
    assert "4.096 Token (das ganze Kontextfenster von Llama 2 70B; der Standard von 8.192 liegt darüber)" in plain(
        render_answer(answer, "de"))


def test_the_engine_check_no_longer_fails_on_a_context_nobody_asked_for():
    """Before: Llama 2 70B sized at 8,192 tokens and "vLLM would not start ... exceed the model's maximum"."""
    answer = ask("gpurenthub", model="llama-2-70b")
    assert answer.serving is not None and answer.serving.starts


def test_a_default_within_the_window_and_a_named_context_are_as_before():
    assert ask("gpurenthub", model="llama-3.1-8b").resolved.context_tokens == 8192
    named = ask("gpurenthub", model="llama-2-70b", context_tokens=16384)
    assert named.resolved.context_tokens == 16384 and "beyond_context" in notes_of(named)


def test_the_headroom_policy_and_models_without_a_kv_cache_keep_the_default():
    """Where the sequence does not enter the sizing (seed 004's headroom rule without a named context; Whisper),
    nothing is capped and nothing is noted."""
    headroom = ask("gpuwithcrypto", model="llama-2-70b")
    assert headroom.resolved.context_tokens == 8192 and "window_context" not in notes_of(headroom)
    whisper = ask("gpurenthub", model="whisper-large-v3")
    assert whisper.resolved.context_tokens == 8192 and "window_context" not in notes_of(whisper)


def test_training_keeps_its_own_default_within_the_window():
    lora = ask("gpurenthub", model="falcon-40b", workload="lora")
    assert lora.resolved.context_tokens == 2048 and "window_context" not in notes_of(lora)


# -- the release whose window holds the context ----------------------------------------------------------------

def read(text: str):
    result = parse(text, default_vocabulary())
    assert result.request is not None, result.error
    return result


@pytest.mark.parametrize("text, model, tokens", [
    ("phi-3 medium at 128k", "phi-3-medium-128k", 131072),
    ("phi-3 medium with 16k tokens", "phi-3-medium-128k", 16384),
    ("phi 3 small 100k context", "phi-3-small-128k", 102400),
    ("Phi-3 Mini mit 32k Kontext", "phi-3-mini-128k", 32768),
    ("phi-3 medium at 200k", "phi-3-medium-128k", 204800),  # none holds it: the widest, sized as asked
])
def test_a_context_beyond_the_named_release_takes_the_release_that_holds_it(text, model, tokens):
    result = read(text)
    assert (result.request.model, result.request.context_tokens) == (model, tokens)
    assert result.model_note is not None and result.model_note.code == "model_window"
    assert result.model_note in result.request.assumed


def test_the_release_note_reads_in_both_languages():
    from engine.answer import build_answer
    from tests.support.seedmath import catalog

    request = read("phi-3 medium at 128k").request
    answer = build_answer(request, catalog("gpurenthub"))
    assert "Phi-3 Medium 128K: 131,072 tokens is beyond Phi-3 Medium 4K's 4,096-token window" in plain(
        render_answer(answer, "en"))
    assert "Phi-3 Medium 128K: 131.072 Token liegen über dem Kontextfenster von Phi-3 Medium 4K (4.096 Token)" in \
        plain(render_answer(answer, "de"))
    assert "beyond_context" not in notes_of(answer)


@pytest.mark.parametrize("text, model, tokens", [
    ("phi-3-medium-4k at 128k", "phi-3-medium-4k", 131072),  # the name says its window: kept, sized as asked
    ("phi-3 medium at 4k", "phi-3-medium-4k", 4096),  # within the window: nothing to change
    ("phi-3 medium", "phi-3-medium-4k", None),
    ("llama 2 70b at 16k", "llama-2-70b", 16384),  # no release of another window
])
def test_a_release_that_holds_the_context_or_is_named_is_kept(text, model, tokens):
    result = read(text)
    assert (result.request.model, result.request.context_tokens) == (model, tokens)
    assert result.model_note is None or result.model_note.code != "model_window"


@pytest.mark.parametrize("text, model, tokens", [
    ("phi-3 medium 128k context", "phi-3-medium-128k", 131072),
    ("phi3 mini 128k ctx", "phi-3-mini-128k", 131072),
    ("phi 3 mini 4k context", "phi-3-mini-4k", 4096),
    ("Phi-3 Medium 128K mit 128K Kontext", "phi-3-medium-128k", 131072),
])
def test_a_window_that_ends_the_name_before_a_context_word_is_the_context(text, model, tokens):
    result = read(text)
    assert (result.request.model, result.request.context_tokens) == (model, tokens)
    assert "context" not in " ".join(result.request.ignored).lower()


def test_a_window_in_the_name_alone_is_no_context():
    assert read("phi-3 mini 128k").request.context_tokens is None


def test_a_fuzzy_name_keeps_its_note_on_the_other_release():
    result = read("phii-3 medium at 128k")
    assert result.request.model == "phi-3-medium-128k"
    assert result.model_note is not None and result.model_note.code == "model_fuzzy"
    assert result.model_note.values == {"model": "Phi-3 Medium 128K", "span": "phii-3 medium"}
    codes = [getattr(note, "code", None) for note in result.request.assumed]
    assert codes.count("model_fuzzy") == 1 and "model_window" in codes


def test_only_releases_of_the_same_shape_are_siblings():
    windows = default_vocabulary().models.windows
    assert {stem: sorted(model.id for model in models) for stem, models in windows.items()} == {
        "phi-3-mini": ["phi-3-mini-128k", "phi-3-mini-4k"],
        "phi-3-small": ["phi-3-small-128k", "phi-3-small-8k"],
        "phi-3-medium": ["phi-3-medium-128k", "phi-3-medium-4k"],
    }
