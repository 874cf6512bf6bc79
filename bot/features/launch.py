"""The 🚀 Launch button: the launch command of an answer's layout, as copyable code."""
from __future__ import annotations

from bot.features.ask import answer_for
from bot.features.callbacks import AnswerButton, LaunchButton, within_limit
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.feature import ButtonRoute, Feature, notice
from bot.features.reply import Button, CallbackResult, Reply
from bot.texts.i18n import t
from bot.texts.render import localize
from bot.texts.render_serving import launch_reply
from engine.sizing.payload import PayloadError, decode_request


async def press_launch(core: Core, caller: Caller, button: LaunchButton, shared: bool = False) -> CallbackResult:
    """The message becomes the command (a <pre> block), with a button back to the answer it came from."""
    try:
        request = decode_request(button.payload)
    except PayloadError:
        return notice(caller, "error.stale")
    lang = caller.preferences.language or button.lang
    answer = answer_for(request, core.catalog, core.asker(caller, anonymous=shared))
    if answer.error is not None:
        return notice(caller, "error.stale")
    back = within_limit(AnswerButton(False, lang, button.payload).encode())
    buttons = [[Button(t(lang, "serving.back"), data=back)]] if back else []
    text = launch_reply(answer, lang, lambda note: localize(lang, note, resolved=answer.resolved))
    return CallbackResult(Reply(text, buttons))


FEATURE = Feature("launch", buttons=(ButtonRoute(LaunchButton, press_launch),))
