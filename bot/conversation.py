"""The conversation: text, commands and button presses in, replies (HTML + buttons) out.

Front-end neutral: the Telegram handlers and the terminal chat both drive this class, so both say the same
words. It reads and writes preferences through the store and never talks to Telegram itself.
"""
from __future__ import annotations

import copy
import html
import logging
from dataclasses import dataclass, field

from bot.config import Settings
from bot.i18n import fmt_gb, fmt_number, fmt_usd, normalize_language, t
from bot.render import (
    help_examples,
    localize,
    render_answer,
    render_card,
    render_cards,
    render_compact,
    render_help,
    render_parse_error,
    render_request,
)
from bot.store import Preferences, Store
from catalog.loader import LoadedCatalog
from catalog.schema import Card, Catalog
from engine.advice import compare_cards
from engine.answer import Answer, build_answer
from engine.notes import Note
from engine.parse import Vocabulary, parse
from engine.payload import PayloadError, decode_request, encode_request
from engine.sizing import (
    KV_PRECISION_BYTES,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    PRECISION_BYTES,
    SizeRequest,
    SizingError,
    canonical_kv_precision,
    canonical_precision,
    resolve,
    size,
)

log = logging.getLogger(__name__)
esc = html.escape

CALLBACK_LIMIT = 64
PRECISION_TOGGLES = (("bf16", "BF16"), ("fp8", "FP8"), ("int4", "INT4"))
CONTEXT_TOGGLES = ((8192, "8k"), (32768, "32k"), (131072, "128k"))
BILLING_PERIODS = ("hour", "day", "week", "month")


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    data: str | None = None  # callback data
    url: str | None = None


