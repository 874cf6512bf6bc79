"""Names as real users type them: a typo that makes an ambiguous family prefix one model ('whisper larg v3',
'llama 4 scot'), a bare version after another family's word ('whisper xyz v3' is never DeepSeek-V3)."""
from __future__ import annotations

import pytest

from engine.parse import _parse_strict, default_vocabulary
from engine.parse.names import NameWords
from engine.parse.scan import Scan


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
