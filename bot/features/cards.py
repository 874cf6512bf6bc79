"""The catalog's cards: /cards in pages that each fit one Telegram message (◀ / ▶ between them), /card NAME, and
/compare A B (two cards side by side for the user's last question)."""
from __future__ import annotations

import html

from bot.features.ask import answer_for
from bot.features.callbacks import CardsPageButton
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.feature import ButtonRoute, Command, CommandInput, Feature, Scope, notice
from bot.features.reply import Button, CallbackResult, Reply, echo
from bot.texts.i18n import fmt_gb, fmt_usd, normalize_language, t
from bot.texts.render import card_pages, compare_cells, render_card, render_request
from catalog.schema import Catalog
from engine.answer.advice import compare_cards
from engine.sizing.payload import PayloadError, decode_request
from engine.sizing.rule import SizingError, resolve, size

CARD_NAMES_SHOWN = 12  # card names in an "unknown card" answer; /cards lists them all


def card_names(catalog: Catalog, lang: str) -> str:
    """The catalog's card names for an "unknown card" answer: the first few, then how many more /cards lists."""
    names = [c.name for c in catalog.cards]
    shown = html.escape(", ".join(names[:CARD_NAMES_SHOWN]))
    if len(names) > CARD_NAMES_SHOWN:
        shown += t(lang, "card.more", count=len(names) - CARD_NAMES_SHOWN)
    return shown


def cards_page(catalog: Catalog, lang: str, page: int) -> Reply | None:
    """Page `page` (0-based) of the catalog, None when it has no such page (any more)."""
    pages = card_pages(catalog, lang)
    if not 0 <= page < len(pages):
        return None
    row = []
    if page > 0:
        row.append(Button(t(lang, "cards.previous"), data=CardsPageButton(lang, page - 1).encode()))
    if page + 1 < len(pages):
        row.append(Button(t(lang, "cards.next"), data=CardsPageButton(lang, page + 1).encode()))
    return Reply(pages[page], [row] if row else [])


async def show_cards(core: Core, given: CommandInput) -> Reply:
    reply = cards_page(core.catalog, given.caller.language, 0)
    assert reply is not None  # card_pages always has a first page
    return reply


async def press_cards_page(core: Core, caller: Caller, button: CardsPageButton,
                           shared: bool = False) -> CallbackResult:
    """The message becomes that page; a page the catalog no longer has (it shrank since) is stale."""
    reply = cards_page(core.catalog, caller.preferences.language or button.lang, button.page)
    if reply is None:
        return notice(caller, "error.stale")
    return CallbackResult(reply)


async def show_card(core: Core, given: CommandInput) -> Reply:
    lang = given.caller.language
    name = given.text
    if not name.strip():
        return Reply(t(lang, "card.usage"))
    card = core.catalog.card(name)
    if card is None:
        return Reply(t(lang, "card.unknown", name=echo(name), names=card_names(core.catalog, lang)))
    return Reply(render_card(core.catalog, card, lang))


async def compare(core: Core, given: CommandInput) -> Reply:
    """Two cards side by side for the user's last question. It reads the preferences itself: the last question
    is written after the caller was resolved. In a group it compares nothing: the last question is the member's
    own (asked in private, perhaps), not the group's."""
    if given.shared:
        return Reply(t(normalize_language(given.caller.user.language_code), "compare.private_only"))
    user = given.caller.user
    caller = given.caller.with_preferences(await core.store.get_preferences(user.id))
    prefs = caller.preferences
    lang = caller.language
    catalog = core.catalog
    pair = catalog.card_pair(list(given.args))
    if pair is None:
        return Reply(t(lang, "compare.usage"))
    if isinstance(pair, str):
        return Reply(t(lang, "card.unknown", name=echo(pair), names=card_names(catalog, lang)))
    if not prefs.last_payload:
        return Reply(t(lang, "error.no_last_question"))
    try:
        request = decode_request(prefs.last_payload)
        request.card = None
        request.gpu_count = None
        resolved = resolve(request, catalog.sizing)
        requirement = size(resolved, catalog.sizing)
    except (PayloadError, SizingError):
        return Reply(t(lang, "error.no_last_question"))
    rows = []
    for comparison in compare_cards(resolved, requirement, catalog, pair):
        layout = comparison.layout
        verdict, decode = compare_cells(layout, lang)
        rows.append(t(lang, "compare.row", layout=html.escape(layout.label), verdict=verdict,
                      monthly=fmt_usd(lang, layout.monthly_usd), decode=decode))
    question = render_request(answer_for(request, catalog), lang)[0]
    title = t(lang, "compare.title", a=html.escape(pair[0].name), b=html.escape(pair[1].name), question=question)
    need = t(lang, "answer.memory", total=fmt_gb(lang, requirement.total_gb))
    return Reply("\n".join([title, need, *rows]))


FEATURE = Feature(
    "cards",
    commands=(
        Command("cards", Scope.EVERYONE, show_cards, "command.cards"),
        Command("card", Scope.EVERYONE, show_card, "command.card"),
        Command("compare", Scope.EVERYONE, compare, "command.compare"),
    ),
    buttons=(ButtonRoute(CardsPageButton, press_cards_page),),
)
