"""The `cardfit` command's process: what a one-shot start spends outside Cardfit's own code (issue #14: cold start).

Two costs of the interpreter itself, measured on `cardfit ask "70B int4"`:
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
import os
import sys

ONE_SHOT = frozenset({"ask", "size", "models"})


def main() -> int:
    enabled = gc.isenabled()
    gc.disable()
    try:
        from bot.cli import main as run
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
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
