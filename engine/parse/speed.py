"""Speed words: a target ("at ≥ 15 tok/s each", "mind. 30 Token/s", "20 tokens per second per user"), and a
question about speed ("how fast", "wie schnell", "tokens/s", "time to first token", "TTFT"). Runs before the
fields pass, so the number of a target is never read as a context length ("15 tok/s" is no 15-token context).

A training job's size is read here too ("on 50M tokens, 3 epochs"): the tokens a job trains on are no context
either."""
from __future__ import annotations

import math
import re

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.scan import Scan

# "tok/s", "token/s", "tokens/s", "t/s", "Tok./s": a unit word, then "s" after a slash
_RATE_UNITS = frozenset({"tok", "toks", "token", "tokens", "t"})
_PER = frozenset({"per", "pro", "je", "a", "in"})
_SECOND = frozenset({"second", "sec", "s", "sekunde"})
_TPS = frozenset({"tps", "tok_s"})
# Words that bind a rate to each user ("each", "per user", "pro Nutzer", "je Nutzer")
_EACH = frozenset({"each", "jeweils"})
_USER_WORDS = frozenset({"user", "users", "nutzer", "benutzer", "stream", "streams", "conversation", "request"})
# "at least", "min.", "mind.", "mindestens", "≥", ">=" before the number
_AT_LEAST_WORDS = frozenset({"mind", "mindestens", "min", "minimum", "least"})
_AT_LEAST_TEXT = re.compile(r"(≥|>=|>)\s*$")
# A question about speed
_SPEED_WORDS = frozenset({"fast", "faster", "speed", "schnell", "geschwindigkeit", "throughput", "durchsatz",
                          "latency", "latenz", "ttft"})
_PROMPT_WORDS = frozenset({"prompt", "prompts", "eingabe"})
_TIME_TO = frozenset({"time", "to", "the", "zeit", "bis", "zum"})
_FIRST = frozenset({"first", "ersten", "erstes", "erste"})
_TRIGGERS = _RATE_UNITS | _TPS | _SPEED_WORDS | _FIRST
_NUMBER = re.compile(r"^[0-9]+(?:[.,][0-9]+)?$")
_MAX_TARGET = 100_000.0
# Training-job size: "50M tokens", "1.5B tokens", "3 epochs", "3 Epochen"
_TOKEN_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9, "mio": 1e6, "mrd": 1e9}
_TOKEN_COUNT = re.compile(r"^([0-9]+(?:[.,][0-9]+)?)(k|m|b|bn|mio|mrd)$")
_TRAINING_WORDS = frozenset({"lora", "qlora", "train", "training", "trainieren", "finetune", "finetuning", "fine",
                             "feintunen", "feintuning", "epoch", "epochs", "epoche", "epochen", "sft", "pretrain",
                             "pretraining", "vortrainieren", "tune", "tuning"})
_BILLIONS = frozenset({"b", "bn", "mrd"})  # "1B tokens": no context is a billion tokens long
_DATASET_BEFORE = frozenset({"on", "auf", "mit", "with", "over", "über"})
_EPOCH_WORDS = frozenset({"epoch", "epochs", "epoche", "epochen"})
# The trainer named ("w/ deepspeed zero3", "mit DeepSpeed ZeRO-3", "with FSDP"): how a full fine-tune shards, which
# the answer already assumes (engine.answer.lead.cheapest_sharded), so the words are understood, not "not understood"
_TRAINER_WORDS = frozenset({"deepspeed", "fsdp", "fsdp2", "zero3", "zero2", "zero-3", "zero-2"})


def _number(token: str) -> float | None:
    if not _NUMBER.match(token):
        return None
    value = float(token.replace(",", "."))
    return value if math.isfinite(value) else None


def _slash_between(scan: Scan, left: int, right: int) -> bool:
    return "/" in scan.text[scan.tokens.end[left]:scan.tokens.start[right]]


def _rate_length(scan: Scan, i: int) -> int:
    """How many tokens from `i` write a rate unit ("tok/s" 2, "tokens per second" 3, "tps" 1), else 0."""
    low = scan.low
    token = scan.next_free(i)
    if token is None:
        return 0
    if token in _TPS:
        return 1
    if token in _RATE_UNITS:
        after = scan.next_free(i + 1)
        if after in _SECOND and _slash_between(scan, i, i + 1):
            return 2
        if after in _PER and scan.next_free(i + 2) in _SECOND and i + 2 < len(low):
            return 3
    return 0


# "cost per 1M tokens", "Kosten pro 1 Mio. Tokens", "$ per million tokens": the unit of a price, never a context
_PER_MILLION = re.compile(r"^(?:1m|1mio|million|mio)$")
_COST_PER = frozenset({"per", "pro", "je", "a"})


