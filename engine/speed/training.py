"""How long a training job runs and what it costs: tokens x epochs at the training FLOPs per token, over the
layout's dense tensor TFLOPS at a model FLOPs utilisation (MFU) read from published runs.

FLOPs per token: 6 x parameters for full fine-tuning (2 forward, 4 backward). LoRA freezes the base weights, so
the backward pass computes no weight gradients: 4 x parameters, the ratio NVIDIA NeMo's published performance
summary shows (Llama 2 70B LoRA 722 model TFLOP/s at 2,621 tokens/s per H100 = 3.9 x 70e9 per token; SFT 749 at
1,816 = 5.9 x 70e9). QLoRA also recomputes the forward pass under gradient checkpointing (peft's
prepare_model_for_kbit_training turns it on): 6 x parameters.

MFU 0.45 of the dense BF16 peak: Answer.AI's FSDP+QLoRA runs of Llama 2 70B (1,024 samples x 2,048 tokens,
github.com/AnswerDotAI/fsdp_qlora benchmarks_03_2024.md) reach 786 tokens/s per H100 SXM (4 GPUs, 667 s: 33 % of
989 TFLOPS at 6 x 70e9 per token) and 390-414 per A100 40GB SXM (8 GPUs 672 s, 4 GPUs 1,266 s: 53-56 % of 312);
NeMo's LoRA on H100 in FP8 reaches 36 % of 1,979. The range around a job's GPU-hours is that spread.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.schema import Card

FLOPS_PER_PARAM_TOKEN = {"full": 6.0, "lora": 4.0, "qlora": 6.0}
TRAINING_MFU = 0.45
RANGE_LOW, RANGE_HIGH = 0.7, 1.35  # the published runs above fall within these factors of the estimate


@dataclass(frozen=True, slots=True)
class TrainingJob:
    """The JSON `job` object (DESIGN.md contract v3), with what it was worked out from."""

    tokens: float  # one epoch
    epochs: float
    tokens_per_s: float  # the whole layout
    gpu_hours: float
    hours: float  # wall clock on the layout
    price_usd: float
    mfu: float
    flops_per_token: float

    def to_json(self) -> dict[str, object]:
        return {"tokens": self.tokens, "epochs": self.epochs, "gpu_hours": self.gpu_hours,
                "price_usd": self.price_usd, "hours": self.hours, "tokens_per_s": self.tokens_per_s,
                "gpu_hours_range": [self.gpu_hours * RANGE_LOW, self.gpu_hours * RANGE_HIGH], "mfu": self.mfu}


def training_tokens_per_s(card: Card, count: int, params_b: float, workload: str, fp8: bool = False) -> float | None:
    """Training throughput of `count` x `card`; None where the card's TFLOPS have no source in the catalog."""
    tflops = card.fp8_tflops if fp8 and card.fp8_tflops else card.fp16_tflops
    factor = FLOPS_PER_PARAM_TOKEN.get(workload)
    if tflops is None or factor is None:
        return None
    return tflops * 1e12 * TRAINING_MFU * count / (factor * params_b * 1e9)


def training_job(card: Card, count: int, hourly_usd: float, params_b: float, workload: str, tokens: float,
                 epochs: float = 1.0, fp8: bool = False) -> TrainingJob | None:
    speed = training_tokens_per_s(card, count, params_b, workload, fp8)
    if speed is None or speed <= 0:
        return None
    hours = tokens * epochs / speed / 3600
    factor = FLOPS_PER_PARAM_TOKEN[workload]
    return TrainingJob(tokens=tokens, epochs=epochs, tokens_per_s=speed, gpu_hours=hours * count, hours=hours,
                       price_usd=hourly_usd * hours, mfu=TRAINING_MFU, flops_per_token=factor * params_b * 1e9)


def billed_hours(hours: float, minimum_term_hours: int) -> int:
    """Whole hours a top-up pays for the job, never below the provider's minimum term."""
    return max(math.ceil(hours), minimum_term_hours, 1)
