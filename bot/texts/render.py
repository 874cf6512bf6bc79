"""Reply texts built from engine answers: one HTML renderer shared by Telegram, the terminal chat and the CLI."""
from __future__ import annotations

import html
import re
from typing import Any

from bot.texts.i18n import fmt_gb, fmt_number, fmt_tokens, fmt_usd, localize_digits, params_label, t
from bot.texts.render_serving import (
    ENGINE_NAMES,
    alternative_mark,
    capacity_lines,
    fit_serving_lines,
    instead_mark,
    rule_pick_lines,
    short_context,
)
from catalog.schema import Card, Catalog
from engine.answer.advice import PrecisionHint
from engine.answer.build import Answer
from engine.fit.selection import Layout, same_layout
from engine.fit.topup import period_prices
from engine.formats.precision import precision_label
from engine.formula import formula_number
from engine.models.registry import ShapeSummary
from engine.notes import Note
from engine.sizing.rule import Component, Requirement, ResolvedRequest
from engine.speed.layout import layout_speed
from engine.speed.training import RANGE_HIGH as JOB_HIGH
from engine.speed.training import RANGE_LOW as JOB_LOW

TELEGRAM_LIMIT = 4096  # a message's text; both limits are UTF-16 code units after entity parsing
CAPTION_LIMIT = 1024  # a photo's caption (core.telegram.org/bots/api#sendphoto)
esc = html.escape


def _layout_name(layout: Layout) -> str:
    return esc(f"{layout.count}x {layout.card.name}")


def _vram(lang: str, layout: Layout) -> str:
    return fmt_gb(lang, layout.vram_gb, None)


def _precision_label(resolved: ResolvedRequest) -> str:
    """The weights' precision, or the named format they are sized in ("Q4_K_M", "EXL2 4.65bpw")."""
    return resolved.quant.label if resolved.quant is not None else precision_label(resolved.precision)


def localize(lang: str, note: str, *, resolved: ResolvedRequest | None = None) -> str:
    """An engine note (what was assumed, why a layout fails, why a card was chosen) in the reader's language,
    HTML-escaped. Notes carry a code and values (engine.notes.Note); values named *_gb are formatted as GB,
    `tokens` as a token count, `workload` by its name, `field` (a setting) with the value it filled, a shape
    as describe_shape words it, lists joined. A plain string falls back to the English sentence."""
    if not isinstance(note, Note):
        return esc(str(note))
    values: dict[str, str] = {}
    for name, value in note.values.items():
        if isinstance(value, Note):
            values[name] = localize(lang, value, resolved=resolved)
        elif name.endswith("_usd") and isinstance(value, (int, float)):
            values[name] = fmt_usd(lang, value)
        elif name.endswith("_gb") and isinstance(value, (int, float)):
            values[name] = fmt_gb(lang, value, None)
        elif isinstance(value, ShapeSummary):
            values[name] = describe_shape(value, lang)
        elif name == "problems" and isinstance(value, (list, tuple)):
            values[name] = "; ".join(localize(lang, item) for item in value)
        elif name == "workload":
            values[name] = esc(t(lang, f"workload.{value}"))
        elif name in ("tokens", "max_tokens") and isinstance(value, int):
            values[name] = fmt_tokens(lang, value)
        elif name == "field":
            values["item"] = _setting_item(lang, str(value), resolved)
        elif name == "models" and isinstance(value, (list, tuple)):
            values[name] = esc(", ".join(str(item) for item in value))
        elif isinstance(value, (list, tuple)):
            values[name] = esc("/".join(str(item) for item in value))
        elif isinstance(value, float):
            values[name] = fmt_number(lang, value, None)
        elif isinstance(value, int) and not isinstance(value, bool):
            values[name] = fmt_number(lang, value, 0)
        else:
            values[name] = esc(str(value))
    return t(lang, f"note.{note.code}", **values)


def _setting_item(lang: str, field: str, resolved: ResolvedRequest | None) -> str:
    """How a value filled from the user's settings reads in the request line."""
    if resolved is None:
        return esc(field)
    if field == "precision":
        return esc(precision_label(resolved.precision))
    if field == "kv_precision":
        return esc(t(lang, "request.kv", kv=precision_label(resolved.kv_precision)))
    if field == "context_tokens":
        return esc(t(lang, "request.context", tokens=fmt_tokens(lang, resolved.context_tokens)))
    if field == "batch":
        return esc(t(lang, "request.batch", batch=resolved.batch))
    return esc(str(resolved.region or field))


def describe_shape(shape: ShapeSummary, lang: str) -> str:
    """An attention shape (engine.models.registry.ShapeSummary) in the reader's language ("80 layers, GQA 8 KV heads,
    head dim 128")."""
    if shape.kind == "unknown":
        return t(lang, "shape.unknown")
    if shape.kind == "mla":
        return t(lang, "shape.mla", layers=shape.layers, rank=shape.mla_rank, rope=shape.mla_rope)
    text = t(lang, f"shape.{shape.kind}", layers=shape.layers, kv=shape.kv_heads, dim=shape.head_dim)
    if shape.window_tokens:
        text += t(lang, "shape.window", count=shape.window_layers, window=fmt_number(lang, shape.window_tokens, 0))
    if shape.global_layers:
        text += t(lang, "shape.global", count=shape.global_layers, kv=shape.global_kv_heads, dim=shape.global_head_dim)
    return text


