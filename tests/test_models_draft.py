"""`cardfit models draft`: a repository's config.json and safetensors headers become a registry entry that loads
as the registry's own entries do, with the shape the registry has for the same model (no network: local copies
and the local stand-in for the Hub in tests/support/hubserver.py).

tests/data/hub_drafts/qwen3.5-397b-a17b/config.json is Qwen/Qwen3.5-397B-A17B's config.json as
github:ai-dynamo/aiconfigurator@87fe4b0c src/aiconfigurator/model_configs/Qwen--Qwen3.5-397B-A17B_config.json copies
it (hybrid linear/full attention, MoE, a vision tower, the language model under text_config).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from bot.cli import main as cli
from bot.cli.draft import DraftError, read_directory
from engine.models.draft import count_from_index, count_tensors, draft_entry
from engine.models.hub import layer_roles, shape_from_hub
from engine.models.registry import build_registry, default_registry
from tests.support.hubserver import (
    LLAMA31_8B,
    MIXTRAL_8X7B,
    Repo,
    ThreadedHubServer,
    llama_tensors,
    parameter_count,
    safetensors_header,
    sharded_repo,
)

QWEN35_397B = Path(__file__).resolve().parent / "data" / "hub_drafts" / "qwen3.5-397b-a17b"
REGISTRY = default_registry()


def _write(directory: Path, repo: Repo) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in repo.files.items():
        (directory / name).write_bytes(data)
    return directory


def _draft(capsys, repo_id: str, directory: Path) -> tuple[str, dict]:
    """The draft as `cardfit models draft` prints it, and its entry as the registry's loader reads it."""
    assert cli.main(["models", "draft", repo_id, "--from-dir", str(directory)]) == 0
    out = capsys.readouterr().out
    entries = yaml.safe_load(out)
    assert isinstance(entries, list) and len(entries) == 1
    return out, entries[0]


def _as_registry_model(entry: dict, new_id: str):
    """The entry loaded by engine/models/registry.py under an id of its own (beside a copy of nothing else)."""
    return build_registry([{**entry, "id": new_id, "name": new_id, "aliases": [], "hf_id": None}]).models[0]


def test_a_dense_gqa_model_from_its_shards_reads_as_the_registry_has_it(tmp_path, capsys):
    tensors = llama_tensors(LLAMA31_8B)
    directory = _write(tmp_path / "llama", sharded_repo(LLAMA31_8B, tensors, shards=4))
    out, entry = _draft(capsys, "meta-llama/Llama-3.1-8B", directory)
    model, known = _as_registry_model(entry, "draft-llama"), REGISTRY.get("llama-3.1-8b")
    assert known is not None
    assert (model.layers, model.attention_heads, model.kv_heads, model.head_dim) == (
        known.layers, known.attention_heads, known.kv_heads, known.head_dim)
    assert (model.hidden_size, model.vocab_size, model.context_max) == (
        known.hidden_size, known.vocab_size, known.context_max)
    assert model.params_exact_b == pytest.approx(sum(parameter_count(tensors).values()) / 1e9, abs=1e-3)
    assert model.params_exact_b == pytest.approx(known.params_exact_b, rel=0.001)
    assert model.kind == "llm" and model.no_kv_layers == 0 and model.experts_total is None
    assert entry["params_source"] == "safetensors headers of 4 files"
    assert "REVIEW: the registry already has llama-3.1-8b" in out  # a known repo is said, not silently duplicated
    assert "config: Hugging Face meta-llama/Llama-3.1-8B config.json" in entry["source"]


def test_a_copy_without_weights_is_drafted_from_the_index(tmp_path, capsys):
    """`hf download --include "*.json"`: the index's total_size over the config's dtype gives the count."""
    params = sum(parameter_count(llama_tensors(LLAMA31_8B)).values())
    directory = tmp_path / "json-only"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(LLAMA31_8B))
    (directory / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 2 * params}, "weight_map": {}}))
    _, entry = _draft(capsys, "meta-llama/Llama-3.1-8B", directory)
    assert entry["params_exact_b"] == round(params / 1e9, 3)
    assert entry["params_source"] == "model.safetensors.index.json total_size / 2 B (BF16)"
    index = {"metadata": {"total_parameters": params, "total_size": 2 * params}}
    assert count_from_index(index, LLAMA31_8B).basis == "model.safetensors.index.json total_parameters"


