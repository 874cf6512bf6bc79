"""Any Hugging Face model: an org/name the registry does not know, looked up on a local stand-in for the Hugging Face
Hub (tests/support/hubserver.py): the lookup's outcomes, its cache in the store, the bot's answer and the CLI."""
from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import pytest
import pytest_asyncio

from bot.cli import main as cli
from bot.config import load_settings
from bot.features.hub_lookup import HubLookup
from bot.store import Store
from bot.store.hub_models import HUB_ERROR_TTL_S, HUB_FOUND_TTL_S
from tests.support.botharness import TOKEN, Harness
from tests.support.hubserver import (
    DEEPSEEK_V3,
    MIXTRAL_8X7B,
    QWEN25_05B,
    SMOLLM2_17B,
    HubServer,
    Repo,
    ThreadedHubServer,
    llama_tensors,
    safetensors_header,
    sharded_repo,
    single_file_repo,
)

SMOL = "HuggingFaceTB/SmolLM2-1.7B"
SMOL_PARAMS = 1_711_376_384  # the tensors of its config: embeddings 49,152 x 2,048 (tied) + 24 layers


def _repos() -> dict[str, Repo]:
    return {
        SMOL: single_file_repo(SMOLLM2_17B, llama_tensors(SMOLLM2_17B)),
        "Qwen/Qwen2.5-0.5B": single_file_repo(QWEN25_05B, llama_tensors(QWEN25_05B)),
        "mistralai/Mixtral-8x7B-v0.1": sharded_repo(MIXTRAL_8X7B, llama_tensors(MIXTRAL_8X7B), 3),
        "acme/Qwen-Tiny": single_file_repo(QWEN25_05B, llama_tensors(QWEN25_05B)),  # no size in the name
        "acme/Secret-13B": Repo(error=(401, "GatedRepo")),
        "acme/Private-7B": Repo(error=(403, "")),
        "acme/Down-7B": Repo(error=(503, "")),
        "acme/NoWeights-3B": Repo({"config.json": json.dumps(SMOLLM2_17B).encode()}),
        "acme/Broken-1B": Repo({"config.json": b"{not json", "model.safetensors": safetensors_header({})}),
    }


