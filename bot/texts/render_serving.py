"""The serving check in a reply: the engine's one-line verdict on a layout, the cheapest layout that
passes when it fails, the launch command and the check's notes for Details, an alternative's engine mark."""
from __future__ import annotations

import html
import math
import re
from collections.abc import Callable

from bot.texts.i18n import fmt_gb, fmt_number, fmt_tokens, fmt_usd, t
from catalog.schema import Card
from engine.answer.build import Answer, unrentable
from engine.answer.capacity import Capacity, users_context
from engine.answer.open_question import ModelPick
from engine.fit.selection import ROOM_GB, Layout, same_layout
from engine.formats.precision import precision_label
from engine.notes import Note
from engine.serving import ServingCheck
from engine.serving.command import UNKNOWN_REPO
from engine.sizing.sequence import k_label
from engine.speed.layout import layout_speed

esc = html.escape
ENGINE_NAMES = {"vllm": "vLLM", "llama.cpp": "llama.cpp"}
# The flag that sets the context, as each engine spells it (engine/serving/command.py).
CONTEXT_FLAGS = {"vllm": "--max-model-len", "llama.cpp": "-c"}
# Notes that say why the engine refuses a layout at any memory: the line names the reason, not a shortfall.
REFUSALS = ("serving_tp_heads", "serving_tp_kv_heads", "serving_context_over_max", "serving_v_cache_needs_fa",
            "serving_fp8_no_kernel", "serving_bnb_no_kernel")
# vLLM starts, but runs FP8 or FP4 weights weight-only on a card without that hardware (engine/serving/checkpoint.py).
WEIGHT_ONLY = {"serving_fp8_weight_only": "fp8", "serving_fp4_weight_only": "fp4"}


def _weight_only(check: ServingCheck) -> Note | None:
    return next((note for note in check.notes if isinstance(note, Note) and note.code in WEIGHT_ONLY), None)


def _weights(note: Note | None) -> str:
    """The weights' format a weight-only note names ("MXFP4"); FP8's wording names it itself."""
    return esc(str(note.values.get("weights", ""))) if note is not None else ""


def engine_name(check: ServingCheck) -> str:
    return ENGINE_NAMES.get(check.engine, check.engine)


def short_context(lang: str, tokens: int) -> str:
    """32k for 32,768: how people write a context that is a whole number of 1,024 tokens."""
    return k_label(tokens) or t(lang, "capacity.tokens", tokens=fmt_tokens(lang, tokens))  # "448 tokens", not "448"


def _layout_label(count: int, name: str) -> str:
    return esc(f"{count}x {name}")


def serving_line(answer: Answer, check: ServingCheck | None, label: str, lang: str,
                 note_text: Callable[[Note], str], fallback: Layout | None = None,
                 where: tuple[Card, int] | None = None) -> str | None:
    """The engine's verdict on the layout `label` names (`where`): starts with how much room, or why not and what
    runs -- on another layout, with a shorter context, or (several users asked for) the context each gets."""
    resolved = answer.resolved
    if check is None or resolved is None:
        return None
    engine, context = engine_name(check), resolved.context_tokens
    if check.starts:
        concurrency = check.max_concurrency or 0.0
        users = math.floor(concurrency)
        key = "serving.starts_one" if users == 1 else "serving.starts"
        weight_only = _weight_only(check)
        if weight_only is not None:  # the rule's "no FP8/FP4 hardware" stays true: vLLM runs them weight-only
            key += "_weight_only_" + WEIGHT_ONLY[weight_only.code]
        line = t(lang, key, engine=engine, layout=label,
                 tokens=fmt_tokens(lang, int(concurrency * context)), users=users,
                 context=short_context(lang, context), weights=_weights(weight_only))
        return line + _refused_named(answer, where, users, lang)
    refusal = next((note for note in check.notes if note.code in REFUSALS), None)
    if refusal is not None:
        line = t(lang, "serving.refused", engine=engine, layout=label, reason=note_text(refusal))
    else:
        line = t(lang, "serving.fails", engine=engine, layout=label, context=short_context(lang, context),
                 need=fmt_gb(lang, check.weights_gb_per_gpu + check.kv_gb_per_gpu),
                 usable=fmt_gb(lang, check.usable_gb_per_gpu))
    shorter = check.max_context_tokens if refusal is None or refusal.code == "serving_context_over_max" else None
    flag = CONTEXT_FLAGS.get(check.engine, "--max-model-len")
    if fallback is not None:
        line += t(lang, "serving.runs_on", layout=_layout_label(fallback.count, fallback.card.name),
                  monthly=fmt_usd(lang, fallback.monthly_usd))
        if shorter:
            line += t(lang, "serving.or_context", flag=flag, tokens=shorter)
    elif shorter:
        line += t(lang, "serving.only_context", flag=flag, tokens=shorter)
    if shorter and where is not None and resolved.batch > 1:
        each = users_context(answer.review, where[0], where[1], resolved.batch)
        if each:
            line += t(lang, "serving.or_users", users=resolved.batch, tokens=fmt_tokens(lang, each))
    return line


