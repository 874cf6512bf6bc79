"""This replica's Prometheus metrics: every series named here, each carrying the replica's name, and its text form.

The counters are incremented with one line in the module they measure (bot/telegram/inbox.py, handlers/incoming.py,
ptb.py, bot/features/hub_lookup.py, bot/operators/alerts.py, catalog_service.py, bot/features/demand.py); they are
served at /metrics by the webhook server (bot/telegram/webhook.py) and, in polling mode, on CARDFIT_METRICS_PORT.
Several replicas each expose their own series: a `replica` label (CARDFIT_REPLICA, else host:pid) is added to
every sample when the registry is read, so Prometheus sums them with `sum without (replica)`.
A loose module on the lowest floor, beside bot/config.py, because every floor above counts something.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import Metric

__all__ = ["CONTENT_TYPE_LATEST", "exposition", "handled", "replica_name", "start_metrics_server", "update_kind"]

# The series, registered in a registry of their own (not prometheus_client's global one, which a test's second
# import would collide with); `exposition` reads them through _WithReplica.
SERIES = CollectorRegistry(auto_describe=True)

UPDATES_RECEIVED = Counter("cardfit_updates_received", "Updates stored by the inbox, by kind", ["kind"],
                           registry=SERIES)
UPDATES_HANDLED = Counter("cardfit_updates_handled", "Updates whose handling finished, by kind", ["kind"],
                          registry=SERIES)
REPLIES_SENT = Counter("cardfit_replies_sent", "Bot API requests that succeeded (getUpdates aside), by method",
                       ["method"], registry=SERIES)
REPLIES_FAILED = Counter("cardfit_replies_failed", "Bot API requests that failed for good, by method and cause",
                         ["method", "cause"], registry=SERIES)
# From the update's arrival in the inbox to the end of its handling (its reply sent): what a user waits.
REPLY_LATENCY = Histogram("cardfit_reply_latency_seconds", "Update handled, seconds after it was stored",
                          buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0), registry=SERIES)
INBOX_BACKLOG = Gauge("cardfit_inbox_backlog", "Updates stored and in hand, not yet handled", registry=SERIES)
INBOX_UNKNOWN = Counter("cardfit_inbox_unknown", "Updates cut off while their reply went out: fate unknown",
                        registry=SERIES)
FLOOD_DROPS = Counter("cardfit_flood_drops", "Updates dropped by the per-user flood guard, by kind", ["kind"],
                      registry=SERIES)
HUB_LOOKUPS = Counter("cardfit_hub_lookups", "Hugging Face Hub lookups: hit (kept), miss (asked), timeout, error",
                      ["outcome"], registry=SERIES)
ALERTS = Counter("cardfit_alerts", "Price alerts: queued, then sent, blocked, failed or unknown", ["outcome"],
                 registry=SERIES)
CATALOG_RELOADS = Counter("cardfit_catalog_reloads", "Catalog files taken (applied) or refused (rejected)",
                          ["outcome"], registry=SERIES)
DEMAND_RECORDS = Counter("cardfit_demand_records", "Demand records kept, or not kept because the store failed",
                         ["outcome"], registry=SERIES)

# Update kinds, in Telegram's order (telegram.Update's fields): the first one set names the update.
_KINDS = ("message", "edited_message", "channel_post", "edited_channel_post", "inline_query", "chosen_inline_result",
          "callback_query", "shipping_query", "pre_checkout_query", "poll", "poll_answer", "my_chat_member",
          "chat_member", "chat_join_request")


def update_kind(update: Any) -> str:
    """The kind of a telegram.Update: 'command' for a message that starts with a slash, else the field it fills."""
    message = getattr(update, "message", None)
    if message is not None:
        text = getattr(message, "text", None) or ""
        return "command" if text.startswith("/") else "message"
    return next((kind for kind in _KINDS if getattr(update, kind, None) is not None), "other")


def handled(kind: str, seconds: float) -> None:
    """An update's handling finished `seconds` after this replica took it in hand."""
    UPDATES_HANDLED.labels(kind).inc()
    REPLY_LATENCY.observe(seconds)


def replica_name() -> str:
    return os.environ.get("CARDFIT_REPLICA", "").strip() or f"{socket.gethostname()}:{os.getpid()}"


class _WithReplica:
    """SERIES as read by Prometheus: every sample with this replica's name."""

    def __init__(self, series: CollectorRegistry, replica: str) -> None:
        self.series = series
        self.replica = replica

    def collect(self) -> Iterator[Metric]:
        for family in self.series.collect():
            labelled = Metric(family.name, family.documentation, family.type, family.unit)
            for sample in family.samples:
                labelled.add_sample(sample.name, {**sample.labels, "replica": self.replica}, sample.value,
                                    sample.timestamp, sample.exemplar)
            yield labelled


def _exposed(replica: str) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_WithReplica(SERIES, replica))  # a collector is anything with collect()
    return registry


def exposition() -> bytes:
    """The text format Prometheus scrapes (content type CONTENT_TYPE_LATEST)."""
    return generate_latest(_exposed(replica_name()))


def start_metrics_server(port: int, address: str = "0.0.0.0") -> None:
    """Polling mode: serve /metrics on `port` from a thread of prometheus_client's own."""
    from prometheus_client import start_http_server

    start_http_server(port, addr=address, registry=_exposed(replica_name()))
