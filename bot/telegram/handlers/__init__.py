"""Telegram handlers, one module per feature, each with `register(app)`, in the order PTB must try them: the
pre-handler first (group -1), then plain text (no other handler takes it), the catch-all button and
unknown-command handlers last."""
from __future__ import annotations

from bot.telegram.context import CardfitApplication


def register_all(application: CardfitApplication) -> None:
    from bot.telegram.handlers import buttons, charts, commands, errors, incoming, operators, questions, staff

    incoming.register(application)  # group -1: who is asking, their activity, the flood guard
    questions.register_text(application)  # plain text first: what most updates are, taken by nothing else
    commands.register(application)  # every command of the table in bot/features/commands.py
    staff.register(application)  # inline answers
    operators.register(application)  # the admins' Post/Discard buttons
    charts.register(application)  # the chart button: a photo, not an edit
    buttons.register(application)  # answer buttons per kind, then the catch-all for unknown data
    questions.register(application)  # the list of commands for an unknown one (last)
    errors.register(application)