def _refused_named(answer: Answer, where: tuple[Card, int] | None, users: int, lang: str) -> str:
    """After "starts" on the layout the user named and the answer refuses (❌): why both hold -- the engine starts
    with fewer users than asked, or the provider's sizing rule refuses the layout the engine would start on."""
    named, resolved = answer.fit, answer.resolved
    if where is None or named is None or named.valid or resolved is None or not resolved.card \
            or (where[0].id, where[1]) != (named.card.id, named.count):
        return ""
    if resolved.batch > users:
        return t(lang, "serving.not_all_users", users=resolved.batch)
    return t(lang, "serving.but_rule")


def fit_serving_lines(answer: Answer, layout: Layout, lang: str, details: bool,
                      note_text: Callable[[Note], str]) -> list[str]:
    """The verdict for a layout the reply shows as the answer (the fit, the named layout, the recommendation);
    with Details also the launch command and what the check assumed."""
    review = answer.review
    if review is None or unrentable(layout):
        return []  # a layout refused for its sets or hosts is not followed by "vLLM starts there"
    where = answer.serving_layout
    is_fit = answer.fit is not None and (layout.card.id, layout.count) == (answer.fit.card.id, answer.fit.count)
    card, count = where if is_fit and where is not None else (layout.card, layout.count)
    check = review.check(card, count)
    fallback = None
    if (card.id, count) == (layout.card.id, layout.count):
        fallback = answer.serving_fallback if is_fit else review.passing(layout)
    line = serving_line(answer, check, _layout_label(count, card.name), lang, note_text, fallback, (card, count))
    if line is None or check is None:
        return []
    lines = [line]
    if details:
        lines.append(t(lang, "serving.command", command=esc(command_text(lang, check.command))))
        notes = [note_text(note) for note in check.notes if isinstance(note, Note)]
        if notes:
            lines.append("<i>" + t(lang, "serving.notes", items="; ".join(notes)) + "</i>")
    return lines


def rule_pick_lines(answer: Answer, lang: str, note_text: Callable[[Note], str]) -> list[str]:
    """One line when the provider's rule alone picks another layout than the one recommended: which, with how much
    spare, and why the workload does not run there (the engine would not start, or no room is left)."""
    rule, fit = answer.rule_fit, answer.fit
    if rule is None or fit is None or not rule.valid or same_layout(rule, fit):
        return []
    spare = rule.spare_gb if rule.per_gpu is None else min(rule.spare_gb, rule.per_gpu.spare_gb)
    values = {"layout": _layout_label(rule.count, rule.card.name), "spare": fmt_gb(lang, max(spare, 0.0))}
    reason = answer.selection.reason if answer.selection is not None else None
    if isinstance(reason, Note) and reason.code == "count_lead":
        return [t(lang, "answer.rule_pick_count", monthly=fmt_usd(lang, rule.monthly_usd),
                  count=fit.count, **values)]
    if isinstance(reason, Note) and reason.code == "budget_lead":
        return [t(lang, "answer.rule_pick_budget", monthly=fmt_usd(lang, rule.monthly_usd),
                  budget=fmt_usd(lang, float(reason.values["budget_usd"])), **values)]  # type: ignore[arg-type]
    if isinstance(reason, Note) and reason.code == "sharded_lead":
        return [t(lang, "answer.rule_pick_sharded", monthly=fmt_usd(lang, rule.monthly_usd),
                  lead=_layout_label(fit.count, fit.card.name), **values)]
    target = answer.target
    if target is not None and target.met and answer.resolved is not None and answer.requirement is not None:
        # The lead moved for a speed target (engine.answer.target): the rule's pick runs, but slower.
        speed = layout_speed(rule.card, rule.count, answer.resolved, answer.requirement)
        if speed is not None:
            return [t(lang, "answer.rule_pick_slow", target=fmt_number(lang, target.target_tok_s, None),
                      tps=fmt_number(lang, speed.decode_tok_s_per_user, 0), **values)]
    check = answer.review.check_layout(rule) if answer.review is not None else None
    if check is not None and check.starts and answer.review is not None and not answer.review.runs(check):
        return [t(lang, "answer.rule_pick_users", engine=engine_name(check),
                  users=math.floor(check.max_concurrency or 0.0), batch=answer.review.resolved.batch, **values)]
    if check is None or check.starts:
        return [t(lang, "answer.rule_pick_room", room=fmt_gb(lang, ROOM_GB), **values)]
    refusal = next((note for note in check.notes if note.code in REFUSALS), None)
    if refusal is not None and refusal.code != "serving_context_over_max":
        return [t(lang, "answer.rule_pick_refused", engine=engine_name(check), reason=note_text(refusal), **values)]
    context = answer.resolved.context_tokens if answer.resolved is not None else 0
    return [t(lang, "answer.rule_pick_serving", engine=engine_name(check), context=short_context(lang, context),
              **values)]


