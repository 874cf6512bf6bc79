"""What a user can do, gathered from the features' declarations into the tables both front ends read: the commands
(name, who may use it, the answer, the locale key of its menu text) and the buttons (a kind of callback data, what
pressing one does).

The Telegram side registers one handler per row (bot/telegram/handlers/commands.py, buttons.py) and sets the
command menu per scope from the same rows (bot/telegram/app.py); the terminal chat dispatches through them
(bot/cli/chat.py). The chart button sends a picture, not an edit: it has its own handler
(bot/telegram/handlers/charts.py, bot/features/chart.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.features import admin, alerts, answers, cards, demand, launch, questions, settings, staff, welcome
from bot.features.feature import ButtonRoute, Command, Feature, Scope

# In the order of the command menu (and of the button handlers: each kind has a prefix of its own, so that order
# decides nothing).
FEATURES: tuple[Feature, ...] = (
    answers.FEATURE, questions.FEATURE, launch.FEATURE, cards.FEATURE, settings.FEATURE, alerts.FEATURE,
    welcome.FEATURE, staff.FEATURE, admin.FEATURE, demand.FEATURE,
)


@dataclass(frozen=True)
class Table:
    """The features' commands and buttons, in the order they are declared."""

    commands: tuple[Command, ...]
    buttons: tuple[ButtonRoute[Any], ...]
    by_name: dict[str, Command] = field(repr=False)

    @classmethod
    def of(cls, features: Sequence[Feature]) -> Table:
        commands = tuple(command for feature in features for command in feature.commands)
        by_name = {command.name: command for command in commands}
        if len(by_name) != len(commands):
            raise ValueError("two features declare one command")
        return cls(commands, tuple(route for feature in features for route in feature.buttons), by_name)

    def command(self, name: str) -> Command | None:
        return self.by_name.get(name)

    def menu(self, scope: Scope) -> list[Command]:
        """The commands listed for someone in `scope`, in table order."""
        return [command for command in self.commands if command.scope <= scope and command.description is not None]

    def button_route(self, data: object) -> ButtonRoute[Any] | None:
        return next((route for route in self.buttons if route.matches(data)), None)


TABLE = Table.of(FEATURES)
