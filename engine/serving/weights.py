"""Resident weights per GPU: what each tensor-parallel rank (vLLM) or layer-split device (llama.cpp) holds.

The input is bytes per part of the model. engine.formats.table.WeightBreakdown maps onto it as
    ResidentWeights(body_bytes=b.body, embedding_bytes=b.embedding, lm_head_bytes=b.lm_head,
                    replicated_bytes=b.one_d + b.router, vocab_size=<config vocab_size>)
(norms and MoE routers are ReplicatedLinear / per-rank copies in vLLM; everything else in `body` is split).
Until that is wired, from_precision() builds it from engine.sizing.rule's plain precisions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.serving.constants import (
    MXFP4_BACKEND_BY_ARCHITECTURE,
    MXFP4_BITS,
    MXFP4_DEFAULT_BACKEND,
    MXFP4_PADDING,
    VOCAB_PADDING,
)
from engine.sizing.rule import PRECISION_BYTES

# Embeddings and lm_head stay in the model dtype for AWQ, GPTQ, FP8 and MXFP4 checkpoints (research §4:
# quantization/auto_awq.py:291-292, auto_gptq.py:198, fp8.py:177-210, mxfp4.py:91-113 quantize LinearBase only).
EMBEDDING_BYTES_PER_PARAM = 2.0


@dataclass(frozen=True, slots=True)
class ResidentWeights:
    """A checkpoint's bytes by how the engines place them.

    body_bytes: transformer-block linears (split by TP); embedding_bytes / lm_head_bytes: the vocabulary matrices
    (lm_head 0 = tied to the embedding, held once); replicated_bytes: on every rank (norms, routers, MLA's
    ReplicatedLinear projections, vision towers); vocab_size: for vLLM's padding to a multiple of 64.
    """

    body_bytes: float
    embedding_bytes: float = 0.0
    lm_head_bytes: float = 0.0
    replicated_bytes: float = 0.0
    vocab_size: int | None = None

    @property
    def total_bytes(self) -> float:
        return self.body_bytes + self.embedding_bytes + self.lm_head_bytes + self.replicated_bytes

    @property
    def tied(self) -> bool:
        return self.lm_head_bytes == 0 and self.embedding_bytes > 0

    @classmethod
    def from_precision(cls, params_b: float, bytes_per_param: float, *, vocab_size: int | None = None,
                       hidden_size: int | None = None, tied: bool = False) -> ResidentWeights:
        """Weights at one of engine.sizing.rule's precisions; below 16 bit the embeddings and lm_head stay 16-bit.

        Without vocab_size and hidden_size every parameter counts as body at `bytes_per_param`.
        """
        params = params_b * 1e9
        if vocab_size is None or hidden_size is None:
            return cls(body_bytes=params * bytes_per_param)
        matrix = float(vocab_size * hidden_size)
        matrices = matrix if tied else 2 * matrix
        vocab_bytes = max(bytes_per_param, EMBEDDING_BYTES_PER_PARAM)
        return cls(
            body_bytes=max(0.0, params - matrices) * bytes_per_param,
            embedding_bytes=matrix * vocab_bytes,
            lm_head_bytes=0.0 if tied else matrix * vocab_bytes,
            vocab_size=vocab_size,
        )


def weights_at_precision(params_b: float, precision: str, *, vocab_size: int | None = None,
                         hidden_size: int | None = None, tied: bool = False) -> ResidentWeights:
    """ResidentWeights for an engine.sizing.rule precision name (bf16, fp8, int4 ...; PRECISION_BYTES)."""
    if precision not in PRECISION_BYTES:
        raise ValueError(f"unknown precision {precision!r} (use one of {', '.join(PRECISION_BYTES)})")
    return ResidentWeights.from_precision(params_b, PRECISION_BYTES[precision], vocab_size=vocab_size,
                                          hidden_size=hidden_size, tied=tied)


def padded_vocab(vocab_size: int) -> int:
    """vocab_parallel_embedding.py:95-97 pad_vocab_size: the whole vocabulary to a multiple of 64."""
    return math.ceil(vocab_size / VOCAB_PADDING) * VOCAB_PADDING


def vocab_bytes_padded(weights: ResidentWeights) -> float:
    """Embedding + lm_head with the padded rows vLLM allocates."""
    vocab_bytes = weights.embedding_bytes + weights.lm_head_bytes
    if not weights.vocab_size:
        return vocab_bytes
    return vocab_bytes * padded_vocab(weights.vocab_size) / weights.vocab_size


def vllm_weights_bytes(weights: ResidentWeights) -> float:
    """The model once, as vLLM allocates it (vocabulary padded, replicated parts counted once)."""
    return weights.body_bytes + vocab_bytes_padded(weights) + weights.replicated_bytes


def vllm_weights_bytes_per_gpu(weights: ResidentWeights, tp: int) -> float:
    """One TP rank: body / tp + padded vocabulary / tp + the replicated parts whole.

    "Model loading took X GiB" in the log (gpu_model_runner.py:5076-5092) is this figure.
    """
    return (weights.body_bytes + vocab_bytes_padded(weights)) / tp + weights.replicated_bytes


def llama_cpp_weights_bytes_per_gpu(weights: ResidentWeights, devices: int) -> float:
    """The busiest of `devices` equal cards under llama.cpp's default layer split.

    Input embeddings stay in host memory (src/llama-model.cpp:1603-1605); the output layer sits on the last device
    (a tied model gets a copy of the embedding there); layers split evenly over equal free memory (:1560-1586).
    """
    output = weights.lm_head_bytes if not weights.tied else weights.embedding_bytes
    return (weights.body_bytes + weights.replicated_bytes) / devices + output


def llama_cpp_weights_bytes(weights: ResidentWeights) -> float:
    """Bytes on the GPUs in all: everything but the input embeddings (+ the output copy of a tied matrix)."""
    output = weights.lm_head_bytes if not weights.tied else weights.embedding_bytes
    return weights.body_bytes + weights.replicated_bytes + output


def mxfp4_expert_bytes(*, layers: int, experts: int, hidden: int, intermediate: int,
                       backend: str = "marlin") -> float:
    """MoE expert weights in MXFP4 as vLLM pads them (fused_moe/oracle/mxfp4.py:837-917).

    gate_up (hidden x 2 intermediate) + down (intermediate x hidden) per expert, at 4.25 bits, after rounding
    intermediate and hidden up to the backend's multiples (Marlin 128 / 256 on GPUs without native FP4, e.g. H100).
    """
    if backend not in MXFP4_PADDING:
        raise ValueError(f"unknown MXFP4 backend {backend!r} (use one of {', '.join(MXFP4_PADDING)})")
    intermediate_multiple, hidden_multiple = MXFP4_PADDING[backend]
    padded_intermediate = math.ceil(intermediate / intermediate_multiple) * intermediate_multiple
    padded_hidden = math.ceil(hidden / hidden_multiple) * hidden_multiple
    return layers * experts * 3 * padded_hidden * padded_intermediate * MXFP4_BITS / 8


def mxfp4_backend(architecture: str, triton_on_hopper: bool = True) -> str:
    """The MXFP4 MoE backend vLLM picks on a card of this architecture (constants.MXFP4_BACKEND_BY_ARCHITECTURE);
    `triton_on_hopper` False for releases before 0.11, which used Marlin there."""
    backend = MXFP4_BACKEND_BY_ARCHITECTURE.get(architecture.strip().lower(), MXFP4_DEFAULT_BACKEND)
    return MXFP4_DEFAULT_BACKEND if backend == "triton-hopper" and not triton_on_hopper else backend


def mxfp4_resident(published_bytes: float, *, layers: int, experts: int, hidden: int, intermediate: int,
                   backend: str) -> float:
    """A published MXFP4 checkpoint's bytes as vLLM holds them: the experts re-laid out with the backend's padding,
    everything else (attention, router, embeddings, lm_head in BF16) as published."""
    unpadded = layers * experts * 3 * hidden * intermediate * MXFP4_BITS / 8
    padded = mxfp4_expert_bytes(layers=layers, experts=experts, hidden=hidden, intermediate=intermediate,
                                backend=backend)
    return published_bytes - unpadded + padded
