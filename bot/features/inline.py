"""Inline mode's results (@bot 70B int4 in any chat): a sizing answer and two alternatives, a price question's
card price, or the help; meant to be pasted into other chats, so never with the typing user's top-up ref."""
from __future__ import annotations

import html
from typing import Protocol

from bot.features.caller import Caller, UserInfo
from bot.operators.catalog_service import CatalogHolder
from bot.store import Preferences
from bot.texts.i18n import fmt_gb, fmt_usd, t
from bot.texts.render import localize, render_answer, render_compact, render_help, render_parse_error
from engine.answer.build import Answer
from engine.parse import parse
from engine.sizing.rule import SizeRequest

InlineResult = dict[str, str]  # id, title, description, text
esc = html.escape


class Answering(Protocol):
    """What inline mode needs of the conversation (bot.features.conversation.Conversation)."""

    @property
    def catalogs(self) -> CatalogHolder: ...

    def apply_preferences(self, request: SizeRequest, prefs: Preferences) -> set[str]: ...

    def answer(self, request: SizeRequest, user: UserInfo, prefs: Preferences, *,
               anonymous: bool = False) -> Answer: ...


def inline_results(conversation: Answering, caller: Caller, query: str) -> tuple[list[InlineResult], bool]:
    """Inline results (id, title, description, text); True when preferences shaped them."""
    query = query[:256]
    prefs = caller.preferences
    result = parse(query, conversation.catalogs.vocabulary) if query.strip() else None
    if result is None or result.request is None:
        lang = caller.language_for(result.told_language if result else None)
        if result is not None and result.error and result.error != "not a sizing question":
            message = html.unescape(localize(lang, result.error))
            return [{"id": "error", "title": message[:64], "description": t(lang, "inline.help_description"),
                     "text": render_parse_error(lang, result.error)}], False
        return [{"id": "help", "title": t(lang, "inline.help_title"),
                 "description": t(lang, "inline.help_description"), "text": render_help(lang)}], False
    lang = caller.language_for(result.told_language)
    request = result.request
    filled = conversation.apply_preferences(request, prefs)
    personal = bool(filled) or prefs.coin is not None or prefs.billing is not None or prefs.language is not None
    answer = conversation.answer(request, caller.user, prefs, anonymous=True)
    if answer.error is None and answer.intent == "price":
        return [_price_result(answer, lang)], personal
    if answer.error or answer.resolved is None or answer.requirement is None or answer.selection is None:
        error = answer.error or "not a sizing question"
        return [{"id": "error", "title": error[:64], "description": t(lang, "inline.help_description"),
                 "text": t(lang, "error.value", message=esc(error))}], personal
    return _sizing_results(answer, lang), personal


def _sizing_results(answer: Answer, lang: str) -> list[InlineResult]:
    assert answer.resolved is not None and answer.requirement is not None and answer.selection is not None
    shape = answer.resolved.shape
    model = shape.name if not shape.typical else f"{answer.resolved.params_b:g}B"
    total = fmt_gb(lang, answer.requirement.total_gb)
    results = []
    fit = answer.payable
    if fit is not None:
        title = t(lang, "inline.fit_title", model=model, total=total, layout=f"{fit.count}x {fit.card.name}",
                  monthly=fmt_usd(lang, fit.monthly_usd))
        description = t(lang, "inline.description", hourly=fmt_usd(lang, fit.hourly_usd),
                        spare=fmt_gb(lang, fit.spare_gb))
    else:
        title = t(lang, "inline.no_fit_title", model=model, total=total)
        description = html.unescape(localize(lang, answer.selection.reason))
    results.append({"id": "fit", "title": title, "description": description,
                    "text": render_compact(answer, lang)})
    for index, layout in enumerate(answer.selection.alternatives[:2], start=1):
        results.append({"id": f"alt{index}", "title": t(lang, "inline.alt_title",
                                                         layout=f"{layout.count}x {layout.card.name}",
                                                         monthly=fmt_usd(lang, layout.monthly_usd)),
                        "description": t(lang, "inline.description", hourly=fmt_usd(lang, layout.hourly_usd),
                                         spare=fmt_gb(lang, layout.spare_gb)),
                        "text": render_compact(answer, lang, layout)})
    return results


def _price_result(answer: Answer, lang: str) -> InlineResult:
    """A price question ("H100 per day") sizes no model (no resolved request, no requirement): the title is
    the card's price, from `answer.fit`."""
    fit = answer.fit
    text = render_answer(answer, lang)
    if fit is None:
        reason = answer.selection.reason if answer.selection is not None else None
        title = html.unescape(localize(lang, reason)) if reason else t(lang, "inline.help_title")
        return {"id": "price", "title": title[:64], "description": t(lang, "inline.help_description"), "text": text}
    return {"id": "price", "title": t(lang, "inline.price_title", layout=fit.label,
                                      monthly=fmt_usd(lang, fit.monthly_usd)),
            "description": t(lang, "inline.price_description", hourly=fmt_usd(lang, fit.hourly_usd),
                             vram=fmt_gb(lang, fit.vram_gb)),
            "text": text}
