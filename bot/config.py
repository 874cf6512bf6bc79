"""Settings from the environment (`CARDFIT_*`), validated at start with one clear message per bad value."""
from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_BOT_API_URL = "https://api.telegram.org/bot"
_TOKEN = re.compile(r"^\d{3,}:[A-Za-z0-9_-]{10,}$")
# setWebhook's secret_token: 1-256 characters A-Z, a-z, 0-9, _ and - (https://core.telegram.org/bots/api#setwebhook).
_WEBHOOK_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
# The webhook secret and the top-up key are guessable below this (the top-up key offline, from any ref a user
# sees), and a short secret would turn every log line it occurs in into asterisks.
MIN_SECRET_LENGTH = 16
_SECRET_HINT = f"at least {MIN_SECRET_LENGTH} characters (for instance `openssl rand -hex 16`)"


class ConfigError(ValueError):
    """Bad configuration; the message lists every bad value, one per line, and never a secret."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CARDFIT_", extra="ignore", frozen=True)

    bot_token: SecretStr | None = None
    bot_api_url: str = DEFAULT_BOT_API_URL
    catalog: str = "gpurenthub"
    db: str = "var/cardfit.sqlite3"
    admin_ids: Annotated[tuple[int, ...], NoDecode] = ()
    staff_ids: Annotated[tuple[int, ...], NoDecode] = ()
    announce_chat: str | None = None
    announce_auto: bool = False
    topup_secret: SecretStr | None = None
    log_level: str = "INFO"
    rate_limit_messages: int = Field(default=8, ge=1, description="questions per user per rate window")
    rate_limit_window_s: float = Field(default=10.0, gt=0)
    catalog_watch_s: float = Field(default=60.0, gt=0)
    # A changed catalog file is taken only when it reads the same twice this far apart: a file rewritten in
    # place is half-written for a moment, and a byte-prefix of a catalog is often a valid, shorter catalog.
    catalog_settle_s: float = Field(default=1.0, ge=0, le=60, description="seconds a changed file must hold still")
    send_rate_per_s: float = Field(default=30.0, gt=0, description="overall outgoing messages per second")
    # Webhook mode (several replicas behind a load balancer); unset: long polling.
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: int = Field(default=8080, ge=1, le=65535)
    chart_dir: str = Field(default="var", description="where the terminal chat writes a chart button's PNG")
    # Any Hugging Face model: an org/name the registry does not know is looked up on the Hub
    # (HF_ENDPOINT and HF_HUB_OFFLINE are huggingface_hub's own settings and are honoured as they are).
    hf_lookup: bool = Field(default=True, description="look up unknown org/name models on the Hugging Face Hub")
    hf_timeout_s: float = Field(default=5.0, gt=0, le=60, description="the whole Hub lookup, seconds")
    # What customers ask for (bot/store/demand.py): an anonymous record per answered question; 0 keeps nothing.
    demand: bool = Field(default=True, description="keep anonymous demand records for /demand")
    demand_retention_days: int = Field(default=180, ge=1, le=3660, description="days a demand record is kept")
    # Prometheus metrics (bot/metrics.py): webhook mode serves /metrics on its own port; polling mode on this one.
    metrics_port: int | None = Field(default=None, ge=1, le=65535, description="polling mode's /metrics port")
    replica: str | None = Field(default=None, description="this replica's name in metrics (default: host:pid)")

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _TOKEN.match(value.get_secret_value()):
            raise ValueError("does not look like a bot token from @BotFather (digits:letters)")
        return value

    @field_validator("bot_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not re.match(r"^https?://[^\s/]+", value):
            raise ValueError("must be an http(s) URL such as https://api.telegram.org/bot")
        return value.rstrip("/")

    @field_validator("admin_ids", "staff_ids", mode="before")
    @classmethod
    def _ids(cls, value: object) -> tuple[int, ...]:
        if value is None or value == "":
            return ()
        if isinstance(value, (list, tuple)):
            items = [str(v) for v in value]
        else:
            items = [part.strip() for part in str(value).split(",") if part.strip()]
        ids = []
        for item in items:
            if not re.fullmatch(r"-?\d{1,20}", item):
                raise ValueError(f"{item!r} is not a numeric Telegram user id (comma-separated list expected)")
            ids.append(int(item))
        return tuple(ids)

    @field_validator("announce_chat")
    @classmethod
    def _chat(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not re.fullmatch(r"@[A-Za-z][A-Za-z0-9_]{3,}|-?\d{1,20}", value):
            raise ValueError("must be @channelname or a numeric chat id")
        return value

    @field_validator("db")
    @classmethod
    def _db(cls, value: str) -> str:
        if value.startswith(("postgres://", "postgresql://")):
            if re.search(r"\s", value) or value.rstrip("/").endswith(("://", "@")):
                raise ValueError("a PostgreSQL URL looks like postgresql://user:password@host:5432/database")
        elif "://" in value:
            raise ValueError("must be a SQLite file path or a postgresql:// URL")
        return value

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not re.match(r"^https?://[^\s/]+(/\S*)?$", value):
            raise ValueError("must be the public https:// URL Telegram posts updates to")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or value.get_secret_value() == "":
            return None
        if not _WEBHOOK_SECRET.match(value.get_secret_value()):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's secret_token)")
        if len(value.get_secret_value()) < MIN_SECRET_LENGTH:
            raise ValueError(f"too short: {_SECRET_HINT}")
        return value

    @field_validator("topup_secret")
    @classmethod
    def _topup_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or value.get_secret_value() == "":
            return None
        if len(value.get_secret_value()) < MIN_SECRET_LENGTH:
            raise ValueError(f"too short: {_SECRET_HINT}")
        return value

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> Settings:
        if self.webhook_url is not None and self.webhook_secret is None:
            # Without it anyone who finds the URL could post forged updates (a fake admin's /reload, say).
            raise ValueError("CARDFIT_WEBHOOK_SECRET: required when CARDFIT_WEBHOOK_URL is set (webhook mode)")
        return self

    @field_validator("metrics_port", "replica", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        upper = value.upper()
        if upper not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return upper

    @property
    def base_url(self) -> str:
        """PTB's base_url: the Bot API URL up to and including '/bot' (the token is appended by PTB)."""
        return self.bot_api_url

    @property
    def base_file_url(self) -> str:
        """Derived from the API URL: https://host/bot -> https://host/file/bot."""
        head, _, tail = self.bot_api_url.rpartition("/")
        return f"{head}/file/{tail}" if tail.startswith("bot") else f"{self.bot_api_url}/file/bot"

    @property
    def webhook_path(self) -> str:
        """The path Telegram posts to (the webhook URL's), which the replica serves behind the proxy."""
        if self.webhook_url is None:
            return "/"
        path = "/" + self.webhook_url.split("://", 1)[1].partition("/")[2]
        return path.split("?", 1)[0] or "/"

    def is_admin(self, user_id: int | None) -> bool:
        return user_id is not None and user_id in self.admin_ids

    def is_staff(self, user_id: int | None) -> bool:
        return user_id is not None and (user_id in self.staff_ids or user_id in self.admin_ids)


def load_settings(**overrides: Any) -> Settings:
    """Read and validate the environment; raise ConfigError naming each bad CARDFIT_* variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            message = error.get("msg", "invalid").removeprefix("Value error, ")
            if not error.get("loc"):  # a rule across fields names its variables itself
                lines.append(message)
                continue
            lines.append(f"CARDFIT_{str(error['loc'][0]).upper()}: {message}")
        raise ConfigError("bad configuration:\n  " + "\n  ".join(lines)) from None
