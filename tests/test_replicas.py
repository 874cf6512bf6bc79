"""Two bot replicas (two Applications, tests/support/botharness.py) on one PostgreSQL database: what one writes the
other reads, a catalog change both see is announced once, alerts both deliver at once reach each subscriber once."""
from __future__ import annotations

import asyncio

import pytest

from bot.config import load_settings
from tests.support.botharness import TOKEN, Harness, edit_catalog

ADMIN = 42
CHANNEL = "@cardfit_news"


@pytest.fixture
def settings(postgres_server, catalog_file):
    # Both replicas read the same catalog file (a shared volume in deploy/compose.yaml) and the same database.
    return load_settings(bot_token=TOKEN, db=postgres_server.create_database(), admin_ids=f"{ADMIN}",
                         announce_chat=CHANNEL, announce_auto=True, catalog=str(catalog_file),
                         rate_limit_messages=1000, send_rate_per_s=10_000)


def alerts_to(bot: Harness, chat_id: int) -> list[dict]:
    return [params for params in bot.replies(chat_id) if params["text"].startswith("🔔 <b>")]


async def test_preferences_written_by_one_replica_are_read_by_the_other(settings):
    async with Harness(settings) as a, Harness(settings) as b:
        await b.send(11, "/help")
        english = b.last_text(11)
        await a.send(11, "/set lang de")
        await a.send(11, "/help")
        german = a.last_text(11)
        assert german != english
        await b.send(11, "/help")
        assert b.last_text(11) == german  # b read the language a stored
        assert (await b.app.bot_data["services"].store.get_preferences(11)).language == "de"


async def test_a_catalog_change_both_replicas_see_is_announced_once(settings, catalog_file):
    async with Harness(settings) as a, Harness(settings) as b:
        edit_catalog(catalog_file, a40=199)
        outcomes = await asyncio.gather(a.app.bot_data["services"].announcer.check(),
                                        b.app.bot_data["services"].announcer.check())
        assert sorted(outcome.status for outcome in outcomes) == ["already", "posted"]
        posts = a.replies(CHANNEL) + b.replies(CHANNEL)
        assert len(posts) == 1 and "−17.1 %" in posts[0]["text"]
        # Restarting both (the deploy of a new version) posts nothing again.
    async with Harness(settings) as a, Harness(settings) as b:
        await asyncio.gather(a.app.bot_data["services"].announcer.check(force=True),
                             b.app.bot_data["services"].announcer.check(force=True))
        assert a.replies(CHANNEL) + b.replies(CHANNEL) == []


async def test_alerts_delivered_by_both_replicas_at_once_reach_each_subscriber_once(settings, catalog_file):
    subscribers = range(1000, 1250)  # more than one claimed batch (alerts.py BATCH): both replicas send
    async with Harness(settings) as a, Harness(settings) as b:
        for user_id in subscribers:
            await (a if user_id % 2 else b).send(user_id, "/subscribe A40")
        edit_catalog(catalog_file, a40=230)
        announcers = [bot.app.bot_data["services"].announcer for bot in (a, b)]
        outcomes = await asyncio.gather(*(announcer.check() for announcer in announcers))
        [announcement_id] = [outcome.announcement_id for outcome in outcomes if outcome.status == "posted"]
        await asyncio.gather(*(announcer.start_delivery() for announcer in announcers))
        received = {user_id: len(alerts_to(a, user_id)) + len(alerts_to(b, user_id)) for user_id in subscribers}
        assert set(received.values()) == {1}
        assert any(alerts_to(a, user_id) for user_id in subscribers)
        assert any(alerts_to(b, user_id) for user_id in subscribers)
        assert await announcers[0].alerts.store.alert_progress(announcement_id) == {
            "total": 250, "sent": 250, "failed": 0, "blocked": 0, "queued": 0}


async def test_two_replicas_posting_one_pending_announcement_post_it_once(settings, catalog_file):
    manual = settings.model_copy(update={"announce_auto": False})
    async with Harness(manual) as a, Harness(manual) as b:
        edit_catalog(catalog_file, a40=210)
        outcome = await a.app.bot_data["services"].announcer.check()
        assert outcome.status == "previewed"
        # Two admins press Post at once, each reaching another replica (or both replicas resume after a deploy).
        replies = await asyncio.gather(a.app.bot_data["services"].announcer.post(outcome.announcement_id),
                                       b.app.bot_data["services"].announcer.post(outcome.announcement_id))
        assert len(a.replies(CHANNEL) + b.replies(CHANNEL)) == 1
        assert sum(reply.startswith("✅") for reply in replies) == 1
