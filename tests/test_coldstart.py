"""The `cardfit` command's own start (bot/cli/start.py, issue #14): the same output and exit status as
bot.cli.main.main, the
same classes from the kept code of dataclasses' methods, and `ask --json` never imports the text renderer."""
from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.start import KeptCode

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


def _sample_class() -> type:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Sample:
        name: str
        tags: tuple[str, ...] = ()
        extra: list[int] = dataclasses.field(default_factory=list, compare=False)

    return Sample


def test_kept_code_makes_the_methods_dataclasses_makes(tmp_path, monkeypatch):
    plain = _sample_class()
    path = str(tmp_path / "kept.marshal")
    first = KeptCode(path)
    monkeypatch.setattr(dataclasses, "exec", first.exec, raising=False)
    compiled = _sample_class()
    first.save()
    second = KeptCode(path)
    monkeypatch.setattr(dataclasses, "exec", second.exec, raising=False)
    kept = _sample_class()
    assert first.missed and not second.missed and second.codes.keys() == first.codes.keys()
    for made in (compiled, kept):
        for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
            ours, theirs = getattr(made, name), getattr(plain, name)
            assert ours.__code__.co_code == theirs.__code__.co_code, name
            assert ours.__annotations__ == theirs.__annotations__, name
        assert str(inspect.signature(made)) == str(inspect.signature(plain))
        one, other = made(name="a", tags=("b",)), plain(name="a", tags=("b",))
        assert repr(one) == repr(other) and hash(one) == hash(other) and one == made(name="a", tags=("b",))
        assert one.extra == [] and one.extra is not made(name="a").extra
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.name = "c"  # type: ignore[misc]


def test_a_kept_code_file_that_cannot_be_read_is_compiled_again(tmp_path):
    path = tmp_path / "kept.marshal"
    path.write_bytes(b"\x00 not marshal")
    kept = KeptCode(str(path))
    namespace: dict[str, object] = {}
    kept.exec("def f():\n    return 1\n", {}, namespace)
    assert kept.missed and namespace["f"]() == 1  # type: ignore[operator]
    kept.save()
    assert KeptCode(str(path)).codes.keys() == {"def f():\n    return 1\n"}


_DATACLASSES = """
import dataclasses, inspect, json, sys
if sys.argv[1:]:
    import bot.cli.start
    bot.cli.start.import_cli(sys.argv[1])
else:
    import bot.cli.main
found = {}
for name, module in sorted(sys.modules.items()):
    if name.split('.')[0] not in ('bot', 'engine', 'catalog'):
        continue
    for value in vars(module).values():
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name:
            methods = {method: getattr(value, method).__code__.co_code.hex() for method in
                       ('__init__', '__repr__', '__eq__', '__hash__', '__setattr__', '__delattr__')
                       if hasattr(getattr(value, method, None), '__code__')}
            found[f'{name}.{value.__qualname__}'] = [str(inspect.signature(value)), methods]
print(json.dumps(found, sort_keys=True))
"""


def test_the_starts_classes_are_the_ones_a_plain_import_makes(tmp_path):
    path = str(tmp_path / "kept.marshal")
    plain = _run(_DATACLASSES)
    first, second = _run(_DATACLASSES, path), _run(_DATACLASSES, path)  # the first compiles and keeps, the second reads
    assert plain.returncode == first.returncode == second.returncode == 0, plain.stderr + first.stderr + second.stderr
    assert len(json.loads(plain.stdout)) > 40
    assert plain.stdout == first.stdout == second.stdout
    assert KeptCode(path).codes and not KeptCode(path).missed
