"""An answer as a message, and its buttons: the precision and context toggles, Details/Less, the coin and its picker.

Every button carries the request it answers (engine.sizing.payload), so pressing one answers that request again in
another view; a deep link (/start PAYLOAD) is answered the same way (bot/features/welcome.py).
"""
from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.features.ask import answer_for
from bot.features.callbacks import (
    AnswerButton,
    ChartButton,
    CoinButton,
    ExampleButton,
    LaunchButton,
    SpeedButton,
    within_limit,
)
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.demand import record_demand
from bot.features.feature import ButtonRoute, Feature, notice
from bot.features.reply import Button, CallbackResult, Reply
from bot.features.toggles import PRECISION_TOGGLES, context_toggles
from bot.store import DATABASE_ERRORS
from bot.texts.i18n import fmt_usd, t
from bot.texts.render import help_examples, render_answer, speed_detail
from catalog.schema import Catalog
from engine.answer.build import Answer
from engine.sizing.payload import PayloadError, decode_request, encode_request
from engine.sizing.rule import SizeRequest

log = logging.getLogger(__name__)


def answer_reply(catalog: Catalog, answer: Answer, lang: str, payload: str | None, *, details: bool = False,
                 coin_picker: bool = False) -> Reply:
    text = render_answer(answer, lang, details=details)
    if answer.error:
        return Reply(text, example_buttons(lang))
    return Reply(text, answer_buttons(catalog, answer, lang, payload, details=details, coin_picker=coin_picker))


def answer_buttons(catalog: Catalog, answer: Answer, lang: str, payload: str | None, *, details: bool,
                   coin_picker: bool = False) -> list[list[Button]]:
    rows: list[list[Button]] = []
    request = answer.request
    resolved = answer.resolved
    if payload and resolved is not None:
        if resolved.workload in ("inference", "lora"):
            current = resolved.precision if resolved.quant is None else None  # a named format is no toggle
            rows.append(_toggle_row(request, "precision", PRECISION_TOGGLES, current, details, lang))
        if resolved.workload == "inference" and resolved.shape.kv_known:  # no KV cache (Whisper, CLIP): no row
            rows.append(_toggle_row(request, "context_tokens", context_toggles(resolved.shape.context_max),
                                    resolved.context_tokens, details, lang))
        rows = [[b for b in row if b.data] for row in rows]
        rows = [row for row in rows if row]
    if answer.topup_url and answer.topup_amount_usd is not None:
        rows.append([Button(t(lang, "answer.topup", amount=fmt_usd(lang, answer.topup_amount_usd),
                              coin=answer.coin or ""), url=answer.topup_url)])
    if payload:
        if coin_picker:
            coins = [Button(coin, data=within_limit(CoinButton(lang, coin, payload).encode()))
                     for coin in catalog.coins]
            coins = [b for b in coins if b.data]
            rows.extend(coins[i:i + 4] for i in range(0, len(coins), 4))
        tools = [Button(t(lang, "button.coin", coin=answer.coin or catalog.default_coin),
                        data=within_limit(CoinButton(lang, None, payload).encode())),
                 Button(t(lang, "button.less" if details else "button.details"),
                        data=within_limit(AnswerButton(not details, lang, payload).encode()))]
        if answer.requirement is not None:  # a sizing answer: its picture (bot/features/chart.py)
            tools.append(Button(t(lang, "chart.button"), data=within_limit(ChartButton(lang, payload).encode())))
        if answer.serving is not None:  # the launch command (bot/features/launch.py)
            tools.append(Button(t(lang, "button.launch"), data=within_limit(LaunchButton(lang, payload).encode())))
        if answer.speed() is not None:  # per-user speed at 1 / 8 / 32 users, TTFT (press_speed)
            tools.append(Button(t(lang, "button.speed"), data=within_limit(SpeedButton(lang, payload).encode())))
        rows.append([b for b in tools if b.data])
    return [row for row in rows if row]


def example_buttons(lang: str) -> list[list[Button]]:
    """The help's example questions, each a button that asks it (bot/features/questions.py)."""
    return [[Button(example, data=ExampleButton(i, lang).encode())]
            for i, example in enumerate(help_examples(lang), start=1)]


def try_encode(request: SizeRequest) -> str | None:
    try:
        return encode_request(request)
    except PayloadError:
        return None


def _toggle_row(request: SizeRequest, field_name: str, options: Sequence[tuple[Any, str]], current: object,
                details: bool, lang: str) -> list[Button]:
    row = []
    variant = copy.copy(request)  # one shallow copy, its field set per option: the payload reads fields only
    if field_name == "precision":
        variant.quant = None  # a precision button replaces a named format, else it would change nothing
    for value, label in options:
        setattr(variant, field_name, value)
        payload = try_encode(variant)
        mark = "✓ " if value == current else ""
        data = within_limit(AnswerButton(details, lang, payload).encode()) if payload else None
        row.append(Button(mark + label, data=data))
    return row


