"""A Hugging Face repository's config.json and safetensors parameter counts -> a ModelShape (pure; bot fetches).

Keys read are those of transformers' configuration classes (LlamaConfig, MistralConfig, Qwen2Config, Gemma2Config,
DeepseekV3Config, MixtralConfig, Qwen2MoeConfig); the parameter count is the sum of the safetensors tensors per dtype,
as huggingface_hub's `get_safetensors_metadata(...).parameter_count` reports it. What a config does not say is left
None and named in `HubShape.notes`, never guessed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.models.registry import STATE_DTYPE_BYTES, GlobalAttention, LinearState, ModelShape, PublishedWeights

# Bytes per element of the safetensors dtypes (safetensors' Dtype enum; F4 and F6 pack two/four per byte-ish:
# counted as the bits they hold).
DTYPE_BYTES: dict[str, float] = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1, "F6_E2M3": 0.75, "F6_E3M2": 0.75,
    "F4": 0.5,
}
_FP8 = {"F8_E4M3", "F8_E5M2"}
# quantization_config.quant_method values whose weights are packed integers in I32 tensors (AutoAWQ, AutoGPTQ)
_PACKED = {"awq", "gptq"}


@dataclass(frozen=True, slots=True)
class HubShape:
    shape: ModelShape
    notes: tuple[str, ...]  # what could not be read from the config (English; the bot shows them as they are)

    @property
    def format(self) -> str:
        """The published weights' format in capitals ("BF16", "FP8", "INT4"), for the answer's note."""
        published = self.shape.published_weights
        return published.format.upper() if published is not None else "BF16"


def _int(config: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Multimodal configs (Gemma 3, Llama 4, Mistral 3, Qwen3.5) keep the language model's keys under
    text_config; the top level's other keys are kept beside them."""
    text = config.get("text_config")
    if isinstance(text, Mapping):
        return {**{k: v for k, v in config.items() if k != "text_config"}, **text}
    return config


def _window(config: Mapping[str, Any], layers: int | None) -> tuple[int | None, int]:
    """(window tokens, layers that hold only the window). Qwen2 configs carry a sliding_window they do not use
    unless use_sliding_window is set; Gemma 2 alternates (every other layer), Gemma 3 names layer_types or a
    sliding_window_pattern (5 sliding of every 6)."""
    window = _int(config, "sliding_window")
    if window is None or config.get("use_sliding_window") is False or layers is None:
        return None, 0
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        sliding = sum(1 for kind in types if kind == "sliding_attention")
        return (window, sliding) if sliding else (None, 0)
    pattern = _int(config, "sliding_window_pattern")
    if pattern is not None:
        return window, layers - layers // pattern
    if str(config.get("model_type", "")).startswith("gemma2"):
        return window, layers // 2
    return window, layers


@dataclass(frozen=True, slots=True)
class LayerRoles:
    """What each layer keeps per token: `no_kv` layers keep no KV cache (linear attention: Gated DeltaNet, Mamba;
    an MLP-only layer of a Nemotron-H pattern), and `pattern` says so in words for the registry's layer_pattern."""

    no_kv: int
    pattern: str


# layer_types entries that attend over every token or a window (transformers' configuration classes: Gemma 3,
# Qwen3-Next / Qwen3.5 "full_attention", "sliding_attention"; GPT-OSS the same): anything else keeps no KV cache.
_KV_LAYER_TYPES = {"full_attention", "sliding_attention", "attention", "chunked_attention"}


def layer_roles(config: Mapping[str, Any], layers: int | None) -> LayerRoles:
    """Layers with and without a per-token KV cache, from `layer_types` (Qwen3.5, Qwen3-Next, Gemma 3),
    `full_attention_interval` (Qwen3-Next: every n-th layer attends, the others are linear attention) or
    `hybrid_override_pattern` (Nemotron-H: "M" Mamba-2, "*" attention, "-" MLP, "E" MoE: only "*" keeps KV)."""
    types = config.get("layer_types")
    if isinstance(types, list) and types and all(isinstance(kind, str) for kind in types):
        kinds: dict[str, int] = {}
        for kind in types:
            kinds[kind] = kinds.get(kind, 0) + 1
        no_kv = sum(count for kind, count in kinds.items() if kind not in _KV_LAYER_TYPES)
        words = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
        return LayerRoles(no_kv, f"layer_types: {words}")
    pattern = config.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        attention = pattern.count("*")
        return LayerRoles(len(pattern) - attention, f"hybrid_override_pattern {pattern}: {attention} attention "
                                                    f"layers ('*') of {len(pattern)}")
    interval = _int(config, "full_attention_interval")
    if interval is not None and layers is not None and interval > 1:
        full = layers // interval
        return LayerRoles(layers - full, f"full_attention_interval {interval}: {full} of {layers} layers full "
                                         f"attention, {layers - full} linear attention")
    return LayerRoles(0, "all layers full attention" if layers else "")


