"""Webhook mode: an aiohttp server that feeds Telegram's updates into the Application, GET /healthz and GET /metrics.

PTB's own `run_webhook` serves only the update path (a tornado server with no room for a health route), so this
follows PTB's examples/customwebhookbot instead: our own web server hands each update to the durable inbox
(bot/telegram/inbox.py: stored, then handled) and runs the Application's lifecycle itself. aiohttp because PTB's
examples
name any asyncio server, and aiohttp is the one the project already uses (the Bot API emulator in the tests).
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import signal
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from telegram import Update

from bot import metrics
from bot.config import Settings
from bot.features.core import CatalogHolder
from bot.store import DATABASE_ERRORS
from bot.telegram.context import CardfitApplication
from bot.telegram.inbox import inbox_of, initialize
from bot.telegram.services import Services

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"  # Prometheus scrapes each replica here (bot/metrics.py); keep it off the public proxy
STORE_PING_TIMEOUT_S = 2.0
MAX_UPDATE_BYTES = 1 << 20  # an update is a few KB; Telegram's largest (a long poll answer) is far below this
_UNREACHABLE: tuple[type[BaseException], ...] = (TimeoutError, *DATABASE_ERRORS)
_APPLICATION: web.AppKey[CardfitApplication] = web.AppKey("application", CardfitApplication)


async def _health(application: CardfitApplication) -> tuple[int, dict[str, Any]]:
    """200 when this replica can answer: the Application runs, its services are open and the store answers."""
    catalogs: CatalogHolder = application.bot_data["catalog"]
    loaded = catalogs.loaded
    body: dict[str, Any] = {"catalog": {"id": loaded.catalog.id, "sha256": loaded.sha256[:12]}}
    services: Services | None = application.bot_data.get("services")
    if services is None or not application.running:
        return 503, {**body, "status": "starting", "store": "closed"}
    body["store_engine"] = services.store.engine
    try:
        await asyncio.wait_for(services.store.ping(), STORE_PING_TIMEOUT_S)
    except _UNREACHABLE as exc:
        log.warning("health: store unreachable: %s", exc.__class__.__name__)
        return 503, {**body, "status": "unavailable", "store": "unreachable"}
    return 200, {**body, "status": "ok", "store": "ok"}


async def healthz(request: web.Request) -> web.Response:
    status, body = await _health(request.app[_APPLICATION])
    return web.json_response(body, status=status)


async def metrics_page(request: web.Request) -> web.Response:
    body = metrics.exposition()
    return web.Response(body=body, headers={"Content-Type": metrics.CONTENT_TYPE_LATEST})


def telegram_handler(secret: str) -> Any:
    async def receive(request: web.Request) -> web.Response:
        # Constant-time comparison: the header is the only thing that tells Telegram from anyone else.
        offered = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(offered.encode(), secret.encode()):
            return web.Response(status=403, text="forbidden")
        application = request.app[_APPLICATION]
        body = await request.read()
        update = _parsed(body, application)
        if update is None:
            # Acknowledged all the same: on any other answer Telegram sends the same bytes again, for a day.
            return web.Response(status=200, text="not an update: ignored")
        # 200 only once the inbox committed the update (bot/telegram/inbox.py): on any other answer Telegram sends it
        # again, and a repeated update id is answered 200 without being handled twice.
        inbox = inbox_of(application)
        if inbox is None:
            return web.Response(status=503, text="starting")
        try:
            await inbox.accept([update], [body.decode("utf-8", errors="replace")])
        except _UNREACHABLE as exc:
            log.warning("webhook: update %s not stored (%s); Telegram sends it again", update.update_id,
                        exc.__class__.__name__)
            return web.Response(status=503, text="store unavailable")
        return web.Response(status=200)

    return receive


# Update ids are Telegram's positive integers; the store keeps them as signed 64-bit integers.
_UPDATE_ID_LIMIT = 1 << 63


def _parsed(body: bytes, application: CardfitApplication) -> Update | None:
    """The update the body holds, or None (logged once) when it holds none the bot can handle: not JSON, nested
    past the parser's recursion limit, fields of the wrong type, an update id that is no integer the store takes."""
    try:
        data = json.loads(body)
        update_id = data.get("update_id") if isinstance(data, dict) else None
        if not isinstance(update_id, int) or isinstance(update_id, bool) or not 0 <= update_id < _UPDATE_ID_LIMIT:
            raise ValueError(f"update_id {str(update_id)[:40]!r} is not an integer from 0 to 2^63")
        return Update.de_json(data, application.bot)
    except Exception as exc:  # noqa: BLE001 - RecursionError, AttributeError ...: nothing here is ours to fix
        log.warning("webhook: a request with the secret holds no update the bot can handle (%s: %s); "
                    "acknowledged and dropped", exc.__class__.__name__, str(exc)[:120])
        return None


