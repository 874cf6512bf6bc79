"""Per-user flood control before any other handler: over the limit, one polite notice, then silence."""
from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import Application, ApplicationHandlerStop, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from bot.app import services
from bot.i18n import normalize_language, t

log = logging.getLogger(__name__)


async def guard(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    user = update.effective_user
    if user is None:
        return
    allowed, notice = services(context).flood.check(user.id)
    if allowed:
        return
    log.info("flood: dropping an update from user %s", user.id)
    lang = normalize_language(user.language_code)
    if notice:
        if update.callback_query is not None:
            await update.callback_query.answer(t(lang, "error.rate_limited"))
        elif update.effective_message is not None:
            await update.effective_message.reply_text(t(lang, "error.rate_limited"))
    elif update.callback_query is not None:
        await update.callback_query.answer()
    raise ApplicationHandlerStop


def register(application: Application) -> None:
    application.add_handler(MessageHandler(filters.ALL, guard), group=-1)
    application.add_handler(CallbackQueryHandler(guard), group=-1)
