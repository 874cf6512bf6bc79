"""The conversation: text, commands and button presses in, replies (HTML + buttons) out.

Front-end neutral: the Telegram handlers and the terminal chat both drive this class, so both say the same
words. Each call gets the resolved caller (bot/features/caller.py: the user, their preferences, their language); it
writes preferences through the store and never talks to Telegram itself.
"""
from __future__ import annotations

import copy
import html
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from operator import attrgetter
from typing import Any, Protocol

from bot.config import Settings
from bot.features.callbacks import AnswerButton, ChartButton, CoinButton, ExampleButton, LaunchButton, within_limit
from bot.features.caller import Caller, UserInfo
from bot.features.hub_lookup import HubLookup, hub_question, hub_registry
from bot.features.inline import InlineResult, inline_results
from bot.features.reply_cache import Entry, ReplyCache
from bot.features.setting_values import SETTINGS
from bot.features.toggles import PRECISION_TOGGLES, context_toggles
from bot.operators.catalog_service import CatalogHolder, ReloadOutcome
from bot.store import Preferences, Store
from bot.texts.i18n import fmt_gb, fmt_number, fmt_usd, normalize_language, t
from bot.texts.render import (
    clip,
    help_examples,
    localize,
    render_answer,
    render_card,
    render_help,
    render_parse_error,
    render_request,
    telegram_length,
)
from catalog.schema import Catalog
from engine.answer.advice import compare_cards
from engine.answer.build import Answer, build_answer
from engine.answer.followup import apply_followup, delta_of, shown_of
from engine.models.registry import Registry
from engine.notes import Note
from engine.parse import parse
from engine.serving.review import ENGINES, ServingOptions
from engine.sizing.payload import PayloadError, decode_request, encode_request
from engine.sizing.rule import SizeRequest, SizingError, resolve, size

__all__ = ["Button", "CallbackResult", "CatalogHolder", "Conversation", "InlineResult", "Reply", "UserInfo"]

log = logging.getLogger(__name__)
esc = html.escape

BILLING_PERIODS = ("hour", "day", "week", "month")
# Every field of a SizeRequest, in the constructor's order (copy_request).
_REQUEST_FIELDS = attrgetter(*(item.name for item in fields(SizeRequest)))
ECHO_LIMIT = 64  # characters of a user's argument quoted back ("No card called …")
CARD_NAMES_SHOWN = 12  # card names in an "unknown card" answer; /cards lists them all


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    data: str | None = None  # callback data
    url: str | None = None


@dataclass(slots=True)
class Reply:
    text: str  # HTML
    buttons: list[list[Button]] = field(default_factory=list)


@dataclass(slots=True)
class CallbackResult:
    reply: Reply | None  # edit the message to this (None: leave it)
    notice: str | None = None  # short text for answerCallbackQuery


class Reloader(Protocol):
    """/reload's side of the operators (bot.operators.announce.Announcer); the terminal chat has none."""

    async def check(self, *, force: bool = False) -> ReloadOutcome: ...


