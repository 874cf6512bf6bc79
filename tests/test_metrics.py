"""bot/metrics.py: what each counter counts, through the real code that increments it (the flood guard, a catalog
reload and its rejection, a price alert run, Hub lookups), every series with its replica's label. The counts a
whole conversation causes, read from /metrics: tests/test_e2e.py (polling) and tests/test_webhook.py."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from bot import metrics
from bot.config import load_settings
from bot.store.hub_models import HubEntry
from tests.support.botharness import TOKEN, Harness, edit_catalog

ADMIN, CUSTOMER = 42, 44


def value(counter, *labels: str) -> float:
    return (counter.labels(*labels) if labels else counter)._value.get()


def test_update_kinds():
    message = SimpleNamespace(message=SimpleNamespace(text="70B int4"))
    command = SimpleNamespace(message=SimpleNamespace(text="/help"))
    tap = SimpleNamespace(message=None, callback_query=object())
    assert [metrics.update_kind(u) for u in (message, command, tap, SimpleNamespace(message=None))] == \
        ["message", "command", "callback_query", "other"]


def test_every_series_carries_the_replica(monkeypatch):
    monkeypatch.setenv("CARDFIT_REPLICA", "bot-7")
    metrics.FLOOD_DROPS.labels("question").inc(0)
    text = metrics.exposition().decode()
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert samples and all('replica="bot-7"' in line for line in samples)
    monkeypatch.delenv("CARDFIT_REPLICA")
    assert metrics.replica_name().rsplit(":", 1)[1].isdigit()  # host:pid


async def test_flood_drops_reloads_rejections_and_alerts_are_counted(tmp_path, catalog_file):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=str(ADMIN),
                             announce_chat="@news", announce_auto=True, catalog=str(catalog_file),
                             rate_limit_messages=2, rate_limit_window_s=600)
    drops, applied, rejected = (value(metrics.FLOOD_DROPS, "question"), value(metrics.CATALOG_RELOADS, "applied"),
                                value(metrics.CATALOG_RELOADS, "rejected"))
    queued, sent = value(metrics.ALERTS, "queued"), value(metrics.ALERTS, "sent")
    async with Harness(settings) as bot:
        for question in ("7B bf16", "13B bf16", "34B bf16"):  # the third is over the limit of 2
            await bot.send(CUSTOMER, question)
        assert value(metrics.FLOOD_DROPS, "question") == drops + 1
        await bot.send(CUSTOMER + 1, "/subscribe A40")  # another user: the first is over their limit
        edit_catalog(catalog_file, a40=199)
        await bot.send(ADMIN, "/reload")
        await bot.app.bot_data["services"].announcer.alerts.start_delivery()
        assert value(metrics.CATALOG_RELOADS, "applied") == applied + 1
        assert value(metrics.ALERTS, "queued") == queued + 1 and value(metrics.ALERTS, "sent") == sent + 1
        catalog_file.write_text("cards: [")
        await bot.send(ADMIN, "/reload")
        assert value(metrics.CATALOG_RELOADS, "rejected") == rejected + 1


async def test_hub_lookups_count_hits_misses_and_time_outs(monkeypatch):
    from bot.features import hub_lookup

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hits, misses, timeouts = (value(metrics.HUB_LOOKUPS, "hit"), value(metrics.HUB_LOOKUPS, "miss"),
                              value(metrics.HUB_LOOKUPS, "timeout"))

    def answered(repo_id: str, endpoint: str, timeout_s: float) -> HubEntry:
        return HubEntry(repo_id, "missing", None, None)

    def slow(repo_id: str, endpoint: str, timeout_s: float) -> HubEntry:
        raise TimeoutError

    lookup = hub_lookup.HubLookup(None, timeout_s=1.0)
    monkeypatch.setattr(hub_lookup, "_fetch", answered)
    await lookup.lookup("someone/model-a")  # asked: a miss of the kept answers
    await lookup.lookup("someone/model-a")  # kept in this process: a hit
    monkeypatch.setattr(hub_lookup, "_fetch", slow)
    await lookup.lookup("someone/model-b")
    assert value(metrics.HUB_LOOKUPS, "miss") == misses + 1
    assert value(metrics.HUB_LOOKUPS, "hit") == hits + 1
    assert value(metrics.HUB_LOOKUPS, "timeout") == timeouts + 1
    await asyncio.sleep(0)


def test_an_empty_metrics_port_or_replica_is_unset():
    settings = load_settings(metrics_port="", replica=" ")
    assert settings.metrics_port is None and settings.replica is None
    assert load_settings(metrics_port="9464").metrics_port == 9464
