"""Before any handler (group -1): what the update is for the bot, the flood guard for what costs an answer, and
the caller — user, preferences, language — resolved once and put on the context, activity recorded with it.

The flood guard counts only what costs a sizing answer: questions (private text, group text addressed to the
bot), /size with words after it, and answer buttons. Commands, inline queries, the admins' announcement buttons
and group chatter that is not addressed to the bot do not count. Over the limit: one polite notice per window,
then silence, and no handler runs (ApplicationHandlerStop).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop, TypeHandler

from bot.callbacks import AnnouncementButton
from bot.caller import resolve_caller
from bot.commands import COMMANDS_BY_NAME
from bot.context import CardfitApplication, CustomContext
from bot.handlers.questions import GROUP_TEXT, PRIVATE_COMMAND, PRIVATE_TEXT, addressed_text
from bot.i18n import t
from bot.telegram_io import user_info, user_language

log = logging.getLogger(__name__)
GROUP = -1


@dataclass(frozen=True, slots=True)
class Incoming:
    """What an update is for the bot."""

    counted: bool  # costs a sizing answer: the flood guard counts it
    activity: bool  # the user wrote to the bot: they are reachable, and we learn their client's language


def command_in(message: Message, bot_username: str | None) -> tuple[str, list[str]] | None:
    """(name, args) when the message is a command to this bot, by the test PTB's CommandHandler applies: a
    bot_command entity at offset 0, and an @addressee, if any, that is this bot."""
    entities = message.entities
    text = message.text
    if not text or not entities or entities[0].type != MessageEntity.BOT_COMMAND or entities[0].offset != 0:
        return None
    name, _, addressee = text[1:entities[0].length].partition("@")
    if addressee and addressee.lower() != (bot_username or "").lower():
        return None
    return name.lower(), text.split()[1:]


def classify(update: Update, bot_username: str | None, bot_id: int) -> Incoming | None:
    """None for updates no handler answers (unaddressed group chatter, channel posts, member updates ...)."""
    if update.inline_query is not None:
        return Incoming(counted=False, activity=False)
    if update.callback_query is not None:
        return Incoming(counted=not AnnouncementButton.matches(update.callback_query.data), activity=True)
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or chat.type == ChatType.CHANNEL:
        return None
    if PRIVATE_TEXT.check_update(update):
        return Incoming(counted=True, activity=True)
    if GROUP_TEXT.check_update(update):
        return Incoming(True, True) if addressed_text(message, bot_username, bot_id) is not None else None
    command = command_in(message, bot_username)
    if command is not None:
        name, args = command
        known = COMMANDS_BY_NAME.get(name)
        return Incoming(counted=bool(known and known.asks and args), activity=True)
    if PRIVATE_COMMAND.check_update(update):  # another bot's command in a private chat: answered with the list
        return Incoming(counted=False, activity=True)
    return None


async def prepare(update: Update, context: CustomContext) -> None:
    try:
        admitted = await _prepare(update, context)
    except Exception as exc:
        # Reported once, here: the handlers would only fail again on the missing caller.
        await context.application.process_error(update, exc)
        raise ApplicationHandlerStop from exc
    if not admitted:
        raise ApplicationHandlerStop


async def _prepare(update: Update, context: CustomContext) -> bool:
    incoming = classify(update, context.bot.username, context.bot.id)
    if incoming is None:
        return True
    if incoming.counted and not await _admit(update, context):
        return False
    record = incoming.activity and update.effective_user is not None
    context.caller = await resolve_caller(context.store, user_info(update), record_activity=record)
    return True


async def _admit(update: Update, context: CustomContext) -> bool:
    """True when this user may have another answer now; otherwise tell them once per window and say False."""
    user = update.effective_user
    if user is None:
        return True
    allowed, notice = context.flood.check(user.id)
    if allowed:
        return True
    log.info("flood: dropping an update from user %s", user.id)
    lang = user_language(update)
    if update.callback_query is not None:
        await update.callback_query.answer(t(lang, "error.rate_limited") if notice else None)
    elif notice and update.effective_message is not None:
        await update.effective_message.reply_text(t(lang, "error.rate_limited"))
    return False


def register(application: CardfitApplication) -> None:
    application.add_handler(TypeHandler(Update, prepare), group=GROUP)
