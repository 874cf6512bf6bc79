"""One `cardfit ask --json -` run: a question line -> the JSON line printed for it, in UTF-8.

bot.cli.main.ask_batch builds the batch the CLI runs; benchmarks/bench_ask.py times its `line`, what the CLI calls
per line.
"""
from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable
from typing import IO, Any

Answerer = Callable[[str], dict[str, Any]]  # a question -> the JSON object printed for it
Failure = Callable[[str], dict[str, Any]]  # what went wrong on a line -> the JSON object printed instead
UNWRITABLE = "internal error: the answer cannot be written as JSON"


def _error_only(message: str) -> dict[str, Any]:
    return {"error": message}


class AskBatch:
    def __init__(self, answer: Answerer, failed: Failure = _error_only) -> None:
        self.answer = answer
        self.failed = failed
        # strict JSON: json.dumps(ensure_ascii=False, allow_nan=False)
        self._encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode

    def line(self, text: str) -> bytes:
        """What `cardfit ask --json -` prints for the question `text`: its JSON line and a newline, in UTF-8."""
        try:
            encoded = self._encode(self.answer(text))
        except (ValueError, TypeError, RecursionError):
            # An answer strict JSON cannot hold (an infinite number, say) is that line's error, not the end of
            # the run: every later line is still answered.
            encoded = self._encode(self.failed(UNWRITABLE))
        # surrogateescape: bytes stdin could not decode come back out as they came in (what the stdout of a C locale
        # does with them), not as an exception
        return (encoded + "\n").encode("utf-8", "surrogateescape")

    def run(self, source: Iterable[str], out: IO[str]) -> None:
        """Every line of `source` answered to `out`, in order (the bytes themselves when `out` writes UTF-8)."""
        buffer = _utf8_buffer(out)
        if buffer is not None:
            out.flush()
            for text in source:
                buffer.write(self.line(text.rstrip("\n")))
            buffer.flush()
            return
        for text in source:
            out.write(self.line(text.rstrip("\n")).decode("utf-8", "surrogateescape"))
        out.flush()


def _utf8_buffer(out: IO[str]) -> IO[bytes] | None:
    """`out`'s byte stream when it encodes UTF-8 (a terminal, a pipe, a file in a UTF-8 locale); None otherwise
    (a StringIO, another encoding: the text is written through `out` and encoded as it would)."""
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if buffer is None or not isinstance(encoding, str):
        return None
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return None
    return buffer if utf8 else None
