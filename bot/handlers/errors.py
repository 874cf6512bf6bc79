"""One global error handler: log with context, record blocked users, tell the user, notify the first admin."""
from __future__ import annotations

import html
import logging
import traceback

from telegram import Update
from telegram.error import Forbidden, TelegramError

from bot.context import CardfitApplication, CustomContext
from bot.i18n import t
from bot.telegram_io import is_not_modified, user_language

log = logging.getLogger(__name__)
ADMIN_NOTICE_LIMIT = 3500


async def on_error(update: object, context: CustomContext) -> None:
    error = context.error
    if error is None or is_not_modified(error):
        return
    user = update.effective_user if isinstance(update, Update) else None
    svc = context.bot_data.get("services")  # absent when post_init itself failed
    if isinstance(error, Forbidden):
        # The user blocked the bot (or left the chat): remember it, nothing to tell anyone.
        log.info("forbidden for user %s: %s", user.id if user else "?", error)
        if user is not None and svc is not None:
            await svc.store.mark_blocked(user.id)
        return
    summary = _describe(update)
    log.error("error while handling %s", summary, exc_info=error)
    if isinstance(update, Update) and update.effective_chat is not None and not isinstance(error, TelegramError):
        lang = user_language(update)
        try:
            await context.bot.send_message(update.effective_chat.id, t(lang, "error.generic"))
        except TelegramError:
            log.warning("could not tell the user about the error")
    settings = context.bot_data.get("settings")
    if settings is not None and settings.admin_ids:
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        text = (f"⚠️ <b>Cardfit error</b>\n{html.escape(summary)}\n"
                f"<pre>{html.escape(trace[-ADMIN_NOTICE_LIMIT:])}</pre>")
        try:
            await context.bot.send_message(settings.admin_ids[0], text)
        except TelegramError:
            log.warning("could not notify the admin about an error")


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