def test_a_moe_model_counts_experts_and_active_parameters(tmp_path, capsys):
    directory = _write(tmp_path / "mixtral", sharded_repo(MIXTRAL_8X7B, llama_tensors(MIXTRAL_8X7B), shards=2))
    _, entry = _draft(capsys, "mistralai/Mixtral-8x7B-v0.1", directory)
    model, known = _as_registry_model(entry, "draft-mixtral"), REGISTRY.get("mixtral-8x7b")
    assert known is not None
    assert (model.experts_total, model.experts_active) == (known.experts_total, known.experts_active) == (8, 2)
    assert model.params_b == pytest.approx(known.params_b, rel=0.01)
    assert model.active_params_b == pytest.approx(known.active_params_b, rel=0.03)


def _qwen35_tensors() -> dict[str, tuple[str, list[int]]]:
    """A header-only stand-in for the checkpoint's tensor names (the vision tower under model.visual, the MTP head
    under mtp.): the test checks what is counted where, the sizes are the test's own."""
    return {"model.language_model.embed_tokens.weight": ("BF16", [248320, 4096]),
            "model.visual.blocks.0.attn.qkv.weight": ("BF16", [3456, 1152]),
            "model.visual.merger.linear_fc2.weight": ("BF16", [4096, 4608]),
            "mtp.fc.weight": ("BF16", [4096, 8192])}


def test_a_hybrid_attention_vlm_counts_the_layers_that_keep_kv(tmp_path, capsys):
    directory = tmp_path / "qwen35"
    directory.mkdir()
    (directory / "config.json").write_bytes((QWEN35_397B / "config.json").read_bytes())
    (directory / "model.safetensors").write_bytes(safetensors_header(_qwen35_tensors()))
    out, entry = _draft(capsys, "Qwen/Qwen3.5-397B-A17B", directory)
    model = _as_registry_model(entry, "draft-qwen35")
    # layer_types: 45 linear_attention (Gated DeltaNet) + 15 full_attention with 2 KV heads of 256
    assert (model.layers, model.no_kv_layers, model.kv_heads, model.head_dim) == (60, 45, 2, 256)
    assert "45 linear_attention, 15 full_attention" in model.layer_pattern
    assert (model.experts_total, model.experts_active, model.context_max) == (512, 10, 262144)
    assert entry["experts"] == {"total": 512, "active": 10, "shared": 1, "moe_intermediate_size": 1024}
    assert entry["intermediate_size"] == 1024  # the experts' width where the config has no dense one
    assert model.kind == "vlm" and model.torch_dtype == "bfloat16" and model.tie_word_embeddings is False
    tensors = {name: math.prod(shape) for name, (_, shape) in _qwen35_tensors().items()}
    vision = tensors["model.visual.blocks.0.attn.qkv.weight"] + tensors["model.visual.merger.linear_fc2.weight"]
    assert model.vision_params_b == round(vision / 1e9, 3)
    assert "MTP heads" in entry["params_source"]
    assert model.kv_unmodelled is None and model.kv_layers == model.layers - model.no_kv_layers


def test_a_vlm_without_its_tensor_names_leaves_the_vision_tower_unverified(tmp_path, capsys):
    config = json.loads((QWEN35_397B / "config.json").read_text())
    directory = tmp_path / "index-only"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    (directory / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 2_000_000_000}}))
    out, entry = _draft(capsys, "Qwen/Qwen3.5-397B-A17B", directory)
    assert entry["vision_params_b"] is None and "vision_params_b: null  # UNVERIFIED:" in out


