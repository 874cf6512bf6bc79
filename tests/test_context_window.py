"""A model's context window in the answer: the default context never beyond it (engine/sizing/sequence.py), the
release whose window holds the asked context (engine/parse/windows.py), and a window the user extends with YaRN."""
from __future__ import annotations

import json

import pytest

from bot.texts.render import plain, render_answer
from engine.answer.build import build_answer
from engine.answer.followup import apply_followup, delta_of
from engine.models.registry import default_registry
from engine.parse import default_vocabulary, parse
from tests.support.asking import cli_answer, launch_commands, said
from tests.support.seedmath import ask, catalog


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


def test_where_the_sequence_does_not_enter_the_sizing_the_cap_is_not_noted_but_holds_for_the_engine():
    """Seed 004's headroom rule without a named context sizes no KV cache, but the serving check starts vLLM at
    the context: at the window, not at 8,192 tokens it "would not start" with."""
    headroom = ask("gpuwithcrypto", model="llama-2-70b")
    assert headroom.resolved.context_tokens == 4096 and "window_context" not in notes_of(headroom)
    assert headroom.serving is not None and headroom.serving.starts
    assert "8,192" not in plain(render_answer(headroom, "en"))
    whisper = ask("gpurenthub", model="whisper-large-v3")
    assert whisper.resolved.context_tokens == 448 and "window_context" not in notes_of(whisper)


def test_training_keeps_its_own_default_within_the_window():
    lora = ask("gpurenthub", model="falcon-40b", workload="lora")
    assert lora.resolved.context_tokens == 2048 and "window_context" not in notes_of(lora)


# -- the release whose window holds the context (engine: Registry.wider_release) -----------------------------------

def read(text: str):
    result = parse(text, default_vocabulary())
    assert result.request is not None, result.error
    return result


def answer_to(text: str, catalog_name: str = "gpurenthub"):
    from engine.answer.build import build_answer
    from tests.support.seedmath import catalog

    return build_answer(read(text).request, catalog(catalog_name))


@pytest.mark.parametrize("text, model, tokens", [
    ("phi-3 medium at 128k", "phi-3-medium-128k", 131072),
    ("phi-3 medium with 16k tokens", "phi-3-medium-128k", 16384),
    ("phi 3 small 100k context", "phi-3-small-128k", 102400),
    ("Phi-3 Mini mit 32k Kontext", "phi-3-mini-128k", 32768),
    ("phi-3-medium-4k at 128k", "phi-3-medium-128k", 131072),  # the 4K release cannot hold it: said in the note
])
def test_a_context_beyond_the_release_is_sized_on_the_release_that_holds_it(text, model, tokens):
    answer = answer_to(text)
    assert (answer.resolved.model, answer.resolved.context_tokens) == (model, tokens)
    assert "model_window" in notes_of(answer) and "beyond_context" not in notes_of(answer)
    assert answer.serving is not None and answer.serving.starts


def test_beyond_every_release_the_widest_is_sized_as_asked():
    answer = answer_to("phi-3 medium at 200k")
    assert answer.resolved.model == "phi-3-medium-128k"
    assert notes_of(answer).count("model_window") == 1 and "beyond_context" in notes_of(answer)


def test_the_release_note_reads_in_both_languages():
    answer = answer_to("phi-3 medium at 128k")
    assert "sized as Phi-3 Medium 128K: 131,072 tokens is beyond Phi-3 Medium 4K's 4,096-token window" in plain(
        render_answer(answer, "en"))
    assert ("gerechnet als Phi-3 Medium 128K: 131.072 Token liegen über dem Kontextfenster von Phi-3 Medium 4K "
            "(4.096 Token)") in plain(render_answer(answer, "de"))


def test_a_request_by_id_or_a_follow_up_gets_the_release_too():
    """The engine decides, so `cardfit size --model phi-3-medium --context 131072`, a follow-up "and at 128k?"
    and a context button answer as the typed question does."""
    from engine.answer.build import build_answer
    from engine.answer.followup import apply_followup, delta_of
    from tests.support.seedmath import catalog

    by_id = ask("gpurenthub", model="phi-3-medium-4k", context_tokens=131072)
    assert by_id.resolved.model == "phi-3-medium-128k"
    delta = delta_of(parse("and at 128k?", default_vocabulary()))
    assert delta is not None
    merged = apply_followup(read("phi-3 medium").request, delta).request
    assert merged.model == "phi-3-medium-4k"  # the request as the user set it; the engine picks the release
    assert build_answer(merged, catalog("gpurenthub")).resolved.model == "phi-3-medium-128k"