async def answer_payload(core: Core, caller: Caller, payload: str, *, details: bool = False,
                         coin_picker: bool = False, anonymous: bool = False, lang: str | None = None,
                         chat_id: int | None = None, picked_coin: bool = False) -> Reply:
    """Answer an encoded request (a button, a deep link); raises PayloadError for forged ones.

    Buttons carry the language of the message they belong to, so a German answer stays German when
    tapped, whatever the user's Telegram language (an explicit /set lang still wins); a deep link is
    answered in the user's language. `chat_id`: the chat that keeps it as its last question (follow-ups).
    `picked_coin`: the user just picked a coin, which wins over one the question named."""
    request = decode_request(payload)
    if picked_coin and request.coin is not None:
        request.coin = None
        payload = try_encode(request) or payload
    prefs = caller.preferences
    lang = prefs.language or (lang if lang in ("en", "de") else caller.language)
    answer = answer_for(request, core.catalog, core.asker(caller, anonymous=anonymous))
    if answer.error is not None:
        # A payload we made always sizes; one that does not is forged or from an older registry.
        raise PayloadError(answer.error)
    reply = answer_reply(core.catalog, answer, lang, payload, details=details, coin_picker=coin_picker)
    await remember_answer(core, caller.id, payload, payload, None,
                          None if chat_id is None else (chat_id, request, payload))
    await record_demand(core, answer, lang)
    return reply


async def remember_answer(core: Core, user_id: int, text: str, payload: str | None, telegram_language: str | None,
                          kept: tuple[int, SizeRequest, str | None] | None) -> None:
    """The store's remember_answer, but a store that refuses it (a full disk) does not cost the user the answer:
    it goes out all the same, logged in one line; only a follow-up to it then finds the chat's earlier question."""
    try:
        await core.store.remember_answer(user_id, text, payload, telegram_language, kept)
    except DATABASE_ERRORS as exc:
        log.warning("store: could not remember the answer to user %s (%s); answered all the same", user_id,
                    exc.__class__.__name__)


def private_chat(caller: Caller, shared: bool) -> int | None:
    """The chat a button or command came from when only the caller is known: a private chat's id is its user's
    (Telegram's, and the terminal chat's local user); in a group, None (the handler knows the group)."""
    return None if shared else caller.id


async def press_answer(core: Core, caller: Caller, button: AnswerButton, shared: bool = False) -> CallbackResult:
    """A precision/context toggle or Details/Less: the same question, another view."""
    try:
        return CallbackResult(await answer_payload(core, caller, button.payload, details=button.details,
                                                   lang=button.lang, anonymous=shared,
                                                   chat_id=private_chat(caller, shared)))
    except PayloadError:
        return notice(caller, "error.stale")


async def press_coin(core: Core, caller: Caller, button: CoinButton, shared: bool = False) -> CallbackResult:
    """The coin picker, or a coin from it: saved as the user's coin, and the answer shown with it."""
    try:
        if button.coin is None:
            return CallbackResult(await answer_payload(core, caller, button.payload, coin_picker=True,
                                                       lang=button.lang, anonymous=shared))
        if button.coin not in core.catalog.coins:
            return notice(caller, "error.stale")
        caller = caller.with_preferences(await core.store.set_preference(caller.id, "coin", button.coin,
                                                                                   caller.user.update_order))
        if caller.public:
            # Read by others, the answer shows no one's settings: the coin picked goes into the question itself.
            request = decode_request(button.payload)
            request.coin = button.coin
            payload = try_encode(request) or button.payload
            return CallbackResult(await answer_payload(core, caller, payload, lang=button.lang, anonymous=shared),
                                  f"🪙 {button.coin}")
        return CallbackResult(await answer_payload(core, caller, button.payload, lang=button.lang,
                                                   anonymous=shared, picked_coin=True,
                                                   chat_id=private_chat(caller, shared)),
                              f"🪙 {button.coin}")
    except PayloadError:
        return notice(caller, "error.stale")


@dataclass(frozen=True, slots=True)
class Reopened:
    """A detail button's answer, asked again from the button's payload, with the button back to the answer."""

    answer: Answer
    lang: str
    back: list[list[Button]]  # empty when the answer's button data would not fit Telegram's limit


def reopen(core: Core, caller: Caller, button: SpeedButton | LaunchButton, shared: bool = False) -> Reopened | None:
    """The answer a detail button (⚡ Speed, the launch command) shows a view of; None when its payload no longer
    decodes or the answer is an error (the caller says the button is stale)."""
    try:
        request = decode_request(button.payload)
    except PayloadError:
        return None
    lang = caller.preferences.language or button.lang
    answer = answer_for(request, core.catalog, core.asker(caller, anonymous=shared))
    if answer.error is not None:
        return None
    back = within_limit(AnswerButton(False, lang, button.payload).encode())
    return Reopened(answer, lang, [[Button(t(lang, "serving.back"), data=back)]] if back else [])


async def press_speed(core: Core, caller: Caller, button: SpeedButton, shared: bool = False) -> CallbackResult:
    """The ⚡ Speed detail: the answer's layout at 1, 8 and 32 users, its prompt speed and first token, with a
    button back to the answer."""
    opened = reopen(core, caller, button, shared)
    text = speed_detail(opened.answer, opened.lang) if opened is not None else None
    if opened is None or text is None:
        return notice(caller, "error.stale")
    return CallbackResult(Reply(text, opened.back))


FEATURE = Feature("answers", buttons=(ButtonRoute(AnswerButton, press_answer), ButtonRoute(CoinButton, press_coin),
                                      ButtonRoute(SpeedButton, press_speed)))
