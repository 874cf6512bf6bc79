"""The 🚀 Launch button (issue #11): the launch command of an answer's layout, as copyable code."""
from __future__ import annotations

from bot.features.callbacks import AnswerButton, LaunchButton, within_limit
from bot.features.caller import Caller
from bot.features.conversation import Button, CallbackResult, Conversation, Reply
from bot.texts.i18n import t
from bot.texts.render import localize
from bot.texts.render_serving import launch_reply
from engine.sizing.payload import PayloadError, decode_request


async def press_launch(conversation: Conversation, caller: Caller, button: LaunchButton,
                       shared: bool = False) -> CallbackResult:
    """The message becomes the command (a <pre> block), with a button back to the answer it came from."""
    try:
        request = decode_request(button.payload)
    except PayloadError:
        return CallbackResult(None, t(caller.language, "error.stale"))
    prefs = caller.preferences
    lang = prefs.language or button.lang
    answer = conversation.answer(request, caller.user, prefs, anonymous=shared)
    if answer.error is not None:
        return CallbackResult(None, t(caller.language, "error.stale"))
    back = within_limit(AnswerButton(False, lang, button.payload).encode())
    buttons = [[Button(t(lang, "serving.back"), data=back)]] if back else []
    text = launch_reply(answer, lang, lambda note: localize(lang, note, resolved=answer.resolved))
    return CallbackResult(Reply(text, buttons))
