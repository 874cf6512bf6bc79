"""One global error handler: log with context, record blocked users, tell the user, notify the first admin;
network trouble while polling reaches the admin as one summary per interval, not a traceback per failure."""
from __future__ import annotations

import html
import logging
import time
import traceback
from dataclasses import dataclass

from telegram import Update
from telegram.constants import ChatType
from telegram.error import BadRequest, Conflict, Forbidden, NetworkError, RetryAfter, TelegramError

from bot.operators.send_errors import never_reached_telegram
from bot.store import DATABASE_ERRORS
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import failed_request, is_not_modified, user_language
from bot.texts.i18n import t
from bot.texts.render import clip

log = logging.getLogger(__name__)
ADMIN_NOTICE_LIMIT = 3500
POLLING_SUMMARY_S = 600.0  # at most one "Telegram unreachable" notice per 10 minutes, with the count


@dataclass(slots=True)
class PollingTrouble:
    """Network errors of getUpdates since the last notice to the admin."""

    count: int = 0
    since: float = 0.0  # time.time() of the first error counted
    last_notice: float = float("-inf")  # time.monotonic() of the last notice

    def record(self, now: float, wall: float) -> tuple[int, float] | None:
        """Count one error; (count, since) when a notice is due now, else None."""
        if self.count == 0:
            self.since = wall
        self.count += 1
        if now - self.last_notice < POLLING_SUMMARY_S:
            return None
        due = (self.count, self.since)
        self.count, self.last_notice = 0, now
        return due


async def on_error(update: object, context: CustomContext) -> None:
    error = context.error
    if error is None or is_not_modified(error):
        return
    if update is None and isinstance(error, Conflict):
        await _polling_conflict(error, context)
        return
    if update is None and _is_weather(error):
        await _polling_trouble(error, context)
        return
    if isinstance(error, Forbidden):
        await _forbidden(update, error, context)
        return
    job = (context.job.name or "background").replace("-", " ") if update is None and context.job is not None else None
    if job is not None and isinstance(error, DATABASE_ERRORS):
        # A background job (the alert sweep, the catalog watch) during a store outage: one line per tick naming
        # the job; there is no user to tell, and the admin learns of it from the log and the health check.
        log.warning("%s: the store failed: %s: %s", job,
                    error.__class__.__name__, _first_line(error))
        return
    summary = f"the {job} job" if job is not None else _describe(update)
    failed = failed_request(error)
    if failed is not None:
        summary += f", {failed[0]} to chat {failed[1]} failed"
    weather = _is_weather(error) and failed is not None
    if weather:
        # Network weather, after the rate limiter's retries: logged, not a traceback for the admin.
        log.warning("gave up on a request while handling %s: %s: %s", summary, error.__class__.__name__, error)
    elif isinstance(error, DATABASE_ERRORS):
        # The store refusing (a full disk, PostgreSQL down or read-only): one line per update, not a traceback
        # each; the user is told, the admin learns of it from the log and the health check (not per update).
        weather = True
        log.warning("the store failed while handling %s: %s: %s", summary, error.__class__.__name__,
                    _first_line(error))
    else:
        log.error("error while handling %s", summary, exc_info=error)
    await _tell_the_user(update, error, failed, context)
    if not weather:
        await _notify_admin(summary, error, context)


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0][:200] if str(error) else ""


def _is_weather(error: BaseException) -> bool:
    """A failure of the network or of Telegram's capacity, not of our request (PTB's BadRequest is a
    NetworkError too, but a refused request is our bug)."""
    return isinstance(error, NetworkError | RetryAfter) and not isinstance(error, BadRequest)


async def _forbidden(update: object, error: Forbidden, context: CustomContext) -> None:
    """The user blocked the bot, or the bot was removed from a group. Only a refusal in the user's private chat
    says the user blocked it: then their alerts stop. A group's refusal says nothing about the user."""
    user = update.effective_user if isinstance(update, Update) else None
    chat = update.effective_chat if isinstance(update, Update) else None
    failed = failed_request(error)
    chat_id = failed[1] if failed is not None else (chat.id if chat is not None else None)
    private = user is not None and (chat_id == user.id if chat_id is not None
                                    else chat is not None and chat.type == ChatType.PRIVATE)
    if not private:
        log.info("forbidden in chat %s (user %s): %s", chat_id or "?", user.id if user else "?", error)
        return
    assert user is not None
    log.info("forbidden for user %s: %s", user.id, error)
    svc = context.bot_data.get("services")  # absent when post_init itself failed
    if svc is not None:
        await svc.store.mark_blocked(user.id)