@pytest.mark.parametrize("text, model, tokens", [
    ("phi-3 medium at 4k", "phi-3-medium-4k", 4096),  # within the window: nothing to change
    ("phi-3 medium", "phi-3-medium-4k", 4096),
    ("llama 2 70b at 16k", "llama-2-70b", 16384),  # no release of another window: sized as asked
])
def test_a_release_that_holds_the_context_is_kept(text, model, tokens):
    answer = answer_to(text)
    assert (answer.resolved.model, answer.resolved.context_tokens) == (model, tokens)
    assert "model_window" not in notes_of(answer)


# -- the window in the name as the context (engine/parse/windows.py) ----------------------------------------------

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


def test_a_size_that_reads_like_a_context_is_no_context():
    """Only the release's own window ("128k" of phi-3-mini-128k) is read: "gemma 3 270m context" is Gemma 3 270M at
    the default context, never 270m = 283,115,520 tokens."""
    result = read("gemma 3 270m context")
    assert (result.request.model, result.request.context_tokens) == ("gemma-3-270m", None)


def test_a_fuzzy_name_keeps_its_note_beside_the_release_note():
    answer = answer_to("phii-3 medium at 128k")
    assert answer.resolved.model == "phi-3-medium-128k"
    assert "model_fuzzy" in [getattr(note, "code", None) for note in answer.request.assumed]
    assert "model_window" in notes_of(answer)


def test_only_releases_of_the_same_shape_are_siblings():
    from engine.models.registry import releases_by_window

    windows = releases_by_window(default_registry().models)
    assert {stem: sorted(model.id for model in models) for stem, models in windows.items()} == {
        "phi-3-mini": ["phi-3-mini-128k", "phi-3-mini-4k"],
        "phi-3-small": ["phi-3-small-128k", "phi-3-small-8k"],
        "phi-3-medium": ["phi-3-medium-128k", "phi-3-medium-4k"],
        "qwen2.5-7b": ["qwen2.5-7b", "qwen2.5-7b-1m"],  # the base release's id is the stem
        "qwen2.5-14b": ["qwen2.5-14b", "qwen2.5-14b-1m"],  # 14.7 is the headline of the same 14.77B
    }


def test_a_short_window_is_a_context_button_of_its_own_and_the_ticked_one():
    from bot.features.toggles import CONTEXT_TOGGLES, context_toggles

    assert context_toggles(4096) == ((4096, "4k"), *CONTEXT_TOGGLES)
    assert context_toggles(2048)[0] == (2048, "2k") and context_toggles(448)[0] == (448, "448")
    assert context_toggles(131072) == CONTEXT_TOGGLES and context_toggles(None) == CONTEXT_TOGGLES


# -- typos of a distinguishing word (engine/parse/models.py _exact_at) ---------------------------------------------

@pytest.mark.parametrize("text, model", [
    ("phi-3 medum 14b", "phi-3-medium-4k"),  # was Phi-3 Mini with "14B ignored" and "Not understood: 'medum'"
    ("phi-3 mediun", "phi-3-medium-4k"),
    ("phi-3 meduim", "phi-3-medium-4k"),
    ("phi 3 smal", "phi-3-small-8k"),
])
def test_a_typo_in_the_name_word_after_an_exact_name_is_read_as_that_word(text, model):
    result = read(text)
    assert result.request.model == model
    assert result.model_note is not None and result.model_note.code == "model_fuzzy"
    assert not result.request.ignored


@pytest.mark.parametrize("text, model", [
    ("phi-3 mini", "phi-3-mini-4k"),
    ("phi-3 medium", "phi-3-medium-4k"),
    ("phi3 shall i use fp8 or int4?", "phi-3-mini-4k"),  # "shall" is one edit from "small", and a stop word
    ("phi-3, smal or medium?", "phi-3-mini-4k"),  # not across a comma
    ("Phi-3: shall I rent an A100?", "phi-3-mini-4k"),
    ("devstral, shall I quantize it?", "devstral-small"),
])
def test_a_right_name_or_an_ordinary_word_is_no_typo(text, model):
    result = read(text)
    assert result.request.model == model
    assert result.model_note is None or result.model_note.code != "model_fuzzy"


