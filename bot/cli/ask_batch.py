"""One `cardfit ask --json -` run: a question line -> the line printed for it, identical lines answered once.

A line's answer is a pure function of its text and the catalog (no preferences, no user): the same line in one run
prints the same JSON line, so the run keeps the lines it printed (issue #14), bounded and per run (a new run reads
the catalog again). Lines whose answer is not a function of the text alone are answered every time: those that
asked the Hugging Face lookup (a network answer may change) and those that failed inside ("internal error"); the
answering function says which (bot.cli.main.ask_json). Lines are kept encoded, as written to a UTF-8 stdout.
bot.cli.main.ask_batch builds the batch the CLI runs; benchmarks/bench_ask.py times its `line`, what the CLI calls per
line.
"""
from __future__ import annotations

import codecs
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import IO, Any

from engine.parse import MEMO_MAX_CHARS

# Lines kept per run, least recently used dropped. An entry is 3.4-3.6 KB on average over the parser corpus in
# the bundled catalogs (tracemalloc: the UTF-8 line of 2,840-2,990 bytes, the key, the link), so a full memo is
# about 3.6 MB of one run; 1,024 holds every distinct corpus text. Lines are memoized up to engine.parse's
# MEMO_MAX_CHARS (a longer line is a paste, rarely repeated).
MEMO_LINES = 1024

# text -> (the JSON object printed for it, whether it is the same whenever the text is)
Answerer = Callable[[str], tuple[dict[str, Any], bool]]


class AskBatch:
    def __init__(self, answer: Answerer, memo: bool = True, max_lines: int = MEMO_LINES) -> None:
        """`memo=False`: every line answered afresh (`answer` then bypasses engine.parse's memo too: bot.cli.main)."""
        self.answer, self.memo, self.max_lines = answer, memo, max_lines
        # What json.dumps(ensure_ascii=False, allow_nan=False) makes, without building the encoder per line
        # (strict JSON, issue 15).
        self._encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
        self._lines: OrderedDict[str, bytes] = OrderedDict()
        self.hits = 0

    def line(self, text: str) -> bytes:
        """What `cardfit ask --json -` prints for the question `text`: its JSON line and a newline, in UTF-8."""
        lines = self._lines
        known = lines.get(text)
        if known is not None:
            lines.move_to_end(text)
            self.hits += 1
            return known
        answer, same_for_text = self.answer(text)
        # surrogateescape: bytes stdin could not decode come back out as they came in (what the stdout of a C locale
        # does with them), not as an exception
        encoded = (self._encode(answer) + "\n").encode("utf-8", "surrogateescape")
        if self.memo and same_for_text and len(text) <= MEMO_MAX_CHARS:
            lines[text] = encoded
            if len(lines) > self.max_lines:
                lines.popitem(last=False)
        return encoded

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

    def __len__(self) -> int:
        """How many lines are kept."""
        return len(self._lines)


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
