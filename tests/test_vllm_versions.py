"""The serving check follows the newest vLLM release (0.34: the KV cache sized from measured memory); the accounting
of 0.20-0.33 and 0.10-0.19 is selectable with --vllm-version; gpt-oss's MXFP4 experts as vLLM lays them out on
each card architecture."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import ask_answer, main
from catalog.loader import load_catalog
from engine.parse import Vocabulary
from engine.serving import weights
from engine.serving.constants import GIB, VLLM_VERSION
from engine.serving.vllm import BEFORE_0_20, ESTIMATED_0_20, VllmBudget, settings_for_version

CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)


def ask(text: str, version: str | None = None):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY, version)
    assert answer is not None and error is None, error
    return answer


@pytest.mark.parametrize(("version", "named", "utilization", "measured", "cudagraphs"), [
    (None, VLLM_VERSION, 1.0, True, True),
    ("latest", VLLM_VERSION, 1.0, True, True),
    ("0.34", "0.34.0", 1.0, True, True),
    ("0.33.0", "0.33.0", 0.92, False, True),
    ("0.20", "0.20.0", 0.92, False, True),
    ("0.19.1", "0.19.1", 0.9, False, False),
    ("v0.11", "0.11.0", 0.9, False, False),
    ("0.10.1", "0.10.1", 0.9, False, False),
])
def test_a_release_picks_its_accounting(version, named, utilization, measured, cudagraphs):
    settings = settings_for_version(version)
    assert (settings.version, settings.utilization, settings.measured_kv, settings.count_cudagraphs) == \
        (named, utilization, measured, cudagraphs)
    assert settings.gpu_memory_utilization is None  # the release's default: no flag in the launch command


@pytest.mark.parametrize("version", ["0.9.2", "0.35", "1.0", "x.y", "0.1.2.3"])
def test_an_unknown_release_is_refused(version):
    with pytest.raises(ValueError):
        settings_for_version(version)


def test_presets_keep_what_older_logs_need():
    assert ESTIMATED_0_20.in_flight_batches == 2 and ESTIMATED_0_20.null_blocks == 1
    assert BEFORE_0_20.in_flight_batches == 1 and BEFORE_0_20.null_blocks == 0


def test_the_measured_budget_keeps_a_margin_below_the_free_memory():
    """extensible_kv_cache.py:592-618: min(requested - non-KV, free - non-KV - margin) - transient peak."""
    budget = VllmBudget(requested=80 * GIB, weights=40 * GIB, activation=4 * GIB, non_torch=0.1 * GIB,
                        cudagraph=1 * GIB, startup_free=79.5 * GIB)
    assert budget.margin == pytest.approx(3 * GIB)  # 0.75 x 4 GiB beats the 1 GiB floor
    assert budget.available_kv == pytest.approx((79.5 - 3 - 40 - 0.1 - 1 - 4) * GIB)
    small = VllmBudget(requested=24 * GIB, weights=15 * GIB, activation=0.5 * GIB, non_torch=0.1 * GIB,
                       cudagraph=1 * GIB, startup_free=23.5 * GIB)
    assert small.margin == pytest.approx(1 * GIB)
    capped = VllmBudget(requested=60 * GIB, weights=40 * GIB, activation=4 * GIB, non_torch=0.1 * GIB,
                        cudagraph=1 * GIB, startup_free=79.5 * GIB)  # --gpu-memory-utilization below 1
    assert capped.available_kv == pytest.approx((60 - 40 - 0.1 - 1 - 4) * GIB)


def test_qwen3_32b_on_one_h100_at_16k_starts_in_every_release():
    for version in (None, "0.33", "0.11"):
        answer = ask("Qwen3-32B on one H100 at 16k", version)
        assert answer.serving is not None and answer.serving.starts, version
    assert ask("Qwen3-32B on one H100 at 16k", "0.11").serving.gpu_memory_utilization == 0.9


def test_the_version_is_in_the_notes_and_the_json(capsys):
    code = main(["ask", "--json", "--vllm-version", "0.11", "Qwen3-32B on one H100 at 16k"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["serving"]["notes"][0].startswith("vLLM 0.11.0 rules, gpu_memory_utilization 0.9")
    assert "--gpu-memory-utilization" not in data["serving"]["command"]
    code = main(["size", "--json", "--model", "qwen3-32b", "--context", "16384", "--card", "h100-sxm", "--count",
                 "1", "--vllm-version", "0.19"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["serving"]["notes"][0].startswith("vLLM 0.19.0 rules")


@pytest.mark.parametrize("argv", [["ask", "--vllm-version", "0.9", "Qwen3-32B on an H100"],
                                  ["size", "--params", "7", "--vllm-version", "9.9"]])
def test_an_unknown_version_is_a_bad_argument(argv, capsys):
    assert main(argv) == 2
    assert "vLLM" in capsys.readouterr().err


# -- gpt-oss: MXFP4 experts per card architecture -------------------------------------------------------------------

@pytest.mark.parametrize(("architecture", "backend"), [("Hopper", "triton-hopper"), ("Ampere", "marlin"),
                                                       ("Ada", "marlin"), ("Blackwell", "marlin"),
                                                       ("CDNA 3", "rocm")])
def test_mxfp4_backend_by_architecture(architecture, backend):
    assert weights.mxfp4_backend(architecture) == backend
    assert weights.mxfp4_backend(architecture, triton_on_hopper=False) == \
        ("marlin" if backend == "triton-hopper" else backend)


def test_gpt_oss_120b_holds_64_4_gib_on_an_h100():
    """vLLM 0.11.0 (llm-d table) and 0.14.1 (#33155) logged 64.38 GiB with the Triton backend on H100."""
    answer = ask("gpt-oss-120b at 16k on one H100")
    assert answer.serving is not None
    assert answer.serving.weights_gb_per_gpu * 1e9 / GIB == pytest.approx(64.38, rel=0.01)
    marlin = ask("gpt-oss-120b at 16k on one H100", "0.10")  # 0.10.1 used Marlin there: 65.97 GiB (#23278)
    assert marlin.serving.weights_gb_per_gpu * 1e9 / GIB == pytest.approx(65.97, rel=0.01)


def test_gpt_oss_120b_at_131k_on_one_h100_does_not_start():
    """It did not (vLLM #27508: 1.71 GiB of KV cache left at util 0.95); the published 65.3 GB said it would."""
    for version in (None, "0.11"):
        answer = ask("gpt-oss-120b at 131072 tokens on one H100", version)
        assert answer.serving is not None and not answer.serving.starts, version