def test_training_sizes_with_its_own_default_whatever_the_window():
    """Whisper's 448 is its decoder's window (max_target_positions); its LoRA is sized with the training default,
    as before the cap."""
    lora = ask("gpurenthub", model="whisper-large-v3", workload="lora")
    assert lora.resolved.context_tokens == 2048
    qlora = read("finetune phi-3 mini 128k context with qlora").request
    assert (qlora.model, qlora.context_tokens) == ("phi-3-mini-128k", None)  # the release's name, no sequence


def test_a_named_batch_under_the_headroom_rule_is_sized_at_the_window():
    """Seed 004 counts the KV cache once a batch is named: at the context vLLM starts Llama 2 13B with."""
    answer = ask("gpuwithcrypto", model="llama-2-13b", batch=4)
    assert answer.resolved.context_tokens == 4096
    assert answer.requirement.component("kv_cache").values["tokens"] == 4096


def test_a_follow_up_to_the_context_already_shown_notes_no_change():
    from engine.answer.build import build_answer
    from engine.answer.followup import apply_followup, delta_of, shown_of
    from tests.support.seedmath import catalog

    first = read("llama 2 70b").request
    shown = shown_of(build_answer(first, catalog("gpurenthub")))
    followup = apply_followup(first, delta_of(parse("and at 4k?", default_vocabulary())), shown)
    assert followup.changes == [] and followup.request.context_tokens == 4096
    changed = apply_followup(first, delta_of(parse("and at 8k?", default_vocabulary())), shown)
    assert [note.code for note in changed.changes] == ["followup_changed"]


def test_a_window_that_is_no_release_window_is_no_context():
    """MiniMax-M1's "80k" is a thinking budget (its window is 1M): "MiniMax M1 80k tokens" sets no context."""
    result = read("MiniMax M1 80k tokens")
    assert result.request.context_tokens is None


@pytest.mark.parametrize("text, model, tokens", [
    ("llama 2 70b 4096 context", "llama-2-70b", 4096),  # was "I don't know llama 2 70b 4096", a generic 70B
    ("llama 2 13b 4096 tokens", "llama-2-13b", 4096),
    ("Llama 3.1 8B 8192 Token Kontext", "llama-3.1-8b", 8192),
])
def test_a_number_after_the_size_and_before_a_context_word_is_the_context(text, model, tokens):
    result = read(text)
    assert (result.request.model, result.request.context_tokens) == (model, tokens)


def test_a_release_date_after_the_size_stays_part_of_the_name():
    assert read("deepseek r1 0528 128k context").request.model == "deepseek-r1-0528"


def test_a_follow_up_under_the_headroom_rule_names_the_context_it_adds():
    """GPUwithCrypto's answer to "llama 2 70b" shows no context (no KV cache sized): "and at 4k?" adds one, and
    says so, although the engine's context was already 4,096."""
    from engine.answer.build import build_answer
    from engine.answer.followup import apply_followup, delta_of, shown_of
    from tests.support.seedmath import catalog

    first = read("llama 2 70b").request
    shown = shown_of(build_answer(first, catalog("gpuwithcrypto")))
    followup = apply_followup(first, delta_of(parse("and at 4k?", default_vocabulary())), shown)
    assert [note.code for note in followup.changes] == ["followup_changed"]


def test_a_longest_context_question_is_answered_for_the_release_with_the_longest_window():
    """"max context for phi-3 medium on an H100" named the 4K release's alias and answered 4,096 tokens ("capped
    at the model's maximum"); the same weights as Phi-3 Medium 128K hold 131,072 there."""
    from bot.cli.main import ask_answer
    from catalog.loader import load_catalog
    from engine.parse import Vocabulary

    hub = load_catalog("gpurenthub").catalog
    answer, error, _ = ask_answer("max context for phi-3 medium on an h100", hub, Vocabulary.of_catalog(hub))
    assert answer is not None and error is None
    assert (answer.capacity.card, answer.capacity.count) == ("H100 SXM", 1)
    assert answer.resolved.model == "phi-3-medium-128k" and "model_window_longest" in notes_of(answer)
    assert answer.capacity is not None and answer.capacity.rule_value == 131072
    assert "gerechnet als Phi-3 Medium 128K, die Version mit dem längsten Kontextfenster (131.072 Token)" in plain(
        render_answer(answer, "de"))
    named = answer_to("max context for phi-3 medium on an h100 at 4k")  # a context named: the engine's usual rule
    assert "model_window_longest" not in notes_of(named)
    plain_question = answer_to("phi-3 medium on an h100")
    assert plain_question.resolved.model == "phi-3-medium-4k"