def alternative_mark(answer: Answer, layout: Layout, lang: str) -> str:
    """' · vLLM ✓' / ' · vLLM ✗' after an alternative: whether the workload runs there (the engine starts and
    holds every user at once)."""
    review = answer.review
    check = review.check_layout(layout) if review is not None else None
    if check is None or review is None:
        return ""
    return t(lang, "serving.mark_yes" if review.runs(check) else "serving.mark_no", engine=engine_name(check))


def instead_mark(answer: Answer, layout: Layout, lang: str) -> str:
    """alternative_mark after the "Instead:" line, and where the engine would not start there, what it starts on:
    the rule's cheapest card is not a recommendation the renter could start (an AWQ 72B on one A40)."""
    mark = alternative_mark(answer, layout, lang)
    passing = answer.review.passing(layout) if answer.review is not None else None
    if passing is None:
        return mark
    return mark + t(lang, "serving.runs_on", layout=_layout_label(passing.count, passing.card.name),
                    monthly=fmt_usd(lang, passing.monthly_usd))


_PLACEHOLDER_RE = re.compile(r"<([^<>]+?) of (?:a (\S+) model|([^<>]+))>")
_PLACEHOLDER_WORDS_DE = ((" GGUF repo", "-GGUF-Repo"), ("GGUF repo", "GGUF-Repo"), (" GGUF file", "-GGUF-Datei"),
                         (" repo", "-Repo"), (" checkpoint", "-Checkpoint"), (" file", "-Datei"), (" or ", "- oder "))


def command_text(lang: str, command: str) -> str:
    """A launch command in the reader's language: its placeholders ('<AWQ checkpoint of Qwen3.8 27B>',
    '<GGUF repo of a 70B model>', '<your-model>') are words to replace, said in German in a German answer
    ('<AWQ-Checkpoint von Qwen3.8 27B>', '<GGUF-Repo eines 70B-Modells>', '<Ihr-Modell>'); the rest is code."""
    if lang != "de" or "<" not in command:
        return command

    def german(match: re.Match[str]) -> str:
        what = match.group(1)
        for en, de in _PLACEHOLDER_WORDS_DE:
            what = what.replace(en, de)
        size, model = match.group(2), match.group(3)
        return f"<{what} eines {size}-Modells>" if size is not None else f"<{what} von {model}>"

    return _PLACEHOLDER_RE.sub(german, command).replace(UNKNOWN_REPO, "<Ihr-Modell>")


def launch_reply(answer: Answer, lang: str, note_text: Callable[[Note], str] | None = None) -> str:
    """The launch command of the answer's layout as a code block (the 🚀 Launch button), with what the command
    cannot say itself: a placeholder to fill in, the quantization vLLM makes while loading, FP8 run weight-only,
    why the card is refused."""
    check, where = answer.serving, answer.serving_layout
    if check is None or where is None:
        return t(lang, "serving.launch_none")
    card, count = where
    lines = [t(lang, "serving.launch", engine=engine_name(check), layout=_layout_label(count, card.name),
               command=esc(command_text(lang, check.command)))]
    checkpoint = answer.review.checkpoint() if answer.review is not None else None
    if checkpoint is not None and checkpoint.placeholder and checkpoint.repo:
        lines.append(t(lang, "serving.launch_placeholder", placeholder=esc(command_text(lang, checkpoint.repo)),
                       label=esc(checkpoint.label)))
    if checkpoint is not None and checkpoint.quantization and check.engine == "vllm":
        lines.append(t(lang, f"serving.launch_inflight_{checkpoint.quantization}"))
    weight_only = _weight_only(check)
    if weight_only is not None:
        lines.append(t(lang, "serving.launch_weight_only_" + WEIGHT_ONLY[weight_only.code], card=esc(card.name),
                       weights=_weights(weight_only)))
    refusal = next((note for note in check.notes if note.code in REFUSALS), None)
    if refusal is not None:
        reason = note_text(refusal) if note_text is not None else esc(str(refusal))
        lines.append(t(lang, "serving.launch_refused", reason=reason))
    elif not check.starts:
        lines.append(t(lang, "serving.launch_reduced"))
    return "\n".join(lines)


