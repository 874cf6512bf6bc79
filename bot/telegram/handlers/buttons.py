"""Answer buttons: one CallbackQueryHandler per kind of callback data the features declare (bot/features/commands.py),
registered with that kind's `matches` as PTB's pattern, and a catch-all last for data of no known kind."""
from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.ext import CallbackQueryHandler

from bot.features import commands
from bot.features.feature import ButtonRoute, unknown_button
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import is_shared, query_of, show


def button_handler(route: ButtonRoute[Any]) -> CallbackQueryHandler[CustomContext, None]:
    async def handle(update: Update, context: CustomContext) -> None:
        query = query_of(update)
        if route.matches(query.data):
            result = await route.press(context.core, context.caller, query.data, shared=is_shared(update))
        else:  # a query without data: PTB offers it to the first handler with a pattern
            result = unknown_button(context.caller)
        await show(query, result)

    return CallbackQueryHandler(handle, pattern=route.matches)


async def unknown_data(update: Update, context: CustomContext) -> None:
    await show(query_of(update), unknown_button(context.caller))


def register(application: CardfitApplication) -> None:
    for route in commands.TABLE.buttons:
        application.add_handler(button_handler(route))
    application.add_handler(CallbackQueryHandler(unknown_data))
