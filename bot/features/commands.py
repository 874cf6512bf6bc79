"""What a user can do, in two tables both front ends read: the commands (name, who may use it, the answer, the
locale key of its menu text) and the answer buttons (a kind of callback data, the conversation method for it).

The Telegram side registers one handler per row (bot/handlers/commands.py, bot/handlers/buttons.py) and sets the
command menu per scope from the same rows (bot/telegram/app.py); the terminal chat dispatches through them
(bot/cli/chat.py).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, Protocol, TypeVar

from bot.config import Settings
from bot.features.callbacks import AnswerButton, CardsPageButton, CoinButton, ExampleButton, LaunchButton
from bot.features.caller import Caller
from bot.features.card_list import press_cards_page, show_cards
from bot.features.conversation import CallbackResult, Conversation, Reply
from bot.features.launch import press_launch


class Scope(IntEnum):
    """Who may use a command; each scope includes the ones below it (an admin is staff too)."""

    EVERYONE = 0
    STAFF = 1
    ADMIN = 2

    def allows(self, settings: Settings, user_id: int | None) -> bool:
        if self is Scope.ADMIN:
            return settings.is_admin(user_id)
        if self is Scope.STAFF:
            return settings.is_staff(user_id)
        return True

    @property
    def refusal(self) -> str:
        """The locale key of the answer to someone outside the scope."""
        return "error.admin_only" if self is Scope.ADMIN else "error.not_allowed"


@dataclass(frozen=True, slots=True)
class CommandInput:
    caller: Caller
    args: Sequence[str]  # the words after the command
    text: str  # the same, as one string
    shared: bool = False  # said in a group: everyone sees the answer
    bot_username: str | None = None


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    scope: Scope
    answer: Callable[[Conversation, CommandInput], Awaitable[Reply | None]]
    description: str | None  # locale key of its text in the command menu; None: not listed
    # With words after it, it is a sizing question: the flood guard counts it (bot/handlers/incoming.py). /start
    # with a deep-link payload is one too: the payload is sized like /size (issue 15, defect 5).
    asks: bool = False


COMMANDS: tuple[Command, ...] = (  # in the order of the command menu
    Command("size", Scope.EVERYONE, lambda c, i: c.size_command(i.caller, i.text, shared=i.shared),
            "command.size", asks=True),
    Command("cards", Scope.EVERYONE, lambda c, i: show_cards(c, i.caller), "command.cards"),
    Command("card", Scope.EVERYONE, lambda c, i: c.card(i.caller, i.text), "command.card"),
    Command("compare", Scope.EVERYONE, lambda c, i: c.compare(i.caller.user, list(i.args)), "command.compare"),
    Command("settings", Scope.EVERYONE, lambda c, i: c.settings_view(i.caller, shared=i.shared), "command.settings"),
    Command("set", Scope.EVERYONE, lambda c, i: c.set_setting(i.caller, i.args), "command.set"),
    Command("subscribe", Scope.EVERYONE, lambda c, i: c.subscribe(i.caller, i.args, shared=i.shared),
            "command.subscribe"),
    Command("unsubscribe", Scope.EVERYONE, lambda c, i: c.unsubscribe(i.caller, i.args, shared=i.shared),
            "command.unsubscribe"),
    Command("subscriptions", Scope.EVERYONE, lambda c, i: c.subscriptions(i.caller, shared=i.shared),
            "command.subscriptions"),
    Command("help", Scope.EVERYONE, lambda c, i: c.help(i.caller), "command.help"),
    Command("start", Scope.EVERYONE, lambda c, i: c.start(i.caller, i.args[0] if i.args else None, shared=i.shared),
            None, asks=True),
    Command("quote", Scope.STAFF, lambda c, i: c.quote(i.caller, i.text, i.bot_username), "command.quote"),
    Command("reload", Scope.ADMIN, lambda c, i: c.reload(i.caller), "command.reload"),
)
COMMANDS_BY_NAME = {command.name: command for command in COMMANDS}


def menu(scope: Scope) -> list[Command]:
    """The commands listed for someone in `scope`, in table order."""
    return [command for command in COMMANDS if command.scope <= scope and command.description is not None]


# -- answer buttons ---------------------------------------------------------------------------------------------

ButtonT = TypeVar("ButtonT")
ButtonT_co = TypeVar("ButtonT_co", covariant=True)


class ButtonKind(Protocol[ButtonT_co]):
    """A callback-data class of bot/features/callbacks.py, as a handler uses it."""

    @property
    def invalid_notice(self) -> str: ...

    def matches(self, data: object) -> bool: ...
    def decode(self, data: object) -> ButtonT_co | None: ...


@dataclass(frozen=True)
class ButtonRoute(Generic[ButtonT]):
    kind: ButtonKind[ButtonT]
    press_decoded: Callable[[Conversation, Caller, ButtonT, bool], Awaitable[CallbackResult]] = field(repr=False)

    def matches(self, data: object) -> bool:
        return self.kind.matches(data)

    async def press(self, conversation: Conversation, caller: Caller, data: object, *,
                    shared: bool = False) -> CallbackResult:
        """Decode and answer; data of this kind that does not decode gets the kind's notice."""
        button = self.kind.decode(data)
        if button is None:
            return conversation.invalid_button(caller, self.kind.invalid_notice)
        return await self.press_decoded(conversation, caller, button, shared)


BUTTONS: tuple[ButtonRoute[Any], ...] = (
    ButtonRoute(AnswerButton, Conversation.press_answer),
    ButtonRoute(CoinButton, Conversation.press_coin),
    ButtonRoute(ExampleButton, Conversation.press_example),
    ButtonRoute(LaunchButton, press_launch),
    ButtonRoute(CardsPageButton, press_cards_page),
)


def button_route(data: object) -> ButtonRoute[Any] | None:
    return next((route for route in BUTTONS if route.matches(data)), None)