@dataclass(slots=True)
class Reply:
    text: str  # HTML
    buttons: list[list[Button]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class UserInfo:
    id: int
    language_code: str | None = None
    first_name: str = ""


@dataclass(slots=True)
class CallbackResult:
    reply: Reply | None  # edit the message to this (None: leave it)
    notice: str | None = None  # short text for answerCallbackQuery


class CatalogHolder:
    """The catalog in service; swapped whole on a reload so a reply never mixes two versions."""

    def __init__(self, loaded: LoadedCatalog):
        self.loaded = loaded

    @property
    def loaded(self) -> LoadedCatalog:
        return self._current[0]

    @loaded.setter
    def loaded(self, loaded: LoadedCatalog) -> None:
        # The parser's vocabulary is built here, once per catalog version, and swapped with it in one assignment.
        self._current = (loaded, Vocabulary.of_catalog(loaded.catalog))

    @property
    def catalog(self) -> Catalog:
        return self._current[0].catalog

    @property
    def vocabulary(self) -> Vocabulary:
        """The model, card and region names of the catalog in service (engine.parse.Vocabulary)."""
        return self._current[1]


class Conversation:
    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store

    # -- helpers -----------------------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        return self.catalogs.catalog

    async def preferences(self, user: UserInfo) -> Preferences:
        return await self.store.get_preferences(user.id)

    def language(self, prefs: Preferences, user: UserInfo, detected: str | None = None) -> str:
        if prefs.language:
            return prefs.language
        if detected == "de":
            return "de"
        return normalize_language(user.language_code)

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
        request.assumed.extend(Note(f"{name} from your settings", "from_settings", field=name) for name in sorted(filled))
        return filled

    def answer(self, request: SizeRequest, user: UserInfo, prefs: Preferences, *, anonymous: bool = False) -> Answer:
        return build_answer(request, self.catalog, user_id=None if anonymous else user.id,
                            topup_secret=self._secret(), billing=prefs.billing, coin=prefs.coin)

    # -- questions ---------------------------------------------------------------------------------------

    async def ask(self, user: UserInfo, text: str, *, shared: bool = False) -> Reply:
        """A message that may be a sizing question. `shared`: in a group, where everyone sees the answer and
        may tap its buttons, so its top-up link carries nobody's reference."""
        telegram_language = normalize_language(user.language_code) if user.language_code else None
        prefs = await self.preferences(user)
        result = parse(text, self.catalogs.vocabulary)
        lang = self.language(prefs, user, result.language)
        if result.request is None:
            await self.store.touch_user(user.id, telegram_language)
            return Reply(render_parse_error(lang, result.error or "not a sizing question"), self.example_buttons(lang))
        request = result.request
        self.apply_preferences(request, prefs)
        answer = self.answer(request, user, prefs, anonymous=shared)
        payload = _try_encode(request)
        if answer.error is None:
            await self.store.remember_question(user.id, text[:500], payload, telegram_language)
        else:
            await self.store.touch_user(user.id, telegram_language)
        return self.answer_reply(answer, lang, payload, prefs)

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
                rows.append(_toggle_row(request, "precision", PRECISION_TOGGLES, resolved.precision, details, lang))
            if resolved.workload == "inference":
                rows.append(_toggle_row(request, "context_tokens", CONTEXT_TOGGLES, resolved.context_tokens, details,
                                        lang))
            rows = [[b for b in row if b.data] for row in rows]
            rows = [row for row in rows if row]
        if answer.topup_url and answer.topup_amount_usd is not None:
            rows.append([Button(t(lang, "answer.topup", amount=fmt_usd(lang, answer.topup_amount_usd),
                                  coin=answer.coin or ""), url=answer.topup_url)])
        if payload:
            if coin_picker:
                coins = [Button(coin, data=_fits(f"k:{lang}:{coin}:{payload}")) for coin in self.catalog.coins]
                coins = [b for b in coins if b.data]
                rows.extend(coins[i:i + 4] for i in range(0, len(coins), 4))
            tools = [Button(t(lang, "button.coin", coin=answer.coin or self.catalog.default_coin),
                            data=_fits(f"k:{lang}:pick:{payload}")),
                     Button(t(lang, "button.less" if details else "button.details"),
                            data=_fits(f"{'f' if details else 'd'}:{lang}:{payload}"))]
            rows.append([b for b in tools if b.data])
        return [row for row in rows if row]

    def example_buttons(self, lang: str) -> list[list[Button]]:
        return [[Button(example, data=f"x:{i}:{lang}")] for i, example in enumerate(help_examples(lang), start=1)]

    async def answer_payload(self, user: UserInfo, payload: str, *, details: bool = False,
                             coin_picker: bool = False, anonymous: bool = False, lang: str | None = None) -> Reply:
        """Answer an encoded request (a button, a deep link); raises PayloadError for forged ones.

        Buttons carry the language of the message they belong to, so a German answer stays German when
        tapped, whatever the user's Telegram language (an explicit /set lang still wins); a deep link is
        answered in the user's language."""
        request = decode_request(payload)
        prefs = await self.preferences(user)
        lang = prefs.language or (lang if lang in ("en", "de") else self.language(prefs, user))
        answer = self.answer(request, user, prefs, anonymous=anonymous)
        if answer.error is not None:
            # A payload we made always sizes; one that does not is forged or from an older registry.
            raise PayloadError(answer.error)
        await self.store.remember_question(user.id, payload, payload)
        return self.answer_reply(answer, lang, payload, prefs, details=details, coin_picker=coin_picker)

    # -- buttons -----------------------------------------------------------------------------------------

    async def on_callback(self, user: UserInfo, data: str | None, *, shared: bool = False) -> CallbackResult:
        """A button press. Unknown, stale or forged data gets a short notice and changes nothing."""
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        if not data or len(data.encode()) > CALLBACK_LIMIT:
            return CallbackResult(None, t(lang, "error.unknown_action"))
        kind, _, rest = data.partition(":")
        try:
            if kind in ("f", "d", "k"):
                message_lang, _, rest = rest.partition(":")
                if message_lang not in ("en", "de"):
                    return CallbackResult(None, t(lang, "error.stale"))
            if kind in ("f", "d"):
                return CallbackResult(await self.answer_payload(user, rest, details=kind == "d", lang=message_lang,
                                                                anonymous=shared))
            if kind == "k":
                coin, _, payload = rest.partition(":")
                if coin == "pick":
                    return CallbackResult(await self.answer_payload(user, payload, coin_picker=True,
                                                                    lang=message_lang, anonymous=shared))
                if coin not in self.catalog.coins:
                    return CallbackResult(None, t(lang, "error.stale"))
                await self.store.set_preference(user.id, "coin", coin)
                return CallbackResult(await self.answer_payload(user, payload, lang=message_lang, anonymous=shared),
                                      f"🪙 {coin}")
            if kind == "x":
                index, _, example_lang = rest.partition(":")
                examples = help_examples(example_lang if example_lang in ("en", "de") else lang)
                if not index.isdigit() or not 1 <= int(index) <= len(examples):
                    return CallbackResult(None, t(lang, "error.unknown_action"))
                return CallbackResult(await self.ask(user, examples[int(index) - 1], shared=shared))
        except PayloadError:
            return CallbackResult(None, t(lang, "error.stale"))
        return CallbackResult(None, t(lang, "error.unknown_action"))

    # -- commands ----------------------------------------------------------------------------------------

    async def help(self, user: UserInfo) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        return Reply(render_help(lang), self.example_buttons(lang))

    async def unknown_command(self, user: UserInfo, command: str) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        return Reply(t(lang, "help.unknown_command", command=esc(command[:32])) + "\n" + esc(t(lang, "help.commands")))

    async def start(self, user: UserInfo, payload: str | None) -> Reply:
        """/start, optionally with a deep-link payload that is a question; a bad payload gets help."""
        await self.store.touch_user(user.id, normalize_language(user.language_code) if user.language_code else None)
        if payload:
            try:
                return await self.answer_payload(user, payload)
            except PayloadError:
                log.info("start payload rejected: %r", payload[:80])
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        name = f" {esc(user.first_name)}" if user.first_name else ""
        return Reply(t(lang, "start.welcome", name=name, intro=t(lang, "help.intro")) + "\n\n"
                     + t(lang, "help.examples") + "\n" + "\n".join(f"• <code>{esc(e)}</code>" for e in help_examples(lang)),
                     self.example_buttons(lang))

    async def settings_view(self, user: UserInfo) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
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
        }
        lines = [t(lang, "settings.title")]
        lines += [t(lang, "settings.line", key=key, value=esc(value)) for key, value in values.items()]
        lines += ["", t(lang, "settings.usage")]
        return Reply("\n".join(lines))

    async def set_setting(self, user: UserInfo, args: list[str]) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        if len(args) < 2:
            return Reply(t(lang, "settings.usage"))
        key, raw = args[0].lower(), " ".join(args[1:]).strip()
        spec = SETTINGS.get(key)
        if spec is None:
            return Reply(t(lang, "settings.bad_key", key=esc(key)))
        field_name, parse_value, hint_key, hint_values = spec
        if raw.lower() in ("default", "reset", "clear", "-", "standard"):
            await self.store.set_preference(user.id, field_name, None)
            prefs = await self.preferences(user)
            return Reply(t(self.language(prefs, user), "settings.cleared", key=esc(key)))
        value = parse_value(raw, self.catalog)
        if value is None:
            return Reply(t(lang, "settings.bad_value", value=esc(raw), key=esc(key), hint=esc(t(lang, hint_key, **hint_values(self.catalog)))))
        await self.store.set_preference(user.id, field_name, value)
        new_lang = value if field_name == "language" else lang
        if isinstance(value, int):
            shown = f"{value:,}"
        else:
            shown = str(value).upper() if field_name in ("precision", "kv_precision", "coin") else str(value)
        return Reply(t(new_lang, "settings.saved", key=esc(key), value=esc(shown)))

    async def cards(self, user: UserInfo) -> Reply:
        prefs = await self.preferences(user)
        return Reply(render_cards(self.catalog, self.language(prefs, user)))

    async def card(self, user: UserInfo, name: str) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        if not name.strip():
            return Reply(t(lang, "card.usage"))
        card = self.catalog.card(name)
        if card is None:
            return Reply(t(lang, "card.unknown", name=esc(name), names=esc(", ".join(c.name for c in self.catalog.cards))))
        return Reply(render_card(self.catalog, card, lang))

    async def compare(self, user: UserInfo, args: list[str]) -> Reply:
        """Two cards side by side for the user's last question."""
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        pair = split_card_pair(self.catalog, args)
        if pair is None:
            return Reply(t(lang, "compare.usage"))
        if isinstance(pair, str):
            names = esc(", ".join(c.name for c in self.catalog.cards))
            return Reply(t(lang, "card.unknown", name=esc(pair), names=names))
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

    async def quote(self, user: UserInfo, text: str, bot_username: str | None) -> Reply:
        """A neutral, customer-ready answer: no staff preferences, no staff ref, and a deep link for the customer."""
        result = parse(text, self.catalogs.vocabulary)
        lang = result.language if result.request is not None else normalize_language(user.language_code)
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

    async def inline(self, user: UserInfo, query: str) -> tuple[list[dict], bool]:
        """Inline results as plain dicts (id, title, description, text); True when preferences shaped them."""
        query = query[:256]
        prefs = await self.preferences(user)
        result = parse(query, self.catalogs.vocabulary) if query.strip() else None
        if result is None or result.request is None:
            lang = self.language(prefs, user, result.language if result else None)
            if result is not None and result.error and result.error != "not a sizing question":
                message = html.unescape(localize(lang, result.error))
                return [{"id": "error", "title": message[:64], "description": t(lang, "inline.help_description"),
                         "text": render_parse_error(lang, result.error)}], False
            return [{"id": "help", "title": t(lang, "inline.help_title"),
                     "description": t(lang, "inline.help_description"), "text": render_help(lang)}], False
        lang = self.language(prefs, user, result.language)
        request = result.request
        filled = self.apply_preferences(request, prefs)
        personal = bool(filled) or prefs.coin is not None or prefs.billing is not None or prefs.language is not None
        # Inline results are meant to be pasted into other chats: no top-up ref of the person typing.
        answer = self.answer(request, user, prefs, anonymous=True)
        if answer.error:
            return [{"id": "error", "title": answer.error[:64], "description": t(lang, "inline.help_description"),
                     "text": t(lang, "error.value", message=esc(answer.error))}], personal
        model = answer.resolved.shape.name if not answer.resolved.shape.typical else f"{answer.resolved.params_b:g}B"
        total = fmt_gb(lang, answer.requirement.total_gb)
        results = []
        fit = answer.payable
        if fit is not None:
            title = t(lang, "inline.fit_title", model=model, total=total, layout=f"{fit.count}x {fit.card.name}",
                      monthly=fmt_usd(lang, fit.monthly_usd))
            description = t(lang, "inline.description", hourly=fmt_usd(lang, fit.hourly_usd),
                            spare=fmt_gb(lang, fit.spare_gb))
        else:
            title = t(lang, "inline.no_fit_title", model=model, total=total)
            description = html.unescape(localize(lang, answer.selection.reason))
        results.append({"id": "fit", "title": title, "description": description,
                        "text": render_compact(answer, lang)})
        for index, layout in enumerate(answer.selection.alternatives[:2], start=1):
            results.append({"id": f"alt{index}", "title": t(lang, "inline.alt_title",
                                                                 layout=f"{layout.count}x {layout.card.name}",
                                                                 monthly=fmt_usd(lang, layout.monthly_usd)),
                            "description": t(lang, "inline.description", hourly=fmt_usd(lang, layout.hourly_usd),
                                             spare=fmt_gb(lang, layout.spare_gb)),
                            "text": render_compact(answer, lang, layout)})
        return results, personal

    # -- price alerts -----------------------------------------------------------------------------------

    async def subscribe(self, user: UserInfo, args: list[str]) -> Reply:
        # Alerts go out later, in the language we know the user by: record it now.
        await self.store.touch_user(user.id, normalize_language(user.language_code) if user.language_code else None)
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
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
            return Reply(t(lang, "card.unknown", name=esc(" ".join(words)),
                           names=esc(", ".join(c.name for c in self.catalog.cards))))
        await self.store.subscribe(user.id, card.id, below)
        below_text = t(lang, "subscribe.below", price=fmt_usd(lang, below), unit=unit) if below is not None else ""
        return Reply(t(lang, "subscribe.ok", card=esc(card.name), below=below_text))

    async def unsubscribe(self, user: UserInfo, args: list[str]) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        card_id = None
        if args:
            card = self.catalog.card(" ".join(args))
            card_id = card.id if card else " ".join(args).lower()
        removed = await self.store.unsubscribe(user.id, card_id)
        return Reply(t(lang, "unsubscribe.ok", count=removed))

    async def subscriptions(self, user: UserInfo) -> Reply:
        prefs = await self.preferences(user)
        lang = self.language(prefs, user)
        rows = await self.store.subscriptions(user.id)
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

    async def size_command(self, user: UserInfo, text: str, *, shared: bool = False) -> Reply:
        if not text.strip():
            prefs = await self.preferences(user)
            return Reply(t(self.language(prefs, user), "size.usage"))
        return await self.ask(user, text, shared=shared)