def test_training_is_never_switched_to_another_release():
    answer = answer_to("fine-tune phi-3 mini with 16k context")
    assert answer.resolved.model == "phi-3-mini-4k" and "model_window" not in notes_of(answer)


def test_the_window_read_as_the_context_is_said():
    result = read("phi-3 mini 128k context int4 on a 4090")
    assert result.request.context_tokens == 131072 and result.request.card is not None
    codes = [getattr(note, "code", None) for note in result.request.assumed]
    assert "window_as_context" in codes


def test_a_card_number_before_a_context_word_is_not_taken_for_a_context():
    """"llama 3.1 8b 4090 context" is ambiguous (RTX 4090, or 4,090 tokens): it is not silently 4,090 tokens."""
    from catalog.loader import load_catalog
    from engine.parse import Vocabulary

    vocabulary = Vocabulary.of_catalog(load_catalog("gpurenthub").catalog)
    assert parse("llama 3.1 8b 4090 context", vocabulary).request.context_tokens != 4090
    assert parse("llama 2 70b 4096 context", vocabulary).request.context_tokens == 4096


async def test_the_headroom_answer_ticks_the_window_button_too(tmp_path):
    from bot.config import load_settings
    from tests.support.botharness import TOKEN, Harness

    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "c.sqlite3"), catalog="gpuwithcrypto")
    async with Harness(settings) as bot:
        await bot.send(1, "llama 2 70b")
        reply = bot.replies(1)[-1]
        labels = [b["text"] for row in reply["reply_markup"]["inline_keyboard"] for b in row]
        assert "✓ 4k" in labels


@pytest.mark.parametrize("text, tokens", [
    ("70B at 4096", 4096), ("llama 2 70b with 2048", 2048), ("Qwen3 8B mit 32768", 32768),
])
def test_a_power_of_two_after_at_or_with_is_a_context(text, tokens):
    assert read(text).request.context_tokens == tokens


@pytest.mark.parametrize("text", ["and at 4096?", "und bei 8192?"])
def test_a_bare_context_is_a_follow_up(text):
    from engine.answer.followup import delta_of

    delta = delta_of(parse(text, default_vocabulary()))
    assert delta is not None and delta.context_tokens in (4096, 8192)


@pytest.mark.parametrize("text", ["70B at 8", "70B at 4090", "70B at 1000", "70B at 4096.5", "70B at " + "9" * 400])
def test_other_bare_numbers_after_at_are_no_context(text):
    from engine.parse import _parse_strict

    result = _parse_strict(text, default_vocabulary())  # no safety net: a crash fails the test
    assert result.request is not None and result.request.context_tokens is None


# -- the longest context a question may ask for -------------------------------------------------------------------

def test_every_published_window_can_be_asked_for():
    from engine.sizing.sequence import MAX_CONTEXT_TOKENS

    longest = max(model.context_max or 0 for model in default_registry().models)
    assert longest == 10_485_760 and longest <= MAX_CONTEXT_TOKENS  # Llama 4 Scout's window


@pytest.mark.parametrize("text", ["llama-4-scout 10M context vram", "Llama 4 Scout mit 10M Kontext"])
def test_scout_at_its_whole_window_is_sized(text):
    result = read(text)
    assert result.error is None and result.request.context_tokens == 10_485_760
    assert result.request.model == "llama-4-scout"


# -- YaRN / rope scaling: the user extends the window ---------------------------------------------------------------

def parsed(text: str):
    return parse(text, default_vocabulary())


def assumed_codes(request) -> list[str]:
    return [getattr(note, "code", "") for note in request.assumed]


@pytest.mark.parametrize("text", [
    "qwen3 8b with 128k context yarn", "qwen3 8b 128k rope scaling", "Qwen3 8B mit 128k Kontext und YaRN",
    "qwen3 8b with YaRN at 128k", "qwen3 8b 128k rope-scaling", "Qwen3 8B mit RoPE-Skalierung und 128k Kontext",
    "qwen3 8b, 128k, yarn", "qwen3 8b 128k rope_scaling",
])
def test_yarn_is_read_and_carried(text):
    result = parsed(text)
    assert result.request is not None and result.request.rope_scaling == "yarn"
    assert result.request.context_tokens == 131072 and not result.request.ignored
    assert "rope_scaling" in assumed_codes(result.request)


@pytest.mark.parametrize("text", ["qwen3 8b with 128k context", "rope 8b", "llama 3.1 8b with a rope of 32k"])
def test_no_yarn_where_none_is_said(text):
    result = parsed(text)
    request = result.request or result.partial
    assert request is None or request.rope_scaling is None


