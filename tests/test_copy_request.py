"""bot.features.conversation.copy_request: the same shallow copy as copy.copy, for every field of a SizeRequest."""
from __future__ import annotations

import copy
from dataclasses import fields

from bot.features.conversation import copy_request
from engine.sizing.rule import SizeRequest


def filled_request() -> SizeRequest:
    values: dict[str, object] = {}
    for number, item in enumerate(fields(SizeRequest)):
        values[item.name] = [f"note {number}"] if item.name in ("assumed", "ignored") else f"value {number}"
    return SizeRequest(**values)  # type: ignore[arg-type]


def test_copy_request_is_copy_copy() -> None:
    request = filled_request()
    copied = copy_request(request)
    assert copied == copy.copy(request) == request
    assert copied is not request
    assert copied.assumed is request.assumed  # shallow, as copy.copy


def test_copy_request_keeps_a_subclass() -> None:
    class Tagged(SizeRequest):
        __slots__ = ("tag",)

    request = Tagged(model="x")
    request.tag = "kept"
    copied = copy_request(request)
    assert type(copied) is Tagged and copied.tag == "kept" and copied.model == "x"
