"""The serving check: the request under a real engine, vLLM or llama.cpp, on a card or a set."""
from engine.serving.kv import ServingShapeError, kv_bytes_per_token_per_gpu
from engine.serving.llama_cpp import LlamaCppSettings, llama_cpp_check
from engine.serving.memory import ModelDims
from engine.serving.outcome import Gpu, ServingCheck, ServingModel
from engine.serving.reverse import (
    biggest_model_params_b,
    launch_command,
    max_concurrency_at,
    max_context_for_layout,
    serving_check,
)
from engine.serving.vllm import BEFORE_0_20, VllmSettings, vllm_check
from engine.serving.weights import ResidentWeights, weights_at_precision

__all__ = [
    "BEFORE_0_20", "Gpu", "LlamaCppSettings", "ModelDims", "ResidentWeights", "ServingCheck", "ServingModel",
    "ServingShapeError", "VllmSettings", "biggest_model_params_b", "kv_bytes_per_token_per_gpu", "launch_command",
    "llama_cpp_check", "max_concurrency_at", "max_context_for_layout", "serving_check", "vllm_check",
    "weights_at_precision",
]
