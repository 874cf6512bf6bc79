"""Sizing questions as plain messages (private: all; groups: when addressed), and the list of commands for an
unknown one; the answering is bot/features/questions.py's, as for /size. Each chat keeps its last question for
follow-ups ("and in fp8?"); a message replying to one of the bot's answers follows up that answer."""
from __future__ import annotations

import re

from telegram import Message, MessageEntity, Update
from telegram.ext import MessageHandler, filters

from bot.features.callbacks import AnswerButton, CoinButton
from bot.features.questions import answer_question
from bot.features.welcome import unknown_command as unknown_command_reply
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import message_of, reply

PRIVATE_TEXT = filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND
GROUP_TEXT = filters.ChatType.GROUPS & filters.TEXT & ~filters.COMMAND
PRIVATE_COMMAND = filters.ChatType.PRIVATE & filters.COMMAND


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


def answered_payload(message: Message, bot_id: int) -> str | None:
    """When the message replies to one of the bot's answers: that answer's request, as its buttons carry it
    (bot/features/callbacks.py), so a follow-up changes THAT answer. The coin picker's button carries the answer's own
    payload; failing that, the last answer button (Details/Less: the toggles before it carry variants)."""
    answered = message.reply_to_message
    if answered is None or answered.from_user is None or answered.from_user.id != bot_id:
        return None
    keyboard = answered.reply_markup.inline_keyboard if answered.reply_markup else ()
    data = [button.callback_data for row in keyboard for button in row]
    for item in data:
        coin = CoinButton.decode(item)
        if coin is not None and coin.coin is None:
            return coin.payload
    shown = [button.payload for button in map(AnswerButton.decode, data) if button is not None]
    return shown[-1] if shown else None


async def private_text(update: Update, context: CustomContext) -> None:
    message = message_of(update)
    answered = answered_payload(message, context.bot.id)
    await reply(message, await answer_question(context.core, context.caller, message.text or "",
                                               chat_id=message.chat_id, answered=answered))


async def group_text(update: Update, context: CustomContext) -> None:
    message = message_of(update)
    text = addressed_text(message, context.bot.username, context.bot.id)
    if text is None:  # chatter among the members: not for the bot (and no caller was resolved for it)
        return
    # Whoever replies to an answer follows it up: the request travels with the answer, not with a user.
    answered = answered_payload(message, context.bot.id)
    await reply(message, await answer_question(context.core, context.caller, text, shared=True,
                                               chat_id=message.chat_id, answered=answered))


async def unknown_command(update: Update, context: CustomContext) -> None:
    message = message_of(update)
    command = (message.text or "/").split()[0][1:].split("@")[0]
    await reply(message, await unknown_command_reply(context.caller, command))


def register_text(application: CardfitApplication) -> None:
    """Registered first of group 0: most updates are questions, and PTB tries a group's handlers in turn. No other
    handler takes a message that is text and not a command, so the order decides nothing else."""
    application.add_handler(MessageHandler(PRIVATE_TEXT, private_text))
    application.add_handler(MessageHandler(GROUP_TEXT, group_text))


def register(application: CardfitApplication) -> None:
    # Registered last: a command nobody handled, in a private chat, gets the list of commands.
    application.add_handler(MessageHandler(PRIVATE_COMMAND, unknown_command))
