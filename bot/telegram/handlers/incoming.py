"""Before any handler (group -1): what the update is for the bot, the flood guard for what costs an answer, and
the caller — user, preferences, language — resolved once and put on the context, activity recorded with it; where
others read the answer (a group), the caller's settings are left out of it.

The flood guard counts what costs an answer, in two budgets (bot/telegram/flood.py): questions (private text, group
text addressed to the bot, every command with words after it: /size 70B, /compare H100 A100, /card H100,
/start PAYLOAD; a help example's button) and taps (a bare command such as /help or /cards, and buttons that only
show an answer again: toggles, Details, coins), so a run of taps never uses up the next question. Every command
counts, so a new one needs no flag to be guarded. Inline queries, the admins' announcement buttons and group
chatter that is not addressed to the bot do not count. Over a limit: one polite notice per window, then silence,
and no handler runs (ApplicationHandlerStop).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.ext import Application, ApplicationHandlerStop, TypeHandler

from bot import metrics
from bot.features.callbacks import AnnouncementButton, ExampleButton
from bot.features.caller import resolve_caller
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.flood import Kind
from bot.telegram.handlers.questions import GROUP_TEXT, PRIVATE_COMMAND, PRIVATE_TEXT, addressed_text
from bot.telegram.ptb import is_shared, user_info, user_language
from bot.texts.i18n import t

log = logging.getLogger(__name__)
GROUP = -1


@dataclass(frozen=True, slots=True)
class Incoming:
    """What an update is for the bot."""

    counted: Kind | None  # the flood guard's budget it uses ("question" or "tap"), None: not counted
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
        return Incoming(counted=None, activity=False)
    if update.callback_query is not None:
        return Incoming(counted=_button_budget(update.callback_query.data), activity=True)
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or chat.type == ChatType.CHANNEL:
        return None
    if PRIVATE_TEXT.check_update(update):
        return Incoming(counted="question", activity=True)
    if GROUP_TEXT.check_update(update):
        return Incoming("question", True) if addressed_text(message, bot_username, bot_id) is not None else None
    command = command_in(message, bot_username)
    if command is not None:
        _, args = command
        return Incoming(counted="question" if args else "tap", activity=True)
    if PRIVATE_COMMAND.check_update(update):  # another bot's command in a private chat: answered with the list
        return Incoming(counted="tap", activity=True)
    return None


def _button_budget(data: object) -> Kind | None:
    """A help example asks a question; the admins' buttons are not counted; every other button (toggles,
    Details, coins, and data of no known kind, answered with a notice) shows an answer again: a tap."""
    if AnnouncementButton.matches(data):
        return None
    return "question" if ExampleButton.matches(data) else "tap"


async def prepare(update: Update, context: CustomContext) -> None:
    _forget_persistence_marks(context.application)
    try:
        admitted = await _prepare(update, context)
    except Exception as exc:
        # Reported once, here: the handlers would only fail again on the missing caller.
        await context.application.process_error(update, exc)
        raise ApplicationHandlerStop from exc
    if not admitted:
        raise ApplicationHandlerStop


def _forget_persistence_marks(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """PTB marks each update's user and chat for its persistence (Application._mark_for_persistence_update, after
    the handlers ran) and only a persistence's update run empties those sets. Cardfit has no persistence (its
    state is in the store), so without this they keep every user and chat ever seen (memory must stay flat)."""
    if application.persistence is None:
        application._user_ids_to_be_updated_in_persistence.clear()
        application._chat_ids_to_be_updated_in_persistence.clear()


async def _prepare(update: Update, context: CustomContext) -> bool:
    incoming = classify(update, context.bot.username, context.bot.id)
    if incoming is None:
        return True
    if incoming.counted is not None and not await _admit(update, context, incoming.counted):
        return False
    record = incoming.activity and update.effective_user is not None
    caller = await resolve_caller(context.store, user_info(update), record_activity=record)
    context.caller = caller.in_public() if read_by_others(update) else caller
    return True


def read_by_others(update: Update) -> bool:
    """The answer is read in a group or channel: a message or button there, or an inline query typed in one (its
    result is sent there). A member's own settings then shape no answer (bot/features/caller.py)."""
    if update.inline_query is not None:
        return update.inline_query.chat_type in (ChatType.GROUP, ChatType.SUPERGROUP, ChatType.CHANNEL)
    return is_shared(update)


async def _admit(update: Update, context: CustomContext, kind: Kind) -> bool:
    """True when this user may have another answer now; otherwise tell them once per window and say False."""
    user = update.effective_user
    if user is None:
        return True
    allowed, notice = context.flood.check(user.id, kind)
    if allowed:
        return True
    log.info("flood: dropping an update from user %s", user.id)
    metrics.FLOOD_DROPS.labels(kind).inc()
    lang = user_language(update)
    if update.callback_query is not None:
        await update.callback_query.answer(t(lang, "error.rate_limited") if notice else None)
    elif notice and update.effective_message is not None:
        await update.effective_message.reply_text(t(lang, "error.rate_limited"))
    return False


def register(application: CardfitApplication) -> None:
    application.add_handler(TypeHandler(Update, prepare), group=GROUP)
