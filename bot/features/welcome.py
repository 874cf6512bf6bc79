"""Finding one's way: /start (the welcome, or a deep link's question), /help, and the answer to a command the bot
does not have."""
from __future__ import annotations

import html
import logging

from bot.features.answers import answer_payload, example_buttons
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply
from bot.texts.i18n import t
from bot.texts.render import help_examples, render_help
from engine.sizing.payload import PayloadError

log = logging.getLogger(__name__)


async def show_help(core: Core, given: CommandInput) -> Reply:
    lang = given.caller.language
    return Reply(render_help(lang), example_buttons(lang))


async def unknown_command(caller: Caller, command: str) -> Reply:
    lang = caller.language
    return Reply(t(lang, "help.unknown_command", command=html.escape(command[:32])) + "\n"
                 + html.escape(t(lang, "help.commands")))


async def start(core: Core, given: CommandInput) -> Reply:
    """/start, optionally with a deep-link payload that is a question; a bad payload gets help. In a group
    (/start@bot PAYLOAD) the answer's top-up link must carry nobody's reference."""
    caller, shared = given.caller, given.shared
    payload = given.args[0] if given.args else None
    if payload:
        try:
            # A deep link opens the private chat, whose context it becomes; in a group (/start@bot PAYLOAD)
            # the answer is anonymous and keeps no one's context.
            return await answer_payload(core, caller, payload, anonymous=shared,
                                        chat_id=None if shared else caller.id)
        except PayloadError:
            log.info("start payload rejected: %r", payload[:80])
    lang = caller.language
    user = caller.user
    name = f" {html.escape(user.first_name)}" if user.first_name else ""
    examples = "\n".join(f"• <code>{html.escape(e)}</code>" for e in help_examples(lang))
    return Reply(t(lang, "start.welcome", name=name, intro=t(lang, "help.intro")) + "\n\n"
                 + t(lang, "help.examples") + "\n" + examples,
                 example_buttons(lang))


FEATURE = Feature(
    "welcome",
    commands=(
        Command("help", Scope.EVERYONE, show_help, "command.help"),
        Command("start", Scope.EVERYONE, start, None),
    ),
)
