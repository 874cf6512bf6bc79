"""Registry entries as their releases are published: Kimi K2.5's native INT4 checkpoint, DeepSeek V4's attention
said for what it is, the config fields that keep the serving check off its Llama-like guess (Gemma 4 12B,
Nemotron 3 Nano), Magistral Small 2509's window and SmolLM3's YaRN setting -- asked as customers ask, in English
and German, through `cardfit ask`."""
from __future__ import annotations

import json

import pytest

from bot.cli import main as cli
from engine.models.registry import default_registry
from tests.support.asking import cli_answer, launch_commands, said

REGISTRY = default_registry()


@pytest.mark.parametrize(("text", "lang"), [("Kimi K2.5 on 8x H200", "en"),
                                            ("Kimi K2.5 auf 8x H200, reicht das?", "de"),
                                            ("kimi k2.5 int4 on 8x H200", "en")])
def test_kimi_k2_5_is_its_published_int4_checkpoint_and_8x_h200_hold_it(capsys, text: str, lang: str) -> None:
    """The release's routed experts are INT4 (compressed-tensors, group 32): 595 GB, not 1,026.4B x 2 B = 2,052.8 GB
    ('short by 927.4 GB' on 8x H200 before); an asked INT4 is that same checkpoint, not 0.5 B per parameter."""
    answer = cli_answer(capsys, text, lang)
    weights = next(part for part in answer["requirement"]["components"] if part["name"] == "weights")
    assert weights["gb"] == pytest.approx(595.0), weights
    assert answer["request"]["precision"] == "int4"
    assert answer["fit"]["card"] == "h200-sxm" and answer["fit"]["count"] == 8 and answer["fit"]["valid"]
    assert "real 4-bit checkpoint" not in said(answer) and "echter 4-Bit" not in said(answer)
    vllm = [line for line in launch_commands(answer) if line.startswith("vllm serve")]
    assert vllm and all(line.startswith("vllm serve moonshotai/Kimi-K2.5 ") for line in vllm), vllm
    assert not any("--quantization" in line for line in vllm), vllm
    assert answer["serving"]["starts"] is True


@pytest.mark.parametrize(("text", "lang"), [("moonshotai/Kimi-K2.5 how much VRAM", "en"),
                                            ("Wie viel VRAM braucht moonshotai/Kimi-K2.5?", "de")])
def test_the_kimi_k2_5_repo_id_is_sized_as_published(capsys, text: str, lang: str) -> None:
    answer = cli_answer(capsys, text, lang)
    assert answer["request"]["model"] == "kimi-k2.5"
    assert answer["requirement"]["total_gb"] < 700  # 595 GB of weights, not 2,052.8 GB of BF16


def test_kimi_k2_5_entry_names_its_int4_release() -> None:
    shape = REGISTRY.get("kimi-k2.5")
    assert shape.published_weights is not None and shape.published_weights.format == "int4"
    assert shape.published_weights.gb == 595
    assert "compressed-tensors" in shape.source


@pytest.mark.parametrize("model_id", ["deepseek-v4-flash", "deepseek-v4-pro"])
def test_deepseek_v4_says_why_its_kv_cache_is_not_sized(model_id: str) -> None:
    """One shared K=V vector per token in a 128-token window plus a history compressed 4x or 128x: neither MLA nor
    GQA, so the KV line stays out and the entry says what the attention is."""
    shape = REGISTRY.get(model_id)
    assert not shape.kv_known
    assert "compress_ratios" in shape.note and "neither MLA" in shape.note
    assert shape.vocab_size == 129280 and shape.tie_word_embeddings is False


@pytest.mark.parametrize(("text", "lang"), [("gemma 4 12b on an L40S", "en"),
                                            ("Gemma 4 12B auf einer L40S", "de"),
                                            ("nemotron 3 nano on an H100", "en"),
                                            ("Nemotron 3 Nano auf einer H100", "de")])
def test_the_serving_check_uses_the_models_own_shape_not_a_llama_like_one(capsys, text: str, lang: str) -> None:
    answer = cli_answer(capsys, text, lang)
    text_said = said(answer)
    assert answer["serving"] is not None
    assert "Llama-like" not in text_said and "Llama-ähnlich" not in text_said, text


def test_the_fields_read_from_the_config_copies() -> None:
    gemma, nemotron = REGISTRY.get("gemma-4-12b"), REGISTRY.get("nemotron-3-nano-30b-a3b")
    assert (gemma.hidden_size, gemma.vocab_size, gemma.tie_word_embeddings, gemma.torch_dtype) == \
        (3840, 262144, True, "bfloat16")
    assert (nemotron.hidden_size, nemotron.vocab_size) == (2688, 131072)


@pytest.mark.parametrize(("text", "lang"), [("magistral small 2509 at 128k on an A100", "en"),
                                            ("Magistral Small 2509 mit 128k Kontext auf einer A100", "de")])
def test_magistral_small_2509_is_capped_at_its_window(capsys, text: str, lang: str) -> None:
    answer = cli_answer(capsys, text, lang)
    text_said = said(answer)
    assert REGISTRY.get("magistral-small-2509").context_max == 131072
    assert "not published" not in text_said and "nicht veröffentlicht" not in text_said
    assert answer["serving"]["starts"] is True


@pytest.mark.parametrize(("text", "lang"), [("smollm3 with yarn at 128k on an L4", "en"),
                                            ("SmolLM3 mit YaRN und 128k Kontext auf einer L4", "de")])
def test_smollm3_with_yarn_reaches_its_cards_128k(capsys, text: str, lang: str) -> None:
    """The card: 65,536 in config.json, 131,072 with YaRN factor 2; said, checked and passed to vLLM."""
    answer = cli_answer(capsys, text, lang)
    assert answer["serving"]["starts"] is True
    vllm = [line for line in launch_commands(answer) if line.startswith("vllm serve HuggingFaceTB/SmolLM3-3B ")]
    assert vllm and all("--max-model-len 131072" in line for line in vllm), vllm
    overrides = json.loads(vllm[0].split("--hf-overrides '", 1)[1].split("'", 1)[0])
    assert overrides["rope_parameters"] == {"rope_type": "yarn", "factor": 2.0,
                                            "original_max_position_embeddings": 65536, "rope_theta": 5000000}


@pytest.mark.parametrize(("text", "lang", "hint"), [
    ("smollm3 at 128k", "en", "SmolLM3 3B's card reaches 131,072 tokens with YaRN (factor 2)"),
    ("smollm3 mit 128k Kontext", "de", "die Karte von SmolLM3 3B erreicht 131.072 Token mit YaRN (Faktor 2)"),
])
def test_smollm3_at_128k_without_yarn_says_how_its_card_reaches_it(capsys, text: str, lang: str, hint: str) -> None:
    """The window widens only when the user says YaRN (tests/test_context_window.py); beyond the config's window
    and within the card's YaRN one, the answer says so."""
    assert cli.main(["ask", "--lang", lang, text]) == 0
    reply = capsys.readouterr().out
    assert hint in reply, reply
