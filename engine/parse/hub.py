"""A Hugging Face repository id in the text ("HuggingFaceTB/SmolLM2-1.7B") that no registry model matched.

The parser only reports it (ParseResult.hub_candidate); whether and how it is looked up is the front end's call
(bot/features/hub_lookup.py). A repository id is owner/name without spaces (huggingface_hub's validate_repo_id: letters,
digits, "-", "_", "."; at most 96 characters each side), optionally after "huggingface.co/". Slash pairs that
are no repository ("and/or", "24/7", "H100/H200" when the cards pass read a card there) are not reported.
"""
from __future__ import annotations

import re

from engine.parse.draft import Draft
from engine.parse.scan import Scan

REPO_ID_RE = re.compile(
    r"(?<![\w./-])(?:https?://)?(?:(?:www\.)?(?:hf\.co|huggingface\.co)/)?"
    r"(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})(?![\w/])"
)
_NAME_MARK_RE = re.compile(r"[0-9_.-]|[a-z][A-Z]")  # a digit, a separator or camel case: "and/or" has none


def hub_candidate(scan: Scan, draft: Draft, card_tokens: list[bool] | None = None) -> str | None:
    """The first repository id typed in the text when the parse found no registry model; None otherwise.
    `card_tokens`: the tokens the cards pass read (a repository id over one of them is a card pair)."""
    if draft.model is not None or "/" not in scan.text:  # every repository id has its slash
        return None
    tokens = scan.tokens
    for match in REPO_ID_RE.finditer(scan.text):
        repo = match.group("repo").rstrip(".-")
        owner, _, name = repo.partition("/")
        if not any(ch.isalpha() for ch in owner) or not any(ch.isalpha() for ch in name):
            continue
        if _NAME_MARK_RE.search(repo) is None:
            continue
        if card_tokens is not None and any(
            card_tokens[index] for index in range(scan.n)
            if match.start("repo") <= tokens.start[index] < match.start("repo") + len(repo)
        ):
            continue
        return repo
    return None
