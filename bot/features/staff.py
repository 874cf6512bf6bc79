"""Support staff: /quote (a neutral, customer-ready answer with a deep link) in a support group, and inline mode
(@bot 70B int4 in any chat: a sizing answer and two alternatives, a price question's card price, or the help).
Both are meant to be pasted to customers, so neither carries the typing user's top-up reference, and neither
waits on the Hugging Face Hub."""
from __future__ import annotations

import html

from bot.features.answers import try_encode
from bot.features.ask import Asker, ask
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.demand import record_demand
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply, clip_with
from bot.texts.i18n import fmt_gb, fmt_usd, normalize_language, t
from bot.texts.render import localize, render_answer, render_compact, render_help, render_parse_error
from engine.answer.build import Answer

InlineResult = dict[str, str]  # id, title, description, text
QUERY_LIMIT = 256  # characters of an inline query read (Telegram sends at most 256)


async def quote(core: Core, given: CommandInput) -> Reply:
    """A neutral answer: no staff preferences, no staff ref, and a deep link for the customer."""
    user, text = given.caller.user, given.text
    if not text.strip():
        return Reply(t(normalize_language(user.language_code), "quote.usage"))
    asked = await ask(text, core.catalog, core.catalogs.vocabulary, Asker(topup_secret=core.topup_secret))
    lang = asked.told_language or normalize_language(user.language_code)
    answer = asked.answer
    if answer is None or asked.request is None:
        return Reply(render_parse_error(lang, asked.error or "not a sizing question"))
    if answer.error:
        return Reply(t(lang, "error.value", message=html.escape(answer.error)))
    await record_demand(core, answer, lang)
    body = render_answer(answer, lang, max_alternatives=2)
    payload = try_encode(asked.request)
    if payload and given.bot_username:
        link = f"https://t.me/{given.bot_username}?start={payload}"
        body = clip_with(body, "\n\n" + t(lang, "quote.link", link=html.escape(link)))
    return Reply(body)


async def inline_results(core: Core, caller: Caller, query: str) -> tuple[list[InlineResult], bool]:
    """Inline results (id, title, description, text); True when preferences shaped them."""
    query = query[:QUERY_LIMIT]
    prefs = caller.preferences
    asked = await ask(query, core.catalog, core.catalogs.vocabulary, core.asker(caller, anonymous=True)) \
        if query.strip() else None
    if asked is None or asked.answer is None:
        lang = caller.language_for(asked.told_language if asked else None)
        error = asked.result.error if asked is not None else None
        if error and error != "not a sizing question":
            message = html.unescape(localize(lang, error))
            return [{"id": "error", "title": message[:64], "description": t(lang, "inline.help_description"),
                     "text": render_parse_error(lang, error)}], False
        return [{"id": "help", "title": t(lang, "inline.help_title"),
                 "description": t(lang, "inline.help_description"), "text": render_help(lang)}], False
    lang = caller.language_for(asked.told_language)
    personal = bool(asked.from_settings) or prefs.coin is not None or prefs.billing is not None \
        or prefs.language is not None
    answer = asked.answer
    if answer.error is None and answer.intent == "price":
        return [_price_result(answer, lang)], personal
    if answer.error or answer.resolved is None or answer.requirement is None or answer.selection is None:
        error = answer.error or "not a sizing question"
        return [{"id": "error", "title": error[:64], "description": t(lang, "inline.help_description"),
                 "text": t(lang, "error.value", message=html.escape(error))}], personal
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


FEATURE = Feature("staff", commands=(Command("quote", Scope.STAFF, quote, "command.quote"),))