def render_request(answer: Answer, lang: str) -> list[str]:
    """The request as understood, what was assumed, and what was not understood."""
    resolved = answer.resolved
    assert resolved is not None
    shape = resolved.shape
    parts = [f"<b>{esc(shape.name)}</b>"]
    if shape.typical:
        parts[0] = f"<b>{esc(params_label(lang, resolved.params_b))}</b>"
    if resolved.weight_bytes is None and shape.published_weights is not None:
        parts.append(esc(t(lang, "request.published", format=shape.published_weights.format.upper())))
    elif resolved.workload == "qlora":
        parts.append("NF4")
    elif resolved.workload != "full":
        parts.append(esc(_precision_label(resolved)))
    asks_context = answer.capacity is not None and answer.capacity.kind == "max_context"
    # a context or users named stay in the header where the KV cache cannot be sized (an attention shape not
    # published): "DeepSeek V4 Flash with 1M context" is still answered at 1M, with the cache said left out
    named = resolved.workload == "inference" and shape.is_language_model \
        and (resolved.context_named or resolved.batch_named)
    if resolved.sequence_matters or named:
        if not asks_context:  # "max context on an H200": the context is the answer, not an input
            parts.append(esc(t(lang, "request.context", tokens=fmt_tokens(lang, resolved.context_tokens))))
        parts.append(esc(t(lang, "request.batch", batch=resolved.batch)))
    if resolved.region:
        parts.append(esc(resolved.region))
    parts.append(esc(t(lang, f"workload.{resolved.workload}")))
    return [" · ".join(parts), *_notes_lines(answer, lang, resolved)]


def render_formula(component: Component, lang: str) -> str:
    """A component's working in the reader's language: `formula.<code>` with the engine's digits for each value
    (engine.formula.formula_number, as in the JSON formula) and the locale's separators. Not escaped."""
    values = {name: value if isinstance(value, str) else localize_digits(lang, formula_number(name, value))
              for name, value in component.values.items()}
    return t(lang, f"formula.{component.code}", **values)


def render_requirement(requirement: Requirement, lang: str, details: bool) -> list[str]:
    if requirement.low_gb is not None:
        lines = [t(lang, "answer.memory_range", low=fmt_gb(lang, requirement.low_gb),
                   total=fmt_gb(lang, requirement.total_gb))]
    else:
        lines = [t(lang, "answer.memory", total=fmt_gb(lang, requirement.total_gb))]
    if details:
        for component in requirement.components:
            formula = render_formula(component, lang)
            lines.append(f"• {esc(t(lang, f'component.{component.name}'))}: <code>{esc(formula)}</code>")
    else:
        lines.append(" · ".join(
            f"{esc(t(lang, f'component.{c.name}'))} {fmt_gb(lang, c.gb)}" for c in requirement.components
        ))
    return lines


def _price_line(lang: str, layout: Layout, catalog: Catalog, billing: str | None = None) -> str:
    """Hourly and monthly prices, and the price for the billing period asked for when it is a day or a week."""
    line = t(lang, "answer.price", hourly=fmt_usd(lang, layout.hourly_usd), monthly=fmt_usd(lang, layout.monthly_usd))
    if billing in ("day", "week"):
        amount = period_prices(catalog, layout.hourly_usd, layout.monthly_usd)[billing]
        line += t(lang, "talk.period_price", amount=fmt_usd(lang, amount), period=t(lang, f"talk.per.{billing}"))
    percent = catalog.discount_percent(layout.count)
    if percent:
        line += t(lang, "answer.price_discount", percent=fmt_number(lang, percent, 0))
    return line


def _fit_lines(answer: Answer, layout: Layout, lang: str, details: bool) -> list[str]:
    spare = fmt_gb(lang, layout.spare_gb)
    line = t(lang, "answer.fits", layout=_layout_name(layout), vram=_vram(lang, layout), spare=spare)
    if layout.tight:
        line += t(lang, "answer.tight")
    lines = [line, _price_line(lang, layout, answer.catalog, answer.billing)]
    job = answer.job
    if job is not None and answer.fit is not None and same_layout(layout, answer.fit):
        job_key = "answer.job_one_epoch" if job.epochs == 1 else "answer.job"  # "(1B × 1 epoch)"
        lines.append(t(lang, job_key, tokens=fmt_count(lang, job.tokens * job.epochs),
                       epoch_tokens=fmt_count(lang, job.tokens), epochs=fmt_number(lang, job.epochs, None),
                       tok_s=fmt_number(lang, job.tokens_per_s, 0), gpu_hours=fmt_number(lang, job.gpu_hours, 1),
                       low=fmt_number(lang, job.gpu_hours * JOB_LOW, 1),
                       high=fmt_number(lang, job.gpu_hours * JOB_HIGH, 1), hours=fmt_number(lang, job.hours, 1),
                       price=fmt_usd(lang, job.price_usd)))
    asked = answer.request.speed_asked or answer.request.target_tok_s is not None
    lines.extend(speed_lines(lang, layout, details or asked))
    if asked:
        lines.extend(speed_cost_lines(answer, layout, lang))
    if layout.per_gpu is not None and (details or layout.fits_total_not_per_gpu):
        per = layout.per_gpu
        lines.append(t(lang, "answer.per_gpu", weights=fmt_gb(lang, per.weights_gb), kv=fmt_gb(lang, per.kv_cache_gb),
                       other=fmt_gb(lang, per.other_gb), total=fmt_gb(lang, per.total_gb),
                       vram=fmt_gb(lang, layout.card.vram_gb, 0)))
    return lines