class _BadRequestsInOneLine(logging.Filter):
    """aiohttp logs a request it cannot even parse (a header over its 8 KB limit, a malformed request line) as an
    ERROR with a traceback, before any secret is checked: noise anyone on the network can cause. One WARNING
    line instead; errors in our own handlers keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            said = " ".join(str(error).split())[:120]
            record.msg = f"{record.getMessage()}: {error.__class__.__name__}: {said}"
            record.args = None
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_BAD_REQUESTS = _BadRequestsInOneLine()


def build_web_app(application: CardfitApplication, settings: Settings) -> web.Application:
    if settings.webhook_secret is None:
        raise ValueError("CARDFIT_WEBHOOK_SECRET is not set")
    logging.getLogger("aiohttp.server").addFilter(_BAD_REQUESTS)  # once: a logger keeps a filter once
    web_app = web.Application(client_max_size=MAX_UPDATE_BYTES)
    web_app[_APPLICATION] = application
    web_app.router.add_get(HEALTH_PATH, healthz)
    web_app.router.add_get(METRICS_PATH, metrics_page)
    web_app.router.add_post(settings.webhook_path, telegram_handler(settings.webhook_secret.get_secret_value()))
    return web_app


async def serve_webhook(application: CardfitApplication, settings: Settings,
                        stop: asyncio.Event | None = None) -> None:
    """Run the bot in webhook mode until SIGTERM/SIGINT (or `stop`): the same lifecycle as PTB's run_webhook
    (initialize, post_init, setWebhook, start ... stop, shutdown, post_shutdown), with our web server."""
    assert settings.webhook_url is not None and settings.webhook_secret is not None
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runner = web.AppRunner(build_web_app(application, settings), access_log=None)
    await runner.setup()
    # Listening before the Application is up: /healthz answers 503 while it starts, so a balancer waits.
    site = web.TCPSite(runner, settings.webhook_listen, settings.webhook_port)
    await site.start()
    serving = True
    try:
        await initialize(application)  # closes what it opened when getMe fails
        try:
            if application.post_init is not None:
                await application.post_init(application)
            # Every replica sets the same URL and secret: Telegram keeps one webhook, the balancer spreads it.
            await application.bot.set_webhook(url=settings.webhook_url,
                                              secret_token=settings.webhook_secret.get_secret_value(),
                                              allowed_updates=Update.ALL_TYPES)
            await application.start()
            inbox = inbox_of(application)
            assert inbox is not None  # opened in post_init
            await inbox.start()
            log.info("webhook mode: listening on %s:%d%s", settings.webhook_listen, settings.webhook_port,
                     settings.webhook_path)
            await stop.wait()
            # Stop taking updates first (in-flight requests finish), then the handlers: an update answered 200 is
            # stored, handled here if its handling began, else left to the next replica to sweep
            # (bot/telegram/inbox.py);
            # one refused at the door is retried by Telegram, through the balancer, elsewhere.
            serving = False
            await runner.cleanup()
            inbox.begin_stop()  # handlers in progress finish; unstarted updates stay stored for another replica
            await application.stop()
            await inbox.close()
        finally:
            await application.shutdown()
            if application.post_shutdown is not None:
                await application.post_shutdown(application)
    finally:
        if serving:
            await runner.cleanup()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