async def _tell_the_user(update: object, error: BaseException, failed: tuple[str, object] | None,
                         context: CustomContext) -> None:
    """A short notice in the chat of the update, when something failed there that the user would otherwise never
    learn of. A send to that very chat (or an answer to a tap or inline query, which names no chat) that failed is
    told about only when it never reached Telegram: a reply that may have arrived gets no "could not send" after
    it."""
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    chat_id = update.effective_chat.id
    if isinstance(error, TelegramError):
        if failed is None:
            return
        if failed[0].startswith(("send", "answer")) and failed[1] in (chat_id, None) and not _nothing_arrived(error):
            return
        key = "error.not_sent"
    else:
        key = "error.generic"
    try:
        await context.bot.send_message(chat_id, t(user_language(update), key))
    except TelegramError:
        log.warning("could not tell the user about the error")


def _nothing_arrived(error: TelegramError) -> bool:
    """The failed send certainly had no effect and a notice cannot double anything: it never reached Telegram (no
    connection, or its front answered 502/503, after all retries), or Telegram answered 429 to every one of the
    rate limiter's six tries (the notice waits out the limit in the rate limiter like any send). Not a refusal
    (400: our bug, the admin hears of it; Telegram's complaint is not the user's to read)."""
    if isinstance(error, RetryAfter):
        return True
    return isinstance(error, NetworkError) and not isinstance(error, BadRequest) and never_reached_telegram(error)


async def _notify_admin(summary: str, error: BaseException, context: CustomContext) -> None:
    settings = context.bot_data.get("settings")
    if settings is None or not settings.admin_ids:
        return
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    # PTB quotes the token in some messages (InvalidToken); a URL or a locals dump may carry the other secrets.
    for secret in (settings.bot_token, settings.topup_secret, settings.webhook_secret):
        if secret is not None and secret.get_secret_value():
            trace = trace.replace(secret.get_secret_value(), "***")
    text = clip(f"⚠️ <b>Cardfit error</b>\n{html.escape(summary)}\n"
                f"<pre>{html.escape(trace[-ADMIN_NOTICE_LIMIT:])}</pre>")
    try:
        await context.bot.send_message(settings.admin_ids[0], text)
    except TelegramError:
        log.warning("could not notify the admin about an error")


async def _polling_trouble(error: BaseException, context: CustomContext) -> None:
    log.warning("fetching updates failed: %s: %s", error.__class__.__name__, error)
    await _summarise(context, "polling_trouble", "admin.polling_errors", error)


async def _polling_conflict(error: BaseException, context: CustomContext) -> None:
    """409 from getUpdates: a second process polls with this token (a replica started without webhook mode, an
    old container still running). PTB retries it every few seconds: one summary per interval, like the network."""
    if "webhook" in str(error).lower():
        log.warning("another instance set a webhook for this token; getUpdates is refused (409 Conflict): %s", error)
    else:
        log.warning("another instance is polling with this token (409 Conflict from getUpdates): %s", error)
    await _summarise(context, "polling_conflict", "admin.polling_conflict", error)


async def _summarise(context: CustomContext, slot: str, key: str, error: BaseException) -> None:
    """Count one failure of getUpdates under `slot`; tell the first admin when the interval has passed."""
    trouble: PollingTrouble = context.bot_data.setdefault(slot, PollingTrouble())
    due = trouble.record(time.monotonic(), time.time())
    settings = context.bot_data.get("settings")
    if due is None or settings is None or not settings.admin_ids:
        return
    count, since = due
    text = t("en", key, count=count, since=time.strftime("%H:%M UTC", time.gmtime(since)),
             error=html.escape(str(error)[:200]), minutes=round(POLLING_SUMMARY_S / 60))
    try:
        await context.bot.send_message(settings.admin_ids[0], text)
    except TelegramError:
        log.warning("could not send the admin the summary of failed getUpdates calls")


def _describe(update: object) -> str:
    if not isinstance(update, Update):
        return repr(update)[:200]
    user = update.effective_user
    parts = [f"update {update.update_id}"]
    if user is not None:
        parts.append(f"user {user.id}")
    if update.effective_chat is not None:
        parts.append(f"chat {update.effective_chat.id}")
    if update.callback_query is not None:
        parts.append(f"callback {update.callback_query.data!r}"[:100])
    elif update.effective_message is not None and update.effective_message.text:
        parts.append(f"text {update.effective_message.text[:80]!r}")
    return ", ".join(parts)


def register(application: CardfitApplication) -> None:
    application.add_error_handler(on_error)
