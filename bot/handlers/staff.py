"""Support staff: inline answers (@bot 70B int4 32k in any chat) and /quote for customers."""
from __future__ import annotations

import logging

from telegram import InlineQueryResultArticle, InputTextMessageContent, Update
from telegram.constants import ParseMode
from telegram.ext import Application, CommandHandler, ContextTypes, InlineQueryHandler

from bot.app import services
from bot.i18n import t
from bot.telegram_io import reply, user_info, user_language

log = logging.getLogger(__name__)
MAX_RESULTS = 50
CACHE_PERSONAL_S = 10
CACHE_SHARED_S = 300


async def inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.inline_query
    results, personal = await services(context).conversation.inline(user_info(update), query.query or "")
    articles = [
        InlineQueryResultArticle(
            id=item["id"], title=item["title"][:256], description=(item.get("description") or "")[:256],
            input_message_content=InputTextMessageContent(item["text"], parse_mode=ParseMode.HTML),
        )
        for item in results[:MAX_RESULTS]
    ]
    await query.answer(articles, cache_time=CACHE_PERSONAL_S if personal else CACHE_SHARED_S, is_personal=personal)


async def quote(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    user = update.effective_user
    if not svc.settings.is_staff(user.id if user else None):
        log.warning("refused /quote from user %s", user.id if user else "?")
        await update.effective_message.reply_text(t(user_language(update), "error.not_allowed"))  # staff only
        return
    text = " ".join(context.args or [])
    await reply(update.effective_message, await svc.conversation.quote(user_info(update), text, context.bot.username))


def register(application: Application) -> None:
    application.add_handler(InlineQueryHandler(inline_query))
    application.add_handler(CommandHandler("quote", quote))
