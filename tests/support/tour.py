"""docs/tour.md's conversations replayed: every fenced block with `you>` lines is what `cardfit chat` replies to
them, in a fresh chat on the bundled catalog with the Hugging Face lookup off (tests/test_tour.py checks them;
`python -m tests.support.tour` rewrites the page from what the code says now)."""
from __future__ import annotations

import asyncio
import os
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "docs" / "tour.md"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def conversations(text: str) -> list[tuple[list[str], str]]:
    """(what was typed, the block as written) for every fenced block with `you>` lines."""
    found = []
    for block in FENCE.findall(text):
        typed = [line[5:] for line in block.splitlines() if line.startswith("you> ")]
        if typed:
            found.append((typed, block))
    return found


async def _replay(typed: list[str], db: Path) -> str:
    from bot.cli.chat import LOCAL_USER, dispatch, format_reply
    from bot.config import Settings
    from bot.features.core import CatalogHolder, Core
    from bot.store import Store
    from catalog.loader import load_catalog

    settings = Settings(catalog="gpurenthub", db=str(db), hf_lookup=False)
    store = await Store.open(settings.db)
    core = Core(settings, CatalogHolder(load_catalog(settings.catalog)), store)
    parts: list[str] = []
    pressable: list = []
    try:
        for line in typed:
            answer = await dispatch(core, LOCAL_USER, line + "\n", pressable)
            reply = ""
            if answer is not None:
                text, pressable = format_reply(answer)
                reply = "\ncardfit> " + text
            parts.append(f"you> {line}{reply}")
    finally:
        await store.close()
    return "\n\n".join(parts) + "\n"


def replay(typed: list[str]) -> str:
    """The block's text as the chat prints it now."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_replay(typed, Path(tmp) / "tour.sqlite3"))


def main() -> None:
    text = TOUR.read_text(encoding="utf-8")

    def again(match: re.Match[str]) -> str:
        typed = [line[5:] for line in match.group(1).splitlines() if line.startswith("you> ")]
        if not typed:
            return match.group(0)
        return match.group(0).split("\n", 1)[0] + "\n" + replay(typed) + "```"

    TOUR.write_text(FENCE.sub(again, text), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
