"""The request being filled while a question is read: its fields, what was assumed, what was ignored.

One value per field: the first value read wins; a second, different one is listed in `ignored`, never silently
dropped. A nonsense value ("0B", "batch 0") raises BadValue with the error note.
"""
from __future__ import annotations

import math
from collections.abc import Collection

from engine.models.registry import ModelShape
from engine.notes import Note
from engine.parse.errors import (
    MAX_BUDGET_GB,
    MAX_GPU_COUNT,
    BadValue,
    UnknownName,
    batch_error,
    budget_error,
    context_error,
    gpu_count_error,
    precision_error,
    size_error,
    size_too_small_error,
)
from engine.parse.numbers import shown, whole
from engine.parse.words import SIZE_UNITS, UNSIZED, WORKLOAD_RANK
from engine.sizing.rule import KV_PRECISION_BYTES, MAX_PARAMS_B, MIN_PARAMS_B, SizeRequest
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS

MAX_IGNORED = 20


def _check_size(params_b: float, written: str) -> None:
    """Sizes the engine accepts (engine.sizing.rule.MIN_PARAMS_B..MAX_PARAMS_B); `written` names the value in
    the error."""
    if not math.isfinite(params_b) or params_b <= 0 or params_b > MAX_PARAMS_B:
        raise BadValue(size_error(written))
    if params_b < MIN_PARAMS_B:
        raise BadValue(size_too_small_error(written))