ENGINE_LABELS = {"vllm": "vLLM", "llama.cpp": "llama.cpp"}


def speed_lines(lang: str, layout: Layout, details: bool) -> list[str]:
    """The calibrated speed (engine.speed): one stream, each of the request's users, prompt and first token; the
    bandwidth ceiling only in Details."""
    speed = layout.speed
    if speed is None:
        return []
    engine = ENGINE_LABELS.get(speed.engine, speed.engine)
    if speed.basis == "measured" and speed.measured_tok_s is not None and speed.measured_context_tokens is not None:
        line = t(lang, "answer.decode_measured", tps=fmt_number(lang, speed.decode_tok_s, 0),
                 run=fmt_number(lang, speed.measured_tok_s, 0), engine=engine,
                 context=fmt_number(lang, speed.measured_context_tokens, 0), source=esc(speed.source or ""))
    else:
        line = t(lang, "answer.decode", tps=fmt_number(lang, speed.decode_tok_s, 0),
                 low=fmt_number(lang, speed.low, 0), high=fmt_number(lang, speed.high, 0), engine=engine)
    if speed.users > 1:
        line += t(lang, "answer.decode_users", users=speed.users,
                  per_user=fmt_number(lang, speed.decode_tok_s_per_user, 0),
                  aggregate=fmt_number(lang, speed.aggregate_tok_s, 0))
    lines = [line]
    if details:
        if speed.prefill_tok_s is not None and speed.ttft_s is not None:
            lines.append(t(lang, "answer.decode_prefill", prefill=fmt_number(lang, speed.prefill_tok_s, 0),
                           ttft=fmt_number(lang, speed.ttft_s, 1), prompt=fmt_number(lang, speed.prompt_tokens, 0)))
        else:  # a card without a sourced dense TFLOPS figure: said, not a missing line (as the ⚡ Speed view does)
            lines.append(t(lang, "speed.no_tflops", card=esc(layout.card.name)))
        lines.append(t(lang, "answer.decode_ceiling", tps=fmt_number(lang, speed.ceiling_decode_tok_s, 0)))
    return lines


def _named_layout_lines(answer: Answer, fit: Layout, recommended: Layout | None, lang: str,
                        details: bool) -> list[str]:
    """After "✅ Yes"/"❌ No" on a named layout: its price and speed, then a cheaper layout or what to rent instead."""
    lines = []
    shown = fit if fit.valid else None
    if shown is not None:
        lines.extend(_fit_lines(answer, shown, lang, details)[1:])
    if recommended is not None and (shown is None or recommended.monthly_usd < shown.monthly_usd):
        # After "✅ Yes" a cheaper layout is no refusal: "Cheaper:" ("Günstiger:"), not "Instead:".
        key = "answer.instead" if shown is None else "answer.cheaper"
        lines.append(t(lang, key, layout=_layout_name(recommended), vram=_vram(lang, recommended),
                       monthly=fmt_usd(lang, recommended.monthly_usd),
                       hourly=fmt_usd(lang, recommended.hourly_usd)) + instead_mark(answer, recommended, lang))
        if shown is None:
            lines.extend(_instead_speed_lines(answer, recommended, lang))
    return lines


def _instead_speed_lines(answer: Answer, layout: Layout, lang: str) -> list[str]:
    """"How fast is X on Y" where Y cannot run it: the speed of what to rent instead."""
    if not answer.request.speed_asked and answer.request.target_tok_s is None:
        return []
    return [*speed_lines(lang, layout, True), *speed_cost_lines(answer, layout, lang)]


def fmt_count(lang: str, value: float) -> str:
    """150,000,000 -> '150M' (English) / '150 Mio.' (German); below a million as a plain number."""
    for scale, en, de in ((1e9, "B", " Mrd."), (1e6, "M", " Mio.")):
        if value >= scale:
            return fmt_number(lang, value / scale, None) + (de if lang == "de" else en)
    return fmt_number(lang, value, 0)


def speed_cost_lines(answer: Answer, layout: Layout, lang: str) -> list[str]:
    """$ per 1M output tokens at the request's users and at 32, and the speed target's outcome."""
    lines = []
    speed = layout.speed
    if speed is not None and answer.resolved is not None and answer.requirement is not None:
        full = layout_speed(layout.card, layout.count, answer.resolved, answer.requirement, engine=speed.engine,
                            users=32)
        if full is not None and speed.aggregate_tok_s > 0:
            lines.append(t(lang, "answer.speed_cost" if speed.users > 1 else "answer.speed_cost_one", users=speed.users,
                           usd=fmt_usd(lang, usd_per_million(layout.hourly_usd, speed.aggregate_tok_s)),
                           usd_full=fmt_usd(lang, usd_per_million(layout.hourly_usd, full.aggregate_tok_s))))
    target = answer.target
    if target is not None and target.layout is not None and target.per_user_tok_s is not None:
        key = "answer.speed_target_met" if target.met else \
            ("answer.speed_target_named_missed" if target.layout.valid else "answer.speed_target_named_not_running") \
            if target.named else "answer.speed_target_missed"
        who = t(lang, "answer.speed_target_who" if target.users > 1 else "answer.speed_target_who_one",
                users=target.users)
        lines.append(t(lang, key, target=fmt_number(lang, target.target_tok_s, None), who=who,
                       layout=_layout_name(target.layout), tps=fmt_number(lang, target.per_user_tok_s, 0)))
    return lines


