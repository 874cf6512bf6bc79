"""Price alerts, as a user sets them: /subscribe CARD [below PRICE], /unsubscribe [CARD], /subscriptions. The alerts
go out from bot/operators/alerts.py when a catalog change meets them."""
from __future__ import annotations

import html

from bot.features.cards import card_names
from bot.features.core import Core
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply, echo
from bot.texts.i18n import fmt_usd, t

BELOW_WORDS = ("below", "unter", "<")


async def subscribe(core: Core, given: CommandInput) -> Reply:
    caller = given.caller
    # Alerts go out later, in the language we know the user by: the caller's resolution recorded it.
    lang = caller.language
    if given.shared:  # an alert is as private as the list of them (/subscriptions): set in the private chat only
        return Reply(t(lang, "subscribe.private_only"))
    catalog = core.catalog
    unit = t(lang, f"unit.{catalog.price_unit}")
    words = list(given.args)
    below: float | None = None
    lowered = [w.lower() for w in words]
    for keyword in BELOW_WORDS:
        if keyword in lowered:
            at = lowered.index(keyword)
            price_text = "".join(words[at + 1:]).replace("$", "").replace(",", ".")
            words = words[:at]
            try:
                below = float(price_text)
            except ValueError:
                return Reply(t(lang, "subscribe.usage", unit=unit))
            if not 0 < below < 1_000_000:
                return Reply(t(lang, "subscribe.usage", unit=unit))
            break
    card = catalog.card(" ".join(words)) if words else None
    if card is None:
        if not words:
            return Reply(t(lang, "subscribe.usage", unit=unit))
        return Reply(t(lang, "card.unknown", name=echo(" ".join(words)), names=card_names(catalog, lang)))
    await core.store.subscribe(caller.id, card.id, below)
    below_text = t(lang, "subscribe.below", price=fmt_usd(lang, below), unit=unit) if below is not None else ""
    return Reply(t(lang, "subscribe.ok", card=html.escape(card.name), below=below_text))


async def unsubscribe(core: Core, given: CommandInput) -> Reply:
    caller, args = given.caller, given.args
    if given.shared:  # "removed 2 alerts" in a group would tell it what the sender watches
        return Reply(t(caller.language, "unsubscribe.private_only"))
    card_id = None
    if args:
        card = core.catalog.card(" ".join(args))
        card_id = card.id if card else " ".join(args).lower()
    removed = await core.store.unsubscribe(caller.id, card_id)
    return Reply(t(caller.language, "unsubscribe.ok", count=removed))


async def subscriptions(core: Core, given: CommandInput) -> Reply:
    caller = given.caller
    lang = caller.language
    if given.shared:  # someone's alerts are their own business, as their settings are
        return Reply(t(lang, "subscriptions.private_only"))
    rows = await core.store.subscriptions(caller.id)
    if not rows:
        return Reply(t(lang, "subscriptions.none"))
    catalog = core.catalog
    unit = t(lang, f"unit.{catalog.price_unit}")
    lines = [t(lang, "subscriptions.title")]
    for card_id, below in rows:
        card = catalog.card(card_id)
        below_text = t(lang, "subscribe.below", price=fmt_usd(lang, below), unit=unit) if below is not None else ""
        if card is None:
            below_text += t(lang, "subscriptions.gone")
        lines.append(t(lang, "subscriptions.line", card=html.escape(card.name if card else card_id), below=below_text))
    return Reply("\n".join(lines))


FEATURE = Feature(
    "alerts",
    commands=(
        Command("subscribe", Scope.EVERYONE, subscribe, "command.subscribe"),
        Command("unsubscribe", Scope.EVERYONE, unsubscribe, "command.unsubscribe"),
        Command("subscriptions", Scope.EVERYONE, subscriptions, "command.subscriptions"),
    ),
)