class Draft:
    """A SizeRequest in the making; values the user did not give stay None (the engine fills in defaults)."""

    __slots__ = ("model", "model_note", "ambiguous", "ambiguous_span", "unknown", "params_b", "precision",
                 "kv_precision", "context_tokens", "batch", "workload", "card", "gpu_count", "budget_gb", "region",
                 "assumed", "ignored", "intent", "billing", "coin", "cheapest", "count_implied", "second_card",
                 "compare_card", "card_vram_gb", "quant", "rope_scaling", "budget_usd", "billing_span",
                 "flag_gpu_count", "gpu_memory_utilization", "checkpoint", "launch_engine", "family",
                 "honoured_flags", "target_tok_s", "speed_asked", "prompt_tokens", "train_tokens", "epochs", "engine",
                 "engine_word")

    def __init__(self) -> None:
        self.model: ModelShape | None = None
        self.model_note: Note | None = None
        self.ambiguous: list[ModelShape] = []  # a model name that could be several ("llama 3.1"), until a size decides
        self.ambiguous_span = ""
        self.unknown: UnknownName | None = None  # until the size is known: sized as a generic model, or asked
        self.params_b: float | None = None
        self.precision: str | None = None
        self.kv_precision: str | None = None
        self.context_tokens: int | None = None
        self.batch: int | None = None
        self.workload: str | None = None
        self.card: str | None = None
        self.gpu_count: int | None = None
        self.budget_gb: float | None = None
        self.region: str | None = None
        self.assumed: list[str] = []
        self.ignored: list[str] = []
        # What kind of answer and how it is paid (engine.parse.talk; DESIGN.md "Contract v2")
        self.intent: str | None = None
        self.billing: str | None = None
        self.coin: str | None = None
        self.cheapest = False
        self.count_implied = False  # the count 1 came from an article ("a B200"), not a number
        self.second_card: str | None = None  # the second card named: compared with the first, or ignored
        self.compare_card: str | None = None
        self.card_vram_gb: float | None = None  # the card's own memory as written ("A100 40GB")
        self.quant: str | None = None  # a named weight format, canonical (engine.formats.quant.quant_name)
        self.rope_scaling: str | None = None  # "yarn": the user extends the window (engine.parse.runtime)
        self.budget_usd: float | None = None  # "under $1000/mo": money for the billing period (engine.parse.talk)
        self.billing_span: int | None = None  # "for 2 weeks": how many billing periods (engine.parse.talk)
        self.flag_gpu_count: tuple[int, str] | None = None  # "-tp 2", until the cards pass has read its count
        self.gpu_memory_utilization: float | None = None  # "--gpu-memory-utilization 0.85" (engine.parse.flags)
        self.checkpoint: str | None = None  # a published quantized repo named whole (engine.parse.repos)
        self.family: str | None = None  # "largest qwen": the family word an open question is about (request.model)
        self.honoured_flags: list[str] = []  # the runtime flags read as what they set (engine.parse.flags)
        self.launch_engine: str | None = None  # "vllm serve ...", "llama-server ...": its engine (engine.parse.launch)
        self.target_tok_s: float | None = None  # "at ≥ 15 tok/s each" (engine.parse.speed)
        self.speed_asked = False  # "how fast", "tokens/s", "time to first token" (engine.parse.speed)
        self.prompt_tokens: int | None = None  # the prompt a TTFT is for (today: the context; set by front ends)
        self.train_tokens: float | None = None  # "on 50M tokens" (engine.parse.speed)
        self.epochs: float | None = None  # "3 epochs" (engine.parse.speed)
        # The engine named in plain words ("with llama.cpp", "in LM Studio"): the one whose check runs, or None for
        # an engine Cardfit has no check for; `engine_word` the engine as named (engine.parse.launch)
        self.engine: str | None = None
        self.engine_word: str | None = None

    # ---- model and card (the first one named wins; the passes list later ones)

    def set_model(self, model: ModelShape, note: Note | None = None) -> None:
        """`note`: how it was read, when it was not named exactly (also listed in `assumed`)."""
        self.model = model
        if note is not None:
            self.model_note = note
            self.assumed.append(note)

    def set_ambiguous(self, models: list[ModelShape], span: str) -> None:
        self.ambiguous = models
        self.ambiguous_span = span

    def set_moe_model(self, model: ModelShape, token: str) -> None:
        """'8x7b' names a registry model (Mixtral 8x7B)."""
        self.model = model
        self.model_note = Note(f"{model.name} (assumed from '{token}')", "model_fuzzy", model=model.name, span=token)
        self.assumed.append(Note(f"{token} read as {model.name}", "moe_model", written=token, model=model.name))

    def take_card(self, name: str) -> bool:
        """The first card named is the card; a later one is listed as ignored. True when this one was taken."""
        if self.card is None:
            self.card = name
            return True
        if self.second_card is None and name != self.card:
            self.second_card = name
        self.ignored.append(name)
        return False

    def set_compare(self) -> None:
        """The second card named is compared with the first (not ignored)."""
        if self.second_card is not None:
            self.intent = "compare"
            self.compare_card = self.second_card
            self.ignored = [entry for entry in self.ignored if entry != self.second_card]

    # ---- values (first value wins; nonsense raises)

    def set_size(self, value: float, digits: str, unit: str) -> None:
        factor = SIZE_UNITS[unit]
        params = value * factor
        # "500 million" and "360M" carry their own unit
        label = "T" if factor == 1000 else "" if " " in digits or not digits[-1:].isdigit() else "B"
        if not MIN_PARAMS_B <= params <= MAX_PARAMS_B:  # also NaN: only then is the error's text written
            _check_size(params, f"{shown(digits)}{label}")
        if self.params_b is None:
            self.params_b = params
            if factor == 1000:
                self.assumed.append(Note(f"{digits}{label} read as {params:,g}B parameters", "trillion",
                                         written=f"{digits}{label}", params=params))
        elif abs(self.params_b - params) > 1e-9:
            self.ignored.append(f"{digits}{label}")

    def set_moe_params(self, experts: int, expert_b: float, token: str) -> None:
        """'8x5b' that names no registry model: sized as experts x expert size."""
        params = experts * expert_b
        _check_size(params, shown(token))
        if self.params_b is not None:
            if abs(self.params_b - params) > 1e-9:
                self.ignored.append(token)
            return
        self.params_b = params
        self.assumed.append(Note(
            f"{token} read as {experts} x {expert_b:g}B = {params:g}B (not in the model registry; "
            "shared layers make a real mixture-of-experts model smaller)",
            "moe_params", written=token, experts=experts, expert_b=expert_b, params=params,
        ))

    def set_precision(self, value: str, written: str, note: str | None) -> None:
        if value == UNSIZED:
            raise BadValue(precision_error(shown(written)))
        if self.quant is not None and self.precision is None:  # "q5_k_m ... bf16": the format came first
            self.ignored.append(written.lower())
            return
        if self.precision is None:
            self.precision = value
            if note:
                self.assumed.append(note)
        elif self.precision != value:
            self.ignored.append(written.lower())

    def set_format(self, precision: str | None, quant: str, written: str, note: str | None = None) -> None:
        """A named format ('Q4_K_M', 'awq'); `precision` the seed precision the word also is (awq: int4), or None.
        Format and precision are one value: a format after another format or another precision is ignored."""
        if self.quant is not None or (self.precision is not None and self.precision != precision):
            if self.quant != quant:
                self.ignored.append(written.lower())
            return
        self.quant = quant
        if precision is not None:
            self.precision = precision
        if note:
            self.assumed.append(note)

    def set_kv_precision(self, value: str, written: str) -> None:
        if value not in KV_PRECISION_BYTES:
            self.ignored.append(f"KV cache {written} (use fp16, bf16, fp8 or int8)")
            return
        if self.kv_precision is None:
            self.kv_precision = value
        elif self.kv_precision != value:
            self.ignored.append(f"KV cache {written}")

    def set_context(self, tokens: float, written: str) -> None:
        """`written` is the value as the user wrote it ('10M', '-32k', '32 000'): errors and ignored show it."""
        count = whole(tokens) if math.isfinite(tokens) else None
        if count is None or not 0 < count <= MAX_CONTEXT_TOKENS:
            raise BadValue(context_error(shown(written), count))
        if self.context_tokens is None:
            self.context_tokens = count
        elif self.context_tokens != count:
            self.ignored.append(shown(written))  # "8k or 32k": the second value is not used, and says so

    def set_batch(self, value: float, written: str) -> None:
        count = whole(value)
        if count is None or not 0 < count <= MAX_BATCH:
            raise BadValue(batch_error(shown(written)))
        if self.batch is None:
            self.batch = count
        elif self.batch != count:
            self.ignored.append(f"batch {shown(written)}")

    def set_workload(self, workload: str) -> None:
        """The most specific workload named wins: 'fine-tune with QLoRA' is QLoRA."""
        if self.workload is None or WORKLOAD_RANK[workload] > WORKLOAD_RANK[self.workload]:
            self.workload = workload

    def set_budget(self, gb: float, written: str, unit: str, product: bool = False) -> None:
        if not math.isfinite(gb) or not 0 < gb <= MAX_BUDGET_GB:
            raise BadValue(budget_error(shown(written)))
        if self.budget_gb is not None:
            if abs(self.budget_gb - gb) > 1e-9:
                self.ignored.append(shown(written))
            return
        self.budget_gb = gb
        if unit == "gib":
            self.assumed.append(Note(f"{written} read as {gb:.1f} GB (1 GiB = 1.074 GB)", "gib", written=written,
                                     budget_gb=gb))
        elif product:
            self.assumed.append(Note(f"{written} read as a {gb:g} GB budget", "budget_product", written=written,
                                     budget_gb=gb))

    def set_gpu_count(self, count: int, written: str | None = None) -> None:
        if not 1 <= count <= MAX_GPU_COUNT:
            raise BadValue(gpu_count_error(written if written is not None else str(count)))
        if self.gpu_count is None:
            self.gpu_count = count
        elif self.gpu_count != count:
            self.ignored.append(f"{written if written is not None else count} GPUs")

    def set_region(self, region: str, written: str) -> None:
        if self.region is None:
            self.region = region
        elif self.region != region:
            self.ignored.append(written)

    # ---- the result

    def is_question(self) -> bool:
        """A model or a size, or a card or memory budget with something to do on it ('QLoRA on an H100')."""
        return (
            self.model is not None
            or self.params_b is not None
            or ((self.card is not None or self.budget_gb is not None)
                and (self.workload is not None or self.precision is not None))
            or (self.intent == "price" and self.card is not None)
            or (self.intent == "biggest_model" and (self.card is not None or self.budget_gb is not None
                                                    or self.budget_usd is not None))
        )

    def sets_anything(self) -> bool:
        """Whether the text set any field at all: what a follow-up ("and in fp8?", "per day") changes."""
        values = (self.model, self.params_b, self.precision, self.kv_precision, self.context_tokens, self.batch,
                  self.workload, self.card, self.gpu_count, self.budget_gb, self.region, self.billing, self.coin,
                  self.budget_usd, self.quant)  # a format with no seed precision ('UD-IQ1_S') is a change too
        return any(value is not None for value in values) or self.cheapest or self.rope_scaling is not None \
            or self.gpu_memory_utilization is not None or self.intent in ("max_context", "max_batch") \
            or self.speed_asked or self.train_tokens is not None or self.epochs is not None \
            or self.engine is not None

    def list_leftovers(self, leftovers: Collection[str]) -> None:
        """`ignored` without repeats, then the words no pass used (at most MAX_IGNORED entries, then a count)."""
        if not self.ignored and not leftovers:
            return
        seen: set[str] = set()
        unique = []
        for entry in self.ignored:
            if entry not in seen:
                seen.add(entry)
                unique.append(entry)
        self.ignored = unique[:MAX_IGNORED]
        extra = max(0, len(unique) - MAX_IGNORED)
        for token in leftovers:
            if token in seen:
                continue
            if len(self.ignored) >= MAX_IGNORED:
                extra += 1
                continue
            seen.add(token)
            self.ignored.append(shown(token))
        if extra:
            self.ignored.append(f"... ({extra} more)")

    def request(self) -> SizeRequest:
        # positional, in SizeRequest's field order (a call with 21 keywords costs more than the rest of this)
        model = self.model
        return SizeRequest(
            model.id if model else self.family, self.params_b, self.precision, self.kv_precision, self.context_tokens,
            self.batch, self.workload, self.card, self.gpu_count, self.budget_gb, self.region, self.assumed,
            self.ignored, self.intent, self.billing, self.coin, self.cheapest, self.count_implied, self.compare_card,
            self.card_vram_gb, False, self.quant, self.rope_scaling, self.budget_usd, self.billing_span,
            self.gpu_memory_utilization, self.checkpoint, self.target_tok_s, self.speed_asked, self.prompt_tokens,
            self.train_tokens, self.epochs, self.launch_engine or self.engine,
        )
