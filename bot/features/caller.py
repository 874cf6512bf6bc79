"""Who is asking: the user as the front end knows them, their stored preferences, and the language to answer in.

Resolved once per update (Telegram: the pre-handler in bot/telegram/handlers/incoming.py; the terminal chat: each
line), then handed to the features, so no reply reads the preferences a second time.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from bot.store import PREFERENCE_FIELDS, Preferences
from bot.store.users import UserRepository
from bot.texts.i18n import normalize_language


@dataclass(frozen=True, slots=True)
class UserInfo:
    id: int
    language_code: str | None = None
    first_name: str = ""
    # The Telegram update this comes from (ids grow with time): a setting is written only over one asked for by
    # an older update (bot/store/users.py set_preference). None outside Telegram.
    update_order: int | None = None


@dataclass(frozen=True, slots=True)
class Caller:
    user: UserInfo
    preferences: Preferences
    # Said where others read the answer (a group, an inline answer to be sent there): the preferences here hold none
    # of the user's settings (language, precision, region, coin, billing ...), which are theirs alone, so no answer
    # there is shaped by them or shows them; the defaults answer instead.
    public: bool = False

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def telegram_language(self) -> str | None:
        """The client's language as 'en'/'de', or None when the update carried no language_code."""
        return normalize_language(self.user.language_code) if self.user.language_code else None

    @property
    def language(self) -> str:
        return self.language_for(None)

    def language_for(self, detected: str | None) -> str:
        """An explicit /set lang wins; then the language the question itself told (`ParseResult.told_language`:
        None when it told none, as "70B int4" does), so an English question from a German client is answered in
        English; then the client's language."""
        if self.preferences.language:
            return self.preferences.language
        if detected in ("en", "de"):
            return detected
        return normalize_language(self.user.language_code)

    def with_preferences(self, preferences: Preferences) -> Caller:
        """After a preference was written: the answer that follows must already use it (in public, still none)."""
        return replace(self, preferences=_without_settings(preferences) if self.public else preferences)

    def in_public(self) -> Caller:
        """The caller where others read the answer: their settings left out."""
        return replace(self, preferences=_without_settings(self.preferences), public=True)


def _without_settings(preferences: Preferences) -> Preferences:
    unset: dict[str, Any] = dict.fromkeys(PREFERENCE_FIELDS)  # every setting is optional (None: not set)
    return replace(preferences, **unset)


async def resolve_caller(users: UserRepository, user: UserInfo, *, record_activity: bool = True) -> Caller:
    """Read the user's preferences; with `record_activity` (the user wrote to the bot) also record that they are
    reachable again and their client's language. That write happens only when it changes something (a new user,
    a blocked one, another language), so most updates cost one read."""
    caller = Caller(user, await users.get_preferences(user.id))
    if record_activity and _activity_changes(caller):
        caller = caller.with_preferences(await users.touch_user(user.id, caller.telegram_language))
    return caller


def _activity_changes(caller: Caller) -> bool:
    prefs = caller.preferences
    language = caller.telegram_language
    return not prefs.stored or prefs.blocked or (language is not None and language != prefs.telegram_language)
