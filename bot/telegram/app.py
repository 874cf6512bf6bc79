"""Building the Telegram application: one `build_application(settings)`, services opened in post_init."""
from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import cast

from telegram import BotCommand, BotCommandScope, BotCommandScopeChat, BotCommandScopeDefault, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.ext import Application, Defaults
from telegram.request import BaseRequest, HTTPXRequest

from bot.config import Settings
from bot.features import commands as features
from bot.features.core import CatalogHolder
from bot.features.feature import Scope
from bot.store import DATABASE_ERRORS
from bot.telegram.context import CONTEXT_TYPES, CardfitApplication, CustomContext
from bot.telegram.inbox import INBOX_KEY, RAW_UPDATES_KEY, Inbox, InboxRateLimiter, RawUpdatesRequest
from bot.telegram.services import Services
from bot.texts.i18n import LANGUAGES, t
from catalog.loader import load_catalog
from engine.parse import parse

log = logging.getLogger(__name__)
SEND_READ_TIMEOUT_S = 25.0
SEND_WRITE_TIMEOUT_S = 25.0
# Telegram takes 30 messages/s: 8 connections carry that while an answer takes under ~250 ms. A send waiting for a
# connection has not reached Telegram, so it may wait longer than PTB's 1 s rather than fail (and be retried:
# bot/operators/send_errors.py, PoolTimeout).
SEND_POOL_SIZE = 8
SEND_POOL_TIMEOUT_S = 10.0
DEMAND_PRUNE_EVERY_S = 6 * 3600.0  # retention is counted in days: a few runs a day keep it to the day


def send_request() -> BaseRequest:
    """The connection for every call but getUpdates (PTB's own). PTB waits 5 s for an answer; a busy Telegram takes
    longer, and a send that timed out while reading is not repeated (bot/telegram/ptb.py: it may have arrived):
    wait long enough not to give up on it."""
    return HTTPXRequest(connection_pool_size=SEND_POOL_SIZE, read_timeout=SEND_READ_TIMEOUT_S,
                        write_timeout=SEND_WRITE_TIMEOUT_S, pool_timeout=SEND_POOL_TIMEOUT_S)


def build_application(settings: Settings, *, request: BaseRequest | None = None,
                      get_updates_request: BaseRequest | None = None) -> CardfitApplication:
    """The whole bot, wired; nothing is opened until post_init. `request` lets tests inject a fake layer."""
    if settings.bot_token is None:
        raise ValueError("CARDFIT_BOT_TOKEN is not set")
    loaded = load_catalog(settings.catalog)  # fail fast on a broken catalog, before any network call
    builder = (
        Application.builder()
        .token(settings.bot_token.get_secret_value())
        .base_url(settings.base_url)
        .base_file_url(settings.base_file_url)
        .context_types(CONTEXT_TYPES)
        .defaults(Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True)))
        .rate_limiter(InboxRateLimiter(messages_per_s=settings.send_rate_per_s))
        .concurrent_updates(64)
        .post_init(_post_init)
        .post_stop(_post_stop)
        .post_shutdown(_post_shutdown)
    )
    builder = builder.request(request if request is not None else send_request())
    raw_updates: RawUpdatesRequest | None = None
    if get_updates_request is None:
        raw_updates = get_updates_request = RawUpdatesRequest()
    builder = builder.get_updates_request(get_updates_request)
    # PTB's builder does not carry the context type into its JobQueue's type: say what it is.
    application = cast(CardfitApplication, builder.build())
    application.bot_data["settings"] = settings
    application.bot_data["catalog"] = CatalogHolder(loaded)
    if raw_updates is not None:
        application.bot_data[RAW_UPDATES_KEY] = raw_updates  # the inbox stores getUpdates' own JSON

    from bot.telegram.handlers import register_all

    register_all(application)
    return application