def _cost_unit(scan: Scan, draft: Draft) -> None:
    """'per 1M tokens' (also '1 million', '1 Mio.'): the unit of the price per token the answer gives (with the
    speed), so it is used here and never read as a 1,048,576-token context."""
    low = scan.low
    for i, token in enumerate(low):
        if token not in _COST_PER or not scan.free(i):
            continue
        j = i + 1
        if j < len(low) and low[j] == "1" and j + 1 < len(low) and low[j + 1] in ("m", "million", "mio"):
            j += 1  # "per 1 million tokens"
        if j < len(low) and scan.free(j) and _PER_MILLION.match(low[j]) \
                and scan.next_free(j + 1) in ("tokens", "token", "tok", "output"):
            length = j + 2 - i
            if scan.next_free(j + 1) == "output" and scan.next_free(j + 2) in ("tokens", "token"):
                length += 1
            scan.use(i, length)
            draft.speed_asked = True


def read_speed(scan: Scan, draft: Draft) -> None:
    """A per-user speed target and a speed question; the number of a target is used here."""
    _cost_unit(scan, draft)
    if _TRIGGERS.isdisjoint(scan.words):
        return  # nothing of speed in the question (one set look, no loop)
    low = scan.low
    for i, token in enumerate(low):
        if not scan.free(i):
            continue
        value = _number(token)
        if value is not None:
            length = _rate_length(scan, i + 1)
            if length:
                _take_target(scan, draft, i, length, value)
            continue
        if token in _SPEED_WORDS:
            if token == "schnell" and draft.model is not None and not draft.model.is_language_model:
                continue  # FLUX.1 [schnell] names a model variant, not a question about speed
            scan.use(i, 1)
            draft.speed_asked = True
        elif token in _RATE_UNITS and _rate_length(scan, i):  # "tokens/s for 20 users": asked, no target
            scan.use(i, _rate_length(scan, i))
            draft.speed_asked = True
        elif token in _FIRST and scan.next_free(i + 1) == "token":  # "time to first token", "erstes Token"
            start = i
            while start > 0 and scan.next_free(start - 1) in _TIME_TO:  # "time to", "Zeit bis zum"
                start -= 1
            scan.use(start, i + 2 - start)
            draft.speed_asked = True
    if draft.speed_asked:  # "for a 32k prompt": the prompt is the context the first token waits for
        for i, token in enumerate(low):
            if token in _PROMPT_WORDS and scan.free(i):
                scan.use(i, 1)


def _take_target(scan: Scan, draft: Draft, i: int, length: int, value: float) -> None:
    first, last = i, i + 1 + length
    before = scan.next_free(i - 1) if i > 0 else None
    if before in _AT_LEAST_WORDS:
        first = i - 1
        if before == "least" and scan.next_free(i - 2) == "at":
            first = i - 2
    elif before == "at":
        first = i - 1
    # "each", "per user", "pro Nutzer"
    after = scan.next_free(last)
    if after in _EACH:
        last += 1
    elif after in _PER and scan.next_free(last + 1) in _USER_WORDS:
        last += 2
    scan.use(first, last - first)
    if not 0 < value <= _MAX_TARGET:
        draft.ignored.append(scan.span(first, last - 1))
        return
    if draft.target_tok_s is None:
        draft.target_tok_s = value
        draft.speed_asked = True
        draft.assumed.append(Note(f"speed target: at least {value:g} tokens/s per user", "speed_target",
                                  tok_s=value))
    elif draft.target_tok_s != value:
        draft.ignored.append(scan.span(first, last - 1))


def read_training_job(scan: Scan, draft: Draft) -> None:
    """'on 50M tokens', '3 epochs': what a training job trains on (engine.speed.training prices it)."""
    low = scan.low
    if _TRAINING_WORDS.isdisjoint(scan.words):
        return  # "128k tokens" in an inference question is its context
    epochs_named = not _EPOCH_WORDS.isdisjoint(scan.words)
    for i, token in enumerate(low):
        if not scan.free(i):
            continue
        if token in _TRAINER_WORDS:
            scan.use(i, 1)
            continue
        if token == "zero" and i + 1 < len(low) and low[i + 1] in ("2", "3") and scan.free(i + 1):
            scan.use(i, 2)  # "ZeRO-3"
            continue
        if token == "w" and i + 1 < len(low) and low[i + 1] in _TRAINER_WORDS:
            scan.use(i, 1)  # "w/ deepspeed"
            continue
        match = _TOKEN_COUNT.match(token)
        # "on 50M tokens" or with epochs named: a dataset; "LoRA ... 1M tokens" alone stays a context length
        if match and scan.next_free(i + 1) in ("tokens", "token", "tok") \
                and (epochs_named or i > 0 and low[i - 1] in _DATASET_BEFORE or match.group(2) in _BILLIONS):
            tokens = float(match.group(1).replace(",", ".")) * _TOKEN_SCALE[match.group(2)]
            if tokens >= 1e5 and draft.train_tokens is None:  # a dataset, not a context window
                draft.train_tokens = tokens
                scan.use(i, 2)
            continue
        value = _number(token)
        if value is not None and scan.next_free(i + 1) in _EPOCH_WORDS and draft.epochs is None and 0 < value <= 1000:
            draft.epochs = value
            scan.use(i, 2)
