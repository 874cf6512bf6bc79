"""The terminal chat: the same conversation, handlers' words and preferences as Telegram, on stdin/stdout."""
from __future__ import annotations

import asyncio
import shlex
import sys
from typing import TextIO

from bot.config import Settings
from bot.conversation import Button, CatalogHolder, Conversation, Reply, UserInfo
from bot.render import plain
from bot.store import Store
from catalog.loader import load_catalog

LOCAL_USER = UserInfo(id=0, language_code=None, first_name="")
BANNER = "Cardfit terminal chat — ask a sizing question, /help for commands, a button's number to press it, /quit to leave."


def format_reply(answer: Reply) -> tuple[str, list[Button]]:
    """Plain text with the buttons listed underneath: callback buttons numbered, links spelled out."""
    lines = [plain(answer.text)]
    pressable: list[Button] = []
    for row in answer.buttons:
        cells = []
        for button in row:
            if button.data:  # URL buttons (the top-up link) are already spelled out in the text
                pressable.append(button)
                cells.append(f"[{len(pressable)}] {button.text}")
        if cells:
            lines.append("  ".join(cells))
    return "\n".join(lines), pressable


async def dispatch(conversation: Conversation, user: UserInfo, line: str, pressable: list[Button]) -> Reply | None:
    """One line of input -> the reply the bot would send (or the edited message for a button press)."""
    text = line.strip()
    if not text:
        return None
    if text.isdigit() and 1 <= int(text) <= len(pressable):
        result = await conversation.on_callback(user, pressable[int(text) - 1].data)
        return result.reply or (Reply(result.notice) if result.notice else None)
    if text.startswith("/"):
        command, _, rest = text[1:].partition(" ")
        command = command.split("@")[0].lower()
        try:
            args = shlex.split(rest)
        except ValueError:
            args = rest.split()
        handlers = {
            "start": lambda: conversation.start(user, args[0] if args else None),
            "help": lambda: conversation.help(user),
            "settings": lambda: conversation.settings_view(user),
            "set": lambda: conversation.set_setting(user, args),
            "cards": lambda: conversation.cards(user),
            "card": lambda: conversation.card(user, rest),
            "compare": lambda: conversation.compare(user, args),
            "size": lambda: conversation.size_command(user, rest),
            "subscribe": lambda: conversation.subscribe(user, args),
            "unsubscribe": lambda: conversation.unsubscribe(user, args),
            "subscriptions": lambda: conversation.subscriptions(user),
        }
        if command in handlers:
            return await handlers[command]()
        return await conversation.unknown_command(user, command)
    return await conversation.ask(user, text)


async def run_chat(settings: Settings, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    catalogs = CatalogHolder(load_catalog(settings.catalog))
    store = await Store.open(settings.db)
    conversation = Conversation(settings, catalogs, store)
    interactive = stdin.isatty()
    print(BANNER if interactive else "", file=stdout, end="\n" if interactive else "")
    pressable: list[Button] = []
    try:
        while True:
            if interactive:
                print("\nyou> ", end="", file=stdout, flush=True)
            line = await asyncio.to_thread(stdin.readline)
            if not line:
                break
            if line.strip().lower() in ("/quit", "/exit", "quit", "exit"):
                break
            answer = await dispatch(conversation, LOCAL_USER, line, pressable)
            if answer is None:
                continue
            text, pressable = format_reply(answer)
            print(("cardfit> " if interactive else "") + text, file=stdout, flush=True)
            if not interactive:
                print("", file=stdout)
    finally:
        await store.close()
    return 0