SPEED_USERS = (1, 8, 32)


def speed_detail(answer: Answer, lang: str) -> str | None:
    """The ⚡ Speed button's message: the answer's layout at 1, 8 and 32 users (per user, in all, $ per 1M output
    tokens), prompt speed and time to first token at the request's context, and the ceiling."""
    where = answer.serving_layout
    resolved, requirement = answer.resolved, answer.requirement
    speed = answer.speed()
    if where is None or resolved is None or requirement is None or speed is None or answer.fit is None:
        return None
    card, count = where
    hourly = answer.fit.hourly_usd
    lines = [t(lang, "speed.title", layout=esc(f"{count}x {card.name}"),
               engine=ENGINE_LABELS.get(speed.engine, speed.engine),
               context=fmt_tokens(lang, resolved.context_tokens)), ""]
    for users in SPEED_USERS:
        at = layout_speed(card, count, resolved, requirement, engine=speed.engine, users=users)
        if at is None:
            continue
        lines.append(t(lang, "speed.row", users=users, per_user=fmt_number(lang, at.decode_tok_s_per_user, 0),
                       low=fmt_number(lang, at.decode_tok_s_per_user * at.low / at.decode_tok_s, 0),
                       high=fmt_number(lang, at.decode_tok_s_per_user * at.high / at.decode_tok_s, 0),
                       aggregate=fmt_number(lang, at.aggregate_tok_s, 0),
                       usd=fmt_usd(lang, usd_per_million(hourly, at.aggregate_tok_s))))
    if speed.prefill_tok_s is not None and speed.ttft_s is not None:
        lines.append(t(lang, "answer.decode_prefill", prefill=fmt_number(lang, speed.prefill_tok_s, 0),
                       ttft=fmt_number(lang, speed.ttft_s, 1), prompt=fmt_number(lang, speed.prompt_tokens, 0)))
    else:
        lines.append(t(lang, "speed.no_tflops", card=esc(card.name)))
    lines.append(t(lang, "answer.decode_ceiling", tps=fmt_number(lang, speed.ceiling_decode_tok_s, 0)))
    lines.append("<i>" + t(lang, "speed.basis") + "</i>")
    return clip("\n".join(lines))


def usd_per_million(hourly_usd: float, tok_s: float) -> float:
    """The hourly price over an hour's output tokens, per million."""
    return hourly_usd / (tok_s * 3600) * 1e6


def _alternative_line(lang: str, layout: Layout) -> str:
    extra = ""
    if layout.speed is not None and layout.speed.users > 1:
        # several users asked for: each one's speed, the figure the 🎯 and 📏 lines compare with the target
        extra = t(lang, "answer.alternative_decode_each",
                  tps=fmt_number(lang, layout.speed.decode_tok_s_per_user, 0))
    elif layout.speed is not None:
        extra = t(lang, "answer.alternative_decode", tps=fmt_number(lang, layout.speed.decode_tok_s, 0))
    if layout.tight:
        extra += t(lang, "answer.tight")
    return t(lang, "answer.alternative", layout=_layout_name(layout), vram=_vram(lang, layout),
             monthly=fmt_usd(lang, layout.monthly_usd), hourly=fmt_usd(lang, layout.hourly_usd), extra=extra)


def _hint_line(lang: str, hint: PrecisionHint) -> str:
    return t(lang, "answer.quantize_hint", total=fmt_gb(lang, hint.requirement.total_gb),
             layout=_layout_name(hint.layout), spare=fmt_gb(lang, hint.layout.spare_gb),
             precision=precision_label(hint.precision))


def render_answer(answer: Answer, lang: str, *, details: bool = False, max_alternatives: int = 2) -> str:
    """The whole reply for one sizing question (HTML, under Telegram's 4,096 characters)."""
    if answer.error:
        return t(lang, "error.value", message=esc(answer.error))
    if answer.intent == "price":
        return render_price(answer, lang)
    if answer.intent == "biggest_model":
        topup = ["", _topup_line(answer, lang)] if answer.topup_url and answer.topup_amount_usd is not None else []
        return clip("\n".join([*capacity_lines(answer, lang), *_notes_lines(answer, lang), *topup]))
    if answer.compare is not None:
        return render_compare(answer, lang)
    if answer.capacity is not None:
        return _render_capacity(answer, lang)
    return _render_size(answer, lang, details, max_alternatives)


