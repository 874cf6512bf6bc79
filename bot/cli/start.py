"""The `cardfit` console script: bot.cli.main, started for the cold start of `cardfit ask` (within 150 ms of
`python -c pass`, benchmarks/bench_coldstart.py)."""
from __future__ import annotations

import gc
import os
import sys

ONE_SHOT = frozenset({"ask", "size", "models"})  # commands that hold nothing but their output


def main() -> int:
    # The ~18,000 objects the imports make live for the whole run: the collector is paused while they are made
    # and never scans them again (gc.freeze); it collects what comes after as usual. ~10 ms of the cold start.
    enabled = gc.isenabled()
    gc.disable()
    try:
        from bot.cli.main import main as run
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    code = run()
    if sys.argv[1:2] and sys.argv[1] in ONE_SHOT:
        # A one-shot command leaves no file, thread or store open: the process ends without Python freeing every
        # object one by one (~10 ms of the cold start).
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):  # the reader left, or a stream is closed: let Python finish
            return code
        os._exit(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