# -- settings parsing (the text form of /settings) ---------------------------------------------------------

def _parse_precision(raw: str, catalog: Catalog) -> str | None:
    value = canonical_precision(raw)
    return value if value in PRECISION_BYTES else None


def _parse_kv(raw: str, catalog: Catalog) -> str | None:
    value = canonical_kv_precision(raw)
    return value if value in KV_PRECISION_BYTES else None


def _parse_int(limit: int):
    def parse_value(raw: str, catalog: Catalog) -> int | None:
        text = raw.lower().replace(",", "").replace(".", "").replace("_", "").replace(" ", "")
        multiplier = 1
        if text.endswith("k"):
            text, multiplier = text[:-1], 1024
        if not text.isdigit():
            return None
        value = int(text) * multiplier
        return value if 0 < value <= limit else None
    return parse_value


def _parse_coin(raw: str, catalog: Catalog) -> str | None:
    coin = raw.strip().upper()
    return coin if coin in catalog.coins else None


def _parse_billing(raw: str, catalog: Catalog) -> str | None:
    words = {"hour": "hour", "hourly": "hour", "stunde": "hour", "day": "day", "tag": "day", "week": "week",
             "weekly": "week", "woche": "week", "month": "month", "monthly": "month", "monat": "month"}
    return words.get(raw.strip().lower())


