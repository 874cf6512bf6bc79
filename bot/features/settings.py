"""A user's defaults: /settings shows them, /set KEY VALUE changes one (the keys and their values:
bot/features/setting_values.py). Questions read them through bot/features/ask.py."""
from __future__ import annotations

import html

from bot.features.core import Core
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply, echo
from bot.features.setting_values import SETTINGS
from bot.texts.i18n import normalize_language, t
from engine.serving.constants import VLLM_VERSION

RESET_WORDS = ("default", "reset", "clear", "-", "standard")


async def show_settings(core: Core, given: CommandInput) -> Reply:
    caller = given.caller
    if given.shared:
        # Someone's defaults are their own business: not shown to a whole group.
        return Reply(t(normalize_language(caller.user.language_code), "settings.private_only"))
    prefs = caller.preferences
    lang = caller.language
    catalog = core.catalog
    unset = t(lang, "settings.unset")
    values = {
        "lang": prefs.language or f"{lang} ({t(lang, 'default_marker')})",
        "precision": (prefs.precision or "").upper() or unset,
        "kv": (prefs.kv_precision or "").upper() or unset,
        "context": f"{prefs.context_tokens:,}" if prefs.context_tokens else unset,
        "batch": str(prefs.batch) if prefs.batch else unset,
        "coin": prefs.coin or f"{catalog.default_coin} ({t(lang, 'default_marker')})",
        "billing": prefs.billing or f"{catalog.default_billing} ({t(lang, 'default_marker')})",
        "region": prefs.region or unset,
        "engine": prefs.engine or unset,
        "vllm": prefs.vllm or f"{VLLM_VERSION} ({t(lang, 'default_marker')})",
    }
    lines = [t(lang, "settings.title")]
    lines += [t(lang, "settings.line", key=key, value=html.escape(value)) for key, value in values.items()]
    lines += ["", t(lang, "settings.usage")]
    return Reply("\n".join(lines))


async def set_setting(core: Core, given: CommandInput) -> Reply:
    caller, args = given.caller, given.args
    lang = caller.language
    if len(args) < 2:
        return Reply(t(lang, "settings.usage"))
    key, raw = args[0].lower(), " ".join(args[1:]).strip()
    spec = SETTINGS.get(key)
    if spec is None:
        return Reply(t(lang, "settings.bad_key", key=echo(key)))
    if raw.lower() in RESET_WORDS or raw.lower() in spec.resets:
        stored = await core.store.set_preference(caller.id, spec.field, None, caller.user.update_order)
        if (kept := getattr(stored, spec.field)) is not None:
            return _superseded(lang, key, spec.field, kept)
        cleared = caller.with_preferences(stored)
        return Reply(t(cleared.language, "settings.cleared", key=html.escape(key)))
    value = spec.parse(raw, core.catalog)
    if value is None:
        hint = t(lang, spec.hint_key, **spec.hint_values(core.catalog))
        return Reply(t(lang, "settings.bad_value", value=echo(raw), key=html.escape(key), hint=html.escape(hint)))
    stored = await core.store.set_preference(caller.id, spec.field, value, caller.user.update_order)
    if (kept := getattr(stored, spec.field)) != value:
        # An older update handled again (after a crash) whose field a newer one set since: nothing was written,
        # and the reply says so rather than "saved".
        return _superseded(lang, key, spec.field, kept)
    new_lang = str(value) if spec.field == "language" else lang
    return Reply(t(new_lang, "settings.saved", key=html.escape(key), value=html.escape(_shown(spec.field, value))))


def _shown(field: str, value: str | int) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return value.upper() if field in ("precision", "kv_precision", "coin") else value


def _superseded(lang: str, key: str, field: str, kept: str | int | None) -> Reply:
    shown = _shown(field, kept) if kept is not None else t(lang, "settings.unset")
    return Reply(t(lang, "settings.superseded", key=html.escape(key), value=html.escape(shown)))


FEATURE = Feature(
    "settings",
    commands=(
        Command("settings", Scope.EVERYONE, show_settings, "command.settings"),
        Command("set", Scope.EVERYONE, set_setting, "command.set"),
    ),
)