def _render_capacity(answer: Answer, lang: str, *, compact: bool = False) -> str:
    """A reverse question (longest context, requests at once) answered alone: its figures for the layout, then
    only what agrees with them -- that layout's price and top-up when it runs, else the cheapest layout that runs
    the model. No sizing at the default context: its "✅"/"❌" would answer a question nobody asked."""
    assert answer.capacity is not None and answer.selection is not None
    lines = render_request(answer, lang)[:1] if compact else [*render_request(answer, lang), ""]
    note_text = lambda note: localize(lang, note, resolved=answer.resolved)  # noqa: E731
    lines.extend(capacity_lines(answer, lang, note_text))
    layout = answer.capacity_layout
    if layout is not None:
        lines.append(_price_line(lang, layout, answer.catalog, answer.billing))
    else:
        recommended = answer.selection.recommended
        capacity = answer.capacity
        if recommended is not None and not (recommended.card.name == capacity.card
                                            and recommended.count == capacity.count):
            lines.append(t(lang, "answer.instead", layout=_layout_name(recommended), vram=_vram(lang, recommended),
                           monthly=fmt_usd(lang, recommended.monthly_usd),
                           hourly=fmt_usd(lang, recommended.hourly_usd)) + instead_mark(answer, recommended, lang))
    if answer.topup_url and answer.topup_amount_usd is not None:
        lines.extend([_topup_line(answer, lang)] if compact else ["", _topup_line(answer, lang)])
    return clip("\n".join(lines))


def _render_size(answer: Answer, lang: str, details: bool, max_alternatives: int) -> str:
    assert answer.requirement is not None and answer.selection is not None and answer.resolved is not None
    lines = render_request(answer, lang)
    lines.append("")
    selection = answer.selection
    fit = selection.fit
    requirement = answer.requirement
    budget = answer.budget()
    if answer.resolved.card and fit is not None:
        # A named layout is answered first: yes/no, by how much, and what to do instead.
        if fit.valid:
            lines.append(t(lang, "answer.named_yes", layout=_layout_name(fit), vram=_vram(lang, fit),
                           total=fmt_gb(lang, requirement.total_gb), spare=fmt_gb(lang, fit.spare_gb))
                         + (t(lang, "answer.tight") if fit.tight else ""))
        else:
            # Memory first ("short by 10.7 GB"), then the rules the layout breaks.
            memory = [p for p in fit.problems if p.code in ("short", "per_gpu")]
            reason = "; ".join(localize(lang, p) for p in memory + [p for p in fit.problems if p not in memory])
            lines.append(t(lang, "answer.named_no", layout=_layout_name(fit), vram=_vram(lang, fit), reason=reason))
            if answer.hint is not None:
                # The hint line carries the narrower precision's figure; "Memory needed" stays the one asked for.
                lines.append(_hint_line(lang, answer.hint))
        lines.extend(_serving_lines(answer, fit, lang, details))
    lines.extend(render_requirement(requirement, lang, details))
    if budget is not None:
        lines.append(_budget_line(answer, budget, lang))
    lines.append("")
    recommended = selection.recommended
    if answer.resolved.card and fit is not None:
        lines.extend(_named_layout_lines(answer, fit, recommended, lang, details))
    elif fit is not None:
        lines.extend(_fit_lines(answer, fit, lang, details))
        lines.extend(_serving_lines(answer, fit, lang, details))
        lines.extend(rule_pick_lines(answer, lang, lambda note: localize(lang, note, resolved=answer.resolved)))
    elif answer.rule_fit is not None and not answer.resolved.card:
        # The rule holds it somewhere, but no layout runs it (vLLM refuses the context everywhere).
        lines.append(t(lang, "answer.none_runs"))
        lines.extend(_serving_lines(answer, answer.rule_fit, lang, details))
        if details:
            lines.append("<i>" + t(lang, "answer.reason", reason=localize(lang, selection.reason)) + "</i>")
    elif answer.resolved.card and recommended is not None:
        # A card this provider does not rent: say so, then what it does rent that holds the model.
        lines.append("❌ " + localize(lang, selection.reason))
        lines.extend(_fit_lines(answer, recommended, lang, details))
        lines.extend(_serving_lines(answer, recommended, lang, details))
    else:
        lines.append(t(lang, "answer.no_fit", reason=localize(lang, selection.reason)))
    alternatives = [a for a in selection.alternatives if not (recommended and same_layout(a, recommended)
                                                              and (answer.resolved.card or a is fit))]
    if alternatives and max_alternatives:
        lines.append("")
        lines.append(t(lang, "answer.alternatives"))
        lines.extend(_alternative_line(lang, layout) + alternative_mark(answer, layout, lang)
                     for layout in alternatives[:max_alternatives])
    if answer.topup_url and answer.topup_amount_usd is not None:
        lines.append("")
        lines.append(_topup_line(answer, lang))
    return clip("\n".join(lines))


def _budget_line(answer: Answer, budget: dict[str, Any], lang: str) -> str:
    """ "is 48gb enough?": the rule's memory against the budget, and where the rule says yes but the engine would
    not start on one card of that memory, both."""
    size = fmt_gb(lang, float(budget["budget_gb"] or 0), 0)
    spare = float(budget["spare_gb"] or 0)
    if not budget["fits"]:
        return t(lang, "answer.budget_no", budget=size, missing=fmt_gb(lang, -spare))
    review, resolved = answer.review, answer.resolved
    if budget.get("starts") is None and budget.get("starts_on") and review is not None and resolved is not None:
        return t(lang, "answer.budget_some_cards", budget=size, spare=fmt_gb(lang, spare),
                 engine=ENGINE_NAMES.get(review.engine, review.engine),
                 context=short_context(lang, resolved.context_tokens),
                 starts_on=", ".join(budget["starts_on"]), not_on=", ".join(budget["not_on"]))
    if budget.get("starts") is False and review is not None and resolved is not None:
        return t(lang, "answer.budget_rule_only", budget=size, spare=fmt_gb(lang, spare),
                 engine=ENGINE_NAMES.get(review.engine, review.engine),
                 context=short_context(lang, resolved.context_tokens))
    return t(lang, "answer.budget_yes", budget=size, spare=fmt_gb(lang, spare))


