"""The 🚀 Launch button: the launch command of an answer's layout, as copyable code."""
from __future__ import annotations

from bot.features.answers import reopen
from bot.features.callbacks import LaunchButton
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.feature import ButtonRoute, Feature, notice
from bot.features.reply import CallbackResult, Reply
from bot.texts.render import localize
from bot.texts.render_serving import launch_reply


async def press_launch(core: Core, caller: Caller, button: LaunchButton, shared: bool = False) -> CallbackResult:
    """The message becomes the command (a <pre> block), with a button back to the answer it came from."""
    opened = reopen(core, caller, button, shared)
    if opened is None:
        return notice(caller, "error.stale")
    answer, lang = opened.answer, opened.lang
    text = launch_reply(answer, lang, lambda note: localize(lang, note, resolved=answer.resolved))
    return CallbackResult(Reply(text, opened.back))


FEATURE = Feature("launch", buttons=(ButtonRoute(LaunchButton, press_launch),))