class Conversation:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, reloader: Reloader | None = None):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store
        self.reloader = reloader
        self.hub = HubLookup(store, enabled=settings.hf_lookup, timeout_s=settings.hf_timeout_s)
        self.replies = ReplyCache()

    # -- helpers -----------------------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        return self.catalogs.catalog

    async def preferences(self, user: UserInfo) -> Preferences:
        return await self.store.get_preferences(user.id)

    def language(self, prefs: Preferences, user: UserInfo, detected: str | None = None) -> str:
        return Caller(user, prefs).language_for(detected)

    def _secret(self) -> str | None:
        return self.settings.topup_secret.get_secret_value() if self.settings.topup_secret else None

    @staticmethod
    def apply_preferences(request: SizeRequest, prefs: Preferences) -> set[str]:
        """Fill what the user did not say from their settings; return the names of the fields filled."""
        filled = set()
        for name, value in (("precision", prefs.precision), ("kv_precision", prefs.kv_precision),
                            ("context_tokens", prefs.context_tokens), ("batch", prefs.batch),
                            ("region", prefs.region)):
            if value is not None and getattr(request, name) is None:
                setattr(request, name, value)
                filled.add(name)
        request.assumed.extend(Note(f"{name} from your settings", "from_settings", field=name)
                               for name in sorted(filled))
        return filled

    def answer(self, request: SizeRequest, user: UserInfo, prefs: Preferences, *, anonymous: bool = False,
               registry: Registry | None = None) -> Answer:
        engine = prefs.engine if prefs.engine in ENGINES else None  # /set engine (issue #11)
        return build_answer(request, self.catalog, user_id=None if anonymous else user.id,
                            topup_secret=self._secret(), billing=prefs.billing, coin=prefs.coin, registry=registry,
                            serving=ServingOptions(engine=engine))

    # -- questions ---------------------------------------------------------------------------------------

    async def ask(self, caller: Caller, text: str, *, shared: bool = False, chat_id: int | None = None,
                  answered: str | None = None) -> Reply:
        """A message that may be a sizing question. `shared`: in a group, where everyone sees the answer and
        may tap its buttons, so its top-up link carries nobody's reference. `chat_id`: the chat whose last
        question a follow-up ("and in fp8?") changes, and that keeps this one (None: keep nothing).
        `answered`: the payload of the bot's answer this message replies to: a follow-up changes that one."""
        result = parse(text, self.catalogs.vocabulary)
        if result.hub_candidate is not None and self.hub.enabled:  # an org/name the registry does not know
            hub = await self.hub.lookup(result.hub_candidate)
            result = hub_question(text, result, hub, self.catalogs.vocabulary)
        lang = caller.language_for(result.told_language)
        delta = delta_of(result)
        previous = await self._previous(chat_id, answered) if delta is not None else None
        if delta is not None and previous is not None:
            followup = apply_followup(previous, delta, shown_of(self.answer(
                self.with_preferences(previous, caller.preferences), caller.user, caller.preferences,
                anonymous=True)), catalog=self.catalog)
            if followup.needs_card:
                return Reply(t(lang, "followup.which_card", cards=self._card_names(lang)))
            return await self._answer_question(caller, followup.request, text, lang, shared, chat_id)
        if result.request is None:
            return Reply(render_parse_error(lang, result.error or "not a sizing question"), self.example_buttons(lang))
        return await self._answer_question(caller, result.request, text, lang, shared, chat_id)

    async def _previous(self, chat_id: int | None, answered: str | None) -> SizeRequest | None:
        """The request a follow-up changes: the answer replied to, else the chat's last question."""
        if answered:
            try:
                return decode_request(answered)
            except PayloadError:
                pass
        return await self.store.kept_request(chat_id) if chat_id is not None else None

    async def _answer_question(self, caller: Caller, request: SizeRequest, text: str, lang: str, shared: bool,
                               chat_id: int | None) -> Reply:
        prefs = caller.preferences
        kept = request  # as the user set it (with_preferences fills a copy): their settings are filled in again
        request, filled = self._filled(request, prefs)
        payload = _try_encode(request)
        error, reply = self._replied(request, caller.user, prefs, lang, payload, anonymous=shared,
                                     registry=await hub_registry(request, self.hub))
        if error is None:
            kept_payload = _try_encode(kept) if filled else payload
            await self.store.remember_answer(caller.id, text[:500], payload, caller.telegram_language,
                                             None if chat_id is None else (chat_id, kept, kept_payload))
        return reply

    def _replied(self, request: SizeRequest, user: UserInfo, prefs: Preferences, lang: str, payload: str | None, *,
                 anonymous: bool, registry: Registry | None = None, details: bool = False,
                 coin_picker: bool = False) -> tuple[str | None, Reply]:
        """(the answer's error, its reply), from the reply cache (bot/features/reply_cache.py) unless a hub lookup
        shaped
        the answer; the cached reply gets this user's top-up link."""
        if registry is None:
            key = (repr(request), lang, payload, details, coin_picker, prefs.billing, prefs.coin, prefs.engine)
            cached = self.replies.reply(self.catalog, key, partial(self._entry, request, prefs, lang, payload, details,
                                                                   coin_picker),
                                        user_id=None if anonymous else user.id, secret=self._secret())
            if cached is not None:
                return cached
        answer = self.answer(request, user, prefs, anonymous=anonymous, registry=registry)
        return answer.error, self.answer_reply(answer, lang, payload, prefs, details=details, coin_picker=coin_picker)

    def _entry(self, request: SizeRequest, prefs: Preferences, lang: str, payload: str | None, details: bool,
               coin_picker: bool) -> Entry:
        answer = self.answer(request, UserInfo(0), prefs, anonymous=True)  # no reference: each user's is swapped in
        reply = self.answer_reply(answer, lang, payload, prefs, details=details, coin_picker=coin_picker)
        return Entry(answer.error, reply, answer.topup_url, answer.topup_amount_usd, answer.coin)

    def with_preferences(self, request: SizeRequest, prefs: Preferences) -> SizeRequest:
        """A copy of `request` with what the user did not say filled from their settings."""
        return self._filled(request, prefs)[0]

    def _filled(self, request: SizeRequest, prefs: Preferences) -> tuple[SizeRequest, set[str]]:
        """with_preferences, and the names of the fields it filled: none filled, the copy encodes as `request`."""
        filled = copy_request(request)
        filled.assumed = list(request.assumed)
        return filled, self.apply_preferences(filled, prefs)

    def answer_reply(self, answer: Answer, lang: str, payload: str | None, prefs: Preferences, *,
                     details: bool = False, coin_picker: bool = False) -> Reply:
        text = render_answer(answer, lang, details=details)
        if answer.error:
            return Reply(text, self.example_buttons(lang))
        return Reply(text, self.answer_buttons(answer, lang, payload, details=details, coin_picker=coin_picker))

    def answer_buttons(self, answer: Answer, lang: str, payload: str | None, *, details: bool,
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
                         for coin in self.catalog.coins]
                coins = [b for b in coins if b.data]
                rows.extend(coins[i:i + 4] for i in range(0, len(coins), 4))
            tools = [Button(t(lang, "button.coin", coin=answer.coin or self.catalog.default_coin),
                            data=within_limit(CoinButton(lang, None, payload).encode())),
                     Button(t(lang, "button.less" if details else "button.details"),
                            data=within_limit(AnswerButton(not details, lang, payload).encode()))]
            if answer.requirement is not None:  # a sizing answer: its picture (bot/features/chart.py)
                tools.append(Button(t(lang, "chart.button"), data=within_limit(ChartButton(lang, payload).encode())))
            if answer.serving is not None:  # issue #11: the launch command (bot/features/launch.py)
                tools.append(Button(t(lang, "button.launch"), data=within_limit(LaunchButton(lang, payload).encode())))
            rows.append([b for b in tools if b.data])
        return [row for row in rows if row]

    def example_buttons(self, lang: str) -> list[list[Button]]:
        return [[Button(example, data=ExampleButton(i, lang).encode())]
                for i, example in enumerate(help_examples(lang), start=1)]

    async def answer_payload(self, caller: Caller, payload: str, *, details: bool = False,
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
            payload = _try_encode(request) or payload
        prefs = caller.preferences
        lang = prefs.language or (lang if lang in ("en", "de") else caller.language)
        error, reply = self._replied(request, caller.user, prefs, lang, payload, anonymous=anonymous,
                                     details=details, coin_picker=coin_picker)
        if error is not None:
            # A payload we made always sizes; one that does not is forged or from an older registry.
            raise PayloadError(error)
        await self.store.remember_answer(caller.id, payload, payload, None,
                                         None if chat_id is None else (chat_id, request, payload))
        return reply

    # -- buttons (one method per kind of callback data, bot/features/callbacks.py) ----------------------------------

    async def press_answer(self, caller: Caller, button: AnswerButton, shared: bool = False) -> CallbackResult:
        """A precision/context toggle or Details/Less: the same question, another view."""
        try:
            return CallbackResult(await self.answer_payload(caller, button.payload, details=button.details,
                                                            lang=button.lang, anonymous=shared,
                                                            chat_id=_private_chat(caller, shared)))
        except PayloadError:
            return CallbackResult(None, t(caller.language, "error.stale"))

    async def press_coin(self, caller: Caller, button: CoinButton, shared: bool = False) -> CallbackResult:
        """The coin picker, or a coin from it: saved as the user's coin, and the answer shown with it."""
        try:
            if button.coin is None:
                return CallbackResult(await self.answer_payload(caller, button.payload, coin_picker=True,
                                                                lang=button.lang, anonymous=shared))
            if button.coin not in self.catalog.coins:
                return CallbackResult(None, t(caller.language, "error.stale"))
            caller = caller.with_preferences(await self.store.set_preference(caller.id, "coin", button.coin))
            return CallbackResult(await self.answer_payload(caller, button.payload, lang=button.lang,
                                                            anonymous=shared, picked_coin=True,
                                                            chat_id=_private_chat(caller, shared)),
                                  f"🪙 {button.coin}")
        except PayloadError:
            return CallbackResult(None, t(caller.language, "error.stale"))

    async def press_example(self, caller: Caller, button: ExampleButton, shared: bool = False) -> CallbackResult:
        """One of the help's example questions, asked."""
        examples = help_examples(button.lang or caller.language)
        if not 1 <= button.index <= len(examples):
            return CallbackResult(None, t(caller.language, "error.unknown_action"))
        return CallbackResult(await self.ask(caller, examples[button.index - 1], shared=shared,
                                             chat_id=_private_chat(caller, shared)))

    def invalid_button(self, caller: Caller, notice_key: str) -> CallbackResult:
        """Data of a known kind that does not decode (stale or forged): a short notice, nothing changes."""
        return CallbackResult(None, t(caller.language, notice_key))

    def unknown_button(self, caller: Caller) -> CallbackResult:
        return self.invalid_button(caller, "error.unknown_action")

    # -- commands ----------------------------------------------------------------------------------------

    async def help(self, caller: Caller) -> Reply:
        lang = caller.language
        return Reply(render_help(lang), self.example_buttons(lang))

    async def unknown_command(self, caller: Caller, command: str) -> Reply:
        lang = caller.language
        return Reply(t(lang, "help.unknown_command", command=esc(command[:32])) + "\n" + esc(t(lang, "help.commands")))

    async def start(self, caller: Caller, payload: str | None, *, shared: bool = False) -> Reply:
        """/start, optionally with a deep-link payload that is a question; a bad payload gets help. `shared`: in
        a group (/start@bot PAYLOAD), where the answer's top-up link must carry nobody's reference."""
        if payload:
            try:
                # A deep link opens the private chat, whose context it becomes; in a group (/start@bot PAYLOAD)
                # the answer is anonymous and keeps no one's context.
                return await self.answer_payload(caller, payload, anonymous=shared,
                                                 chat_id=None if shared else caller.id)
            except PayloadError:
                log.info("start payload rejected: %r", payload[:80])
        lang = caller.language
        user = caller.user
        name = f" {esc(user.first_name)}" if user.first_name else ""
        examples = "\n".join(f"• <code>{esc(e)}</code>" for e in help_examples(lang))
        return Reply(t(lang, "start.welcome", name=name, intro=t(lang, "help.intro")) + "\n\n"
                     + t(lang, "help.examples") + "\n" + examples,
                     self.example_buttons(lang))

    async def settings_view(self, caller: Caller, *, shared: bool = False) -> Reply:
        if shared:
            # Someone's defaults are their own business: not shown to a whole group.
            return Reply(t(normalize_language(caller.user.language_code), "settings.private_only"))
        prefs = caller.preferences
        lang = caller.language
        unset = t(lang, "settings.unset")
        values = {
            "lang": prefs.language or f"{lang} ({t(lang, 'default_marker')})",
            "precision": (prefs.precision or "").upper() or unset,
            "kv": (prefs.kv_precision or "").upper() or unset,
            "context": f"{prefs.context_tokens:,}" if prefs.context_tokens else unset,
            "batch": str(prefs.batch) if prefs.batch else unset,
            "coin": prefs.coin or f"{self.catalog.default_coin} ({t(lang, 'default_marker')})",
            "billing": prefs.billing or f"{self.catalog.default_billing} ({t(lang, 'default_marker')})",
            "region": prefs.region or unset,
            "engine": prefs.engine or unset,
        }
        lines = [t(lang, "settings.title")]
        lines += [t(lang, "settings.line", key=key, value=esc(value)) for key, value in values.items()]
        lines += ["", t(lang, "settings.usage")]
        return Reply("\n".join(lines))

    async def set_setting(self, caller: Caller, args: Sequence[str]) -> Reply:
        lang = caller.language
        if len(args) < 2:
            return Reply(t(lang, "settings.usage"))
        key, raw = args[0].lower(), " ".join(args[1:]).strip()
        spec = SETTINGS.get(key)
        if spec is None:
            return Reply(t(lang, "settings.bad_key", key=echo(key)))
        if raw.lower() in ("default", "reset", "clear", "-", "standard"):
            cleared = caller.with_preferences(await self.store.set_preference(caller.id, spec.field, None))
            return Reply(t(cleared.language, "settings.cleared", key=esc(key)))
        value = spec.parse(raw, self.catalog)
        if value is None:
            hint = t(lang, spec.hint_key, **spec.hint_values(self.catalog))
            return Reply(t(lang, "settings.bad_value", value=echo(raw), key=esc(key), hint=esc(hint)))
        await self.store.set_preference(caller.id, spec.field, value)
        new_lang = str(value) if spec.field == "language" else lang
        if isinstance(value, int):
            shown = f"{value:,}"
        else:
            shown = str(value).upper() if spec.field in ("precision", "kv_precision", "coin") else str(value)
        return Reply(t(new_lang, "settings.saved", key=esc(key), value=esc(shown)))

    async def card(self, caller: Caller, name: str) -> Reply:
        lang = caller.language
        if not name.strip():
            return Reply(t(lang, "card.usage"))
        card = self.catalog.card(name)
        if card is None:
            return Reply(t(lang, "card.unknown", name=echo(name), names=self._card_names(lang)))
        return Reply(render_card(self.catalog, card, lang))

    def _card_names(self, lang: str) -> str:
        """The catalog's card names for an "unknown card" answer: the first few, then how many more /cards lists."""
        names = [c.name for c in self.catalog.cards]
        shown = esc(", ".join(names[:CARD_NAMES_SHOWN]))
        if len(names) > CARD_NAMES_SHOWN:
            shown += t(lang, "card.more", count=len(names) - CARD_NAMES_SHOWN)
        return shown

    # compare() reads the preferences itself (its last question); it takes the user, not the caller.
    async def compare(self, user: UserInfo, args: list[str]) -> Reply:
        """Two cards side by side for the user's last question."""
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        pair = self.catalog.card_pair(args)
        if pair is None:
            return Reply(t(lang, "compare.usage"))
        if isinstance(pair, str):
            return Reply(t(lang, "card.unknown", name=echo(pair), names=self._card_names(lang)))
        if not prefs.last_payload:
            return Reply(t(lang, "error.no_last_question"))
        try:
            request = decode_request(prefs.last_payload)
            request.card = None
            request.gpu_count = None
            resolved = resolve(request, self.catalog.sizing)
            requirement = size(resolved, self.catalog.sizing)
        except (PayloadError, SizingError):
            return Reply(t(lang, "error.no_last_question"))
        rows = []
        for comparison in compare_cards(resolved, requirement, self.catalog, pair):
            layout = comparison.layout
            if layout.valid:
                verdict = t(lang, "compare.fits", spare=fmt_gb(lang, layout.spare_gb))
            else:
                verdict = t(lang, "compare.no", reason="; ".join(localize(lang, p) for p in layout.problems))
            decode = (t(lang, "answer.alternative_decode", tps=fmt_number(lang, layout.decode_tokens_per_s, 0))
                      if layout.decode_tokens_per_s is not None and layout.valid else "")
            rows.append(t(lang, "compare.row", layout=esc(layout.label), verdict=verdict,
                          monthly=fmt_usd(lang, layout.monthly_usd), decode=decode))
        question = render_request(build_answer(request, self.catalog), lang)[0]
        title = t(lang, "compare.title", a=esc(pair[0].name), b=esc(pair[1].name), question=question)
        need = t(lang, "answer.memory", total=fmt_gb(lang, requirement.total_gb))
        return Reply("\n".join([title, need, *rows]))

    # -- staff ------------------------------------------------------------------------------------------

    async def quote(self, caller: Caller, text: str, bot_username: str | None) -> Reply:
        """A neutral, customer-ready answer: no staff preferences, no staff ref, and a deep link for the customer."""
        user = caller.user
        result = parse(text, self.catalogs.vocabulary)
        lang = result.told_language or normalize_language(user.language_code)
        if not text.strip():
            return Reply(t(normalize_language(user.language_code), "quote.usage"))
        if result.request is None:
            return Reply(render_parse_error(lang, result.error or "not a sizing question"))
        neutral = Preferences(user_id=0)
        answer = self.answer(result.request, user, neutral, anonymous=True)
        if answer.error:
            return Reply(t(lang, "error.value", message=esc(answer.error)))
        body = render_answer(answer, lang, max_alternatives=2)
        payload = _try_encode(result.request)
        if payload and bot_username:
            link = f"https://t.me/{bot_username}?start={payload}"
            body = clip_with(body, "\n\n" + t(lang, "quote.link", link=esc(link)))
        return Reply(body)

    async def inline(self, caller: Caller, query: str) -> tuple[list[InlineResult], bool]:
        """Inline results (id, title, description, text); True when preferences shaped them (bot/features/inline.py)."""
        return inline_results(self, caller, query)

    # -- price alerts -----------------------------------------------------------------------------------

    async def subscribe(self, caller: Caller, args: Sequence[str], *, shared: bool = False) -> Reply:
        # Alerts go out later, in the language we know the user by: the caller's resolution recorded it.
        lang = caller.language
        if shared:  # an alert is as private as the list of them (/subscriptions): set in the private chat only
            return Reply(t(lang, "subscribe.private_only"))
        unit = t(lang, f"unit.{self.catalog.price_unit}")
        words = list(args)
        below: float | None = None
        lowered = [w.lower() for w in words]
        for keyword in ("below", "unter", "<"):
            if keyword in lowered:
                at = lowered.index(keyword)
                price_text = "".join(words[at + 1:]).replace("$", "").replace(",", ".")
                words = words[:at]
                try:
                    below = float(price_text)
                except ValueError:
                    return Reply(t(lang, "subscribe.usage", unit=unit))
                if not 0 < below < 1_000_000:
                    return Reply(t(lang, "subscribe.usage", unit=unit))
                break
        card = self.catalog.card(" ".join(words)) if words else None
        if card is None:
            if not words:
                return Reply(t(lang, "subscribe.usage", unit=unit))
            return Reply(t(lang, "card.unknown", name=echo(" ".join(words)), names=self._card_names(lang)))
        await self.store.subscribe(caller.id, card.id, below)
        below_text = t(lang, "subscribe.below", price=fmt_usd(lang, below), unit=unit) if below is not None else ""
        return Reply(t(lang, "subscribe.ok", card=esc(card.name), below=below_text))

    async def unsubscribe(self, caller: Caller, args: Sequence[str], *, shared: bool = False) -> Reply:
        if shared:  # "removed 2 alerts" in a group would tell it what the sender watches
            return Reply(t(caller.language, "unsubscribe.private_only"))
        card_id = None
        if args:
            card = self.catalog.card(" ".join(args))
            card_id = card.id if card else " ".join(args).lower()
        removed = await self.store.unsubscribe(caller.id, card_id)
        return Reply(t(caller.language, "unsubscribe.ok", count=removed))

    async def subscriptions(self, caller: Caller, *, shared: bool = False) -> Reply:
        lang = caller.language
        if shared:  # someone's alerts are their own business, as their settings are
            return Reply(t(lang, "subscriptions.private_only"))
        rows = await self.store.subscriptions(caller.id)
        if not rows:
            return Reply(t(lang, "subscriptions.none"))
        unit = t(lang, f"unit.{self.catalog.price_unit}")
        lines = [t(lang, "subscriptions.title")]
        for card_id, below in rows:
            card = self.catalog.card(card_id)
            below_text = t(lang, "subscribe.below", price=fmt_usd(lang, below), unit=unit) if below is not None else ""
            if card is None:
                below_text += t(lang, "subscriptions.gone")
            lines.append(t(lang, "subscriptions.line", card=esc(card.name if card else card_id), below=below_text))
        return Reply("\n".join(lines))

    async def size_command(self, caller: Caller, text: str, *, shared: bool = False) -> Reply:
        if not text.strip():
            return Reply(t(caller.language, "size.usage"))
        return await self.ask(caller, text, shared=shared, chat_id=_private_chat(caller, shared))

    # -- operators ----------------------------------------------------------------------------------------

    async def reload(self, caller: Caller) -> Reply | None:
        """/reload: read the catalog file now. None when the admins were just sent the rejection of a newly
        broken file, this one included."""
        if self.reloader is None:  # the terminal chat has no catalog watch to trigger
            return await self.unknown_command(caller, "reload")
        outcome = await self.reloader.check(force=True)
        return None if outcome.notified else Reply(outcome.text)


# -- small helpers ------------------------------------------------------------------------------------------

def echo(text: str, limit: int = ECHO_LIMIT) -> str:
    """What the user typed, quoted back in an answer: cut to `limit` characters first, then HTML-escaped (a cut
    after escaping could split an entity). A 10,000-character argument must not make the answer too long."""
    return esc(text if len(text) <= limit else text[:limit - 1] + "…")


def clip_with(body: str, tail: str, limit: int = 4096) -> str:
    """Append `tail` (a link that must survive) and keep the whole under Telegram's limit."""
    return clip(body, limit - telegram_length(tail)) + tail


def _private_chat(caller: Caller, shared: bool) -> int | None:
    """The chat a button or command came from when only the caller is known: a private chat's id is its user's
    (Telegram's, and the terminal chat's local user); in a group, None (the handler knows the group)."""
    return None if shared else caller.id


def copy_request(request: SizeRequest) -> SizeRequest:
    """A shallow copy, as copy.copy makes it: copy.copy of a slots dataclass goes through __reduce_ex__ and one
    setattr per field (~4x the cost of one call of the constructor with the fields; issue #14)."""
    if type(request) is not SizeRequest:  # a subclass may carry more than the fields
        return copy.copy(request)
    return SizeRequest(*_REQUEST_FIELDS(request))


def _try_encode(request: SizeRequest) -> str | None:
    try:
        return encode_request(request)
    except PayloadError:
        return None


def _toggle_row(request: SizeRequest, field_name: str, options: Sequence[tuple[Any, str]], current: object,
                details: bool, lang: str) -> list[Button]:
    row = []
    variant = copy_request(request)  # one shallow copy, its field set per option: the payload reads fields only
    if field_name == "precision":
        variant.quant = None  # a precision button replaces a named format (issue #10), else it would change nothing
    for value, label in options:
        setattr(variant, field_name, value)
        payload = _try_encode(variant)
        mark = "✓ " if value == current else ""
        data = within_limit(AnswerButton(details, lang, payload).encode()) if payload else None
        row.append(Button(mark + label, data=data))
    return row
