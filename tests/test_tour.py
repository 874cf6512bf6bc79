"""docs/tour.md's conversations are what `cardfit chat` replies now (tests/test_readme.py checks the `$ cardfit`
transcripts; the tour's are chats). Rewrite the page with `python -m tests.support.tour`."""
from __future__ import annotations

import pytest

from tests.support.tour import TOUR, conversations, replay

CONVERSATIONS = conversations(TOUR.read_text(encoding="utf-8"))


def test_the_tour_has_conversations():
    assert len(CONVERSATIONS) >= 4


@pytest.mark.parametrize(("typed", "block"), CONVERSATIONS, ids=[typed[0] for typed, _ in CONVERSATIONS])
def test_a_tour_conversation_is_what_the_chat_replies(typed, block):
    assert replay(typed) == block


def test_the_tour_leads_with_what_runs():
    """The tour's answers never say '✅' above 'would not start' for the same layout, nor 'Instead … ✗'."""
    for _, block in CONVERSATIONS:
        for reply in block.split("you> ")[1:]:
            assert not ("✅" in reply and "would not start at" in reply.split("📏")[0]
                        and "⚠️" in reply), reply
            assert not any(line.startswith("Instead:") and "✗" in line for line in reply.splitlines()), reply
