"""/cards, /card NAME and /compare A B."""
from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.app import services
from bot.telegram_io import reply, user_info


async def cards(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await reply(update.effective_message, await services(context).conversation.cards(user_info(update)))


async def card(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await services(context).conversation.card(user_info(update), " ".join(context.args or []))
    await reply(update.effective_message, answer)


async def compare(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await services(context).conversation.compare(user_info(update), list(context.args or []))
    await reply(update.effective_message, answer)


def register(application: Application) -> None:
    application.add_handler(CommandHandler("cards", cards))
    application.add_handler(CommandHandler("card", card))
    application.add_handler(CommandHandler("compare", compare))
