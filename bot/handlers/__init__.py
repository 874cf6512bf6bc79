"""Telegram handlers, one module per feature, each with `register(app)`; the catch-all text handler is last."""
from __future__ import annotations

from telegram.ext import Application


def register_all(application: Application) -> None:
    from bot.handlers import catalog_commands, errors, operators, questions, settings, staff, start

    start.register(application)
    settings.register(application)
    catalog_commands.register(application)
    staff.register(application)
    operators.register(application)  # its ann: buttons before the catch-all button handler
    questions.register(application)  # /size, buttons, and the catch-all text handler (last)
    errors.register(application)
