"""deploy/compose.yaml and its Caddyfile stay consistent with the code (CI has no Docker engine: checked as text)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.config import Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_two_replicas_in_webhook_mode_share_one_postgres():
    services = compose()["services"]
    replicas = {name: service for name, service in services.items() if name.startswith("bot-")}
    assert len(replicas) == 2
    for service in replicas.values():
        env = service["environment"]
        assert env["CARDFIT_DB"].startswith("postgresql://") and "@postgres:5432/" in env["CARDFIT_DB"]
        assert env["CARDFIT_WEBHOOK_URL"].startswith("https://") and env["CARDFIT_WEBHOOK_SECRET"]
        assert "/healthz" in " ".join(service["healthcheck"]["test"])
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])


def test_every_variable_compose_sets_is_a_setting():
    names = {f"CARDFIT_{field.upper()}" for field in Settings.model_fields}
    env = compose()["services"]["bot-1"]["environment"]
    unknown = {name for name in env if name.startswith("CARDFIT_")} - names
    assert not unknown, f"compose sets variables the bot does not read: {sorted(unknown)}"


def test_caddy_balances_the_webhook_path_over_the_healthy_replicas():
    caddyfile = (DEPLOY / "Caddyfile").read_text()
    webhook = compose()["services"]["bot-1"]["environment"]["CARDFIT_WEBHOOK_URL"]
    path = "/" + webhook.split("://", 1)[1].split("/", 1)[1]
    assert f"handle {path} {{" in caddyfile
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)
    assert upstreams and set(upstreams.group(1).split()) == {"bot-1:8080", "bot-2:8080"}
    assert "health_uri /healthz" in caddyfile
