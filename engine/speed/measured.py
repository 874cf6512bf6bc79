"""Published runs of a registry model on a catalog card, quoted as "measured" where a request matches one (the
same model, format, card, count and engine, one stream): the figure is the run's, carried to the request's
context by the estimate's own slowdown between the two contexts. Each run is also a calibration point
(tests/data/speed_calibration.yaml)."""
from __future__ import annotations

from dataclasses import dataclass

_VLLM_22331 = "https://github.com/vllm-project/vllm/issues/22331"
_LLAMA_CPP_15802 = "https://github.com/ggml-org/llama.cpp/pull/15802"
_LLAMA_CPP_17505 = "https://github.com/ggml-org/llama.cpp/pull/17505"
_XIONGJIEDAI = "https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference"
A100_SXM = ("a100-sxm", "a100-80gb")  # the two bundled catalogs' ids of the A100 80GB SXM


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    model: str  # registry id
    weight_format: str  # the request's quant name, else its precision
    cards: tuple[str, ...]  # catalog card ids
    count: int
    engine: str
    context_tokens: int  # the KV depth the run decoded at
    decode_tok_s: float  # one stream
    url: str


MEASURED: tuple[MeasuredRun, ...] = (
    # "For TP=1, I get 90 tps. For TP=2/4, I get 77-78 tps." (A100 80GB with NVLink, vLLM gptoss image)
    MeasuredRun("gpt-oss-120b", "mxfp4", A100_SXM, 1, "vllm", 512, 90.0, _VLLM_22331),
    MeasuredRun("gpt-oss-120b", "mxfp4", A100_SXM, 2, "vllm", 512, 77.5, _VLLM_22331),
    MeasuredRun("gpt-oss-120b", "mxfp4", A100_SXM, 4, "vllm", 512, 77.5, _VLLM_22331),
    # llama-bench "llama 8B Q4_0", one micro-batch token at a time over a 512-token prompt ("t/s master")
    MeasuredRun("llama-3-8b", "q4_0", ("rtx-3090",), 1, "llama.cpp", 256, 155.02, _LLAMA_CPP_15802),
    MeasuredRun("llama-3-8b", "q4_0", ("rtx-4090",), 1, "llama.cpp", 33024, 98.14, _LLAMA_CPP_17505),
    # llama-bench "tg 512" (llama.cpp's default layer split over 1-8 cards, May 2024): one stream, 256 tokens deep
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-3090",), 1, "llama.cpp", 256, 115.42, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-3090",), 2, "llama.cpp", 256, 111.67, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-3090",), 4, "llama.cpp", 256, 108.66, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-3090",), 6, "llama.cpp", 256, 104.17, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-4090",), 1, "llama.cpp", 256, 130.58, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-4090",), 2, "llama.cpp", 256, 124.65, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-4090",), 4, "llama.cpp", 256, 120.32, _XIONGJIEDAI),
    MeasuredRun("llama-3-8b", "q4_k_m", ("rtx-4090",), 8, "llama.cpp", 256, 118.09, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-3090",), 2, "llama.cpp", 256, 16.57, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-3090",), 4, "llama.cpp", 256, 17.07, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-3090",), 6, "llama.cpp", 256, 17.09, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-4090",), 2, "llama.cpp", 256, 19.22, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-4090",), 4, "llama.cpp", 256, 19.8, _XIONGJIEDAI),
    MeasuredRun("llama-3-70b", "q4_k_m", ("rtx-4090",), 8, "llama.cpp", 256, 18.94, _XIONGJIEDAI),
)
MEASURED_MODELS = frozenset(run.model for run in MEASURED)


def find_run(model: str | None, weight_format: str, card: str, count: int, engine: str) -> MeasuredRun | None:
    if model is None:
        return None
    return next((run for run in MEASURED if run.model == model and run.weight_format == weight_format
                 and card in run.cards and run.count == count and run.engine == engine), None)