@pytest_asyncio.fixture
async def hub(monkeypatch):
    async with HubServer(_repos()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


@pytest_asyncio.fixture
async def store(tmp_path):
    opened = await Store.open(tmp_path / "cardfit.sqlite3")
    yield opened
    await opened.close()


async def test_found_single_file(hub, store):
    result = await HubLookup(store).lookup(SMOL)
    assert result.status == "found" and result.hub is not None
    shape = result.hub.shape
    assert shape.params_b * 1e9 == pytest.approx(SMOL_PARAMS)
    assert (shape.layers, shape.attention_heads, shape.kv_heads, shape.head_dim) == (24, 32, 32, 64)
    assert shape.context_max == 8192 and result.hub.format == "BF16"
    assert await store.hub_entry(SMOL, now=time.time() + HUB_FOUND_TTL_S - 60) is not None  # kept a week
    assert await store.hub_entry(SMOL, now=time.time() + HUB_FOUND_TTL_S + 1) is None
    # what huggingface_hub asked: config.json, then the single safetensors file's header by a Range GET
    assert ("GET", f"/{SMOL}/resolve/main/config.json") in hub.requests
    assert ("GET", f"/{SMOL}/resolve/main/model.safetensors") in hub.requests


async def test_found_sharded_through_the_index(hub, store):
    result = await HubLookup(store).lookup("mistralai/Mixtral-8x7B-v0.1")
    assert result.status == "found" and result.hub is not None
    assert result.hub.shape.params_b == pytest.approx(46.7, rel=0.01)
    assert result.hub.shape.active_params_b == pytest.approx(12.9, rel=0.01)
    assert hub.asked("mistralai/Mixtral-8x7B-v0.1", "model.safetensors.index.json") >= 1
    assert all(hub.asked("mistralai/Mixtral-8x7B-v0.1", f"model-0000{i}-of-00003.safetensors") == 1
               for i in (1, 2, 3))


@pytest.mark.parametrize(("repo", "status"), [
    ("acme/Secret-13B", "gated"),  # 401 GatedRepo
    ("acme/Private-7B", "gated"),  # 403 without an error code
    ("acme/Nothing-7B", "missing"),  # 404 RepoNotFound
    ("acme/NoWeights-3B", "unreadable"),  # config.json but no safetensors
    ("acme/Broken-1B", "unreadable"),  # config.json that is no JSON
])
async def test_gated_missing_unreadable_are_kept_for_an_hour(hub, store, repo, status):
    assert (await HubLookup(store).lookup(repo)).status == status
    kept = await store.hub_entry(repo)
    assert kept is not None and kept.status == status
    assert await store.hub_entry(repo, now=time.time() + HUB_ERROR_TTL_S + 1) is None


async def test_timeout_is_offline_and_not_kept(monkeypatch, store):
    async with HubServer(_repos(), delay_s=2.0) as slow:
        monkeypatch.setenv("HF_ENDPOINT", slow.url)
        result = await HubLookup(store, timeout_s=0.3).lookup(SMOL)
    assert result.status == "offline"
    assert await store.hub_entry(SMOL) is None  # the next question asks again


async def test_a_hub_error_is_offline_and_not_kept(hub, store):
    assert (await HubLookup(store).lookup("acme/Down-7B")).status == "offline"
    assert await store.hub_entry("acme/Down-7B") is None


async def test_no_network_is_offline(monkeypatch, store):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: connection refused
    assert (await HubLookup(store).lookup(SMOL)).status == "offline"


async def test_hf_hub_offline_and_the_switch_ask_nothing(hub, store, monkeypatch):
    assert (await HubLookup(store, enabled=False).lookup(SMOL)).status == "disabled"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert (await HubLookup(store).lookup(SMOL)).status == "offline"
    assert hub.requests == []


async def test_bad_repo_ids_ask_nothing(hub, store):
    for bad in ("../etc/passwd", "a/b/c", "org/..", "x" * 200 + "/y"):
        assert (await HubLookup(store).lookup(bad)).status == "missing"
    assert hub.requests == []


async def test_cache_is_shared_by_two_stores_on_one_file(hub, tmp_path):
    path = tmp_path / "shared.sqlite3"
    first, second = await Store.open(path), await Store.open(path)
    try:
        assert (await HubLookup(first).lookup(SMOL)).status == "found"
        assert (await HubLookup(second).lookup(SMOL)).status == "found"  # another replica
        assert (await HubLookup(second).lookup("acme/Nothing-7B")).status == "missing"
        assert (await HubLookup(first).lookup("acme/Nothing-7B")).status == "missing"
    finally:
        await first.close()
        await second.close()
    assert hub.asked(SMOL) == 1 and hub.asked("acme/Nothing-7B") == 1


async def test_concurrent_questions_fetch_once(hub, store):
    lookup = HubLookup(store)
    results = await asyncio.gather(*(lookup.lookup(SMOL) for _ in range(5)))
    assert {result.status for result in results} == {"found"} and hub.asked(SMOL) == 1


# -- through the bot -------------------------------------------------------------------------------------------

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
USER = 77


@pytest.fixture
def settings(tmp_path):
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED, path)
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), catalog=str(path),
                         rate_limit_messages=50)


async def test_bot_sizes_a_hub_model_and_asks_the_hub_once(hub, settings):
    async with Harness(settings) as bot:
        await bot.send(USER, f"{SMOL} in bf16 with 8k context")
        first = bot.last_text(USER)
        await bot.send(USER, f"how much VRAM for {SMOL} at 4k?")
        second = bot.last_text(USER)
        await bot.send(USER, "and in fp8?")  # a follow-up sizes the same looked-up model (from the store)
        followup = bot.last_text(USER)
    assert "looked up on the Hugging Face Hub: HuggingFaceTB/SmolLM2-1.7B (1.7B params, BF16)" in first
    assert "looked up on the Hugging Face Hub" in second
    assert "generic" not in first and "typical" not in first  # not the size in the name: the model's own shape
    assert "SmolLM2-1.7B" in followup and "FP8" in followup and "typical" not in followup
    assert hub.asked(SMOL) == 1


