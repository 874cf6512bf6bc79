"""The terminal chat: the same features, words, commands and preferences as Telegram, on stdin/stdout."""
from __future__ import annotations

import asyncio
import html
import shlex
import sys
from pathlib import Path
from typing import TextIO

from bot.config import Settings
from bot.features import commands
from bot.features.callbacks import ChartButton
from bot.features.caller import Caller, UserInfo, resolve_caller
from bot.features.core import CatalogHolder, Core
from bot.features.feature import CommandInput, Scope, unknown_button
from bot.features.questions import answer_question
from bot.features.reply import Button, CallbackResult, Reply
from bot.features.welcome import unknown_command
from bot.store import Store
from bot.texts.i18n import t
from bot.texts.render import plain
from catalog.loader import load_catalog

LOCAL_USER = UserInfo(id=0, language_code=None, first_name="")
BANNER = ("Cardfit terminal chat — ask a sizing question, /help for commands, a button's number to press it, "
          "/quit to leave.")


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


async def press(core: Core, caller: Caller, data: str | None) -> CallbackResult:
    """A button, through the same table the Telegram handlers are registered from."""
    route = commands.TABLE.button_route(data)
    if route is None:
        return unknown_button(caller)
    return await route.press(core, caller, data)


async def save_chart(core: Core, caller: Caller, data: str | None) -> Reply:
    """The chart button in a terminal: the PNG written under CARDFIT_CHART_DIR, its path and caption printed."""
    from bot.features.chart import ChartData, chart_path, press_chart, render_png

    outcome = await press_chart(core, caller, data)
    if not isinstance(outcome, ChartData):
        return outcome.reply or Reply(outcome.notice or "")
    path = chart_path(core.settings.chart_dir, outcome)
    png = await asyncio.to_thread(render_png, outcome)
    try:
        await asyncio.to_thread(_write, path, png)
    except OSError as exc:  # a chart dir that cannot be written: say so, the chat goes on
        return Reply(t(caller.language, "chart.not_saved", path=html.escape(str(path)),
                       reason=html.escape(exc.strerror or exc.__class__.__name__)))
    return Reply(t(caller.language, "chart.saved", path=html.escape(str(path))) + "\n" + html.escape(outcome.caption))


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


async def command(core: Core, caller: Caller, text: str) -> Reply | None:
    """'/name args': the commands everyone has (staff and admin commands belong to Telegram's staff)."""
    name, _, rest = text[1:].partition(" ")
    name = name.split("@")[0].lower()
    try:
        args = shlex.split(rest)
    except ValueError:
        args = rest.split()
    known = commands.TABLE.command(name)
    if known is None or known.scope is not Scope.EVERYONE:
        return await unknown_command(caller, name)
    return await known.answer(core, CommandInput(caller, args, rest))


async def dispatch(core: Core, user: UserInfo, line: str, pressable: list[Button]) -> Reply | None:
    """One line of input -> the reply the bot would send (or the edited message for a button press)."""
    text = line.strip()
    if not text:
        return None
    caller = await resolve_caller(core.store, user)
    if text.isdigit() and 1 <= int(text) <= len(pressable):
        data = pressable[int(text) - 1].data
        if ChartButton.matches(data):
            return await save_chart(core, caller, data)
        result = await press(core, caller, data)
        return result.reply or (Reply(result.notice) if result.notice else None)
    if text.startswith("/"):
        return await command(core, caller, text)
    return await answer_question(core, caller, text, chat_id=user.id)  # the terminal is one chat: its local user's


async def run_chat(settings: Settings, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    catalogs = CatalogHolder(load_catalog(settings.catalog))
    store = await Store.open(settings.db)
    core = Core(settings, catalogs, store)
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
            answer = await dispatch(core, LOCAL_USER, line, pressable)
            if answer is None:
                continue
            text, pressable = format_reply(answer)
            print(("cardfit> " if interactive else "") + text, file=stdout, flush=True)
            if not interactive:
                print("", file=stdout)
    finally:
        await store.close()
    return 0