def _serving_lines(answer: Answer, layout: Layout, lang: str, details: bool) -> list[str]:
    """The engine's verdict after the rule's (bot.texts.render_serving), notes worded like every other note."""
    return fit_serving_lines(answer, layout, lang, details, lambda note: localize(lang, note, resolved=answer.resolved))


def _notes_lines(answer: Answer, lang: str, resolved: ResolvedRequest | None = None) -> list[str]:
    """What was assumed and what was not understood (under the request line, or alone for answers without one)."""
    lines = []
    # "max context on an H200" is answered with the context: the default it would otherwise assume is no assumption
    asks_context = answer.capacity is not None and answer.capacity.kind == "max_context"
    assumed = [localize(lang, note, resolved=resolved) for note in answer.assumed
               if not (asks_context and getattr(note, "code", None) == "default_context")]
    if assumed:
        lines.append("<i>" + t(lang, "request.assumed", items="; ".join(assumed)) + "</i>")
    ignored = answer.request.ignored
    if ignored:
        lines.append("<i>" + esc(t(lang, "request.ignored", items=", ".join(f"'{w}'" for w in ignored))) + "</i>")
    return lines


def render_price(answer: Answer, lang: str) -> str:
    """A price question: the card or set with its price per hour, day, week and month (the period asked for in
    bold), the volume discount and the minimum term, and the top-up link for the period."""
    catalog, selection = answer.catalog, answer.selection
    layout = selection.fit if selection else None
    if selection is None or layout is None:
        reason = localize(lang, selection.reason) if selection else ""
        return clip("\n".join([t(lang, "talk.price_no", reason=reason), *_notes_lines(answer, lang)]))
    lines = [t(lang, "talk.price_title", layout=_layout_name(layout), vram=_vram(lang, layout),
               provider=esc(catalog.provider))]
    if not layout.valid:
        lines.append(t(lang, "talk.price_no", reason="; ".join(localize(lang, p) for p in layout.problems)))
    for period, amount in period_prices(catalog, layout.hourly_usd, layout.monthly_usd).items():
        line = t(lang, "talk.price_line", period=t(lang, f"talk.per.{period}"), amount=fmt_usd(lang, amount))
        lines.append(f"<b>{line}</b>" if period == answer.billing else line)
    percent = catalog.discount_percent(layout.count)
    if percent:
        lines.append(t(lang, "talk.price_discount", percent=fmt_number(lang, percent, 0)))
    if catalog.minimum_term_hours > 1:
        lines.append(t(lang, "talk.price_minimum", provider=esc(catalog.provider),
                       term=esc(_hours_label(lang, catalog.minimum_term_hours, catalog))))
    lines.extend(_notes_lines(answer, lang))
    if answer.topup_url and answer.topup_amount_usd is not None:
        lines.append("")
        lines.append(_topup_line(answer, lang))
    return clip("\n".join(lines))


def compare_cells(layout: Layout, lang: str) -> tuple[str, str]:
    """One card's row of a comparison (/compare and a "A or B?" question): fits with its spare or why not, and its
    decode ceiling when it fits."""
    if layout.valid:
        verdict = t(lang, "compare.fits", spare=fmt_gb(lang, layout.spare_gb))
    else:
        verdict = t(lang, "compare.no", reason="; ".join(localize(lang, p) for p in layout.problems))
    decode = (t(lang, "answer.alternative_decode", tps=fmt_number(lang, layout.speed.decode_tok_s, 0))
              if layout.speed is not None and layout.valid else "")
    return verdict, decode


def render_compare(answer: Answer, lang: str) -> str:
    """A comparison: the request, what it needs, each card's best set (fits or why not, spare, prices, decode
    ceiling), which of them to take, and the top-up link for it."""
    assert answer.requirement is not None and answer.selection is not None and answer.compare is not None
    lines = render_request(answer, lang)
    lines.append("")
    names = [item.card.name for item in answer.compare] + ["?", "?"]
    lines.append(t(lang, "talk.compare_title", a=esc(names[0]), b=esc(names[1])))
    lines.extend(render_requirement(answer.requirement, lang, details=False))
    for item in answer.compare:
        layout = item.layout
        verdict, decode = compare_cells(layout, lang)
        lines.append(t(lang, "talk.compare_row", layout=_layout_name(layout), verdict=verdict,
                       monthly=fmt_usd(lang, layout.monthly_usd), hourly=fmt_usd(lang, layout.hourly_usd),
                       decode=decode))
    valid = [item.layout for item in answer.compare if item.valid]
    recommended = answer.selection.recommended
    if valid:
        lines.append(t(lang, "talk.compare_pick", layout=_layout_name(min(valid, key=lambda x: x.monthly_usd))))
    elif recommended is not None:
        lines.append(t(lang, "talk.compare_none", provider=esc(answer.catalog.provider),
                       layout=_layout_name(recommended), vram=_vram(lang, recommended),
                       monthly=fmt_usd(lang, recommended.monthly_usd)))
    if answer.topup_url and answer.topup_amount_usd is not None:
        lines.append("")
        lines.append(_topup_line(answer, lang))
    return clip("\n".join(lines))