def _value(lang: str, value: float | None, unit: str, *, checked: bool = False, each: bool = False) -> str:
    """A capacity figure; a token count the engine checked and found nothing for is "none" (it does not start),
    one it could not check "not known"; `each`: one user's share ("26,321 tokens each")."""
    if unit == "tokens":
        if value is None:
            return t(lang, "capacity.no_tokens" if checked else "capacity.not_checked")
        return t(lang, "capacity.tokens_each" if each else "capacity.tokens", tokens=fmt_number(lang, value, 0))
    if value is None:
        return t(lang, "capacity.none")
    return fmt_number(lang, value, None if unit == "b" else 0) + ("B" if unit == "b" else "")


def _sequence_line(capacity: Capacity, lang: str, unit: str, note_text: Callable[[Note], str],
                   **values: str) -> str:
    """max_context / max_batch: the rule's value and the engine's. "none" only where the weights alone do not fit
    (capacity.<kind>_none) or the layout cannot be rented (_refused, with why); where the rule sizes no KV cache
    (the headroom rule without a named context) the engine's value alone and why (_serving), or, with no engine
    value either (no attention shape), "not known" (_unknown). max_context for several users: each one's share
    (_users)."""
    key = f"capacity.{capacity.kind}"
    users = capacity.batch if capacity.kind == "max_context" and (capacity.batch or 1) > 1 else None
    if users is not None:
        key += "_users"
        values["users"] = str(users)
    if capacity.refused:
        return t(lang, f"{key}_refused", reason="; ".join(note_text(note) for note in capacity.refused), **values)
    if capacity.rule_value is None and not capacity.weights_fit:
        return t(lang, f"{key}_none", **values)
    each = users is not None
    serving = _value(lang, capacity.serving_value, unit, checked=capacity.serving_checked, each=each)
    capped = t(lang, "capacity.capped", tokens=fmt_tokens(lang, int(capacity.serving_value))) \
        if capacity.capped and capacity.serving_value is not None else ""
    if capacity.rule_value is not None:
        return t(lang, key, serving=serving, rule=_value(lang, capacity.rule_value, unit, each=each),
                 **values) + capped
    if capacity.serving_value is None:
        return t(lang, f"{key}_unknown", **values)
    return t(lang, f"{key}_serving", serving=serving + capped, **values)


def _pick_line(pick: ModelPick, lang: str) -> str:
    """One model an open question names: its format and context, and its price (on the card named), or the
    cheapest rental that runs it (in a memory budget), or neither."""
    values = {"name": esc(pick.name), "precision": esc(precision_label(pick.precision)),
              "context": short_context(lang, pick.context_tokens)}
    if pick.monthly_usd is None or pick.hourly_usd is None:
        return t(lang, "capacity.pick_bare", **values)
    prices = {"monthly": fmt_usd(lang, pick.monthly_usd), "hourly": fmt_usd(lang, pick.hourly_usd)}
    if pick.layout is not None:
        return t(lang, "capacity.pick_rent", layout=esc(pick.layout), **values, **prices)
    return t(lang, "capacity.pick", **values, **prices)


def capacity_lines(answer: Answer, lang: str, note_text: Callable[[Note], str] | None = None) -> list[str]:
    """A reverse question's answer first: the rule's value and the engine's, for the layout they were computed for."""
    capacity = answer.capacity
    if capacity is None:
        return []
    layout = fmt_gb(lang, capacity.budget_gb, None) if capacity.budget_gb else _layout_label(capacity.count,
                                                                                             capacity.card)
    engine = ENGINE_NAMES.get(capacity.engine, capacity.engine)
    context = short_context(lang, capacity.context_tokens) if capacity.context_tokens else ""
    if capacity.kind in ("max_context", "max_batch"):
        unit = "tokens" if capacity.kind == "max_context" else "n"
        return [_sequence_line(capacity, lang, unit, note_text or (lambda note: esc(str(note))), layout=layout,
                               engine=engine, context=context)]
    line = t(lang, "capacity.biggest", layout=layout, engine=engine, context=context,
             precision=esc(precision_label(capacity.precision or "")),
             rule=_value(lang, capacity.rule_value, "b"), serving=_value(lang, capacity.serving_value, "b"))
    if capacity.models and not capacity.picks:
        line += t(lang, "capacity.models", models=esc(", ".join(capacity.models)))
    lines = [line]
    if capacity.budget_usd is not None:
        lines.insert(0, t(lang, "capacity.money_layout", budget=fmt_usd(lang, capacity.budget_usd), layout=layout))
    if capacity.picks:
        lines.append(t(lang, "capacity.picks"))
        lines.extend(_pick_line(pick, lang) for pick in capacity.picks)
    return lines
