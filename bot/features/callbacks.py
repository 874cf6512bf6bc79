"""Callback data, one small class per kind of button: `encode()` writes it, `decode()` reads it back or says None.

The encodings are a contract with messages already sitting in chats, so they never change:
``f:<lang>:<payload>`` / ``d:<lang>:<payload>`` (an answer, short or with details), ``k:<lang>:<coin>:<payload>``
(a coin, or ``pick`` for the picker), ``c:<lang>:<payload>`` (the answer's chart), ``x:<n>:<lang>`` (a help
example), ``ann:<post|discard>:<id>``, ``annp:<again|there>:<id>:<part>`` (a channel part whose fate is unknown),
``l:<lang>:<payload>`` (the answer's launch command), ``p:<lang>:<page>`` (a page of /cards).
Telegram caps callback data at 64 bytes; a button whose data would not fit is left out. `matches()` is what a handler is
registered with (PTB's ``pattern=``): the kind by its prefix, so a malformed value of that kind still reaches its
handler and gets that kind's notice. The pattern follows PTB's examples/arbitrarycallbackdatabot.py: data that
does not decode is answered, never acted on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

CALLBACK_LIMIT = 64
LANGUAGES = ("en", "de")
PICK = "pick"  # in a coin button's coin field: open the picker


def within_limit(data: str) -> str | None:
    """The data when Telegram accepts it on a button, else None."""
    return data if len(data.encode()) <= CALLBACK_LIMIT else None


MAX_ROW_ID = 2**63 - 1  # SQLite's integer and PostgreSQL's bigint: a larger id overflows in the driver


def _row_id(raw: str) -> int | None:
    """An id the store can look up: ASCII digits (str.isdigit admits ² and other scripts' digits) within its
    integer range; None for anything else, so a forged button is answered, not a traceback."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None
    value = int(raw)
    return value if value <= MAX_ROW_ID else None


def _answerable(data: object, prefixes: tuple[str, ...]) -> bool:
    # Longer than Telegram allows: never one of ours; it goes to the catch-all.
    return isinstance(data, str) and data.startswith(prefixes) and len(data.encode()) <= CALLBACK_LIMIT


@dataclass(frozen=True, slots=True)
class AnswerButton:
    """Show the answer to an encoded request again: short (`f`) or with every component's arithmetic (`d`).
    `lang` is the language of the message the button belongs to."""

    details: bool
    lang: str
    payload: str
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"{'d' if self.details else 'f'}:{self.lang}:{self.payload}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("f:", "d:"))

    @classmethod
    def decode(cls, data: object) -> AnswerButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        kind, _, rest = data.partition(":")
        lang, _, payload = rest.partition(":")
        return cls(kind == "d", lang, payload) if lang in LANGUAGES else None


@dataclass(frozen=True, slots=True)
class CoinButton:
    """Pay in this coin from now on (a saved preference), or with `coin` None: show the coin picker."""

    lang: str
    coin: str | None
    payload: str
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"k:{self.lang}:{self.coin or PICK}:{self.payload}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("k:",))

    @classmethod
    def decode(cls, data: object) -> CoinButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        lang, _, rest = data[2:].partition(":")
        coin, _, payload = rest.partition(":")
        if lang not in LANGUAGES:
            return None
        return cls(lang, None if coin == PICK else coin, payload)


@dataclass(frozen=True, slots=True)
class ChartButton:
    """Send the chart of an encoded request's answer as a picture (bot/features/chart.py); `lang` as for
    AnswerButton."""

    lang: str
    payload: str
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"c:{self.lang}:{self.payload}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("c:",))

    @classmethod
    def decode(cls, data: object) -> ChartButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        lang, _, payload = data[2:].partition(":")
        return cls(lang, payload) if lang in LANGUAGES and payload else None


@dataclass(frozen=True, slots=True)
class LaunchButton:
    """Show the launch command of an encoded request's layout (the serving check's `command`)."""

    lang: str
    payload: str
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"l:{self.lang}:{self.payload}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("l:",))

    @classmethod
    def decode(cls, data: object) -> LaunchButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        lang, _, payload = data[2:].partition(":")
        return cls(lang, payload) if lang in LANGUAGES and payload else None


@dataclass(frozen=True, slots=True)
class SpeedButton:
    """Show the speed of an encoded request's layout at 1, 8 and 32 users, with its time to first token."""

    lang: str
    payload: str
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"s:{self.lang}:{self.payload}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("s:",))

    @classmethod
    def decode(cls, data: object) -> SpeedButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        lang, _, payload = data[2:].partition(":")
        return cls(lang, payload) if lang in LANGUAGES and payload else None


@dataclass(frozen=True, slots=True)
class ExampleButton:
    """Ask help example number `index` (1-based) in `lang` (None: the caller's language)."""

    index: int
    lang: str | None
    invalid_notice: ClassVar[str] = "error.unknown_action"

    def encode(self) -> str:
        return f"x:{self.index}:{self.lang or ''}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("x:",))

    @classmethod
    def decode(cls, data: object) -> ExampleButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        index, _, lang = data[2:].partition(":")
        if not (index.isascii() and index.isdigit()):
            return None
        return cls(int(index), lang if lang in LANGUAGES else None)


@dataclass(frozen=True, slots=True)
class AnnouncementButton:
    """An admin's Post or Discard under a preview."""

    action: str  # post | discard
    announcement_id: int
    invalid_notice: ClassVar[str] = "error.unknown_action"
    ACTIONS: ClassVar[tuple[str, ...]] = ("post", "discard")

    def encode(self) -> str:
        return f"ann:{self.action}:{self.announcement_id}"

    @staticmethod
    def matches(data: object) -> bool:
        # No length cap here: an over-long ann: value is still an admin's button and gets the admin check first.
        return isinstance(data, str) and data.startswith("ann:")

    @classmethod
    def decode(cls, data: object) -> AnnouncementButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        _, action, raw_id = (data.split(":") + ["", ""])[:3]
        announcement_id = _row_id(raw_id)
        if action not in cls.ACTIONS or announcement_id is None:
            return None
        return cls(action, announcement_id)


@dataclass(frozen=True, slots=True)
class PartButton:
    """An admin's answer about one channel part whose fate is unknown (sent, then the process died before it was
    recorded): post it again, or it is there already."""

    action: str  # again | there
    announcement_id: int
    part: int  # 0-based
    invalid_notice: ClassVar[str] = "error.unknown_action"
    ACTIONS: ClassVar[tuple[str, ...]] = ("again", "there")

    def encode(self) -> str:
        return f"annp:{self.action}:{self.announcement_id}:{self.part}"

    @staticmethod
    def matches(data: object) -> bool:
        # Like AnnouncementButton: no length cap, the admin check comes first.
        return isinstance(data, str) and data.startswith("annp:")

    @classmethod
    def decode(cls, data: object) -> PartButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        fields = data.split(":")
        if len(fields) != 4 or fields[1] not in cls.ACTIONS:
            return None
        announcement_id, part = _row_id(fields[2]), _row_id(fields[3])
        if announcement_id is None or part is None:
            return None
        return cls(fields[1], announcement_id, part)


@dataclass(frozen=True, slots=True)
class CardsPageButton:
    """Show page `page` (0-based) of /cards in `lang`: the ◀ / ▶ under a list too long for one message."""

    lang: str
    page: int
    invalid_notice: ClassVar[str] = "error.stale"

    def encode(self) -> str:
        return f"p:{self.lang}:{self.page}"

    @staticmethod
    def matches(data: object) -> bool:
        return _answerable(data, ("p:",))

    @classmethod
    def decode(cls, data: object) -> CardsPageButton | None:
        if not isinstance(data, str) or not cls.matches(data):
            return None
        lang, _, raw = data[2:].partition(":")
        # ASCII digits only (str.isdigit admits ² and other scripts' digits); a page past the last one is judged
        # by the handler against the catalog in service.
        if lang not in LANGUAGES or not (raw.isascii() and raw.isdigit()) or len(raw) > 4:
            return None
        return cls(lang, int(raw))
