"""One table of commands feeds the handlers, the command menu per scope and language, and the terminal chat."""
from __future__ import annotations

import pytest
from telegram.ext import CommandHandler

from bot.config import load_settings
from bot.features.commands import COMMANDS, Scope, menu
from tests.support.botharness import TOKEN, Harness

ADMIN, STAFF = 42, 43
MENU_EN = [("size", "Size a model: /size 70B int4 32k"), ("cards", "All cards and prices"),
           ("card", "One card in detail"), ("compare", "Compare two cards for your last question"),
           ("settings", "Your defaults"), ("set", "Change a default: /set precision int4"),
           ("subscribe", "Price alert: /subscribe H100 below 1500"), ("unsubscribe", "Stop price alerts"),
           ("subscriptions", "Your price alerts"), ("help", "How to ask")]
MENU_DE = [("size", "Modell dimensionieren: /size 70B int4 32k"), ("cards", "Alle Karten und Preise"),
           ("card", "Eine Karte im Detail"), ("compare", "Zwei Karten für Ihre letzte Frage vergleichen"),
           ("settings", "Ihre Standardwerte"), ("set", "Standard ändern: /set precision int4"),
           ("subscribe", "Preisalarm: /subscribe H100 below 1500"), ("unsubscribe", "Preisalarme beenden"),
           ("subscriptions", "Ihre Preisalarme"), ("help", "So fragen Sie")]


@pytest.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                             staff_ids=f"{STAFF}")
    async with Harness(settings) as harness:
        yield harness


def menus(bot: Harness) -> dict[tuple[str, int | None, str | None], list[tuple[str, str]]]:
    found = {}
    for call in bot.request.sent("setMyCommands"):
        scope = call.params.get("scope") or {"type": "default"}
        key = (scope["type"], scope.get("chat_id"), call.params.get("language_code"))
        found[key] = [(c["command"], c["description"]) for c in call.params["commands"]]
    return found


async def test_the_menu_per_scope_and_language(bot):
    found = menus(bot)
    assert found[("default", None, None)] == found[("default", None, "en")] == MENU_EN
    assert found[("default", None, "de")] == MENU_DE
    assert found[("chat", STAFF, "en")] == [*MENU_EN, ("quote", "Customer-ready answer: /quote 70B int4")]
    assert found[("chat", STAFF, "de")] == [*MENU_DE, ("quote", "Antwort für Kunden: /quote 70B int4")]
    assert found[("chat", ADMIN, "en")] == [*MENU_EN, ("quote", "Customer-ready answer: /quote 70B int4"),
                                            ("reload", "Reload the catalog now")]
    assert found[("chat", ADMIN, "de")][-1] == ("reload", "Katalog jetzt neu laden")
    assert len(found) == 9


async def test_every_command_of_the_table_has_its_handler(bot):
    registered = {name for handler in bot.app.handlers[0] if isinstance(handler, CommandHandler)
                  for name in handler.commands}
    assert registered == {command.name for command in COMMANDS}


def test_scopes_include_the_ones_below():
    assert [c.name for c in menu(Scope.EVERYONE)] == [name for name, _ in MENU_EN]
    assert {c.name for c in menu(Scope.ADMIN)} - {c.name for c in menu(Scope.STAFF)} == {"reload"}
    # /start PAYLOAD sizes its deep link's request, so it counts as a question for the flood guard
    assert [c.name for c in COMMANDS if c.asks] == ["size", "start"]
