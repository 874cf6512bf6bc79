"""One table of commands, gathered from the feature modules, feeds the handlers, the command menu per scope and
language, and the terminal chat."""
from __future__ import annotations

import html
import io
from dataclasses import dataclass
from typing import ClassVar

import pytest
from telegram.ext import CommandHandler

from bot.config import load_settings
from bot.features import commands
from bot.features.caller import Caller
from bot.features.commands import TABLE, Table
from bot.features.core import Core
from bot.features.feature import ButtonRoute, Command, CommandInput, Feature, Scope
from bot.features.reply import Button, CallbackResult, Reply
from bot.texts.i18n import t
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
                                            ("reload", "Reload the catalog now"),
                                            ("demand", "What customers asked for, this week vs last")]
    assert found[("chat", ADMIN, "de")][-2:] == [("reload", "Katalog jetzt neu laden"),
                                                 ("demand", "Wonach Kunden fragten, diese Woche und letzte")]
    assert len(found) == 9


async def test_every_command_of_the_table_has_its_handler(bot):
    registered = {name for handler in bot.app.handlers[0] if isinstance(handler, CommandHandler)
                  for name in handler.commands}
    assert registered == {command.name for command in TABLE.commands}


def test_scopes_include_the_ones_below():
    assert [c.name for c in TABLE.menu(Scope.EVERYONE)] == [name for name, _ in MENU_EN]
    assert {c.name for c in TABLE.menu(Scope.ADMIN)} - {c.name for c in TABLE.menu(Scope.STAFF)} == {"reload", "demand"}


def test_two_features_cannot_declare_one_command():
    twice = Feature("twice", commands=(TABLE.commands[0],))
    with pytest.raises(ValueError):
        Table.of((*commands.FEATURES, twice))


# -- the recipe "add a chat command" (docs/architecture.md): a feature module and one line in FEATURES -------------

@dataclass(frozen=True, slots=True)
class RollButton:
    """A toy feature's callback data: roll again, `sides` as the button says."""

    sides: int
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"roll:{self.sides}"

    @staticmethod
    def matches(data: object) -> bool:
        return isinstance(data, str) and data.startswith("roll:")

    @classmethod
    def decode(cls, data: object) -> RollButton | None:
        raw = data[5:] if isinstance(data, str) else ""
        return cls(int(raw)) if raw.isascii() and raw.isdigit() else None


async def roll(core: Core, given: CommandInput) -> Reply:
    sides = given.args[0] if given.args else "6"
    return Reply(f"rolled a {html.escape(sides)}-sided die on {len(core.catalog.cards)} cards",
                 [[Button("again", RollButton(int(sides) if sides.isdigit() else 6).encode())]])


async def press_roll(core: Core, caller: Caller, button: RollButton, shared: bool = False) -> CallbackResult:
    return CallbackResult(Reply(f"rolled again: {button.sides} sides"))


DICE = Feature("dice", commands=(Command("roll", Scope.EVERYONE, roll, "command.help"),),
               buttons=(ButtonRoute(RollButton, press_roll),))


@pytest.fixture
def with_dice(monkeypatch):
    monkeypatch.setattr(commands, "TABLE", Table.of((*commands.FEATURES, DICE)))


async def test_a_new_feature_module_is_answered_listed_and_pressed_through_the_real_application(with_dice, tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"))
    async with Harness(settings) as bot:
        assert ("roll", "How to ask") in menus(bot)[("default", None, "en")]  # its description's locale key
        await bot.send(7, "/roll 20")
        reply = bot.replies(7)[-1]
        assert reply["text"].startswith("rolled a 20-sided die on ")
        assert reply["reply_markup"]["inline_keyboard"] == [[{"text": "again", "callback_data": "roll:20"}]]
        await bot.press(7, "roll:20")
        assert bot.request.sent("editMessageText")[-1].params["text"] == "rolled again: 20 sides"
        await bot.press(7, "roll:x")  # data of its kind that does not decode: the kind's notice
        assert bot.request.sent("answerCallbackQuery")[-1].params["text"] == t("en", "error.stale")


async def test_a_new_feature_module_is_answered_in_the_terminal_chat(with_dice, tmp_path):
    from bot.cli.chat import run_chat

    out = io.StringIO()
    await run_chat(load_settings(db=str(tmp_path / "chat.sqlite3")), io.StringIO("/roll 8\n1\n"), out)
    assert "rolled a 8-sided die" in out.getvalue() and "[1] again" in out.getvalue()
    assert "rolled again: 8 sides" in out.getvalue()
