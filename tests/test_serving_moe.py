"""The MoE activation peak follows the card's batch tier and the model's sizes (QA: every MoE model got
gpt-oss-120b's 7.3 GiB, so gpt-oss-20b 'would not start' on a 24 GB card)."""
from __future__ import annotations

import pytest

from bot.cli.main import ask_answer
from catalog.loader import load_catalog
from engine.parse import Vocabulary
from engine.serving import memory
from engine.serving.constants import ASSUMED_MOE_TOP_K, GIB, SAMPLER_BYTES_PER_LOGIT
from engine.serving.memory import ModelDims
from tests import serving_datapoints as dp

CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)
GPT_OSS = dp.GPT_OSS_DIMS
MIXTRAL = ModelDims(4096, 14336, 32000, moe=True, experts_active=2)  # mistralai/Mixtral-8x7B config.json


def serving_of(text: str):
    answer, error, _ = ask_answer(text, CATALOG, VOCABULARY)
    assert answer is not None and error is None, error
    assert answer.serving is not None
    return answer.serving


def test_sampler_constant_reproduces_the_anchor_log() -> None:
    """vLLM #23278: 7.44 GiB activation + non-torch at 1024 sequences over a 201 088-token vocabulary."""
    assert SAMPLER_BYTES_PER_LOGIT == pytest.approx(38.27, abs=0.01)
    peak = memory.activation_peak_bytes(GPT_OSS, 8192, 1024, 1) + memory.non_torch_bytes(1)
    assert peak == pytest.approx(7.44 * GIB)


def test_the_peak_follows_the_batch_tier() -> None:
    small = memory.activation_peak_bytes(GPT_OSS, 2048, 256, 1)  # 24 GB cards: 2048 tokens / 256 sequences
    assert small == pytest.approx(256 * 201088 * SAMPLER_BYTES_PER_LOGIT)
    assert small / GIB == pytest.approx(1.835, abs=0.001)
    assert small < memory.activation_peak_bytes(GPT_OSS, 8192, 1024, 1) / 3


def test_the_sampler_dominates_gpt_oss_and_the_experts_dominate_mixtral() -> None:
    assert memory.forward_peak_bytes(GPT_OSS, 8192, 1) < memory.sampler_peak_bytes(GPT_OSS, 1024)
    # Mixtral: 8192 x (4 x 4096 + 2 x (3 x 14336 + 4096)) x 2 B = 1.81e9 B > 1024 x 32000 x 38.3 B = 1.25e9 B
    forward = memory.forward_peak_bytes(MIXTRAL, 8192, 1)
    assert forward == 8192 * (4 * 4096 + 2 * (3 * 14336 + 4096)) * 2
    assert memory.activation_peak_bytes(MIXTRAL, 8192, 1024, 1) == forward
    # TP splits the expert width, not the hidden size or the gathered logits.
    assert memory.forward_peak_bytes(MIXTRAL, 8192, 2) == 8192 * (4 * 4096 + 2 * (3 * 14336 / 2 + 4096)) * 2
    assert memory.sampler_peak_bytes(MIXTRAL, 1024) == 1024 * 32000 * SAMPLER_BYTES_PER_LOGIT


def test_top_k_is_read_and_assumed_when_not_published() -> None:
    assert MIXTRAL.top_k == 2
    unknown = ModelDims(4096, 1536, 151936, moe=True)
    assert unknown.top_k == ASSUMED_MOE_TOP_K == 8
    wider = memory.forward_peak_bytes(ModelDims(4096, 1536, 151936, moe=True, experts_active=10), 8192, 1)
    assert memory.forward_peak_bytes(unknown, 8192, 1) < wider


def test_dense_models_take_the_same_larger_of_forward_and_sampler() -> None:
    """One profile_run for both: Llama-3.1-8B's sampler (256 x 128 256 x 38.3 B = 1.17 GiB) beats its forward pass
    at 8192 tokens (0.91 GiB), the forward pass wins at 29 000 tokens (V0, vLLM #10517)."""
    dims = dp.LLAMA_31_8B_DIMS
    forward = 8192 * (4 * 4096 + 3 * 14336) * 2
    sampler = 256 * 128256 * SAMPLER_BYTES_PER_LOGIT
    assert forward < sampler
    assert memory.activation_peak_bytes(dims, 8192, 256, 1) == pytest.approx(sampler)
    assert memory.activation_peak_bytes(dims, 29000, 256, 1) == 29000 * (4 * 4096 + 3 * 14336) * 2


@pytest.mark.parametrize("text", ["gpt-oss-20b on an L4", "gpt-oss-20b on a 4090", "gpt-oss-20b on a 3090",
                                  "gpt-oss-20b on an A5000"])
def test_gpt_oss_20b_starts_on_a_24_gb_card(text: str) -> None:
    """OpenAI cookbook run-vllm.md (~16 GB), GoogleCloudPlatform/accelerated-platforms PR #345 (L4), vLLM #22331
    (RTX 3090, 12.88 GiB loaded): vLLM serves it on one 24 GB card."""
    serving = serving_of(text)
    assert serving.engine == "vllm" and serving.starts
    assert serving.max_num_batched_tokens == 2048
    assert serving.max_context_tokens is not None and serving.max_context_tokens >= 8192


def test_qwen3_30b_a3b_fp8_starts_on_two_4090s() -> None:
    serving = serving_of("Qwen3-30B-A3B-FP8 on 2x 4090")
    assert serving.tp == 2 and serving.starts


def test_gpt_oss_120b_on_one_h100_keeps_the_measured_peak() -> None:
    """The H100 tier is the anchor's: 7.34 GiB + 0.1 GiB non-torch, as before the change."""
    serving = serving_of("gpt-oss-120b on an H100")
    assert serving.max_num_batched_tokens == 8192
    assert serving.runtime_overhead_gb_per_gpu >= 7.44 * GIB / 1e9
