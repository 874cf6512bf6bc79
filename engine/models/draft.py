"""A Hub repository's config.json and weight files -> a registry entry (YAML text) for a maintainer to review.

`cardfit models draft REPO [--from-dir DIR]` reads the files (bot/cli/draft.py) and hands them here. The entry
carries the fields of engine/models/data/*.yaml (the header of each file describes them) as far as the files say
them; what they do not say is null with "# UNVERIFIED: ...", and the places a maintainer must decide (the headline
parameter count, aliases, the family word) carry "# REVIEW: ...". Nothing is guessed: the shape is read as
engine/models/hub.py reads it for a Hub lookup, so an entry and a lookup of the same repository agree.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.models.hub import DTYPE_BYTES, layer_roles, shape_from_hub, text_config
from engine.models.registry import STATE_DTYPE_BYTES, ModelShape, Registry

# Tensor-name parts of a vision tower and its projector in transformers' and vLLM's checkpoints (Qwen2.5-VL
# "visual.", Gemma 3 / Mistral 3 "vision_tower." + "multi_modal_projector.", Llama 3.2 Vision "vision_model.",
# Gemma 4 "embed_vision.").
_VISION_PARTS = ("visual.", "vision_tower.", "vision_model.", "multi_modal_projector.", "vision_encoder.",
                 "mm_projector.", "embed_vision.", "vision_embed")
_MTP_PARTS = ("mtp.", "model.mtp")  # multi-token-prediction heads some releases ship (Qwen3.5, GLM)
_TORCH_DTYPE_TO_SAFETENSORS = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}
_SUFFIXES = ("-instruct", "-it", "-chat", "-hf", "-base")


@dataclass(frozen=True, slots=True)
class WeightCount:
    """The parameters of a checkpoint per safetensors dtype, and how they were counted."""

    counts: Mapping[str, int]
    basis: str  # "safetensors headers of 4 files", "model.safetensors.index.json total_parameters", ...
    vision_params: int | None = None  # tensors of the vision tower and projector (None: not counted)
    mtp_params: int = 0


def count_tensors(tensors: Mapping[str, tuple[str, int]], basis: str) -> WeightCount:
    """Tensor name -> (safetensors dtype, elements), as the safetensors headers list them."""
    counts: dict[str, int] = {}
    vision = mtp = 0
    for name, (dtype, elements) in tensors.items():
        counts[dtype] = counts.get(dtype, 0) + elements
        if any(part in name for part in _VISION_PARTS):
            vision += elements
        elif name.startswith(_MTP_PARTS):
            mtp += elements
    return WeightCount(counts, basis, vision, mtp)


def count_from_index(index: Mapping[str, Any], config: Mapping[str, Any]) -> WeightCount | None:
    """Parameters from model.safetensors.index.json alone (no weight file at hand): its total_parameters where
    transformers wrote one, else total_size over the config's dtype (only for an unquantized checkpoint: a
    quantized one mixes dtypes). None when neither can be read."""
    metadata = index.get("metadata") if isinstance(index.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    text = text_config(config)
    dtype = _TORCH_DTYPE_TO_SAFETENSORS.get(str(text.get("torch_dtype") or text.get("dtype") or ""))
    total = metadata.get("total_parameters")
    if isinstance(total, int) and total > 0:
        return WeightCount({dtype or "BF16": total}, "model.safetensors.index.json total_parameters")
    size = metadata.get("total_size")
    if isinstance(size, int) and size > 0 and dtype and not text.get("quantization_config"):
        params = int(size / DTYPE_BYTES[dtype])
        return WeightCount({dtype: params}, f"model.safetensors.index.json total_size / {DTYPE_BYTES[dtype]:g} B "
                                            f"({dtype})")
    return None


def draft_entry(repo_id: str, config: Mapping[str, Any], weights: WeightCount, *, files: str,
                registry: Registry | None = None) -> str:
    """The registry entry for `repo_id` as YAML text (one list item under `models:`), with its source; a comment
    first where `registry` already names the repository or the drafted id."""
    entry = _Entry(repo_id, config, weights)
    for known in dict.fromkeys(m for m in (registry.get(repo_id), registry.get(entry.model_id)) if m) \
            if registry else ():
        entry.rows.append(f"  # REVIEW: the registry already has {known.id} ({known.name}) under this name")
    entry.names()
    entry.sizes()
    entry.attention()
    entry.dimensions()
    entry.layers()
    entry.extras()
    entry.put("source", f"config: Hugging Face {repo_id} config.json; params: {files} ({weights.basis}); drafted by "
                        "`cardfit models draft`")
    return "\n".join(entry.rows) + "\n"


class _Entry:
    """The entry's rows, written section by section in the registry files' field order."""

    def __init__(self, repo_id: str, config: Mapping[str, Any], weights: WeightCount) -> None:
        self.repo_id, self.config, self.weights = repo_id, config, weights
        self.hub = shape_from_hub(repo_id, config, weights.counts)
        self.shape, self.text = self.hub.shape, text_config(config)
        self.model_id = _model_id(repo_id.rsplit("/", 1)[-1])
        self.vision = isinstance(config.get("vision_config"), Mapping)
        self.rows: list[str] = []

    def put(self, key: str, value: Any, comment: str = "") -> None:
        self.rows.append(f"    {key}: {_yaml(value)}" + (f"  # {comment}" if comment else ""))

    def put_or_unverified(self, key: str, value: Any, why: str, comment: str = "") -> None:
        if value is None:
            self.put(key, None, f"UNVERIFIED: {why}")
        else:
            self.put(key, value, comment)

    def names(self) -> None:
        name = self.repo_id.rsplit("/", 1)[-1]
        model_type = str(self.text.get("model_type") or self.config.get("model_type") or "")
        family = re.match(r"[a-z]+", model_type.lower())
        self.rows.append(f"  - id: {_yaml(self.model_id)}  # REVIEW: the registry id (lower case, no -instruct)")
        self.put("name", name.replace("-", " "), "REVIEW: how replies name it")
        self.put("family", family.group() if family else "", "REVIEW: the parser's word family")
        self.put("generation", model_type, "REVIEW: the release family")
        self.put("kind", "vlm" if self.vision else "llm")
        self.put("hf_id", self.repo_id)
        self.put("aliases", _aliases(self.repo_id, self.model_id),
                 "REVIEW: add the ways people write it (EN/DE, Ollama tag)")

    def sizes(self) -> None:
        params_b = round(self.shape.params_b, 3)  # packed AWQ/GPTQ weights counted unpacked (hub.py)
        mtp = self.weights.mtp_params
        self.put("params_b", params_b, "REVIEW: the model card's headline count where it names one")
        self.put("params_exact_b", params_b)
        self.put("params_source", self.weights.basis + (f"; includes {mtp / 1e9:.3f}B of MTP heads" if mtp else ""))
        self.put("active_params_b", round(self.shape.active_params_b, 3),
                 "derived: all but the idle routed experts (REVIEW against the card)" if self.shape.experts_total
                 else "")

    def attention(self) -> None:
        shape = self.shape
        self.put_or_unverified("layers", shape.layers, "num_hidden_layers not in config.json")
        self.put_or_unverified("attention_heads", shape.attention_heads, "num_attention_heads not in config.json")
        if shape.is_mla:
            self.put("kv_heads", None, "NOT APPLICABLE: MLA keeps a latent (mla below)")
            self.put("head_dim", None, "NOT APPLICABLE: MLA")
            return
        self.put("kv_heads", shape.kv_heads)
        self.put_or_unverified("head_dim", shape.head_dim, "neither head_dim nor hidden_size / heads in config.json",
                               "" if self.text.get("head_dim") else "hidden_size / num_attention_heads")

    def dimensions(self) -> None:
        text = self.text
        self.put_or_unverified("hidden_size", _int_or_none(text.get("hidden_size")), "not in config.json")
        dense, expert = _int_or_none(text.get("intermediate_size")), _int_or_none(text.get("moe_intermediate_size"))
        if dense is None and expert is not None:
            self.put("intermediate_size", expert, "per-expert moe_intermediate_size (no dense intermediate_size)")
        else:
            self.put_or_unverified("intermediate_size", dense, "not in config.json",
                                   "dense FFN (the experts' width is under experts)" if self.shape.experts_total
                                   else "")
        self.put_or_unverified("vocab_size", _int_or_none(text.get("vocab_size")), "not in config.json")
        tie = text.get("tie_word_embeddings", self.config.get("tie_word_embeddings"))
        self.put_or_unverified("tie_word_embeddings", tie if isinstance(tie, bool) else None, "not in config.json")
        self.put_or_unverified("context_max", self.shape.context_max, "max_position_embeddings not in config.json")
        dtype = text.get("torch_dtype") or text.get("dtype") or self.config.get("torch_dtype") \
            or self.config.get("dtype")
        self.put_or_unverified("torch_dtype", dtype, "not in config.json")

    def layers(self) -> None:
        shape, roles = self.shape, layer_roles(self.text, self.shape.layers)
        self.put("sliding_window", shape.sliding_window, "" if shape.sliding_window else "no sliding window in use")
        self.put("sliding_layers", shape.sliding_layers)
        self.put("layer_pattern", roles.pattern)
        self.put("no_kv_layers", roles.no_kv, "layers without a per-token KV cache" if roles.no_kv else "")
        state = shape.linear_state
        if state is not None:
            dtype = next(name for name, size in STATE_DTYPE_BYTES.items() if size == state.recurrent_bytes)
            self.rows.append(f"    linear_state: {{key_heads: {state.key_heads}, value_heads: {state.value_heads}, "
                             f"key_dim: {state.key_dim}, value_dim: {state.value_dim}, "
                             f"conv_kernel: {state.conv_kernel}, recurrent_dtype: {dtype}}}")
        glob = shape.global_attention
        if glob is not None:
            self.rows.append(f"    global_attention: {{layers: {glob.layers}, kv_heads: {glob.kv_heads}, "
                             f"head_dim: {glob.head_dim}, k_eq_v: {str(glob.k_eq_v).lower()}}}")
        if shape.is_mla:
            self.rows.append(f"    mla: {{kv_lora_rank: {shape.mla_kv_lora_rank}, "
                             f"qk_rope_head_dim: {shape.mla_qk_rope_head_dim}}}")
        else:
            self.put("mla", None)
        if shape.experts_total:
            pairs = (f"{key}: {value}" for key, value in _experts(self.text, shape) if value is not None)
            self.rows.append("    experts: {" + ", ".join(pairs) + "}")
        else:
            self.put("experts", None)

    def extras(self) -> None:
        vision = self.weights.vision_params
        if not self.vision:
            self.put("vision_params_b", None)
        elif vision:
            self.put("vision_params_b", round(vision / 1e9, 3), "vision tower + projector tensors")
        else:
            self.put("vision_params_b", None, "UNVERIFIED: the weights' tensor names were not read")
        published = self.shape.published_weights
        if published is not None:
            self.rows.append(f"    published_weights: {{format: {_yaml(published.format)}, gb: {published.gb:g}, "
                             f"note: {_yaml(published.note)}}}")
        else:
            self.put("published_weights", None)
        self.rows.extend(f"    # NOTE: {note}" for note in self.hub.notes)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _experts(text: Mapping[str, Any], shape: ModelShape) -> list[tuple[str, Any]]:
    """The registry's experts mapping: counts, shared experts, the experts' width and the dense layers first."""
    shared = text.get("n_shared_experts", text.get("num_shared_experts"))
    if shared is None and isinstance(text.get("shared_expert_intermediate_size"), int):
        shared = 1  # Qwen MoE: one shared expert of that width
    return [("total", shape.experts_total), ("active", shape.experts_active), ("shared", shared),
            ("moe_intermediate_size", text.get("moe_intermediate_size")),
            ("first_k_dense", text.get("first_k_dense_replace"))]


def _model_id(name: str) -> str:
    model_id = name.lower()
    for suffix in _SUFFIXES:
        if model_id.endswith(suffix):
            model_id = model_id[: -len(suffix)]
    return model_id


def _aliases(repo_id: str, model_id: str) -> list[str]:
    name = repo_id.rsplit("/", 1)[-1].lower()
    spaced = model_id.replace("-", " ")
    return list(dict.fromkeys((model_id, spaced, name, name.replace("-", " "), repo_id.lower())))


def _yaml(value: Any) -> str:
    """A YAML scalar or flow sequence (JSON's double-quoted strings are YAML's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)