def test_hybrid_layer_roles_from_each_way_configs_say_them():
    # Qwen3-Next: full_attention_interval 4 on 48 layers (engine/models/data/qwen.yaml qwen3-next-80b-a3b)
    assert layer_roles({"full_attention_interval": 4}, 48).no_kv == 36
    # Nemotron 3 Nano 30B-A3B: github:THUDM/slime scripts/models/nemotron-nano-30B-A3B.sh --hybrid-override-pattern
    pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
    roles = layer_roles({"hybrid_override_pattern": pattern}, 52)
    assert len(pattern) == 52 and roles.no_kv == 52 - 6 and "6 attention layers" in roles.pattern
    # Gemma 3: sliding and full attention both keep KV
    assert layer_roles({"layer_types": ["sliding_attention"] * 5 + ["full_attention"]}, 6).no_kv == 0
    assert layer_roles({}, 32).no_kv == 0


def test_a_hub_lookup_of_a_hybrid_model_keeps_no_kv_for_its_linear_layers():
    config = json.loads((QWEN35_397B / "config.json").read_text())
    shape = shape_from_hub("Qwen/Qwen3.5-397B-A17B", config, {"BF16": 10_000_000_000}).shape
    assert shape.no_kv_layers == 45 and shape.kv_unmodelled is None and shape.kv_layers == 15


def test_a_directory_without_weights_or_index_is_refused(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA31_8B))
    with pytest.raises(DraftError, match="neither .safetensors files nor"):
        read_directory(tmp_path)
    assert cli.main(["models", "draft", "org/x", "--from-dir", str(tmp_path)]) == 2
    assert "neither .safetensors" in capsys.readouterr().err


def test_draft_from_the_hub_reads_config_and_headers(monkeypatch, capsys):
    """Without --from-dir the Hub is read as the bot's lookup reads it (HF_ENDPOINT: the local stand-in)."""
    repos = {"acme/Llama-Clone-8B": sharded_repo(LLAMA31_8B, llama_tensors(LLAMA31_8B), shards=2)}
    with ThreadedHubServer(repos) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        assert cli.main(["models", "draft", "acme/Llama-Clone-8B"]) == 0
    entry = yaml.safe_load(capsys.readouterr().out)[0]
    assert (entry["id"], entry["hf_id"], entry["layers"], entry["kv_heads"]) == (
        "llama-clone-8b", "acme/Llama-Clone-8B", 32, 8)
    assert entry["params_source"] == "safetensors headers of 2 files"


def test_count_tensors_sums_per_dtype():
    weights = count_tensors({"a": ("BF16", 10), "b": ("F8_E4M3", 5), "c": ("BF16", 1)}, "test")
    assert dict(weights.counts) == {"BF16": 11, "F8_E4M3": 5} and weights.vision_params == 0
    assert draft_entry("org/m", LLAMA31_8B, weights, files="test").startswith('  - id: "m"')


def test_a_hub_lookup_of_a_hybrid_model_reads_its_linear_state_as_the_registry_has_it():
    """Qwen3.5-397B-A17B's config.json: the Gated DeltaNet state the registry entry carries (float32 recurrent
    state: the Qwen3.5 default where the config has no mamba_ssm_dtype), so a fine-tune looked up on the Hub is
    sized with the same state per request; the draft writes it."""
    config = json.loads((QWEN35_397B / "config.json").read_text())
    shape = shape_from_hub("Qwen/Qwen3.5-397B-A17B", config, {"BF16": 10_000_000_000}).shape
    registry = REGISTRY.get("qwen3.5-397b-a17b")
    assert shape.linear_state is not None and registry is not None and registry.linear_state is not None
    assert shape.linear_state.page_bytes(2) == registry.linear_state.page_bytes(2) == 2_134_016
    entry = draft_entry("Qwen/Qwen3.5-397B-A17B", config, count_tensors({"w": ("BF16", 10)}, "test"), files="test")
    assert "linear_state: {key_heads: 16, value_heads: 64, key_dim: 128, value_dim: 128, conv_kernel: 4, " \
           "recurrent_dtype: float32}" in entry
