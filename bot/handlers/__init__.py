"""Telegram handlers, one module per feature, each with `register(app)`, in the order PTB must try them: the
pre-handler first (group -1), the catch-all button and text handlers last."""
from __future__ import annotations

from bot.context import CardfitApplication


def register_all(application: CardfitApplication) -> None:
    from bot.handlers import buttons, charts, commands, errors, incoming, operators, questions, staff

    incoming.register(application)  # group -1: who is asking, their activity, the flood guard
    commands.register(application)  # every command of the table in bot/commands.py
    staff.register(application)  # inline answers
    operators.register(application)  # the admins' Post/Discard buttons
    charts.register(application)  # the chart button: a photo, not an edit
    buttons.register(application)  # answer buttons per kind, then the catch-all for unknown data
    questions.register(application)  # plain text, and the list of commands for an unknown one (last)
    errors.register(application)
