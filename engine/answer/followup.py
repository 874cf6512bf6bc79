"""Follow-ups: which message changes the question before it, how the
change is applied, and the notes that say what changed ("changed: precision BF16 -> FP8").

The delta rule, one field at a time:
* a field the follow-up sets replaces the kept one; a field it does not set is kept (precision, context, batch,
  workload, memory budget, region, billing period, coin);
* the weight format is one field: a precision or a named format ("and in awq?") replaces the kept precision and
  format together, so "and in fp8?" after an AWQ answer is FP8 (not AWQ), and a follow-up that names neither keeps
  the AWQ;
* a new model or size replaces the model and the size together and keeps everything else ("what about Qwen 72B?"
  keeps FP8 and 128k); after a price question it turns the question into sizing that model on the card;
* a card replaces the card with its count, memory and the card compared with it ("on 2x H100", "und auf einer
  H100?"); a count alone ("what about 2 cards?") sets the count on the kept card, else on the card the answer
  before recommended, else the follow-up asks which card (`Followup.needs_card`);
* "cheapest" is added; the parser's notes and ignored words are the follow-up's own.
`Shown` is what the answer before showed (its defaults filled in, its recommended card), so a change is named as
the user saw it: "precision BF16 -> FP8" when BF16 was the provider's default.

Also the JSON form of a kept request (`request_to_json`/`request_from_json`), for a store that keeps it per chat.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from catalog.schema import Catalog
from engine.answer.build import Answer
from engine.answer.open_question import ModelPick
from engine.formats.quant import UnknownFormat, canonical_quant, find_format, quant_name
from engine.models.registry import Registry, default_registry
from engine.notes import Note
from engine.parse import ParseResult
from engine.sizing.rule import MAX_PARAMS_B, WORKLOADS, SizeRequest
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS, k_label

# The fields a follow-up replaces one by one, in the order the changes are listed (the weight format, precision
# and named format together, first: _apply_format).
REPLACED = ("kv_precision", "context_tokens", "batch", "workload", "memory_budget_gb", "region",
            "billing", "coin")
# Reverse questions a follow-up asks of the kept model (engine/answer/capacity.py KINDS; the biggest model asks of
# none).
SEQUENCE_INTENTS = ("max_context", "max_batch")
WORKLOAD_LABELS = {"inference": "inference", "full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}


@dataclass(frozen=True, slots=True)
class Shown:
    """What the answer to the kept request showed: every value it used (defaults filled in) and its layout."""

    values: Mapping[str, object] = field(default_factory=dict)
    card: str | None = None  # the card it recommended (or named)
    count: int | None = None


@dataclass(slots=True)
class Followup:
    request: SizeRequest  # the kept request with the change applied (`followup` True)
    changes: list[Note]  # one "followup_changed" note per field that changed, also in request.assumed
    needs_card: bool = False  # a count with no card kept or shown: ask which card


def delta_of(result: ParseResult) -> SizeRequest | None:
    """The change a parsed message makes to the question before it, or None when it is a new question (or says
    nothing): a message that names no model or size but sets a field, or a whole question opening with a cue."""
    if result.partial is None:
        return None
    if result.request is None or result.followup_cue:
        return result.partial
    return None


def shown_of(answer: Answer) -> Shown:
    """What an answer showed, for naming the changes a follow-up makes to its request."""
    values: dict[str, object] = {"billing": answer.billing, "coin": answer.coin or answer.request.coin}
    resolved = answer.resolved
    if resolved is not None:
        # the context and batch only where the answer used them (the headroom rule without them sizes no KV cache)
        sequence = resolved.sequence_matters
        quant = quant_name(resolved.quant) if resolved.quant else None
        values.update(precision=_format_label(resolved.precision, quant), kv_precision=resolved.kv_precision,
                      context_tokens=resolved.context_tokens if sequence else None,
                      batch=resolved.batch if sequence else None, workload=resolved.workload,
                      memory_budget_gb=resolved.memory_budget_gb, region=resolved.region,
                      model=resolved.shape.name if not resolved.shape.typical else f"{resolved.params_b:g}B")
    fit = answer.fit
    capacity = answer.capacity
    if fit is None and capacity is not None and capacity.picks:  # an open question: its first model and layout
        values["pick"] = capacity.picks[0]
        return Shown(values, capacity.card, capacity.count)
    return Shown(values, fit.card.name if fit else None, fit.count if fit else None)


def _onto_pick(previous: SizeRequest, delta: SizeRequest, merged: SizeRequest, shown: Shown,
               changes: list[Note]) -> None:
    """After an open question ("largest qwen on a 3090"): a follow-up that asks of one model -- a reverse question
    ("max context on it?") or a named format ("what about the UD-IQ1_S quant?") -- asks of the model it named first,
    on its layout; any other change ("and on 2x 3090?", "in fp8?", "at 32k?") asks the open question again."""
    if previous.intent != "biggest_model" or delta.model is not None or delta.params_b is not None:
        return
    pick = shown.values.get("pick")
    if not isinstance(pick, ModelPick) or (delta.intent not in SEQUENCE_INTENTS and delta.quant is None):
        merged.intent, merged.model = "biggest_model", previous.model  # the open question, changed
        return
    merged.model = pick.model
    if delta.precision is None and delta.quant is None:
        merged.precision = pick.precision
    merged.intent = delta.intent if delta.intent in SEQUENCE_INTENTS else None
    if merged.card is None and shown.card is not None:
        merged.card, merged.gpu_count = shown.card, shown.count
    merged.budget_usd = None
    _note(changes, "model", previous.model, pick.name)  # "qwen" -> the model named first


def apply_followup(previous: SizeRequest, delta: SizeRequest, shown: Shown | None = None, *,
                   catalog: Catalog | None = None, registry: Registry | None = None) -> Followup:
    """The kept request with the follow-up's change applied (the delta rule in the module's docstring).
    Neither argument is changed. `catalog` and `registry` name cards and models in the change notes (default:
    as written, and the bundled registry)."""
    shown = shown or Shown()
    merged = dataclasses.replace(previous, assumed=[], ignored=list(delta.ignored), followup=True)
    changes: list[Note] = []
    if delta.model is not None or delta.params_b is not None:
        merged.model, merged.params_b = delta.model, delta.params_b
        before = shown.values.get("model") or _model_label(previous, registry)
        _note(changes, "model", before, _model_label(delta, registry))
        if merged.intent == "price":
            merged.intent = None
    _apply_format(previous, delta, merged, shown, changes)
    for name in REPLACED:
        value = getattr(delta, name)
        if value is not None and value != getattr(previous, name):
            setattr(merged, name, value)
            before = getattr(previous, name)
            before = before if before is not None else shown.values.get(name)
            if before != value:  # "and at 4k?" on an answer at 4k sets it, and changes nothing to say
                _note(changes, name, before, value)
    if delta.billing is not None:  # "und für 2 Wochen?": the span goes with the period it counts
        merged.billing_span = delta.billing_span
    if delta.budget_usd is not None:
        merged.budget_usd = delta.budget_usd
    # "and how fast?", "at ≥ 20 tok/s each": a speed question or target joins the kept question (engine.parse.speed)
    merged.speed_asked = previous.speed_asked or delta.speed_asked
    if delta.target_tok_s is not None:
        merged.target_tok_s = delta.target_tok_s
    if delta.train_tokens is not None:
        merged.train_tokens = delta.train_tokens
    if delta.epochs is not None:
        merged.epochs = delta.epochs
    needs_card = _apply_card(previous, delta, merged, shown, changes, catalog)
    if delta.intent in SEQUENCE_INTENTS:  # "max context on an H100?", "how many users at 8k on an A100?"
        merged.intent = delta.intent
        if delta.intent == "max_context" and delta.context_tokens is None:
            merged.context_tokens = None  # the context is what is asked for, not the one the answer before used
    _onto_pick(previous, delta, merged, shown, changes)
    merged.cheapest = previous.cheapest or delta.cheapest
    merged.rope_scaling = delta.rope_scaling or previous.rope_scaling  # "and with yarn?" extends the window
    merged.engine = delta.engine or previous.engine  # "and with 64k?" keeps "with llama.cpp"; "and on vLLM?" changes it
    merged.assumed = [*changes, *delta.assumed]
    return Followup(merged, changes, needs_card)


def _apply_format(previous: SizeRequest, delta: SizeRequest, merged: SizeRequest, shown: Shown,
                  changes: list[Note]) -> None:
    """Precision and named format replaced together: the parser reads "awq" as INT4 + AWQ, "fp8" as FP8 alone, and
    keeping the other half would size the AWQ again after "and in fp8?" (or drop it after "and in awq?")."""
    if delta.precision is None and delta.quant is None:
        return
    merged.precision, merged.quant = delta.precision, delta.quant
    before = _format_label(previous.precision, previous.quant) if previous.precision or previous.quant \
        else shown.values.get("precision")
    after = _format_label(delta.precision, delta.quant)
    if before != after:  # "and in awq?" on an AWQ answer changes nothing to say
        _note(changes, "precision", before, after)


def _format_label(precision: str | None, quant: str | None) -> str | None:
    """How a weight format is named in a change note: the named format's label ("AWQ", "Q4_K_M"), else the
    precision upper-cased ("FP8")."""
    if quant is None:
        return precision.upper() if precision is not None else None
    try:
        return find_format(quant).label
    except UnknownFormat:  # a kept request read back with a format the table no longer knows
        return quant


def _apply_card(previous: SizeRequest, delta: SizeRequest, merged: SizeRequest, shown: Shown,
                changes: list[Note], catalog: Catalog | None) -> bool:
    """The card and count part of the delta rule; True when a count came with no card to put it on."""
    before_card = _card_label(previous.card, catalog) or shown.card
    before_count = previous.gpu_count if previous.card and previous.gpu_count is not None else shown.count
    if delta.card is not None:
        merged.card, merged.gpu_count = delta.card, delta.gpu_count
        merged.count_implied, merged.card_vram_gb = delta.count_implied, delta.card_vram_gb
        merged.compare_card = delta.compare_card
        if delta.compare_card is not None:
            merged.intent = "compare"
        elif merged.model is None and merged.params_b is None:
            merged.intent = "price"
        else:  # "and on an H100?" after "how many users at 8k on an A100?" still asks how many users
            merged.intent = previous.intent if previous.intent in SEQUENCE_INTENTS else None
        if delta.card != previous.card:
            _note(changes, "card", before_card, _card_label(delta.card, catalog))
        if delta.gpu_count is not None and not delta.count_implied and delta.gpu_count != before_count:
            _note(changes, "gpu_count", before_count, delta.gpu_count)
        return False
    if delta.gpu_count is None:
        return False
    if before_card is None:
        return True
    merged.card, merged.gpu_count, merged.count_implied = before_card, delta.gpu_count, False
    if delta.gpu_count != before_count:
        _note(changes, "gpu_count", before_count, delta.gpu_count)
    return False


def _note(changes: list[Note], name: str, before: object, after: object) -> None:
    """'changed: precision BF16 -> FP8'; the values are Notes a front end can say in its own language."""
    was, now = _value(name, before), _value(name, after)
    label = name.replace("_", " ")
    changes.append(Note(f"changed: {label} {was} -> {now}", "followup_changed",
                        what=Note(label, f"followup_field_{name}"), before=was, after=now))


def _value(name: str, value: object) -> Note:
    if value is None:
        return Note("default", "followup_default")
    if name == "workload" and isinstance(value, str):
        return Note(WORKLOAD_LABELS.get(value, value), "followup_workload", workload=value)
    if name == "billing" and isinstance(value, str):
        return Note(f"per {value}", f"followup_per_{value}")
    if name == "context_tokens" and isinstance(value, int):
        # k = 1,024 tokens, as the parser reads them (engine.parse): 131,072 is "128k"
        text = k_label(value) or f"{value:,}"
    elif name in ("kv_precision", "coin") and isinstance(value, str):
        text = value.upper()  # the precision comes named already (_format_label)
    elif name == "memory_budget_gb" and isinstance(value, (int, float)):
        text = f"{value:g} GB"
    else:
        text = str(value)
    return Note(text, "followup_value", value=text)


def _card_label(card: str | None, catalog: Catalog | None) -> str | None:
    if card is None or catalog is None:
        return card
    known = catalog.card(card)
    return known.name if known is not None else card


def _model_label(request: SizeRequest, registry: Registry | None) -> str | None:
    if request.model is not None:
        shape = (registry or default_registry()).get(request.model)
        return shape.name if shape is not None else request.model
    return f"{request.params_b:g}B" if request.params_b is not None else None


# -- a kept request as JSON -------------------------------------------------------------------------------------

_KEPT: dict[str, type | tuple[type, ...]] = {
    "model": str, "params_b": (int, float), "precision": str, "quant": str, "kv_precision": str,
    "context_tokens": int, "batch": int, "workload": str, "card": str, "gpu_count": int,
    "memory_budget_gb": (int, float), "region": str, "intent": str, "billing": str, "coin": str, "cheapest": bool,
    "count_implied": bool, "compare_card": str, "card_vram_gb": (int, float), "rope_scaling": str,
    "budget_usd": (int, float), "billing_span": int, "gpu_memory_utilization": (int, float), "checkpoint": str,
    "target_tok_s": (int, float), "speed_asked": bool, "train_tokens": (int, float), "epochs": (int, float),
    "engine": str,
}


def request_to_json(request: SizeRequest) -> str:
    """The request's fields as the user set them (not its notes, not the settings filled in later)."""
    data = {name: value for name in _KEPT if (value := getattr(request, name)) not in (None, False)}
    return _ENCODE(data)


# What json.dumps(data, sort_keys=True, allow_nan=False) writes, without building an encoder per call (it does
# for any non-default argument: ~8 µs of each answer's write in the bot).
_ENCODE = json.JSONEncoder(sort_keys=True, allow_nan=False).encode


def request_from_json(text: str) -> SizeRequest | None:
    """A kept request read back; None for anything that is not one (checked field by field, nothing trusted)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or set(data) - set(_KEPT):
        return None
    for name, value in data.items():
        kind = _KEPT[name]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
    request = SizeRequest(**data)
    if not _in_range(request):
        return None
    return request


def _in_range(request: SizeRequest) -> bool:
    return ((request.params_b is None or 0 < request.params_b <= MAX_PARAMS_B)
            and (request.context_tokens is None or 0 < request.context_tokens <= MAX_CONTEXT_TOKENS)
            and (request.batch is None or 0 < request.batch <= MAX_BATCH)
            and (request.gpu_count is None or 0 < request.gpu_count <= 64)
            and (request.workload is None or request.workload in WORKLOADS)
            and (request.engine is None or request.engine in ("vllm", "llama.cpp"))
            and (request.quant is None or canonical_quant(request.quant) == request.quant))
