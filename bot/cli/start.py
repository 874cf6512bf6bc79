"""The `cardfit` command's process: what a one-shot start spends outside Cardfit's own code (issue #14: cold start).

Three costs of the interpreter itself, measured on `cardfit ask "70B int4"`:
- dataclasses writes each class's __init__, __repr__, __eq__, __hash__ and (frozen) __setattr__/__delattr__ as
  source text and compiles it: for the ~50 classes a start defines, that parse and compile was about a third of
  all the work of the imports. The code it compiles is kept (code objects, as a .pyc keeps a module's) in
  catalog/_compiled/, gitignored, next to the compiled copies of the bundled data, and reused by the next start:
  the same source text gives the same code, so a class is made exactly as before, only faster; a changed class
  has new source text, compiled and kept anew. Only while `cardfit` imports its modules, never for another
  importer of the engine; where the directory is not writable, every start compiles as before. The file is code, as
  a .pyc is: it is trusted as the __pycache__ directories of the same installation are (same owner, same place).
- The imports allocate ~18,000 objects (classes, functions, the parser's tables) that live for the whole run; the
  cyclic garbage collector ran ~32 times over them while they were made. It is paused for the imports, and what
  they made is moved out of its sight (gc.freeze: never scanned again, never freed before exit, as it would not
  be anyway); it collects everything allocated after that as usual.
- Python's teardown at exit frees every one of those objects one by one. A one-shot command that holds nothing
  but its output (ask, size, models: no store, no thread, no file left open) flushes that and ends the process;
  the operating system frees the rest at once. Every other command (the bot, the chat) exits as Python does.
"""
from __future__ import annotations

import gc
import marshal
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType

ONE_SHOT = frozenset({"ask", "size", "models"})
# Code objects are only good for the Python that compiled them (as __pycache__ names .pyc files by cache_tag).
KEPT_CODE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "catalog",
                         "_compiled", f"dataclass-methods.{sys.implementation.cache_tag}-{sys.hexversion:x}.marshal")
MAX_KEPT = 4096  # source texts; past it (edits over time) the file starts again from this start's


class KeptCode:
    """`exec` for dataclasses' generated methods, with the code objects of their source texts kept in a file."""

    def __init__(self, path: str = KEPT_CODE) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = {}
        self.missed = False
        try:
            with open(path, "rb") as handle:
                kept = marshal.loads(handle.read())  # marshal.load(handle) reads it in tiny pieces: 7x slower
        except (OSError, EOFError, ValueError, TypeError):  # none yet, or not readable: compile as dataclasses does
            kept = None
        if isinstance(kept, dict) and len(kept) <= MAX_KEPT:
            self.codes = kept

    def exec(self, source: str | CodeType, globals: dict[str, object] | None = None,  # noqa: A002 - exec's names
             locals: dict[str, object] | None = None, /) -> None:  # noqa: A002
        if isinstance(source, str):
            code = self.codes.get(source)
            if code is None:
                # As exec(source) compiles it in dataclasses, whose module has no __future__ imports.
                code = self.codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
                self.missed = True
            source = code
        exec(source, globals, locals)  # noqa: S102 - dataclasses' own generated code, as it would run it

    def save(self) -> None:
        """Keep what this start compiled (atomically: a concurrent start reads the old file or the new one)."""
        if not self.missed:
            return
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as handle:
                marshal.dump(self.codes, handle)
            os.replace(temporary, self.path)
        except (OSError, ValueError):  # not writable (a read-only install): the next start compiles again
            return


def import_cli(path: str = KEPT_CODE) -> Callable[[], int]:
    """bot.cli.main.main, imported with the collector paused and dataclasses' methods from the kept code (`make install`
    calls this once, so that the first start finds it)."""
    enabled = gc.isenabled()
    gc.disable()
    import dataclasses  # its own imports (inspect, ast) are a start's too: with the collector paused

    kept = KeptCode(path)
    patched = "exec" not in vars(dataclasses)  # dataclasses calls the builtin exec; a module global shadows it
    if patched:
        dataclasses.exec = kept.exec  # type: ignore[attr-defined]
    try:
        from bot.cli.main import main as run
    finally:
        if patched:
            del dataclasses.exec  # type: ignore[attr-defined]
        gc.freeze()
        if enabled:
            gc.enable()
    kept.save()
    return run


def main() -> int:
    run = import_cli()
    code = run()
    if sys.argv[1:2] and sys.argv[1] in ONE_SHOT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):  # the reader left, or a stream is closed: let Python finish
            return code
        os._exit(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
