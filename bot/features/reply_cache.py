"""Answers to the same question, built and rendered once per catalog (issue #14: the bot's CPU per update).

An answer is a pure function of the request as filled (every field, the assumed and the ignored words), the
catalog in service and the preferences it reads (billing, coin, engine), plus the reader's language and view.
The only part that depends on who asks is the top-up link's reference (engine.fit.topup.topup_url): the entry keeps
the reply built without one, and each reader gets theirs swapped in, in the text (as render wrote it: escaped)
and in the button. So the cache needs no invalidation but the catalog's: a new catalog object empties it.
Nothing a user writes to the store takes part in it, so replicas sharing a database cannot disagree through it.
"""
from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from bot.texts.render import TELEGRAM_LIMIT
from catalog.schema import Catalog
from engine.fit.topup import topup_url

MAX_ENTRIES = 512  # a few KB each (the reply's text and buttons): bounded memory whatever the traffic
Key = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Entry:
    error: str | None  # the answer's error: not remembered, and a forged payload, as without the cache
    reply: Any  # a bot.features.conversation.Reply (that module imports this one), built for nobody: no reference
    topup_url: str | None  # that link
    topup_amount_usd: float | None
    coin: str | None


class ReplyCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Key, Entry] = OrderedDict()
        self._catalog: Catalog | None = None
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, catalog: Catalog, key: Key, build: Callable[[], Entry]) -> Entry:
        if catalog is not self._catalog:  # a reload: every answer may change
            self._entries.clear()
            self._catalog = catalog
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry
        self.misses += 1
        entry = self._entries[key] = build()
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return entry

    def reply(self, catalog: Catalog, key: Key, build: Callable[[], Entry], *, user_id: int | None,
              secret: str | None) -> tuple[str | None, Any] | None:
        """(the answer's error, the reply for `user_id`; None: for nobody, as in a group); None when the cached
        reply cannot be made this user's (see `personal`): the caller builds it then."""
        entry = self.get(catalog, key, build)
        url = entry.topup_url
        if url is not None and entry.topup_amount_usd is not None and user_id is not None and secret:
            url = topup_url(catalog, entry.topup_amount_usd, entry.coin, user_id, secret)  # as build_answer makes it
        reply = personal(entry, url)
        return None if reply is None else (entry.error, reply)


def personal(entry: Entry, url: str | None) -> Any:
    """The entry's reply with `url` as its top-up link; None when the swap could change more than the link (the
    text would come near Telegram's limit, where render's clip could cut differently)."""
    old = entry.topup_url
    reply = entry.reply
    if old is None or url is None or url == old:
        return replace(reply, buttons=list(reply.buttons))
    text = reply.text.replace(html.escape(old, quote=True), html.escape(url, quote=True))
    if len(text) > TELEGRAM_LIMIT - 64 or len(reply.text) > TELEGRAM_LIMIT - 64:
        return None
    buttons = [[replace(b, url=url) if b.url == old else b for b in row] for row in reply.buttons]
    return replace(reply, text=text, buttons=buttons)