def _topup_line(answer: Answer, lang: str) -> str:
    """The top-up link, after the user's money budget against its amount when they stated one."""
    money = _money_line(answer, lang)
    return (money + "\n" if money else "") + t(lang, "answer.topup_line", url=esc(answer.topup_url or "", quote=True),
             amount=fmt_usd(lang, answer.topup_amount_usd or 0), coin=esc(answer.coin or ""),
             period=esc(period_label(lang, answer)))


def _money_line(answer: Answer, lang: str) -> str:
    """'Within your budget of $1,000: 1x A40 for $240 (one month)', or that nothing within it runs it."""
    money, payable = answer.money(), answer.payable
    if money is None or payable is None or answer.topup_amount_usd is None:
        return ""
    values = {"budget": fmt_usd(lang, float(money["budget_usd"])), "layout": _layout_name(payable),  # type: ignore[arg-type]
              "price": fmt_usd(lang, answer.topup_amount_usd), "period": esc(period_label(lang, answer))}
    if money["within"]:
        return t(lang, "answer.money_within", **values)
    named = answer.resolved is not None and answer.resolved.card and answer.fit is payable
    return t(lang, "answer.money_over_named" if named else "answer.money_over", **values)


def period_label(lang: str, answer: Answer) -> str:
    """What the top-up pays for: "one month", "2 weeks" (the span asked for), or "one week (minimum term)" when
    the user's period was shorter."""
    hours = answer.topup_hours or answer.catalog.hours_per_month
    span = answer.billing_span
    per = hours // span if span > 1 and hours % span == 0 else 0
    period = {1: "hour", 24: "day", 168: "week", answer.catalog.hours_per_month: "month"}.get(per)
    if period is not None and not answer.topup_minimum_applied:
        return t(lang, f"period.spans.{period}", count=span)
    label = _hours_label(lang, hours, answer.catalog)
    return label + (t(lang, "period.minimum") if answer.topup_minimum_applied else "")


def _hours_label(lang: str, hours: int, catalog: Catalog) -> str:
    names = {1: "hour", 24: "day", 168: "week", catalog.hours_per_month: "month"}
    return t(lang, f"period.{names[hours]}") if hours in names else t(lang, "period.hours", hours=hours)


