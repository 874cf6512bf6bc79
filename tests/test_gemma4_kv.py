"""Gemma 4's global layers in the KV cache: the rule, vLLM's pages and blocks, llama.cpp's cells.

A global layer keeps its own KV heads of global_head_dim 512 for every token, K = V stored as K and V (vLLM 0.34
models/gemma4.py loads k_proj into both slots; llama.cpp src/models/gemma4.cpp passes K as V to build_attn); the
sliding layers keep their window. vLLM unifies the two page sizes by giving the smaller page's layers a longer
block (kv_cache_planning.py unify_kv_cache_spec_page_size)."""
from __future__ import annotations

import json
import math

import pytest
import yaml

from bot.cli import main as cli
from engine.models.draft import count_tensors, draft_entry
from engine.models.hub import shape_from_hub
from engine.models.registry import build_registry, default_registry
from engine.serving import kv
from engine.sizing.rule import GB, kv_cache, kv_split_per_token

REGISTRY = default_registry()
GEMMA_4_31B = REGISTRY.get("gemma-4-31b")
GEMMA_4_26B = REGISTRY.get("gemma-4-26b-a4b")


def test_the_rule_counts_global_layers_at_their_own_shape_and_sliding_layers_at_the_window() -> None:
    assert GEMMA_4_31B is not None
    component = kv_cache(GEMMA_4_31B, 2, 131_072, 1)
    assert component is not None and component.code == "kv_global"
    global_bytes = 2 * 10 * 4 * 512 * 131_072 * 2  # 10 global layers, 4 KV heads of 512, K and V, BF16
    sliding_bytes = 2 * 50 * 16 * 256 * 1_024 * 2  # 50 sliding layers hold the 1,024-token window
    assert component.gb == pytest.approx((global_bytes + sliding_bytes) / GB)
    assert component.gb == pytest.approx(11.576, abs=0.001)


def test_below_the_window_every_layer_holds_every_token() -> None:
    assert GEMMA_4_26B is not None
    component = kv_cache(GEMMA_4_26B, 2, 512, 3)
    assert component is not None
    assert component.gb == pytest.approx(2 * (5 * 2 * 512 + 25 * 8 * 256) * 512 * 2 * 3 / GB)


@pytest.mark.parametrize(("tp", "full_block", "window_block", "page"), [
    (1, 32, 16, 16 * 2 * 8 * 256 * 2),  # sliding page 128 KiB, global 64 KiB: global layers hold 32 tokens a block
    (2, 32, 16, 16 * 2 * 4 * 256 * 2),
    (4, 16, 16, 16 * 2 * 2 * 256 * 2),  # 2 sliding heads of 256 = 1 global head of 512 per rank: equal pages
    (8, 16, 32, 16 * 2 * 1 * 512 * 2),  # global heads replicated (1 per rank): the sliding layers get 32 tokens
])
def test_vllm_unifies_the_page_sizes_with_longer_blocks(tp: int, full_block: int, window_block: int,
                                                        page: int) -> None:
    assert GEMMA_4_26B is not None
    pages = kv.pages(GEMMA_4_26B, tp, "auto")
    assert (pages.full_block, pages.window_block, pages.page_bytes) == (full_block, window_block, page)
    # one block of the pool is a page of each layer in a group: 5 global + 25 sliding -> groups of 5
    assert kv.bytes_per_block(GEMMA_4_26B, tp, "auto") == 5 * page


def test_a_request_takes_global_blocks_of_32_tokens_and_its_sliding_reserve_in_blocks_of_16() -> None:
    assert GEMMA_4_26B is not None
    context, batch_tokens = 32_768, 2_048
    sliding_tokens = min(1_024 - 1 + 2 * batch_tokens, context)
    expected = 1 * math.ceil(context / 32) + 5 * (math.ceil(sliding_tokens / 16) + 1)
    assert kv.blocks_per_request(GEMMA_4_26B, context, batch_tokens, tp=1, kv_dtype="auto") == expected
    assert kv.kv_bytes_per_token_per_gpu(GEMMA_4_26B, 1, "auto") == 5 * 2 * 2 * 512 * 2


def test_llama_cpp_stores_k_and_v_of_the_global_layers_and_the_padded_window_of_the_sliding_ones() -> None:
    assert GEMMA_4_31B is not None
    total = kv.llama_cpp_kv_bytes(GEMMA_4_31B, 262_144, "f16", "f16")
    swa_cells = 1_536  # pad256(min(n_ctx, 1,024 + n_ubatch 512))
    assert total == 10 * 262_144 * 2 * 4 * 512 * 2 + 50 * swa_cells * 2 * 16 * 256 * 2
    assert 10 * 262_144 * 2 * 4 * 512 * 2 == 20_480 * 2**20  # 20,480 MiB of global layers at 256k


def test_without_flash_attention_llama_cpp_widens_every_v_row_to_the_widest_layer() -> None:
    assert GEMMA_4_31B is not None
    narrow = kv.llama_cpp_full_cell_bytes(GEMMA_4_31B, "f16", "f16")
    wide = kv.llama_cpp_full_cell_bytes(GEMMA_4_31B, "f16", "f16", flash_attn=False)
    assert (narrow, wide) == ((2_048 + 2_048) * 2, (2_048 + 4_096) * 2)


