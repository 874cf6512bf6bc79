"""A compact, URL-safe encoding of a sizing request for deep links and callback data.

Alphabet: only `A-Za-z0-9_-` (Telegram's deep-link payload), at most 64 characters. An upper-case letter tags a
field and the lower-case/digit run after it is the value; a `.` inside a value (model ids, 1.5B) is written `_`.
Example: `Mllama-3_1-70bPi4C32k` = Llama 3.1 70B, INT4, 32,768 tokens.
Also `I` (intent: `p` price, `c` compare), `X` (the card compared with `R`), `T` (billing period: `h`, `d`, `w`,
`m`), `Y` (coin ticker), `Q1` (cheapest asked for), `A1` (the count `N1` came from an article), `E` (the card's
memory as written, GB), `F` (the named weight format, its normalized name: `Fq4km`, `Fexl2-4_65`); each is optional,
so older payloads decode as before, and a price payload needs no model. A precision's code (`P`, `K`) is its row's
`payload` in engine/formats/formats.yaml. `H` is the published quantized repo the question named, as its place in
the model's registry `quantized` list (`H0`: the first); a repo the registry does not list is not carried.
Speed and training (engine.speed): `Z` the decode speed each user needs (tok/s: `Z15`, `Z2_5`), `J` a training
job's tokens (`J50m`, `J1_5b`, `J300k`), `O` its epochs (`O3`); a toggle or deep link keeps them, so a tapped
button answers the same target and the same job.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from catalog.names import normalize_name
from engine.formats.precision import precision_words
from engine.formats.quant import canonical_quant
from engine.formats.table import normalize_format
from engine.models.registry import default_registry
from engine.sizing.rule import (
    KV_PRECISION_BYTES,
    MAX_BILLING_SPAN,
    MAX_PARAMS_B,
    PRECISION_BYTES,
    WORKLOADS,
    SizeRequest,
)
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS

MAX_PAYLOAD = 64
_PRECISION_CODES = precision_words().payload_codes
_PRECISION_NAMES = {code: name for name, code in _PRECISION_CODES.items()}
_WORKLOAD_CODES = {"inference": "i", "full": "f", "lora": "l", "qlora": "q"}
_WORKLOAD_NAMES = {code: name for name, code in _WORKLOAD_CODES.items()}
_INTENT_CODES = {"price": "p", "compare": "c"}
_INTENT_NAMES = {code: name for name, code in _INTENT_CODES.items()}
_BILLING_CODES = {"hour": "h", "day": "d", "week": "w", "month": "m"}
_BILLING_NAMES = {code: name for name, code in _BILLING_CODES.items()}
_COIN = re.compile(r"[a-z0-9]{2,8}")
_FIELD = re.compile(r"([A-Z])([a-z0-9_-]*)")
_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class PayloadError(ValueError):
    """A payload that is not one of ours (malformed, tampered or out of range)."""


def _value(text: str) -> str:
    return text.lower().replace(".", "_")


def _tokens(tokens: int) -> str:
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else str(tokens)


def encode_request(request: SizeRequest) -> str:
    """The request as a payload; raises PayloadError if it cannot be said in 64 characters."""
    parts: list[str] = []
    if request.model:
        parts.append("M" + _value(request.model))
    elif request.params_b is not None:
        parts.append("S" + _value(f"{request.params_b:g}"))
    if request.precision:
        parts.append("P" + _PRECISION_CODES.get(request.precision, _value(request.precision)))
    if request.context_tokens is not None:
        parts.append("C" + _tokens(request.context_tokens))
    if request.batch is not None:
        parts.append("B" + str(request.batch))
    if request.workload:
        parts.append("W" + _WORKLOAD_CODES[request.workload])
    if request.kv_precision:
        parts.append("K" + _PRECISION_CODES.get(request.kv_precision, _value(request.kv_precision)))
    if request.card:
        parts.append("R" + re.sub(r"[^a-z0-9-]", "-", request.card.lower()))
    if request.gpu_count is not None:  # also with no card: "on 4 GPUs", "--tensor-parallel-size 4"
        parts.append("N" + str(request.gpu_count))
    if request.memory_budget_gb is not None:
        parts.append("G" + _value(f"{request.memory_budget_gb:g}"))
    if request.region:
        parts.append("L" + _value(request.region))
    if request.quant:
        parts.append("F" + _value(normalize_format(request.quant).replace(":", "-")))
    place = _checkpoint_place(request)
    if place is not None:
        parts.append(f"H{place}")
    parts.extend(_talk_parts(request))
    parts.extend(_speed_parts(request))
    payload = "".join(parts)
    if not _VALID.match(payload):
        raise PayloadError(f"request does not fit a {MAX_PAYLOAD}-character payload")
    return payload


def _checkpoint_place(request: SizeRequest) -> int | None:
    """The named repo's place in its model's registry `quantized` list (a GGUF repo: its first file's), or None."""
    if not request.checkpoint or not request.model:
        return None
    shape = default_registry().get(request.model)
    key = normalize_name(request.checkpoint)
    for place, repo in enumerate(shape.quantized if shape is not None else ()):
        if key in (normalize_name(repo.hf_id), normalize_name(repo.repo)):
            return place
    return None


def _decode_checkpoint(fields: dict[str, str], request: SizeRequest) -> None:
    """`H`: the repo at that place of the model's `quantized` list (a GGUF file names its repo)."""
    if "H" not in fields:
        return
    shape = default_registry().get(request.model) if request.model else None
    place = int(fields["H"])
    if shape is None or not 0 <= place < len(shape.quantized):
        raise PayloadError("bad checkpoint")
    repo = shape.quantized[place]
    request.checkpoint = repo.repo if repo.quant.startswith("gguf_") else repo.hf_id


def _talk_parts(request: SizeRequest) -> list[str]:
    """The fields of a price or compare question: intent, compared card, billing period, coin, cheapest, article
    count, card memory."""
    parts: list[str] = []
    if request.intent in _INTENT_CODES:
        parts.append("I" + _INTENT_CODES[request.intent])
    if request.compare_card and request.card:
        parts.append("X" + re.sub(r"[^a-z0-9-]", "-", request.compare_card.lower()))
    if request.billing in _BILLING_CODES:
        parts.append("T" + _BILLING_CODES[request.billing])
    if request.coin and _COIN.fullmatch(request.coin.lower()):
        parts.append("Y" + request.coin.lower())
    if request.cheapest:
        parts.append("Q1")
    if request.count_implied and request.card and request.gpu_count == 1:
        parts.append("A1")
    if request.card_vram_gb is not None and request.card:
        parts.append("E" + _value(f"{request.card_vram_gb:g}"))
    if request.budget_usd is not None:
        parts.append("U" + _value(f"{request.budget_usd:g}"))
    if request.billing_span is not None:
        parts.append(f"D{request.billing_span}")
    if request.gpu_memory_utilization is not None:
        parts.append("V" + _value(f"{request.gpu_memory_utilization:g}"))
    return parts


MAX_TARGET_TOK_S = 100_000.0  # engine.parse.speed's bound on a speed target
MAX_TRAIN_TOKENS = 1e14
MAX_EPOCHS = 1000.0
_TOKEN_SCALES = (("b", 10**9), ("m", 10**6), ("k", 10**3))
_TOKEN_COUNT = re.compile(r"([0-9]+(?:_[0-9]+)?)([kmb]?)")


def _token_count(tokens: float) -> str:
    """50,000,000 -> '50m', 1,500,000,000 -> '1_5b': the largest scale that says it in at most three decimals."""
    whole = round(tokens)
    for suffix, scale in _TOKEN_SCALES:
        if whole >= scale and whole % (scale // 1000) == 0:
            return _value(f"{whole / scale:.3f}".rstrip("0").rstrip(".")) + suffix
    return str(whole)


def _speed_parts(request: SizeRequest) -> list[str]:
    """A speed target, a training job's tokens and epochs."""
    parts: list[str] = []
    if request.target_tok_s is not None:
        parts.append("Z" + _value(f"{request.target_tok_s:g}"))
    if request.train_tokens is not None:
        parts.append("J" + _token_count(request.train_tokens))
    if request.epochs is not None:
        parts.append("O" + _value(f"{request.epochs:g}"))
    return parts


def _decode_speed(fields: dict[str, str], request: SizeRequest) -> None:
    if "Z" in fields:
        request.target_tok_s = _bounded_float(fields["Z"].replace("_", "."), MAX_TARGET_TOK_S)
    if "J" in fields:
        match = _TOKEN_COUNT.fullmatch(fields["J"])
        if match is None:
            raise PayloadError("bad token count")
        scale = dict(_TOKEN_SCALES).get(match.group(2), 1)
        request.train_tokens = _bounded_float(str(float(match.group(1).replace("_", ".")) * scale), MAX_TRAIN_TOKENS)
    if "O" in fields:
        request.epochs = _bounded_float(fields["O"].replace("_", "."), MAX_EPOCHS)


def decode_request(payload: str) -> SizeRequest:
    """Parse a payload back into a request; every value is checked, nothing is trusted."""
    fields = _fields(payload)
    request = SizeRequest()
    try:
        _decode_talk(fields, request)
        _decode_model(fields, request)
        _decode_sizing(fields, request)
        _decode_layout(fields, request)
        _decode_checkpoint(fields, request)
        _decode_speed(fields, request)
    except ValueError as exc:
        if isinstance(exc, PayloadError):
            raise
        raise PayloadError("bad number in payload") from None
    assert request.workload is None or request.workload in WORKLOADS
    return request


def _fields(payload: str) -> dict[str, str]:
    """The payload split into its tagged fields, each tag at most once and known."""
    if not isinstance(payload, str) or not _VALID.match(payload):
        raise PayloadError("malformed payload")
    fields: dict[str, str] = {}
    position = 0
    for match in _FIELD.finditer(payload):
        if match.start() != position:
            raise PayloadError("malformed payload")
        tag, value = match.groups()
        if tag in fields or not value:
            raise PayloadError(f"bad field {tag!r}")
        fields[tag] = value
        position = match.end()
    if position != len(payload):
        raise PayloadError("malformed payload")
    unknown = set(fields) - set("MSPCBWKRNGLIXTYQAEFUDVHZJO")
    if unknown:
        raise PayloadError(f"unknown field(s) {sorted(unknown)}")
    if "M" in fields and "S" in fields:  # "N" alone is a count with no card ("on 4 GPUs")
        raise PayloadError("inconsistent fields")
    if any(tag in fields and "R" not in fields for tag in "XE") or "A" in fields and fields.get("N") != "1":
        raise PayloadError("inconsistent fields")
    return fields


def _decode_model(fields: dict[str, str], request: SizeRequest) -> None:
    if "M" in fields:
        request.model = fields["M"].replace("_", ".")
    elif "S" in fields:
        request.params_b = _bounded_float(fields["S"].replace("_", "."), MAX_PARAMS_B)
    elif request.intent != "price" or "R" not in fields:  # a price question names a card, not a model
        raise PayloadError("no model or size")


def _decode_talk(fields: dict[str, str], request: SizeRequest) -> None:
    """Intent, compared card, billing period, coin, cheapest, article count, card memory."""
    if "I" in fields:
        if fields["I"] not in _INTENT_NAMES:
            raise PayloadError("bad intent")
        request.intent = _INTENT_NAMES[fields["I"]]
    if "X" in fields:
        request.compare_card = fields["X"]
    if "T" in fields:
        if fields["T"] not in _BILLING_NAMES:
            raise PayloadError("bad billing period")
        request.billing = _BILLING_NAMES[fields["T"]]
    if "Y" in fields:
        if not _COIN.fullmatch(fields["Y"]):
            raise PayloadError("bad coin")
        request.coin = fields["Y"].upper()
    for tag, name in (("Q", "cheapest"), ("A", "count_implied")):
        if tag in fields:
            if fields[tag] != "1":
                raise PayloadError(f"bad field {tag!r}")
            setattr(request, name, True)
    if "E" in fields:
        request.card_vram_gb = _bounded_float(fields["E"].replace("_", "."), 10_000)
    if "U" in fields:
        request.budget_usd = _bounded_float(fields["U"].replace("_", "."), 10_000_000)
    if "D" in fields:
        request.billing_span = _bounded_int(int(fields["D"]), MAX_BILLING_SPAN)
    if "V" in fields:
        request.gpu_memory_utilization = _bounded_float(fields["V"].replace("_", "."), 1)


def _decode_sizing(fields: dict[str, str], request: SizeRequest) -> None:
    """Precision, context, batch, workload, KV cache precision."""
    if "P" in fields:
        request.precision = _precision(fields["P"], PRECISION_BYTES)
    if "C" in fields:
        text = fields["C"]
        tokens = int(text[:-1]) * 1024 if text.endswith("k") else int(text)
        request.context_tokens = _bounded_int(tokens, MAX_CONTEXT_TOKENS)
    if "B" in fields:
        request.batch = _bounded_int(int(fields["B"]), MAX_BATCH)
    if "W" in fields:
        if fields["W"] not in _WORKLOAD_NAMES:
            raise PayloadError("bad workload")
        request.workload = _WORKLOAD_NAMES[fields["W"]]
    if "K" in fields:
        request.kv_precision = _precision(fields["K"], KV_PRECISION_BYTES)
    if "F" in fields:
        quant = canonical_quant(fields["F"].replace("_", "."))
        if quant is None:
            raise PayloadError("bad weight format")
        request.quant = quant


def _decode_layout(fields: dict[str, str], request: SizeRequest) -> None:
    """The named card and count, the memory budget, the region."""
    if "R" in fields:
        request.card = fields["R"]
    if "N" in fields:
        request.gpu_count = _bounded_int(int(fields["N"]), 64)
    if "G" in fields:
        request.memory_budget_gb = _bounded_float(fields["G"].replace("_", "."), 1_000_000)
    if "L" in fields:
        request.region = fields["L"].upper()


def _precision(code: str, allowed: Mapping[str, float]) -> str:
    name = _PRECISION_NAMES.get(code)
    if name is None or name not in allowed:
        raise PayloadError("bad precision")
    return name


def _bounded_int(value: int, high: int) -> int:
    if not 0 < value <= high:
        raise PayloadError("value out of range")
    return value


def _bounded_float(text: str, high: float) -> float:
    value = float(text)
    if not 0 < value <= high:  # also rejects nan
        raise PayloadError("value out of range")
    return value
