"""Callback data classes: byte-identical to the strings buttons in chats already carry, read back strictly."""
from __future__ import annotations

import pytest

from bot.features.callbacks import AnnouncementButton, AnswerButton, CoinButton, ExampleButton, within_limit
from bot.features.commands import TABLE


def test_encodings_are_the_ones_in_old_messages():
    assert AnswerButton(False, "en", "Mllama-3_1-70bPi4").encode() == "f:en:Mllama-3_1-70bPi4"
    assert AnswerButton(True, "de", "S7").encode() == "d:de:S7"
    assert CoinButton("en", "BTC", "S7").encode() == "k:en:BTC:S7"
    assert CoinButton("de", None, "S7").encode() == "k:de:pick:S7"
    assert ExampleButton(3, "de").encode() == "x:3:de"
    assert AnnouncementButton("post", 12).encode() == "ann:post:12"
    assert AnnouncementButton("discard", 7).encode() == "ann:discard:7"


@pytest.mark.parametrize("button", [AnswerButton(False, "en", "S7"), AnswerButton(True, "de", "S70Pi4"),
                                    CoinButton("en", "USDT", "S7"), CoinButton("de", None, "S7"),
                                    ExampleButton(1, "en"), AnnouncementButton("post", 3)])
def test_decode_reads_back_what_encode_wrote(button):
    assert type(button).decode(button.encode()) == button


@pytest.mark.parametrize(("data", "kind", "decodes"), [
    ("f:", AnswerButton, False), ("f:S7", AnswerButton, False), ("f:fr:S7", AnswerButton, False),
    ("f:en:%%%", AnswerButton, True),  # a payload is checked when it is answered (a stale notice then)
    ("k:pick:S7", CoinButton, False), ("k:en:DOGE:S7", CoinButton, True),  # the coin: against the catalog
    ("x:9:en", ExampleButton, True), ("x:²:en", ExampleButton, False), ("x:one:en", ExampleButton, False),
    ("x:1", ExampleButton, True), ("ann:post:x", AnnouncementButton, False), ("ann:boost:1", AnnouncementButton, False),
])
def test_malformed_data_reaches_its_kind_and_does_not_decode(data, kind, decodes):
    assert kind.matches(data)
    assert (kind.decode(data) is not None) is decodes


def test_unknown_or_over_long_data_has_no_route():
    assert TABLE.button_route("zz:1") is None and TABLE.button_route(None) is None and TABLE.button_route("") is None
    too_long = "f:en:" + "S" * 60
    assert within_limit(too_long) is None and TABLE.button_route(too_long) is None
    assert TABLE.button_route("f:en:S7") is not None and not AnswerButton.matches("ann:post:1")
