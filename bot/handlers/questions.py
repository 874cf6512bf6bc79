"""Sizing questions: /size TEXT, plain messages (private: all; groups: when addressed), and answer buttons."""
from __future__ import annotations

import logging
import re

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes, MessageHandler, filters

from bot.app import services
from bot.handlers.flood import admit
from bot.handlers.start import unknown_command
from bot.telegram_io import is_not_modified, markup, reply, user_info

log = logging.getLogger(__name__)


def _shared(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE


async def size_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    text = " ".join(context.args or [])
    if text.strip() and not await admit(update, context):
        return
    answer = await services(context).conversation.size_command(user_info(update), text, shared=_shared(update))
    await reply(update.effective_message, answer)


def addressed_text(message: Message, bot_username: str | None, bot_id: int) -> str | None:
    """In a group: the text without the @mention when the bot is mentioned or replied to; else None."""
    text = message.text or ""
    if message.reply_to_message and message.reply_to_message.from_user and \
            message.reply_to_message.from_user.id == bot_id:
        return text
    if bot_username:
        mention = "@" + bot_username.lower()
        for entity in message.entities or ():
            if entity.type == MessageEntity.MENTION:
                if message.parse_entity(entity).lower() == mention:
                    return re.sub(re.escape(mention), " ", text, flags=re.IGNORECASE).strip()
    return None


async def private_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if not await admit(update, context):
        return
    answer = await services(context).conversation.ask(user_info(update), update.effective_message.text or "")
    await reply(update.effective_message, answer)


async def group_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    text = addressed_text(message, context.bot.username, context.bot.id)
    if text is None or not await admit(update, context):
        return
    answer = await services(context).conversation.ask(user_info(update), text, shared=True)
    await reply(message, answer)


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    if not await admit(update, context):
        return
    result = await services(context).conversation.on_callback(user_info(update), query.data,
                                                              shared=_shared(update))
    # Answer first: the spinner stops even if the edit below fails.
    await query.answer(result.notice)
    if result.reply is not None and query.message is not None:
        try:
            await query.edit_message_text(result.reply.text, reply_markup=markup(result.reply.buttons))
        except BadRequest as exc:
            if not is_not_modified(exc):
                raise


def register(application: Application) -> None:
    application.add_handler(CommandHandler("size", size_command))
    application.add_handler(CallbackQueryHandler(button))
    application.add_handler(MessageHandler(filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND, private_text))
    application.add_handler(MessageHandler(filters.ChatType.GROUPS & filters.TEXT & ~filters.COMMAND, group_text))
    # Registered last: a command nobody handled, in a private chat, gets the list of commands.
    application.add_handler(MessageHandler(filters.ChatType.PRIVATE & filters.COMMAND, unknown_command))
