"""Settings: every CARDFIT_* value validated with a clear message; secrets never shown."""
from __future__ import annotations

import pytest

from bot.config import ConfigError, Settings, load_settings

TOKEN = "123456:ABCdefGHIjklMNOpqrSTUvwxYZ"


def test_defaults(monkeypatch):
    for name in list(__import__("os").environ):
        if name.startswith("CARDFIT_"):
            monkeypatch.delenv(name)
    settings = load_settings()
    assert settings.bot_token is None and settings.catalog == "gpurenthub"
    assert settings.db == "var/cardfit.sqlite3" and settings.base_url == "https://api.telegram.org/bot"
    assert settings.base_file_url == "https://api.telegram.org/file/bot"


def test_from_environment(monkeypatch):
    monkeypatch.setenv("CARDFIT_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("CARDFIT_BOT_API_URL", "http://127.0.0.1:8081/bot/")
    monkeypatch.setenv("CARDFIT_ADMIN_IDS", "1, 2,3")
    monkeypatch.setenv("CARDFIT_STAFF_IDS", "")
    monkeypatch.setenv("CARDFIT_ANNOUNCE_CHAT", "@cardfit_news")
    monkeypatch.setenv("CARDFIT_LOG_LEVEL", "debug")
    settings = load_settings()
    assert settings.bot_token.get_secret_value() == TOKEN
    assert settings.base_url == "http://127.0.0.1:8081/bot"
    assert settings.base_file_url == "http://127.0.0.1:8081/file/bot"
    assert settings.admin_ids == (1, 2, 3) and settings.staff_ids == ()
    assert settings.is_admin(2) and settings.is_staff(3) and not settings.is_staff(4)
    assert settings.log_level == "DEBUG"


def test_every_bad_value_is_named_and_the_token_never_shown(monkeypatch):
    bad_token = "not-a-token-SECRET"
    monkeypatch.setenv("CARDFIT_BOT_TOKEN", bad_token)
    monkeypatch.setenv("CARDFIT_BOT_API_URL", "ftp://x")
    monkeypatch.setenv("CARDFIT_ADMIN_IDS", "12,abc")
    monkeypatch.setenv("CARDFIT_ANNOUNCE_CHAT", "news channel")
    monkeypatch.setenv("CARDFIT_LOG_LEVEL", "LOUD")
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    for name in ("CARDFIT_BOT_TOKEN", "CARDFIT_BOT_API_URL", "CARDFIT_ADMIN_IDS", "CARDFIT_ANNOUNCE_CHAT",
                 "CARDFIT_LOG_LEVEL"):
        assert name in message
    assert bad_token not in message


def test_token_is_a_secret_in_repr():
    settings = load_settings(bot_token=TOKEN)
    assert TOKEN not in repr(settings) and TOKEN not in str(settings)


def test_env_example_documents_every_setting():
    from pathlib import Path

    example = (Path(__file__).resolve().parents[1] / ".env.example").read_text()
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name in Settings.model_fields:
        variable = f"CARDFIT_{name.upper()}"
        assert f"{variable}=" in example, variable
        assert variable in readme, variable


def test_log_filter_redacts_secrets():
    import logging

    from bot.cli.main import RedactSecrets

    record = logging.LogRecord("httpx", logging.INFO, __file__, 1, "POST %s/getMe", ("https://x/bot" + TOKEN,), None)
    assert RedactSecrets([TOKEN, ""]).filter(record)
    assert TOKEN not in record.getMessage() and "***" in record.getMessage()


def test_a_short_secret_is_redacted_too_and_the_longest_first():
    import logging

    from bot.cli.main import RedactSecrets

    record = logging.LogRecord("telegram", logging.DEBUG, __file__, 1, "setWebhook %s", ({"secret_token": "abc1234",
                               "key": "abc1234-and-more"},), None)
    assert RedactSecrets(["abc1234", "abc1234-and-more", TOKEN]).filter(record)
    assert "abc1234" not in record.getMessage() and "'***'" in record.getMessage() and "-and-more" not in \
        record.getMessage()


@pytest.mark.parametrize("name", ["webhook_secret", "topup_secret"])
def test_a_short_webhook_secret_or_topup_key_is_refused_at_start_in_one_line(name):
    extra = {"webhook_url": "https://cardfit.example.test/hook"} if name == "webhook_secret" else {}
    with pytest.raises(ConfigError) as info:
        load_settings(**{name: "abc1234"}, **extra)
    assert str(info.value).splitlines()[1:] == [f"  CARDFIT_{name.upper()}: too short: at least 16 characters "
                                                "(for instance `openssl rand -hex 16`)"]
    assert "abc1234" not in str(info.value)
    assert load_settings(**{name: "a" * 16}, **extra)
    assert load_settings(topup_secret="").topup_secret is None  # empty: no key, as before