async def test_bot_sizes_a_model_whose_name_has_no_size(hub, settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "acme/Qwen-Tiny with 32k context")  # the parser alone would ask for the size
        text = bot.last_text(USER)
        assert "looked up on the Hugging Face Hub: acme/Qwen-Tiny (0.5B params, BF16)" in text  # 494M, rounded
        assert "32,768 tokens" in text
        assert hub.asked("acme/Qwen-Tiny") == 1


async def test_bot_leaves_registry_models_alone(hub, settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "Qwen/Qwen2.5-0.5B at 32k")  # the registry's qwen2.5-0.5b, typed as its repo id
        assert "looked up" not in bot.last_text(USER)
        await bot.send(USER, "mistralai/Mixtral-8x7B-v0.1 in fp8")  # the registry knows Mixtral 8x7B
        assert "looked up" not in bot.last_text(USER)


async def test_bot_falls_back_to_the_size_in_the_name(hub, settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "acme/Secret-13B in int4")
        gated = bot.last_text(USER)
        await bot.send(USER, "acme/Nothing-7B in int4")
        missing = bot.last_text(USER)
        await bot.send(USER, "acme/Nothing-7B in int4", language_code="de")
        german = bot.last_text(USER)
    assert "acme/Nothing-7B gibt es auf dem Hugging Face Hub nicht" in german
    assert "acme/Secret-13B is gated on the Hugging Face Hub" in gated and "<b>13B</b>" in gated
    assert "typical 13B shape" in gated and "Not understood" not in gated
    assert "acme/Nothing-7B is not on the Hugging Face Hub; sized from the size in its name" in missing


async def test_bot_with_the_lookup_switched_off(hub, tmp_path):
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED, path)
    off = load_settings(bot_token=TOKEN, db=str(tmp_path / "off.sqlite3"), catalog=str(path), hf_lookup=False)
    async with Harness(off) as bot:
        await bot.send(USER, f"{SMOL} in bf16")
        assert "Hugging Face" not in bot.last_text(USER)
    assert hub.requests == []


async def test_bot_escapes_and_never_crashes_on_odd_ids(hub, settings):
    async with Harness(settings) as bot:
        await bot.send(USER, "acme/<b>x</b>-7B in int4")
        text = bot.last_text(USER)
    assert "<b>x</b>" not in text


# -- the CLI ---------------------------------------------------------------------------------------------------