def _ask(capsys, *args: str) -> dict:
    assert cli.main(["ask", "--json", *args]) == 0, args
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("text", ["Gemma 4 31B with 128k context", "Gemma 4 31B mit 128k Kontext"])
def test_an_answer_sizes_the_kv_cache_says_how_and_gets_the_serving_check(capsys, text: str) -> None:
    answer = _ask(capsys, "--catalog", "gpuwithcrypto", text)
    kv_line = next(c for c in answer["requirement"]["components"] if c["name"] == "kv_cache")
    assert kv_line["gb"] == pytest.approx(11.576, abs=0.001)
    assert "10 global layers x 4 KV heads x 512" in kv_line["formula"]
    notes = " ".join(answer["request"]["assumed"])
    assert "10 global layers of Gemma 4 31B keep 4 KV heads of 512" in notes and "not included" not in notes
    serving = answer["serving"]
    assert serving is not None and serving["kv_bytes_per_token_per_gpu"] == 10 * 2 * 4 * 512 * 2


def test_the_german_chat_names_the_global_layers(capsys) -> None:
    assert cli.main(["ask", "--lang", "de", "Gemma 4 26B-A4B mit 32k Kontext"]) == 0
    out = capsys.readouterr().out
    assert "die 5 globalen Schichten von Gemma 4 26B-A4B halten 2 KV-Köpfe zu 512" in out
    assert "nicht enthalten" not in out


def test_llama_cpp_answers_size_the_gguf_with_the_global_layers(capsys) -> None:
    answer = _ask(capsys, "Gemma 4 31B Q4_K_M at 64k with llama.cpp")
    serving = answer["serving"]
    assert serving is not None and serving["engine"] == "llama.cpp"
    assert serving["kv_bytes_per_token_per_gpu"] == 10 * 2 * 4 * 512 * 2  # f16 cache, one device


@pytest.mark.parametrize("tokens", [1, 700, 1_024, 4_096, 131_072])
def test_the_speed_split_of_the_cache_adds_up_to_the_rules_kv_line_for_every_model(tokens: int) -> None:
    """What a decode step reads (engine.speed) is the rule's KV cache of one sequence, for every registry model."""
    for model in REGISTRY.models:
        component = kv_cache(model, 2, tokens, 1)
        full, windowed, window, state = kv_split_per_token(model, 2)
        if component is None:
            assert (full, windowed, window, state) == (0, 0, 0, 0), model.id
            continue
        split = full * tokens + windowed * min(tokens, window) + state
        assert split == pytest.approx(component.gb * GB, rel=1e-9), model.id


def test_a_hub_lookup_of_a_gemma_4_fine_tune_reads_the_global_layers_and_drafts_them() -> None:
    """A Gemma 4 26B-A4B config as the registry's sources give it (layer_types 5 of 6 sliding, global_head_dim,
    num_global_key_value_heads, attention_k_eq_v), under text_config as in the released repos."""
    layer_types = (["sliding_attention"] * 5 + ["full_attention"]) * 5
    config = {"architectures": ["Gemma4ForConditionalGeneration"], "vision_config": {"hidden_size": 1152},
              "text_config": {"model_type": "gemma4_text", "num_hidden_layers": 30, "num_attention_heads": 16,
                              "num_key_value_heads": 8, "head_dim": 256, "hidden_size": 2816,
                              "sliding_window": 1024, "layer_types": layer_types, "global_head_dim": 512,
                              "num_global_key_value_heads": 2, "attention_k_eq_v": True,
                              "max_position_embeddings": 262144}}
    shape = shape_from_hub("someone/gemma-4-26b-a4b-finetune", config, {"BF16": 25_810_000_000}).shape
    assert shape.global_attention == REGISTRY.get("gemma-4-26b-a4b").global_attention
    ours, registry = kv_cache(shape, 2, 65_536, 1), kv_cache(REGISTRY.get("gemma-4-26b-a4b"), 2, 65_536, 1)
    assert ours is not None and registry is not None and ours.gb == pytest.approx(registry.gb)
    entry = draft_entry("someone/gemma-4-26b-a4b-finetune", config,
                        count_tensors({"model.language_model.w": ("BF16", 25_810_000_000)}, "test"), files="test")
    assert "global_attention: {layers: 5, kv_heads: 2, head_dim: 512, k_eq_v: true}" in entry
    loaded = build_registry(yaml.safe_load(entry)).models[0]
    assert loaded.global_attention == shape.global_attention and loaded.kv_known


def test_the_public_12b_log_matches_only_with_v_stored_in_the_global_layers() -> None:
    """club-3090's Gemma 4 12B boot on 2x RTX 3090 (tests/serving_datapoints.py gemma_4_rows): 2.93x at 131,072
    tokens from 8.16 GiB. Half the global bytes (K only, as a K = V cache that shared one tensor would keep) gives
    another figure far outside the log's rounding."""
    from dataclasses import replace

    from tests.serving_datapoints import gemma_4_rows
    assert all(row.within for row in gemma_4_rows())
    shape = REGISTRY.get("gemma-4-12b")
    assert shape is not None and shape.global_attention is not None
    k_only = replace(shape, global_attention=replace(shape.global_attention, head_dim=256))
    blocks = kv.kv_blocks(8.16 * 2**30, kv.bytes_per_block(k_only, 2, "auto"))
    concurrency = kv.max_concurrency(blocks, kv.blocks_per_request(k_only, 131_072, 4096, 1, tp=2, kv_dtype="auto"))
    assert concurrency > 4.5  # the log says 2.93