def test_a_yarn_follow_up_keeps_the_flag_and_a_later_one_keeps_it_too():
    first = parsed("qwen3 8b with 128k context")
    assert first.request is not None
    delta = delta_of(parsed("and with yarn?"))
    assert delta is not None and delta.rope_scaling == "yarn"
    merged = apply_followup(first.request, delta).request
    assert merged.rope_scaling == "yarn" and merged.context_tokens == 131072
    again = apply_followup(merged, delta_of(parsed("and in fp8?"))).request
    assert again.rope_scaling == "yarn" and again.precision == "fp8"


# -- YaRN in the serving check and the launch command ---------------------------------------------------------------


OVER_MAX = "exceed the model's maximum"
YARN = "with YaRN: factor 4 over 32,768 tokens, a 131,072-token window"


@pytest.mark.parametrize("text, lang", [("qwen3 8b 128k yarn", "en"), ("Qwen3 8B mit 128k Kontext und YaRN", "de")])
def test_yarn_widens_the_window_the_engine_checks_and_the_launch_passes_it(capsys, text, lang):
    """Qwen3's card: 32,768 native, 131,072 with YaRN factor 4; before, vLLM 'would not start: 131,072 tokens exceed
    the model's maximum of 40,960' although the user said YaRN."""
    data = cli_answer(capsys, text, lang)
    assert YARN in said(data) and OVER_MAX not in said(data) and "context window; sized as asked" not in said(data)
    assert data["serving"]["starts"] is True
    vllm = [line for line in launch_commands(data) if line.startswith("vllm serve Qwen/Qwen3-8B ")]
    assert vllm and all("--max-model-len 131072" in line for line in vllm)
    overrides = json.loads(vllm[0].split("--hf-overrides '", 1)[1].split("'", 1)[0])
    assert overrides == {"rope_parameters": {"rope_type": "yarn", "factor": 4.0,
                                             "original_max_position_embeddings": 32768, "rope_theta": 1000000},
                         "max_position_embeddings": 131072}


@pytest.mark.parametrize("text, lang", [("qwen3 32b 128k with yarn on a 4090", "en"),
                                        ("Qwen3 32B mit 128k Kontext und YaRN auf einer 4090", "de")])
def test_yarn_on_a_small_card_is_refused_for_memory_not_for_the_window(capsys, text, lang):
    data = cli_answer(capsys, text, lang)
    assert OVER_MAX not in said(data) and YARN in said(data)
    assert data["serving"]["starts"] is False  # 65.6 GB of BF16 weights on a 24 GB card


def test_without_yarn_the_config_window_still_refuses(capsys):
    data = cli_answer(capsys, "qwen3 8b 128k on an h100")
    assert OVER_MAX in said(data)
    assert not any("--hf-overrides" in line for line in launch_commands(data))


def test_yarn_on_llama_cpp_passes_the_scale_and_the_original_window(capsys):
    data = cli_answer(capsys, "qwen3 8b 128k yarn q4_k_m gguf")
    llama = [line for line in launch_commands(data) if line.startswith("llama-server")]
    assert llama and all("-c 131072" in line and "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768" in line
                         for line in llama)


def test_yarn_where_the_card_publishes_none_keeps_the_window_and_says_so():
    answer = build_answer(parsed("gemma 2 9b 32k yarn").request, catalog("gpurenthub"))
    codes = [note.code for note in answer.resolved.notes]
    assert "yarn_unpublished" in codes and answer.resolved.shape.context_max == 8192
    assert "yarn_window" not in codes


def test_a_yarn_follow_up_widens_the_window_in_the_answer():
    first = parsed("qwen3 8b with 128k context on an a100")
    assert first.request is not None
    merged = apply_followup(first.request, delta_of(parsed("and with yarn?"))).request
    answer = build_answer(merged, catalog("gpurenthub"))
    assert answer.resolved.shape.context_max == 131072 and answer.serving is not None
    assert "--hf-overrides" in (answer.serving.command or "")


def test_the_yarn_window_notes_read_in_both_languages():
    answer = build_answer(parsed("qwen3 8b 128k yarn").request, catalog("gpurenthub"))
    assert f"Qwen3 8B {YARN}" in plain(render_answer(answer, "en"))
    assert "Qwen3 8B mit YaRN: Faktor 4 über 32.768 Token, ein Fenster von 131.072 Token" in plain(
        render_answer(answer, "de"))