def _parse_region(raw: str, catalog: Catalog) -> str | None:
    wanted = raw.strip().lower()
    for region in catalog.regions:
        if wanted in (region.id.lower(), region.name.lower()):
            return region.id
    return None


def _parse_lang(raw: str, catalog: Catalog) -> str | None:
    lang = raw.strip().lower()
    return lang if lang in ("en", "de") else None


SETTINGS = {  # key -> (preference field, parser, hint text key, hint values)
    "lang": ("language", _parse_lang, "hint.lang", lambda c: {}),
    "precision": ("precision", _parse_precision, "hint.precision", lambda c: {}),
    "kv": ("kv_precision", _parse_kv, "hint.kv", lambda c: {}),
    "context": ("context_tokens", _parse_int(MAX_CONTEXT_TOKENS), "hint.context", lambda c: {}),
    "batch": ("batch", _parse_int(MAX_BATCH), "hint.batch", lambda c: {"max": MAX_BATCH}),
    "coin": ("coin", _parse_coin, "hint.coin", lambda c: {"coins": ", ".join(c.coins)}),
    "billing": ("billing", _parse_billing, "hint.billing", lambda c: {}),
    "region": ("region", _parse_region, "hint.region", lambda c: {"regions": ", ".join(r.id for r in c.regions) or "-"}),
}


