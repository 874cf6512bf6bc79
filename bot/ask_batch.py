"""One `cardfit ask --json -` run: a question line -> the JSON line printed for it, identical lines answered once.

A line's answer is a pure function of its text and the catalog (no preferences, no user): the same line in one run
prints the same JSON line, so the run keeps the encoded lines it printed (issue #14), bounded and per run (a new run
reads the catalog again). Lines whose answer is not a function of the text alone are answered every time: those that
asked the Hugging Face lookup (a network answer may change) and those that failed inside ("internal error").
benchmarks/bench_ask.py times `AskBatch.line`, exactly what the CLI calls per line.
"""
from __future__ import annotations

import json
from collections import OrderedDict

from bot.cli import ask_json
from catalog.schema import Catalog
from engine.parse import MEMO_MAX_CHARS, Vocabulary

# Encoded lines kept per run, least recently used dropped. An entry is 3.4-3.6 KB on average over the parser
# corpus in the bundled catalogs (tracemalloc: the JSON line of ~2,900 characters, the key, the link), so a full
# memo is about 3.6 MB of one run; 1,024 holds every distinct corpus text. Lines are memoized up to engine.parse's
# MEMO_MAX_CHARS (a longer line is a paste, rarely repeated).
MEMO_LINES = 1024


class AskBatch:
    def __init__(self, catalog: Catalog, vocabulary: Vocabulary, memo: bool = True,
                 max_lines: int = MEMO_LINES) -> None:
        """`memo=False`: every line answered afresh, engine.parse's memo bypassed too (the cold figure)."""
        self.catalog, self.vocabulary, self.memo, self.max_lines = catalog, vocabulary, memo, max_lines
        # What json.dumps(ensure_ascii=False, allow_nan=False) makes, without building the encoder per line
        # (strict JSON, issue 15).
        self._encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
        self._lines: OrderedDict[str, str] = OrderedDict()
        self.hits = 0

    def line(self, text: str) -> str:
        """The JSON line (without its newline) `cardfit ask --json -` prints for the question `text`."""
        lines = self._lines
        known = lines.get(text)
        if known is not None:
            lines.move_to_end(text)
            self.hits += 1
            return known
        answer, same_for_text = ask_json(text, self.catalog, self.vocabulary, self.memo)
        encoded = self._encode(answer)
        if self.memo and same_for_text and len(text) <= MEMO_MAX_CHARS:
            lines[text] = encoded
            if len(lines) > self.max_lines:
                lines.popitem(last=False)
        return encoded

    def __len__(self) -> int:
        """How many lines are kept."""
        return len(self._lines)
