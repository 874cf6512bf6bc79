"""Every command the features declare (bot/features/commands.py) as a CommandHandler: the scope check, then the
feature's answer."""
from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import CommandHandler

from bot.features import commands
from bot.features.feature import Command, CommandInput
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import is_shared, message_of, reply, user_id, user_language
from bot.texts.i18n import t

log = logging.getLogger(__name__)


def command_handler(command: Command) -> CommandHandler[CustomContext, None]:
    async def handle(update: Update, context: CustomContext) -> None:
        message = message_of(update)
        if not command.scope.allows(context.settings, user_id(update)):
            log.warning("refused /%s from user %s", command.name, user_id(update) or "?")
            await message.reply_text(t(user_language(update), command.scope.refusal))
            return
        args = list(context.args or [])
        given = CommandInput(context.caller, args, " ".join(args), shared=is_shared(update),
                             bot_username=context.bot.username)
        answer = await command.answer(context.core, given)
        if answer is not None:
            await reply(message, answer)

    return CommandHandler(command.name, handle)


def register(application: CardfitApplication) -> None:
    for command in commands.TABLE.commands:
        application.add_handler(command_handler(command))
