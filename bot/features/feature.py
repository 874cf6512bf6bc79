"""How a feature declares what a user can do with it: its commands and its buttons, beside their behaviour.

Each feature module (bot/features/questions.py, cards.py, settings.py, ...) ends with one `FEATURE`;
bot/features/commands.py gathers them into the tables both front ends read (as aiogram gathers routers).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, Protocol, TypeVar

from bot.config import Settings
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.reply import CallbackResult, Reply
from bot.texts.i18n import t


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
    answer: Callable[[Core, CommandInput], Awaitable[Reply | None]]  # None: nothing to send (it was sent)
    description: str | None  # locale key of its text in the command menu; None: not listed


ButtonT = TypeVar("ButtonT")
ButtonT_co = TypeVar("ButtonT_co", covariant=True)


class ButtonKind(Protocol[ButtonT_co]):
    """A callback-data class of bot/features/callbacks.py, as a handler uses it."""

    @property
    def invalid_notice(self) -> str: ...

    def matches(self, data: object) -> bool: ...
    def decode(self, data: object) -> ButtonT_co | None: ...


def notice(caller: Caller, key: str) -> CallbackResult:
    """A short notice for the pressed button, the message left as it is (stale or forged data, an unknown kind)."""
    return CallbackResult(None, t(caller.language, key))


def unknown_button(caller: Caller) -> CallbackResult:
    return notice(caller, "error.unknown_action")


@dataclass(frozen=True)
class ButtonRoute(Generic[ButtonT]):
    """A kind of button and what pressing one does: the message it becomes, or a notice."""

    kind: ButtonKind[ButtonT]
    press_decoded: Callable[[Core, Caller, ButtonT, bool], Awaitable[CallbackResult]] = field(repr=False)

    def matches(self, data: object) -> bool:
        return self.kind.matches(data)

    async def press(self, core: Core, caller: Caller, data: object, *, shared: bool = False) -> CallbackResult:
        """Decode and answer; data of this kind that does not decode gets the kind's notice."""
        button = self.kind.decode(data)
        if button is None:
            return notice(caller, self.kind.invalid_notice)
        return await self.press_decoded(core, caller, button, shared)


@dataclass(frozen=True)
class Feature:
    """One feature's commands (in the order of the command menu) and buttons."""

    name: str
    commands: tuple[Command, ...] = ()
    buttons: tuple[ButtonRoute[Any], ...] = ()
