"""Sizing questions in the chat: a message, /size, or a help example's button, answered and kept as the chat's last
question, so a follow-up ("and in fp8?") can change it."""
from __future__ import annotations

from bot.features.answers import answer_reply, example_buttons, private_chat, remember_answer, try_encode
from bot.features.ask import ask
from bot.features.callbacks import ExampleButton
from bot.features.caller import Caller
from bot.features.cards import card_names
from bot.features.core import Core
from bot.features.demand import record_demand
from bot.features.feature import ButtonRoute, Command, CommandInput, Feature, Scope, notice
from bot.features.reply import CallbackResult, Reply
from bot.texts.i18n import t
from bot.texts.render import help_examples, render_parse_error
from engine.sizing.payload import PayloadError, decode_request
from engine.sizing.rule import SizeRequest


async def answer_question(core: Core, caller: Caller, text: str, *, shared: bool = False, chat_id: int | None = None,
                          answered: str | None = None) -> Reply:
    """A message that may be a sizing question. `shared`: in a group, where everyone sees the answer and
    may tap its buttons, so its top-up link carries nobody's reference. `chat_id`: the chat whose last
    question a follow-up ("and in fp8?") changes, and that keeps this one (None: keep nothing).
    `answered`: the payload of the bot's answer this message replies to: a follow-up changes that one."""

    async def previous() -> SizeRequest | None:
        """The request a follow-up changes: the answer replied to, else the chat's last question."""
        if answered:
            try:
                return decode_request(answered)
            except PayloadError:
                pass
        return await core.store.kept_request(chat_id) if chat_id is not None else None

    asked = await ask(text, core.catalog, core.catalogs.vocabulary, core.asker(caller, anonymous=shared),
                      hub=core.hub, previous=previous)
    lang = caller.language_for(asked.told_language)
    if asked.needs_card:
        return Reply(t(lang, "followup.which_card", cards=card_names(core.catalog, lang)))
    if asked.answer is None or asked.request is None or asked.filled is None:
        return Reply(render_parse_error(lang, asked.error or "not a sizing question"), example_buttons(lang))
    payload = try_encode(asked.filled)
    answer = asked.answer
    reply = answer_reply(core.catalog, answer, lang, payload)
    if answer.error is None:
        # The chat keeps the question as the user set it: their settings are filled in again next time.
        kept = asked.request
        kept_payload = try_encode(kept) if asked.from_settings else payload
        await remember_answer(core, caller.id, text[:500], payload, caller.telegram_language,
                              None if chat_id is None else (chat_id, kept, kept_payload))
    await record_demand(core, answer, lang)  # after the user's own state: a follow-up must not wait on it
    return reply


async def size_command(core: Core, given: CommandInput) -> Reply:
    if not given.text.strip():
        return Reply(t(given.caller.language, "size.usage"))
    return await answer_question(core, given.caller, given.text, shared=given.shared,
                                 chat_id=private_chat(given.caller, given.shared))


async def press_example(core: Core, caller: Caller, button: ExampleButton, shared: bool = False) -> CallbackResult:
    """One of the help's example questions, asked."""
    examples = help_examples(button.lang or caller.language)
    if not 1 <= button.index <= len(examples):
        return notice(caller, "error.unknown_action")
    return CallbackResult(await answer_question(core, caller, examples[button.index - 1], shared=shared,
                                                chat_id=private_chat(caller, shared)))


FEATURE = Feature(
    "questions",
    commands=(Command("size", Scope.EVERYONE, size_command, "command.size"),),
    buttons=(ButtonRoute(ExampleButton, press_example),),
)
