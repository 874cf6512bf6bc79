"""What a feature answers with, for every front end: a message (HTML and buttons), or a button press's outcome."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from bot.texts.render import clip, telegram_length

ECHO_LIMIT = 64  # characters of a user's argument quoted back ("No card called …")


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    data: str | None = None  # callback data
    url: str | None = None


@dataclass(slots=True)
class Reply:
    text: str  # HTML
    buttons: list[list[Button]] = field(default_factory=list)
    photo: bytes | None = None  # a PNG sent after the text (the operators' /demand chart)


@dataclass(slots=True)
class CallbackResult:
    reply: Reply | None  # edit the message to this (None: leave it)
    notice: str | None = None  # short text for answerCallbackQuery


def echo(text: str, limit: int = ECHO_LIMIT) -> str:
    """What the user typed, quoted back in an answer: cut to `limit` characters first, then HTML-escaped (a cut
    after escaping could split an entity). A 10,000-character argument must not make the answer too long."""
    return html.escape(text if len(text) <= limit else text[:limit - 1] + "…")


def clip_with(body: str, tail: str, limit: int = 4096) -> str:
    """Append `tail` (a link that must survive) and keep the whole under Telegram's limit."""
    return clip(body, limit - telegram_length(tail)) + tail