@pytest.fixture
def threaded_hub(monkeypatch):
    cli._hub_lookup.cache_clear()
    with ThreadedHubServer(_repos()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server
    cli._hub_lookup.cache_clear()


def test_cli_ask_and_size_with_a_hub_model(threaded_hub, capsys):
    assert cli.main(["ask", "--json", f"{SMOL} in bf16"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert any("looked up on the Hugging Face Hub" in note for note in answer["request"]["assumed"])
    assert cli.main(["size", "--json", "--model", SMOL, "--precision", "bf16"]) == 0
    sized = json.loads(capsys.readouterr().out)
    assert any("looked up on the Hugging Face Hub" in note for note in sized["request"]["assumed"])
    assert threaded_hub.asked(SMOL) == 1  # one lookup per run


def test_cli_switch_and_missing(threaded_hub, capsys, monkeypatch):
    assert cli.main(["size", "--json", "--model", "acme/Nothing-7B"]) == 2
    assert "cardfit: acme/Nothing-7B is not on the Hugging Face Hub\n" in capsys.readouterr().err
    cli._hub_lookup.cache_clear()
    monkeypatch.setenv("CARDFIT_HF_LOOKUP", "0")
    assert cli.main(["ask", "--json", f"{SMOL} in bf16"]) == 0
    assert "Hugging Face" not in capsys.readouterr().out
    assert threaded_hub.asked(SMOL) == 0


def test_deepseek_style_fp8_repo_found(threaded_hub):
    embeddings = 2 * 129_280 * 7_168
    tensors = {"model.embed_tokens.weight": ("BF16", [129_280, 7_168]), "lm_head.weight": ("BF16", [129_280, 7_168]),
               "model.layers.0.mlp.experts.0.down_proj.weight": ("F8_E4M3", [7_168, 2_048])}
    threaded_hub.repos["acme/DeepSeek-Like"] = single_file_repo(DEEPSEEK_V3, tensors)
    result = HubLookup(None).lookup_sync("acme/DeepSeek-Like")
    assert result.hub is not None and result.hub.format == "FP8"
    assert result.hub.shape.params_b * 1e9 == embeddings + 7_168 * 2_048


# -- a store that cannot serve the kept answers ------------------------------------------------------------------

def _drop_kept_answers(path: Path) -> None:
    """What a damaged or half-migrated database does: every read and write of the table fails (OperationalError)."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE hub_models")


async def test_a_store_that_cannot_keep_the_answer_does_not_fail_the_question(hub, store, tmp_path, caplog):
    _drop_kept_answers(tmp_path / "cardfit.sqlite3")
    lookup = HubLookup(store)
    first = await lookup.lookup(SMOL)
    second = await lookup.lookup(SMOL)  # held in memory meanwhile: the Hub is not asked again
    assert first.status == second.status == "found" and first.hub is not None
    assert first.hub.shape.params_b * 1e9 == pytest.approx(SMOL_PARAMS)
    assert hub.asked(SMOL) == 1
    assert "could not keep the Hub answer for HuggingFaceTB/SmolLM2-1.7B (OperationalError)" in caplog.text
    assert "could not read the kept Hub answer" in caplog.text


async def test_answers_held_in_memory_expire_and_are_bounded(hub, monkeypatch):
    lookup = HubLookup(None)  # the CLI's case: no store, the same memory
    assert (await lookup.lookup("acme/Nothing-7B")).status == "missing"
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + HUB_ERROR_TTL_S + 1)  # an hour later the owner may publish it
    assert (await lookup.lookup("acme/Nothing-7B")).status == "missing"
    assert hub.asked("acme/Nothing-7B") == 2
    monkeypatch.setattr("bot.features.hub_lookup.KEPT_IN_MEMORY", 2)
    for repo in ("acme/Secret-13B", "acme/Private-7B", "acme/NoWeights-3B"):
        await lookup.lookup(repo)
    await lookup.lookup("acme/Nothing-7B")  # the oldest went first: asked again
    assert hub.asked("acme/Nothing-7B") == 3 and len(lookup._kept) == 2


async def test_bot_answers_a_hub_model_while_the_store_cannot_keep_it(hub, settings):
    async with Harness(settings) as bot:
        _drop_kept_answers(Path(settings.db))
        await bot.send(USER, f"{SMOL} in bf16 with 8k context")
        first = bot.last_text(USER)
        await bot.send(USER, "and in fp8?")
        followup = bot.last_text(USER)
    assert "looked up on the Hugging Face Hub: HuggingFaceTB/SmolLM2-1.7B (1.7B params, BF16)" in first
    assert "SmolLM2-1.7B" in followup and "FP8" in followup
    assert hub.asked(SMOL) == 1


def test_cli_a_hub_vision_model_is_checked_as_one(threaded_hub, capsys):
    """A config with a vision_config (Qwen2.5-VL's layout, the 0.5B text model inside) on the local Hub stand-in."""
    config = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
              "text_config": QWEN25_05B, "vision_config": {"depth": 32, "hidden_size": 1280, "out_hidden_size": 896}}
    threaded_hub.repos["acme/Tiny-VL"] = single_file_repo(config, llama_tensors(QWEN25_05B))
    assert cli.main(["ask", "--json", "acme/Tiny-VL at 8k on an L40S"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert any("a vision model" in note for note in answer["request"]["assumed"])
    assert answer["serving"] is not None and answer["serving"]["starts"] is True
    assert cli.main(["ask", "acme/Tiny-VL at 8k on an L40S", "--lang", "de"]) == 0
    assert "ein Vision-Modell" in capsys.readouterr().out
