"""Building the Telegram application: one `build_application(settings)`, services opened in post_init."""
from __future__ import annotations

import logging

from telegram import BotCommand, BotCommandScopeChat, BotCommandScopeDefault, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.ext import Application, ApplicationBuilder, ContextTypes, Defaults

from bot.announce import Announcer
from bot.config import Settings
from bot.conversation import CatalogHolder, Conversation
from bot.flood import FloodGuard
from bot.store import Store
from bot.telegram_io import ResilientRateLimiter
from catalog.loader import load_catalog
from engine.parse import parse

log = logging.getLogger(__name__)

COMMANDS = ("size", "cards", "card", "compare", "settings", "set", "subscribe", "unsubscribe", "subscriptions",
            "help", "start")
COMMAND_TEXTS = {
    "en": {"size": "Size a model: /size 70B int4 32k", "cards": "All cards and prices", "card": "One card in detail",
           "compare": "Compare two cards for your last question", "settings": "Your defaults",
           "set": "Change a default: /set precision int4", "help": "How to ask", "start": "Start",
           "subscribe": "Price alert: /subscribe H100 below 1500", "unsubscribe": "Stop price alerts",
           "subscriptions": "Your price alerts", "quote": "Customer-ready answer: /quote 70B int4",
           "reload": "Reload the catalog now"},
    "de": {"size": "Modell dimensionieren: /size 70B int4 32k", "cards": "Alle Karten und Preise",
           "card": "Eine Karte im Detail", "compare": "Zwei Karten für Ihre letzte Frage vergleichen",
           "settings": "Ihre Standardwerte", "set": "Standard ändern: /set precision int4",
           "help": "So fragen Sie", "start": "Start",
           "subscribe": "Preisalarm: /subscribe H100 below 1500", "unsubscribe": "Preisalarme beenden",
           "subscriptions": "Ihre Preisalarme", "quote": "Antwort für Kunden: /quote 70B int4",
           "reload": "Katalog jetzt neu laden"},
}


class Services:
    """What the handlers need, created in post_init and closed in post_shutdown."""

    def __init__(self, settings: Settings, catalogs: CatalogHolder, store: Store, announcer: Announcer):
        self.settings = settings
        self.catalogs = catalogs
        self.store = store
        self.announcer = announcer
        self.conversation = Conversation(settings, catalogs, store)
        self.flood = FloodGuard(settings.rate_limit_messages, settings.rate_limit_window_s)


def services(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.application.bot_data["services"]


def build_application(settings: Settings, *, request=None, get_updates_request=None) -> Application:
    """The whole bot, wired; nothing is opened until post_init. `request` lets tests inject a fake layer."""
    if settings.bot_token is None:
        raise ValueError("CARDFIT_BOT_TOKEN is not set")
    loaded = load_catalog(settings.catalog)  # fail fast on a broken catalog, before any network call
    builder: ApplicationBuilder = (
        Application.builder()
        .token(settings.bot_token.get_secret_value())
        .base_url(settings.base_url)
        .base_file_url(settings.base_file_url)
        .defaults(Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True)))
        .rate_limiter(ResilientRateLimiter(max_retries=5, messages_per_s=settings.send_rate_per_s))
        .concurrent_updates(64)
        .post_init(_post_init)
        .post_shutdown(_post_shutdown)
    )
    if request is not None:
        builder = builder.request(request)
    if get_updates_request is not None:
        builder = builder.get_updates_request(get_updates_request)
    application = builder.build()
    application.bot_data["settings"] = settings
    application.bot_data["catalog"] = CatalogHolder(loaded)

    from bot.handlers import register_all

    register_all(application)
    return application


async def _post_init(application: Application) -> None:
    settings: Settings = application.bot_data["settings"]
    store = await Store.open(settings.db)
    catalogs = application.bot_data["catalog"]
    announcer = Announcer(settings, catalogs, store, application.bot, bot_username=application.bot.username)
    application.bot_data["services"] = Services(settings, catalogs, store, announcer)
    # Warm the parser (rapidfuzz, regexes) now, not inside the first customer's reply; the holder built the
    # catalog's vocabulary when the catalog was put in service.
    parse("70B int4", catalogs.vocabulary)
    await announcer.ensure_baseline()
    await announcer.resume()
    if application.job_queue is not None:
        application.job_queue.run_repeating(_watch_catalog, interval=settings.catalog_watch_s,
                                            first=settings.catalog_watch_s, name="catalog-watch")
    await _set_commands(application, settings)
    log.info("Cardfit started: catalog %s (%d cards), store %s", application.bot_data["catalog"].catalog.id,
             len(application.bot_data["catalog"].catalog.cards), settings.db)


async def _set_commands(application: Application, settings: Settings) -> None:
    """Commands per scope (everyone; staff add /quote; admins add /reload) and per language (en default, de)."""
    scopes = [(BotCommandScopeDefault(), ())]
    scopes += [(BotCommandScopeChat(user_id), ("quote",)) for user_id in settings.staff_ids
               if user_id not in settings.admin_ids]
    scopes += [(BotCommandScopeChat(user_id), ("quote", "reload")) for user_id in settings.admin_ids]
    for scope, extra in scopes:
        for lang, texts in COMMAND_TEXTS.items():
            commands = [BotCommand(name, texts[name]) for name in (*COMMANDS, *extra) if name != "start"]
            for code in ((None, "en") if lang == "en" else (lang,)):
                await application.bot.set_my_commands(commands, scope=scope, language_code=code)


async def _watch_catalog(context: ContextTypes.DEFAULT_TYPE) -> None:
    """JobQueue: reload the catalog when its content hash changed (an invalid file keeps the old one)."""
    outcome = await services(context).announcer.check()
    if outcome.status not in ("unchanged", "invalid"):
        log.info("catalog watch: %s", outcome.status)


async def _post_shutdown(application: Application) -> None:
    svc: Services | None = application.bot_data.get("services")
    if svc is not None:
        await svc.announcer.stop()
        await svc.store.close()
