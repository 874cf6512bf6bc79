"""Support staff: inline answers (@bot 70B int4 32k in any chat). /quote is a staff command of the table."""
from __future__ import annotations

from telegram import InlineQueryResultArticle, InputTextMessageContent, Update
from telegram.constants import ParseMode
from telegram.ext import InlineQueryHandler

from bot.features.staff import inline_results
from bot.telegram.context import CardfitApplication, CustomContext
from bot.texts.render import clip

MAX_RESULTS = 50
CACHE_PERSONAL_S = 10
CACHE_SHARED_S = 300


async def inline_query(update: Update, context: CustomContext) -> None:
    query = update.inline_query
    if query is None:
        return
    results, personal = await inline_results(context.core, context.caller, query.query or "")
    articles = [
        InlineQueryResultArticle(
            id=item["id"], title=item["title"][:256], description=(item.get("description") or "")[:256],
            input_message_content=InputTextMessageContent(clip(item["text"]), parse_mode=ParseMode.HTML),
        )
        for item in results[:MAX_RESULTS]
    ]
    await query.answer(articles, cache_time=CACHE_PERSONAL_S if personal else CACHE_SHARED_S, is_personal=personal)


def register(application: CardfitApplication) -> None:
    application.add_handler(InlineQueryHandler(inline_query))