def telegram_length(text: str) -> int:
    """The length Telegram measures its limits in: UTF-16 code units, so an emoji outside the BMP counts twice."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # a lone surrogate from a JSON update: one unit


def utf16_prefix(text: str, units: int) -> int:
    """The longest prefix of `text` (as a code-point index) that fits in `units` UTF-16 code units."""
    if len(text) * 2 <= units:
        return len(text)
    # A cut through a surrogate pair leaves half a character, which the decoder drops (a lone one too: shorter).
    return len(text.encode("utf-16-le", "surrogatepass")[:2 * max(units, 0)].decode("utf-16-le", errors="ignore"))


def clip(text: str, limit: int = TELEGRAM_LIMIT) -> str:
    """Keep a reply under Telegram's limit, cutting at a line boundary where there is one, never inside a tag or
    an entity, and closing the tags the cut left open (Telegram refuses unbalanced HTML). Lengths are UTF-16
    units, as Telegram counts them: 4,096 code points of emoji are 8,192 units and refused."""
    if len(text) <= limit // 2 or telegram_length(text) <= limit:
        return text
    budget = utf16_prefix(text, limit - 2 - _CLOSING_RESERVE)
    cut = text.rfind("\n", 0, budget)
    if cut <= 0:
        cut = _safe_cut(text, budget)
    head = text[:cut].rstrip()
    return head + _closing_tags(head) + "\n…"


_CLOSING_RESERVE = 40  # room for the closing tags: our replies nest at most <a><b><code> or <pre><code>
_HTML_TAG = re.compile(r"<(/?)([a-zA-Z-]+)[^>]*>")


def _safe_cut(text: str, at: int) -> int:
    """The last position at or before `at` that is outside a tag and outside an entity such as &amp;."""
    tag_open = text.rfind("<", 0, at)
    if tag_open > text.rfind(">", 0, at):
        at = tag_open
    amp = text.rfind("&", max(0, at - 10), at)
    if amp >= 0 and ";" not in text[amp:at]:
        at = amp
    return at


def _closing_tags(html_text: str) -> str:
    """The closing tags for the tags left open in `html_text`, innermost first."""
    stack: list[str] = []
    for match in _HTML_TAG.finditer(html_text):
        closing, name = match.group(1), match.group(2).lower()
        if not closing:
            stack.append(name)
        elif name in stack:
            del stack[len(stack) - 1 - stack[::-1].index(name):]
    return "".join(f"</{name}>" for name in reversed(stack))


def render_parse_error(lang: str, error: str) -> str:
    """A question we could not size: what was wrong (in the reader's language), then examples of what works."""
    if error == "not a sizing question":
        return render_help(lang, not_question=True)
    examples = "\n".join(f"• <code>{esc(t(lang, f'help.example{i}'))}</code>" for i in (1, 2, 3))
    return f"{t(lang, 'error.value', message=localize(lang, error))}\n\n{t(lang, 'help.examples')}\n{examples}"


def render_help(lang: str, not_question: bool = False) -> str:
    head = t(lang, "help.not_question") if not_question else t(lang, "help.intro") + "\n\n" + t(lang, "help.examples")
    examples = "\n".join(f"• <code>{esc(t(lang, f'help.example{i}'))}</code>" for i in (1, 2, 3))
    tail = "" if not_question else "\n\n" + esc(t(lang, "help.commands"))
    return f"{head}\n{examples}{tail}"


def help_examples(lang: str) -> list[str]:
    return [t(lang, f"help.example{i}") for i in (1, 2, 3)]


def render_cards(catalog: Catalog, lang: str) -> str:
    """The first page of /cards (card_pages)."""
    return card_pages(catalog, lang)[0]


def card_pages(catalog: Catalog, lang: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """/cards as pages of whole card lines, each under Telegram's limit with the title on top ("page 2 of 5"
    when there is more than one): a catalog of 200 cards is paged, not cut."""
    title = t(lang, "cards.title", provider=esc(catalog.provider), count=len(catalog.cards))
    lines = [_card_line(catalog, card, lang) for card in catalog.cards]
    if telegram_length("\n".join([title, *lines])) <= limit:
        return [clip("\n".join([title, *lines]), limit)]
    widest = len(lines)  # no more pages than lines: the marker with that number is the longest one
    budget = limit - telegram_length(title + t(lang, "cards.page", page=widest, pages=widest))
    chunks: list[list[str]] = [[]]
    used = 0
    for line in lines:
        size = telegram_length(line) + 1  # and its newline
        if chunks[-1] and used + size > budget:
            chunks.append([])
            used = 0
        chunks[-1].append(line)
        used += size
    pages = len(chunks)
    # clip() only for a single line longer than a whole page, which validation's name and field caps rule out.
    return [clip("\n".join([title + t(lang, "cards.page", page=n + 1, pages=pages), *chunk]), limit)
            for n, chunk in enumerate(chunks)]


def _card_line(catalog: Catalog, card: Card, lang: str) -> str:
    stock = ""
    if card.stock:
        stock = "".join(t(lang, "cards.stock", count=n, region=esc(r)) for r, n in card.stock.items())
    return t(lang, "cards.line", name=esc(card.name), vram=fmt_gb(lang, card.vram_gb, 0),
             bandwidth=_bandwidth(lang, card), fp8=t(lang, "cards.fp8_yes" if card.fp8 else "cards.fp8_no"),
             monthly=fmt_usd(lang, catalog.monthly_list_price_usd(card)),
             hourly=fmt_usd(lang, catalog.hourly_list_price_usd(card)), stock=stock)


def _bandwidth(lang: str, card: Card) -> str:
    if card.bandwidth_gbps >= 1000:
        return f"{fmt_number(lang, card.bandwidth_gbps / 1000, 2).rstrip('0').rstrip(',.')} TB/s"
    return f"{fmt_number(lang, card.bandwidth_gbps, 0)} GB/s"


def render_card(catalog: Catalog, card: Card, lang: str) -> str:
    monthly = catalog.monthly_list_price_usd(card)
    regions = ""
    if card.regions:
        regions = "\n" + esc(", ".join(card.regions))
    notes = f"\n<i>{esc(card.notes)}</i>" if card.notes else ""
    interconnect: str = card.interconnect
    if card.interconnect_gbps:
        interconnect += f" ({fmt_number(lang, card.interconnect_gbps, 0)} GB/s)"
    return t(lang, "card.detail", name=esc(card.name), architecture=esc(card.architecture or "?"),
             memory=esc(card.memory or "?"), vram=fmt_gb(lang, card.vram_gb, 0), bandwidth=_bandwidth(lang, card),
             fp8=t(lang, "cards.fp8_yes" if card.fp8 else "cards.fp8_no"), interconnect=esc(interconnect),
             monthly=fmt_usd(lang, monthly), hourly=fmt_usd(lang, catalog.hourly_list_price_usd(card)),
             per_gb=fmt_usd(lang, monthly / card.vram_gb),
             gbps_per_usd=fmt_number(lang, card.bandwidth_gbps / monthly, 2),
             sets=", ".join(str(n) for n in card.set_sizes), regions=regions, notes=notes)


_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r'<a href="([^"]*)">([^<]*)</a>')


def plain(text: str) -> str:
    """HTML reply -> terminal text: links as 'text: url', tags dropped, entities unescaped."""
    text = _LINK.sub(lambda m: f"{m.group(2)}: {html.unescape(m.group(1))}", text)
    return html.unescape(_TAG.sub("", text))


def render_compact(answer: Answer, lang: str, layout: Layout | None = None) -> str:
    """The short answer for inline mode and quotes: requirement, the fit (or `layout`), prices, top-up link."""
    if answer.intent == "price" and layout is None:
        return render_price(answer, lang)
    if answer.capacity is not None and layout is None:
        return _render_capacity(answer, lang, compact=True)
    assert answer.requirement is not None and answer.resolved is not None and answer.selection is not None
    lines = [render_request(answer, lang)[0]]
    lines.extend(render_requirement(answer.requirement, lang, details=False))
    shown = layout or answer.payable
    if shown is None:
        lines.append(t(lang, "answer.no_fit", reason=localize(lang, answer.selection.reason)))
    else:
        lines.extend(_fit_lines(answer, shown, lang, details=False))
        lines.extend(_serving_lines(answer, shown, lang, details=False))
    if answer.topup_url and answer.topup_amount_usd is not None and layout is None:
        lines.append(_topup_line(answer, lang))
    return clip("\n".join(lines))