def _experts(config: Mapping[str, Any]) -> tuple[int | None, int | None]:
    total = _int(config, "num_local_experts", "n_routed_experts", "num_experts")
    active = _int(config, "num_experts_per_tok", "moe_top_k")
    return (total, active) if total is not None and total > 1 else (None, None)


def _published(config: Mapping[str, Any], counts: Mapping[str, int]) -> tuple[PublishedWeights | None, float, str]:
    """(published weights for pre-quantized releases, parameters, the note on the format)."""
    quant = config.get("quantization_config")
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, Mapping) else ""
    stored = sum(counts.values())
    gb = sum(DTYPE_BYTES.get(dtype, 2) * count for dtype, count in counts.items()) / 1e9
    if method in _PACKED and isinstance(quant, Mapping):
        bits = _int(quant, "bits", "w_bit") or 4
        # An I32 tensor holds 32 / bits packed weights; scales and zero points (F16) are counted as they are.
        params = stored - counts.get("I32", 0) + counts.get("I32", 0) * (32 // bits)
        fmt = "int4" if bits == 4 else "int8" if bits == 8 else f"int{bits}"
        return PublishedWeights(fmt, round(gb, 2), f"{method.upper()} {bits}-bit, from the safetensors headers"), \
            params, f"{method.upper()} {bits}-bit packed weights counted unpacked"
    fp8 = sum(count for dtype, count in counts.items() if dtype in _FP8)
    if method == "fp8" or (stored and fp8 * 2 >= stored):
        return PublishedWeights("fp8", round(gb, 2), "FP8 release, from the safetensors headers"), stored, ""
    return None, stored, ""


def shape_from_hub(repo_id: str, config: Mapping[str, Any], counts: Mapping[str, int]) -> HubShape:
    """A repository's config.json and parameters per safetensors dtype -> the shape the engine sizes.

    Raises ValueError when there is nothing to size (no parameter counted)."""
    text = text_config(config)
    notes: list[str] = []
    published, params, format_note = _published(text, counts)
    if params <= 0:
        raise ValueError(f"{repo_id}: no parameters in the safetensors headers")
    if format_note:
        notes.append(format_note)
    layers = _int(text, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(text, "num_attention_heads", "n_head")
    kv_heads = _int(text, "num_key_value_heads", "num_kv_heads") or heads  # no key: one KV head per query head
    hidden = _int(text, "hidden_size", "n_embd", "d_model")
    head_dim = _int(text, "head_dim") or (hidden // heads if hidden and heads and hidden % heads == 0 else None)
    kv_rank = _int(text, "kv_lora_rank")
    rope_dim = _int(text, "qk_rope_head_dim") if kv_rank else None
    window, window_layers = _window(text, layers)
    experts, active_experts = _experts(text)
    active = float(params)
    if experts is not None and active_experts is not None:
        active = _active_params(text, params, layers, hidden, experts, active_experts, notes)
    for name, value in (("layers", layers), ("attention heads", heads), ("head dim", head_dim or kv_rank)):
        if value is None:
            notes.append(f"{name} not in config.json")
    context = _int(text, "max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")
    if context is None:
        notes.append("context length not in config.json")
    name = repo_id.rsplit("/", 1)[-1]
    roles = layer_roles(text, layers)
    # A vision LLM's config nests its vision tower under vision_config (Qwen2.5-VL, Gemma 3, Mistral 3, Llama 4,
    # Qwen3.5): the answer gets the vision serving check (encoder cache profiling); the tower's parameters stay
    # inside the safetensors count, at the checkpoint's bytes, as no tensor name is read here.
    vision = isinstance(config.get("vision_config"), Mapping)
    if vision:
        notes.append("vision tower counted inside the parameters (its tensors not separated)")
    dense, expert = _int(text, "intermediate_size"), _int(text, "moe_intermediate_size")
    tie = text.get("tie_word_embeddings", config.get("tie_word_embeddings"))
    shape = ModelShape(
        id=repo_id, name=name, params_b=params / 1e9, active_params_b=active / 1e9, layers=layers,
        attention_heads=heads, kv_heads=None if kv_rank else kv_heads, head_dim=None if kv_rank else head_dim,
        family=str(text.get("model_type") or ""), sliding_window=window, sliding_layers=window_layers,
        mla_kv_lora_rank=kv_rank, mla_qk_rope_head_dim=rope_dim, experts_total=experts,
        experts_active=active_experts, published_weights=published, context_max=context,
        source=f"Hugging Face Hub {repo_id}: config.json and safetensors headers",
        no_kv_layers=roles.no_kv, layer_pattern=roles.pattern, kind="vlm" if vision else "llm",
        hidden_size=hidden, intermediate_size=dense if dense is not None else expert,
        vocab_size=_int(text, "vocab_size"),
        tie_word_embeddings=tie if isinstance(tie, bool) else None,
        global_attention=global_attention(text, layers, window_layers, kv_heads),
        linear_state=linear_state(text, roles.no_kv, window),
    )
    return HubShape(shape, tuple(notes))


def linear_state(config: Mapping[str, Any], linear_layers: int, window: int | None) -> LinearState | None:
    """The Gated DeltaNet state of a hybrid model's linear layers where the config gives its shape
    (linear_num_key_heads, linear_num_value_heads, linear_key/value_head_dim, linear_conv_kernel_dim). The
    recurrent state's dtype is the config's mamba_ssm_dtype (vLLM models/config.py
    Qwen3_5ForConditionalGenerationConfig), float32 where a Qwen3.5 config leaves it out (the family's default,
    code-index excerpt 67470809042), else the model dtype."""
    fields = [_int(config, name) for name in ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                                              "linear_value_head_dim", "linear_conv_kernel_dim")]
    if linear_layers <= 0 or window or any(value is None for value in fields):
        return None
    key_heads, value_heads, key_dim, value_dim, kernel = (int(value or 0) for value in fields)
    dtype = config.get("mamba_ssm_dtype") or ("float32" if str(config.get("model_type", "")).startswith("qwen3_5")
                                              else config.get("torch_dtype") or config.get("dtype") or "bfloat16")
    return LinearState(key_heads, value_heads, key_dim, value_dim, kernel, STATE_DTYPE_BYTES.get(str(dtype), 2),
                       "Hugging Face config.json linear_* fields")


def global_attention(config: Mapping[str, Any], layers: int | None, window_layers: int,
                     kv_heads: int | None) -> GlobalAttention | None:
    """Gemma 4's full-attention layers where the config gives them a head dim of their own (global_head_dim,
    num_global_key_value_heads, attention_k_eq_v): every layer that is not a sliding one."""
    head_dim = _int(config, "global_head_dim")
    global_kv = _int(config, "num_global_key_value_heads") or kv_heads
    if head_dim is None or layers is None or not window_layers or global_kv is None:
        return None
    return GlobalAttention(layers - window_layers, global_kv, head_dim, bool(config.get("attention_k_eq_v")))


def _active_params(config: Mapping[str, Any], params: float, layers: int | None, hidden: int | None, experts: int,
                   active_experts: int, notes: list[str]) -> float:
    """Parameters one token uses: all but the routed experts it is not sent to. Each routed expert is a gated
    MLP (gate, up, down: 3 x hidden x expert width) in every MoE layer (DeepSeek's first_k_dense_replace
    layers are dense)."""
    width = _int(config, "moe_intermediate_size", "expert_intermediate_size") or _int(config, "intermediate_size")
    if layers is None or hidden is None or width is None:
        notes.append("active parameters not computable from config.json; sized as all parameters")
        return params
    moe_layers = layers - (_int(config, "first_k_dense_replace") or 0)
    idle = (experts - active_experts) * 3 * hidden * width * moe_layers
    return max(params - idle, params / experts)
