"""/start (with an optional deep-link question) and /help."""
from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.app import services
from bot.telegram_io import reply, user_info


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    payload = context.args[0] if context.args else None
    answer = await services(context).conversation.start(user_info(update), payload)
    await reply(update.effective_message, answer)


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await reply(update.effective_message, await services(context).conversation.help(user_info(update)))


def register(application: Application) -> None:
    application.add_handler(CommandHandler("start", start))
    application.add_handler(CommandHandler("help", help_command))


async def unknown_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    command = (update.effective_message.text or "/").split()[0][1:].split("@")[0]
    await reply(update.effective_message, await services(context).conversation.unknown_command(user_info(update),
                                                                                                 command))
