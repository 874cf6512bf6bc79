"""/cards: the catalog's cards in pages that each fit one Telegram message, with ◀ / ▶ buttons between them."""
from __future__ import annotations

from bot.features.callbacks import CardsPageButton
from bot.features.caller import Caller
from bot.features.conversation import Button, CallbackResult, Conversation, Reply
from bot.texts.i18n import t
from bot.texts.render import card_pages


def cards_page(conversation: Conversation, lang: str, page: int) -> Reply | None:
    """Page `page` (0-based) of the catalog in service, None when it has no such page (any more)."""
    pages = card_pages(conversation.catalog, lang)
    if not 0 <= page < len(pages):
        return None
    row = []
    if page > 0:
        row.append(Button(t(lang, "cards.previous"), data=CardsPageButton(lang, page - 1).encode()))
    if page + 1 < len(pages):
        row.append(Button(t(lang, "cards.next"), data=CardsPageButton(lang, page + 1).encode()))
    return Reply(pages[page], [row] if row else [])


async def show_cards(conversation: Conversation, caller: Caller) -> Reply:
    reply = cards_page(conversation, caller.language, 0)
    assert reply is not None  # card_pages always has a first page
    return reply


async def press_cards_page(conversation: Conversation, caller: Caller, button: CardsPageButton,
                           shared: bool = False) -> CallbackResult:
    """The message becomes that page; a page the catalog no longer has (it shrank since) is stale."""
    reply = cards_page(conversation, caller.preferences.language or button.lang, button.page)
    if reply is None:
        return CallbackResult(None, t(caller.language, "error.stale"))
    return CallbackResult(reply)