async def _post_init(application: CardfitApplication) -> None:
    settings: Settings = application.bot_data["settings"]
    catalogs: CatalogHolder = application.bot_data["catalog"]
    services = await Services.open(settings, catalogs, application.bot, application.bot.username)
    application.bot_data["services"] = services
    # The durable inbox (bot/telegram/inbox.py): the process's one claim owner, shared with alert delivery.
    alerts = services.announcer.alerts
    application.bot_data[INBOX_KEY] = Inbox(application, services.store, alerts.owner, alerts.owner_alive)
    # Warm the parser (rapidfuzz, regexes) now, not inside the first customer's reply; the holder built the
    # catalog's vocabulary when the catalog was put in service.
    parse("70B int4", catalogs.vocabulary)
    await services.announcer.ensure_baseline()
    await services.announcer.resume()
    if application.job_queue is not None:
        application.job_queue.run_repeating(_watch_catalog, interval=settings.catalog_watch_s,
                                            first=settings.catalog_watch_s, name="catalog-watch")
        application.job_queue.run_repeating(_sweep_alerts, interval=settings.catalog_watch_s,
                                            first=settings.catalog_watch_s, name="alert-sweep")
        application.job_queue.run_repeating(_prune_demand, interval=DEMAND_PRUNE_EVERY_S, first=60, name="demand-prune")
    await _set_commands(application, settings)
    log.info("Cardfit started: catalog %s (%d cards), store %s", catalogs.catalog.id, len(catalogs.catalog.cards),
             services.store.path)  # the path, or the URL without its password


async def _set_commands(application: CardfitApplication, settings: Settings) -> None:
    """The command menu per scope (everyone; staff add /quote; admins add /reload) and per language (en is also
    the default for every other language)."""
    scopes: list[tuple[BotCommandScope, Scope]] = [(BotCommandScopeDefault(), Scope.EVERYONE)]
    scopes += [(BotCommandScopeChat(user_id), Scope.STAFF) for user_id in settings.staff_ids
               if user_id not in settings.admin_ids]
    scopes += [(BotCommandScopeChat(user_id), Scope.ADMIN) for user_id in settings.admin_ids]
    for scope, level in scopes:
        for lang in LANGUAGES:
            commands = [BotCommand(command.name, t(lang, command.description))
                        for command in features.TABLE.menu(level) if command.description is not None]
            for code in ((None, "en") if lang == "en" else (lang,)):
                await application.bot.set_my_commands(commands, scope=scope, language_code=code)


async def _watch_catalog(context: CustomContext) -> None:
    """JobQueue: reload the catalog when its content hash changed (an invalid file keeps the old one)."""
    outcome = await context.announcer.check()
    if outcome.status not in ("unchanged", "invalid", "store_failed"):  # those log their own line, once
        log.info("catalog watch: %s", outcome.status)


async def _sweep_alerts(context: CustomContext) -> None:
    """JobQueue: what a dead replica left is taken up by the living, not only at the next start (bot/operators/alerts.py
    resume): its cut-off sends become unknown, its claims are freed (a dead process of this host at once, another
    host's when its lease ran out) and the queue is delivered."""
    await context.announcer.alerts.resume()


async def _prune_demand(context: CustomContext) -> None:
    """JobQueue: demand records past CARDFIT_DEMAND_RETENTION_DAYS are deleted (bot/features/demand.py); every
    replica runs it, and a second delete of the same days finds nothing."""
    from bot.features.demand import prune_demand

    settings: Settings = context.application.bot_data["settings"]
    try:
        pruned = await prune_demand(context.core.store, settings.demand_retention_days, datetime.now(UTC).date())
    except DATABASE_ERRORS as exc:
        log.warning("demand prune failed (%s); next in %.0f h", exc.__class__.__name__, DEMAND_PRUNE_EVERY_S / 3600)
        return
    if pruned:
        log.info("demand: pruned %d record(s) older than %d days", pruned, settings.demand_retention_days)


async def _post_stop(application: CardfitApplication) -> None:
    """Stop alert delivery while the bot can still send: the alert in flight finishes instead of being cut off
    (post_shutdown comes after PTB has closed the HTTP client)."""
    services: Services | None = application.bot_data.get("services")
    if services is not None:
        await services.announcer.stop()


async def _post_shutdown(application: CardfitApplication) -> None:
    services: Services | None = application.bot_data.get("services")
    if services is not None:
        await services.close()
