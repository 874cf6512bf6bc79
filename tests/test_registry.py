"""The model registry: the bundled directory, its integrity rules, repo-id lookups, `cardfit models`."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.cli.main import main
from catalog.loader import load_catalog
from catalog.names import normalize_name
from engine.answer.build import build_answer
from engine.models.registry import REGISTRY_DIR, build_registry, default_registry, load_entries
from engine.parse import parse
from engine.sizing.rule import SizeRequest, kv_cache

ROOT = Path(__file__).resolve().parent.parent


def _entry(model_id: str, **fields: object) -> dict[str, object]:
    return {"id": model_id, "name": model_id, "params_b": 7, "layers": 32, "attention_heads": 32, "kv_heads": 8,
            "head_dim": 128, "source": "test", **fields}


# -- the bundled data ------------------------------------------------------------------------------------------

def test_registry_holds_150_plus_models_from_every_family_file():
    registry = default_registry()
    assert len(registry) >= 150
    files = sorted(REGISTRY_DIR.glob("*.yaml"))
    assert {path.stem for path in files} >= {"llama", "mistral", "qwen", "deepseek", "gemma", "phi", "non_llm"}
    per_file = [len(yaml.safe_load(path.read_text(encoding="utf-8"))["models"]) for path in files]
    assert all(count > 0 for count in per_file) and sum(per_file) == len(registry) == len(load_entries())


def test_package_data_ships_the_model_directory():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    assert "data/*.yaml" in package_data["engine.models"] and "*.yaml" in package_data["engine.formats"]


def test_every_model_has_a_source_and_language_models_a_repo():
    for model in default_registry():
        assert model.source.strip(), model.id
        if model.is_language_model:
            assert model.hf_id and "/" in model.hf_id, model.id
        for repo in model.quantized:
            assert repo.source.strip() and "/" in repo.repo, (model.id, repo.hf_id)
            assert repo.gb is None or repo.gb > 0, (model.id, repo.hf_id)


def test_exact_params_within_3_percent_of_the_headline_or_the_reason_is_said():
    exceptions = set()
    for model in default_registry():
        assert model.params_exact_b is not None, model.id
        if abs(model.params_exact_b - model.params_b) > 0.03 * model.params_b:
            assert model.params_note, model.id
            exceptions.add(model.id)
    assert exceptions == {"llama-2-7b", "gemma-3-4b", "gemma-3-12b", "falcon-40b"}


def test_headline_params_stay_what_the_seeds_use_and_the_exact_count_is_kept_apart():
    registry = default_registry()
    for model_id, headline, exact in (("llama-3.1-70b", 70, 70.554), ("mistral-7b", 7.3, 7.242),
                                      ("qwen2.5-72b", 72.7, 72.706), ("deepseek-v3", 671, 671.026)):
        model = registry.get(model_id)
        assert (model.params_b, model.params_exact_b) == (headline, pytest.approx(exact, abs=0.001)), model_id


def test_families_are_listed_oldest_generation_first():
    order = [model.id for model in default_registry()]
    for older, newer in (("llama-2-70b", "llama-3.3-70b"), ("llama-3.1-8b", "llama-4-scout"),
                         ("qwen2-7b", "qwen2.5-7b"), ("qwen2.5-72b", "qwen3-32b"), ("deepseek-v3", "deepseek-v3.2-exp"),
                         ("gemma-2-27b", "gemma-3-27b"), ("phi-3-mini-4k", "phi-4"), ("minimax-m2", "minimax-m2.7"),
                         ("glm-4.5", "glm-5")):
        assert order.index(older) < order.index(newer), (older, newer)


# -- lookups ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, model_id", [
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
    ("qwen/qwen2.5-72b", "qwen2.5-72b"),
    ("meta-llama/llama-3.1-8b-instruct", "llama-3.1-8b"),
    ("META-LLAMA/Llama-3.1-70B", "llama-3.1-70b"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill-qwen-7b"),
    ("CohereForAI/c4ai-command-r-plus", "command-r-plus"),
    ("zai-org/GLM-5", "glm-5"),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b"),  # a published quantized repo names its base model
    ("deepseek-r1:8b", "deepseek-r1-0528-qwen3-8b"),  # the Ollama tag, per the research
    ("command-r 35b", "command-r-v01"),
])
def test_repo_ids_and_tags_resolve_case_insensitively(name, model_id):
    assert default_registry().get(name).id == model_id


def test_a_quantized_repo_says_what_it_is():
    registry = default_registry()
    repo = registry.quantized_repo("qwen/qwen2.5-72b-instruct-awq")
    assert repo is not None and repo.quant == "awq" and repo.gb == pytest.approx(41.6)
    assert registry.quantized_repo("Qwen/Qwen2.5-72B-Instruct") is None  # the base model is no quantized repo
    gguf = [repo for repo in registry.get("deepseek-r1").quantized if ":" in repo.hf_id]
    assert gguf and registry.get(gguf[0].hf_id).id == registry.get(gguf[0].repo).id == "deepseek-r1"


def test_generic_names_stay_where_the_corpus_has_them():
    registry = default_registry()
    assert registry.get("mistral:7b").id == "mistral-7b"  # = "mistral 7b" once separators go
    assert registry.get("command-r-plus").id == "command-r-plus"
    assert registry.get("yi:34b").id == "yi-34b"
    for family_word in ("mixtral", "falcon", "mistral"):
        assert registry.get(family_word) is None, family_word  # the parser asks for the size instead


def test_search_matches_every_word_in_names_and_repo_ids():
    registry = default_registry()
    found = [model.id for model in registry.search("qwen 72")]
    assert found == ["qwen2-72b", "qwen2.5-72b", "qwen2.5-vl-72b"]
    # both publish an AWQ repo
    assert [model.id for model in registry.search("AWQ 72B")] == ["qwen2.5-72b", "qwen2.5-vl-72b"]
    assert registry.search("   ") == registry.models
    assert registry.search("no-such-model") == ()


def test_a_name_claimed_twice_or_an_unknown_key_is_an_error():
    with pytest.raises(ValueError, match="names both"):
        build_registry([_entry("a-7b", aliases=["same"]), _entry("b-7b", aliases=["Same"])])
    with pytest.raises(ValueError, match="names both"):
        build_registry([_entry("a-7b", hf_id="org/A"), _entry("b-7b", hf_ids=["ORG/a"])])
    quantized = [{"hf_id": "org/a-7b-awq", "quant": "awq", "gb": 4, "source": "test"}]
    with pytest.raises(ValueError, match="names b-7b"):
        build_registry([_entry("a-7b", quantized=quantized), _entry("b-7b", aliases=["org/a-7b-awq"])])
    with pytest.raises(ValueError, match="unknown keys"):
        build_registry([_entry("a-7b", aliasses=["typo"])])


def test_every_alias_normalizes_to_a_key_of_its_own_model():
    registry = default_registry()
    for model in registry:
        for name in (model.id, model.name, *model.aliases, *model.hf_ids):
            assert registry.by_key[normalize_name(name)] is model, (model.id, name)


# -- KV details the formulas cannot size are said, never silently dropped --------------------------------------

@pytest.mark.parametrize("model_id", ["glm-5"])
def test_unmodelled_kv_detail_leaves_the_kv_cache_out_and_says_so(model_id):
    shape = default_registry().get(model_id)
    assert shape.kv_unmodelled and not shape.kv_known
    assert kv_cache(shape, 2, 32768, 1) is None
    answer = build_answer(SizeRequest(model=model_id, context_tokens=32768), load_catalog("gpurenthub").catalog)
    assert answer.requirement.component("kv_cache") is None
    assert any("KV cache not included" in note for note in answer.assumed)


def test_vision_llms_size_their_kv_cache_and_decode():
    shape = default_registry().get("gemma-3-27b")
    assert shape.kind == "vlm" and shape.kv_known and shape.vision_params_b
    answer = build_answer(SizeRequest(model="gemma-3-27b"), load_catalog("gpurenthub").catalog)
    assert answer.requirement.component("kv_cache") is not None
    assert answer.fit is not None and answer.fit.decode_tokens_per_s


def test_llama_4_chunked_layers_hold_one_chunk():
    shape = default_registry().get("llama-4-scout")
    assert shape.attention_chunk_size == shape.sliding_window == 8192 and shape.sliding_layers == 36
    long = kv_cache(shape, 2, 1_000_000, 1).gb
    per_token_layer = 2 * shape.kv_heads * shape.head_dim * 2
    assert long * 1e9 == pytest.approx(per_token_layer * (12 * 1_000_000 + 36 * 8192))


def test_command_r_v01_is_full_multi_head_attention():
    shape = default_registry().get("command-r-v01")
    assert shape.kv_heads == shape.attention_heads == 64
    assert shape.summary().kind == "mha"


# -- cardfit models --------------------------------------------------------------------------------------------

def test_cardfit_models_search_qwen(capsys):
    assert main(["models", "--search", "qwen"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [line.split()[0] for line in lines[:-1]]
    assert ids == [model.id for model in default_registry().search("qwen")]
    assert {model.id for model in default_registry() if "qwen" in model.id} <= set(ids)
    assert "qwq-32b" in ids  # found by its repo id Qwen/QwQ-32B
    assert not {"llama-3.1-70b", "mistral-7b", "gemma-3-27b"} & set(ids)
    line = next(line for line in lines if line.startswith("qwen2.5-72b "))
    assert "Qwen2.5 72B" in line and "72.7B" in line and "131,072" in line and "AWQ 41.6 GB" in line
    assert lines[-1] == f"{len(ids)} of {len(default_registry())} models"


def test_cardfit_models_json_and_no_match(capsys):
    assert main(["models", "--json", "--search", "gpt-oss", "120b"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in data] == ["gpt-oss-120b"]
    assert data[0]["published_weights"] == {"format": "mxfp4", "gb": 65.3} and data[0]["weights_format"] == "MXFP4"
    assert data[0]["hf_id"] == "openai/gpt-oss-120b" and data[0]["params_b"] == 117
    assert main(["models", "--search", "zzz-unknown"]) == 0
    assert "no model matches 'zzz-unknown'" in capsys.readouterr().out
    assert main(["models", "--json", "--search", "zzz-unknown"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# -- the new names reach the parser --------------------------------------------------------------------------

@pytest.mark.parametrize("text, model_id", [
    ("deepseek r1 distill qwen 7b", "deepseek-r1-distill-qwen-7b"),  # was DeepSeek-R1 671B
    ("deepseek-r1-distill-qwen-32b in 4 bit", "deepseek-r1-distill-qwen-32b"),
    ("Phi-3-medium-128k", "phi-3-medium-128k"),  # was Phi-3 Mini 4K
    ("Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder-30b-a3b"),  # was Qwen2.5 Coder 32B
    ("qwen2.5 vl 7b", "qwen2.5-vl-7b"),  # was Qwen2.5 7B
    ("llama 4 maverick at fp8", "llama-4-maverick"),
    ("Qwen/Qwen2.5-72B-Instruct on two 4090s", "qwen2.5-72b"),
])
def test_new_registry_names_are_read_exactly(text, model_id, bundled_vocabulary):
    result = parse(text, bundled_vocabulary)
    assert result.matched_model == model_id and result.model_note is None, text