# -- small helpers ------------------------------------------------------------------------------------------

def clip_with(body: str, tail: str, limit: int = 4096) -> str:
    """Append `tail` (a link that must survive) and keep the whole under Telegram's limit."""
    from bot.render import clip

    return clip(body, limit - len(tail)) + tail


def _fits(data: str) -> str | None:
    return data if len(data.encode()) <= CALLBACK_LIMIT else None


def _try_encode(request: SizeRequest) -> str | None:
    try:
        return encode_request(request)
    except PayloadError:
        return None


def _toggle_row(request: SizeRequest, field_name: str, options, current, details: bool, lang: str) -> list[Button]:
    row = []
    variant = copy.copy(request)  # one shallow copy, its field set per option: the payload reads fields only
    for value, label in options:
        setattr(variant, field_name, value)
        payload = _try_encode(variant)
        mark = "✓ " if value == current else ""
        data = _fits(f"{'d' if details else 'f'}:{lang}:{payload}") if payload else None
        row.append(Button(mark + label, data=data))
    return row


def split_card_pair(catalog: Catalog, args: list[str]) -> tuple[Card, Card] | str | None:
    """'/compare A40 RTX 4090' -> (A40, RTX 4090): try every split point of the words."""
    if len(args) < 2:
        return None
    for cut in range(1, len(args)):
        first, second = catalog.card(" ".join(args[:cut])), catalog.card(" ".join(args[cut:]))
        if first and second:
            return first, second
    for word in args:
        if catalog.card(word) is None:
            return word
    return " ".join(args)
