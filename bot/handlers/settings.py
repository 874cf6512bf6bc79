"""/settings and /set KEY VALUE: per-user defaults kept in SQLite."""
from __future__ import annotations

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.app import services
from bot.i18n import t
from bot.telegram_io import reply, user_info, user_language


async def settings_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if update.effective_chat is not None and update.effective_chat.type != ChatType.PRIVATE:
        # Someone's defaults are their own business: not shown to a whole group.
        await update.effective_message.reply_text(t(user_language(update), "settings.private_only"))
        return
    await reply(update.effective_message, await services(context).conversation.settings_view(user_info(update)))


async def set_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await services(context).conversation.set_setting(user_info(update), list(context.args or []))
    await reply(update.effective_message, answer)


def register(application: Application) -> None:
    application.add_handler(CommandHandler("settings", settings_command))
    application.add_handler(CommandHandler("set", set_command))
