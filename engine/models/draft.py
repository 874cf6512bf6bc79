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
from engine.models.registry import Registry

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
    hub = shape_from_hub(repo_id, config, weights.counts)
    shape, text = hub.shape, text_config(config)
    roles = layer_roles(text, shape.layers)
    name = repo_id.rsplit("/", 1)[-1]
    model_id = _model_id(name)
    family = re.match(r"[a-z]+", str(text.get("model_type") or config.get("model_type") or "").lower())
    vision = isinstance(config.get("vision_config"), Mapping)
    params = shape.params_b * 1e9  # packed AWQ/GPTQ weights counted unpacked (hub.py)
    rows: list[str] = []
    for known in dict.fromkeys(m for m in (registry.get(repo_id), registry.get(model_id)) if m) if registry else ():
        rows.append(f"  # REVIEW: the registry already has {known.id} ({known.name}) under this name")

    def put(key: str, value: Any, comment: str = "") -> None:
        rows.append(f"    {key}: {_yaml(value)}" + (f"  # {comment}" if comment else ""))

    def unverified(key: str, why: str) -> None:
        put(key, None, f"UNVERIFIED: {why}")

    rows.append(f"  - id: {_yaml(model_id)}  # REVIEW: the registry id (lower case, no -instruct)")
    put("name", name.replace("-", " "), "REVIEW: how replies name it")
    put("family", family.group() if family else "", "REVIEW: the parser's word family")
    put("generation", str(text.get("model_type") or config.get("model_type") or ""), "REVIEW: the release family")
    put("kind", "vlm" if vision else "llm")
    put("hf_id", repo_id)
    put("aliases", _aliases(repo_id, model_id), "REVIEW: add the ways people write it (EN/DE, Ollama tag)")
    put("params_b", round(params / 1e9, 3), "REVIEW: the model card's headline count where it names one")
    put("params_exact_b", round(params / 1e9, 3))
    source_note = weights.basis + (f"; includes {weights.mtp_params / 1e9:.3f}B of MTP heads" if weights.mtp_params
                                   else "")
    put("params_source", source_note)
    put("active_params_b", round(shape.active_params_b, 3),
        "derived: all but the idle routed experts (REVIEW against the card)" if shape.experts_total else "")
    for key, value, what in (("layers", shape.layers, "num_hidden_layers"),
                             ("attention_heads", shape.attention_heads, "num_attention_heads")):
        put(key, value) if value is not None else unverified(key, f"{what} not in config.json")
    if shape.is_mla:
        put("kv_heads", None, "NOT APPLICABLE: MLA keeps a latent (mla below)")
        put("head_dim", None, "NOT APPLICABLE: MLA")
    else:
        put("kv_heads", shape.kv_heads)
        if shape.head_dim is not None:
            put("head_dim", shape.head_dim, "" if text.get("head_dim") else "hidden_size / num_attention_heads")
        else:
            unverified("head_dim", "neither head_dim nor hidden_size / heads in config.json")
    for key in ("hidden_size", "intermediate_size", "vocab_size"):
        value = text.get(key)
        put(key, value) if isinstance(value, int) else unverified(key, f"{key} not in config.json")
    tie = text.get("tie_word_embeddings", config.get("tie_word_embeddings"))
    put("tie_word_embeddings", tie) if isinstance(tie, bool) else unverified("tie_word_embeddings", "not in config")
    put("context_max", shape.context_max) if shape.context_max else unverified("context_max",
                                                                                 "max_position_embeddings not read")
    dtype = text.get("torch_dtype") or text.get("dtype") or config.get("torch_dtype") or config.get("dtype")
    put("torch_dtype", dtype) if dtype else unverified("torch_dtype", "not in config.json")
    put("sliding_window", shape.sliding_window, "" if shape.sliding_window else "no sliding window in use")
    put("sliding_layers", shape.sliding_layers)
    put("layer_pattern", roles.pattern)
    put("no_kv_layers", roles.no_kv, "layers without a per-token KV cache" if roles.no_kv else "")
    if shape.is_mla:
        rows.append(f"    mla: {{kv_lora_rank: {shape.mla_kv_lora_rank}, "
                    f"qk_rope_head_dim: {shape.mla_qk_rope_head_dim}}}")
    else:
        put("mla", None)
    if shape.experts_total:
        rows.append(f"    experts: {{total: {shape.experts_total}, active: {shape.experts_active}}}")
    else:
        put("experts", None)
    if vision:
        if weights.vision_params:
            put("vision_params_b", round(weights.vision_params / 1e9, 3), "vision tower + projector tensors")
        else:
            unverified("vision_params_b", "the weights' tensor names were not read")
    else:
        put("vision_params_b", None)
    published = shape.published_weights
    if published is not None:
        rows.append(f"    published_weights: {{format: {_yaml(published.format)}, gb: {published.gb:g}, "
                    f"note: {_yaml(published.note)}}}")
    else:
        put("published_weights", None)
    for note in hub.notes:
        rows.append(f"    # NOTE: {note}")
    put("source", f"config: Hugging Face {repo_id} config.json; params: {files} ({weights.basis}); drafted by "
                  "`cardfit models draft`")
    return "\n".join(rows) + "\n"


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
