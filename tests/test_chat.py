"""The terminal chat: same conversation and texts as Telegram, preferences in ./var, buttons by number."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from bot.cli.chat import run_chat
from bot.config import load_settings

ROOT = Path(__file__).resolve().parents[1]


async def test_chat_session(tmp_path):
    settings = load_settings(db=str(tmp_path / "chat.sqlite3"))
    stdin = io.StringIO("70B at 4-bit, 32k context\n2\n/set coin BTC\n7B fp8\n/settings\nhello\n"
                        "/subscribe A40 below 200\n/subscriptions\n/frobnicate\n/quit\n")
    stdout = io.StringIO()
    assert await run_chat(settings, stdin, stdout) == 0
    out = stdout.getvalue()
    assert "Memory needed: 47.7 GB" in out
    assert "[2] FP8" in out and "Memory needed: 82.7 GB" in out  # button 2 pressed: FP8
    assert "coin=BTC" in out and "coin: BTC" in out
    assert "I did not find a model or a size" in out
    assert "Subscribed to A40 below $200/month" in out and "• A40 below $200/month" in out
    assert "I do not know /frobnicate." in out
    assert "<b>" not in out


def test_make_run_without_token_starts_the_chat(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDFIT_")}
    env["CARDFIT_DB"] = str(tmp_path / "run.sqlite3")
    result = subprocess.run([sys.executable, "-m", "bot.cli", "chat"], input="7B bf16\n", capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=60)
    assert result.returncode == 0 and "RTX A5000" in result.stdout
