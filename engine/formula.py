"""Component formulas: a code per formula, the values it shows, its English text, and how a formula writes numbers.

A component carries its formula as data (code + values) so a front end can show the working in its own language
(bot/texts/locales: `formula.<code>`); the English text is kept for the JSON "formula" string and logs. Both are
written with the same digits (`formula_number`), so a translation only swaps words and separators.
"""
from __future__ import annotations

import _string  # type: ignore[import-not-found]  # no stub; string.Formatter.parse is this function
from collections.abc import Iterator, Mapping


def _template_parts(template: str) -> Iterator[tuple[str, str | None, str | None, str | None]]:
    """string.Formatter().parse(template), without importing `string` (~3 ms of the cold start)."""
    parts: Iterator[tuple[str, str | None, str | None, str | None]] = _string.formatter_parser(template)
    return parts


FormulaValue = float | int | str

# English templates, one per code. A value named *_gb is a size in GB, `batch` a count as typed; every other
# number is written compactly (70, 0.5, 8,192); strings (model names, formats) are shown as they are.
FORMULAS: dict[str, str] = {
    # weights
    "weights": "{params} x {bytes} B = {weights_gb}",
    "weights_quant": "{params} x {bits} bits ({format}, scales included) = {weights_gb}",
    "weights_published": "{model} as published ({format}) = {weights_gb}",
    "weights_bf16": "{params} x {bytes} B (BF16 weights) = {weights_gb}",
    "weights_frozen": "{params} x {bytes} B (frozen base) = {weights_gb}",
    "weights_frozen_nf4": "{params} x {bytes} B (frozen 4-bit NF4 base) = {weights_gb}",
    "weights_4bit": "{params} x {bytes} B (4-bit base) = {weights_gb}",
    # KV cache
    "kv": "2 x {layers} layers x {kv_heads} KV heads x {head_dim} x {bytes} B x {tokens} tokens x {batch} = {kv_gb}",
    "kv_window": "2 x {kv_heads} KV heads x {head_dim} x {bytes} B x ({full_layers} layers x {tokens} + "
                 "{window_layers} window layers x {window_tokens} tokens) x {batch} = {kv_gb}",
    "kv_global": "2 x ({global_layers} global layers x {global_kv_heads} KV heads x {global_head_dim} x "
                 "{tokens} tokens + {window_layers} window layers x {kv_heads} KV heads x {head_dim} x "
                 "{window_tokens} tokens) x {bytes} B x {batch} = {kv_gb}",
    "kv_linear": "2 x {layers} layers x {kv_heads} KV heads x {head_dim} x {bytes} B x {tokens} tokens x {batch} + "
                 "{linear_layers} linear layers x {state_mb} MB state x {batch} = {kv_gb}",
    "kv_mla": "{layers} layers x ({rank} + {rope}) MLA latent x {bytes} B x {tokens} tokens x {batch} = {kv_gb}",
    "kv_mla_indexer": "{layers} layers x (({rank} + {rope}) MLA latent x {bytes} B + {indexer} B indexer keys) x "
                      "{tokens} tokens x {batch} = {kv_gb}",
    # overhead and headroom
    "runtime_overhead": "runtime overhead (CUDA context, framework, allocator) = {overhead_gb}",
    "headroom": "{percent} % of {weights_gb} for KV cache and activations = {overhead_gb}",
    "headroom_after_kv": "{percent} % headroom ({headroom_gb}) minus the KV cache, for activations = {overhead_gb}",
    "planning_buffer": "x {factor} planning buffer = {overhead_gb}",
    # full fine-tuning
    "gradients_bf16": "{params} x {bytes} B (BF16 gradients) = {gradients_gb}",
    "gradients": "{params} x {bytes} B (gradients) = {gradients_gb}",
    "optimizer_adam": "{params} x {bytes} B (FP32 master 4 + Adam moments 4 + 4) = {optimizer_gb}",
    "optimizer_adamw": "{params} x {bytes} B (AdamW state with FP32 copy, EleutherAI) = {optimizer_gb}",
    "optimizer_upper": "{params} x {bytes} B (upper end: Hugging Face counts 6 + 8 + 4 = 18 B) = {optimizer_gb}",
    "activations_share": "{percent} % of {base_gb} (activations, fragmentation) = {activations_gb}",
    # LoRA / QLoRA
    "lora_adapter": "{percent} % x {params}B params x {bytes} B (adapter + its Adam state) = {adapter_gb}",
    "lora_activations": "({base} GB + {per_layer} GB x {layers} layers) x {tokens} tokens x {batch} / "
                        "{per_tokens} (gradient checkpointing) = {activations_gb}",
    "qlora_rest": "{params} x {rest} GB (adapter, optimizer, buffers; {per_b} GB per B in all, QLoRA paper) = "
                  "{adapter_gb}",
}


def fmt_num(value: float) -> str:
    """Compact number for formulas and English notes: 70, 7.3, 0.5, 8,192."""
    if type(value) is int:
        return f"{value:,}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}"


def fmt_gb(value: float) -> str:
    """A size in a formula: one decimal, as the seeds write their working ("35.0 GB")."""
    return f"{value:,.1f} GB"


def formula_number(name: str, value: FormulaValue) -> str:
    """How a formula writes the value named `name`, in English digits (a front end swaps the separators)."""
    if isinstance(value, str):
        return value
    if name.endswith("_gb"):
        return fmt_gb(value)
    if name == "batch":
        return str(value)
    return fmt_num(value)


def english_formula(code: str, values: Mapping[str, FormulaValue]) -> str:
    """The template with the values it shows, each written by formula_number (values it does not show are not
    written: format_map would ignore them)."""
    return "".join(literal if field is None else literal + formula_number(field, values[field])
                   for literal, field, _, _ in _template_parts(FORMULAS[code]))
