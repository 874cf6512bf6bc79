"""The bot sends without link previews: the application's Defaults put `{"is_disabled": true}` into every send."""
from __future__ import annotations

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.config import load_settings
from bot.telegram.app import build_application


def test_every_send_disables_link_previews(tmp_path) -> None:
    settings = load_settings(bot_token="123456:TEST-token", db=str(tmp_path / "bot.db"))
    bot = build_application(settings).bot
    data: dict[str, object] = {"chat_id": 1, "text": "<b>x</b>", "parse_mode": DEFAULT_NONE,
                               "link_preview_options": DEFAULT_NONE}
    bot._insert_defaults(data)
    sent = RequestData([RequestParameter.from_input(key, value) for key, value in data.items()]).json_parameters
    assert sent["link_preview_options"] == '{"is_disabled": true}'
    assert sent["parse_mode"] == "HTML"
