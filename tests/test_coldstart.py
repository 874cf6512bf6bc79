"""The `cardfit` command's own start (bot/cli/start.py): the same output and exit status as bot.cli.main.main, the
collector back after the imports, and `ask --json` never imports the text renderer."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "CARDFIT_HF_LOOKUP": "0"}


def _run(code: str, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT, env=ENV,
                          input=stdin, timeout=120)


def _start(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The console script's code (pyproject's `cardfit`), as `cardfit ARGV` runs it."""
    code = "import sys; sys.argv[0] = 'cardfit'; from bot.cli.start import main; sys.exit(main())"
    return _run(code, *argv, stdin=stdin)


def _cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return _run("import sys; from bot.cli.main import main; sys.exit(main(sys.argv[1:]))", *argv, stdin=stdin)


@pytest.mark.parametrize("argv", [
    ("ask", "70B int4"),
    ("ask", "--json", "Llama 3.1 70B on 2x RTX 4090"),
    ("ask", "hello there"),  # not a sizing question: exit 2, the hint on stdout, the reason on stderr
    ("ask", "--json", "hello there"),
    ("size", "--params", "8", "--json"),
    ("size", "--model", "no-such-model"),
    ("models", "--search", "llama", "3.1"),
    ("ask", "--bogus", "x"),
])
def test_the_console_script_prints_and_exits_as_the_cli_does(argv):
    started, direct = _start(*argv), _cli(*argv)
    assert (started.returncode, started.stdout, started.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert started.stdout or started.stderr


def test_a_batch_on_stdin_is_written_whole_before_the_process_ends():
    questions = "".join(f"{size}B int4, {context}k context\n" for size in (7, 8, 13, 70) for context in (4, 8, 32))
    started = _start("ask", "--json", "-", stdin=questions * 20)
    assert started.returncode == 0, started.stderr
    lines = started.stdout.splitlines()
    assert len(lines) == 240 and all(json.loads(line)["error"] is None for line in lines)
    assert started.stdout == _cli("ask", "--json", "-", stdin=questions * 20).stdout


def test_the_collector_runs_again_after_the_imports():
    """The pause covers the imports only: a command that stays (the bot, the chat) has its collector back."""
    code = ("import gc, sys; sys.argv = ['cardfit', 'catalog', 'check', 'catalog/data/gpurenthub.yaml']\n"
            "from bot.cli.start import main\n"
            "assert main() == 0 and gc.isenabled() and gc.get_freeze_count() > 1000\n"
            "gc.disable(); sys.argv[1:] = ['catalog', 'check', 'catalog/data/gpurenthub.yaml']\n"
            "assert main() == 0 and not gc.isenabled()  # one paused by the caller stays paused\n"
            "print('ok')\n")
    result = _run(code)
    assert result.stdout.splitlines()[-1] == "ok", result.stderr


def test_ask_json_never_imports_the_text_renderer():
    code = ("import io, sys, contextlib, bot.cli.main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert bot.cli.main.main(['ask', '--json', '70B int4']) == 0\n"
            "print(sorted(name for name in ('bot.texts.render', 'bot.texts.render_serving', 'bot.texts.i18n', 'html')\n"
            "             if name in sys.modules))\n")
    result = _run(code)
    assert result.stdout.strip() == "[]", result.stderr
