"""Regions: ids ("DFW-1", "iad-1") before every other pass, names ("in Dallas", "Ashburn") in the fields pass."""
from __future__ import annotations

import re
from bisect import bisect_left

from engine.parse.draft import Draft
from engine.parse.scan import Scan
from engine.parse.vocabulary import Vocabulary

_REGION_RE = re.compile(r"(?<![\w-])([A-Za-z]{3}-[0-9]{1,2})(?![\w-])")


def find_region_ids(scan: Scan, draft: Draft, vocabulary: Vocabulary, offset: int) -> None:
    """'DFW-1': a region the cards are offered in, or any such id right after the word 'region'."""
    text = scan.text
    if "-" not in text:
        return
    for match in _REGION_RE.finditer(text, offset):
        name = match.group(1).upper()
        if name not in vocabulary.region_ids:
            before = text[max(offset, match.start() - 8):match.start()].lower()
            if "region" not in before:
                continue
        draft.set_region(name, match.group(1))
        starts = scan.tokens.start
        index = bisect_left(starts, match.start())
        while index < scan.n and starts[index] < match.end():
            scan.used[index] = True
            index += 1


def read_region_name(scan: Scan, draft: Draft, vocabulary: Vocabulary, i: int) -> int:
    """'Dallas', 'in Ashburn' -> the region's id (names from the catalog, longest first); tokens read."""
    low = scan.low
    for words, region in vocabulary.region_names[low[i]]:
        length = len(words)
        if all(scan.free(i + k) and low[i + k] == words[k] for k in range(1, length)):
            draft.set_region(region, scan.span(i, i + length - 1))
            return length
    return 0
