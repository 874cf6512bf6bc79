"""bot.telegram.app.NoLinkPreview: the Defaults' link preview options, sent exactly as PTB sends the plain options."""
from __future__ import annotations

import pytest
from telegram import LinkPreviewOptions
from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram.constants import ParseMode
from telegram.ext import Defaults, ExtBot
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.telegram.app import NoLinkPreview


def sent_parameters(options: LinkPreviewOptions) -> dict[str, object]:
    bot = ExtBot("123456:TEST-token", defaults=Defaults(parse_mode=ParseMode.HTML, link_preview_options=options))
    data: dict[str, object] = {"chat_id": 1, "text": "<b>x</b>", "parse_mode": DEFAULT_NONE,
                               "link_preview_options": DEFAULT_NONE, "disable_notification": DEFAULT_NONE}
    bot._insert_defaults(data)
    return RequestData([RequestParameter.from_input(key, value) for key, value in data.items()]).json_parameters


def test_sent_as_the_plain_options() -> None:
    assert sent_parameters(NoLinkPreview()) == sent_parameters(LinkPreviewOptions(is_disabled=True))
    assert sent_parameters(NoLinkPreview())["link_preview_options"] == '{"is_disabled": true}'


def test_same_dict_and_frozen() -> None:
    options = NoLinkPreview()
    assert options.to_dict() == LinkPreviewOptions(is_disabled=True).to_dict()
    assert options.to_dict(recursive=False) == LinkPreviewOptions(is_disabled=True).to_dict(recursive=False)
    assert LinkPreviewOptions(is_disabled=True) == options
    options.to_dict()["is_disabled"] = False  # a caller's change to its copy stays out of the next send
    assert options.to_dict() == {"is_disabled": True}
    with pytest.raises(AttributeError):
        options.is_disabled = False  # type: ignore[misc]
