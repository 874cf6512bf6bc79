"""Operators and subscribers: /reload, announcement Post/Discard buttons, /subscribe, /unsubscribe, /subscriptions."""
from __future__ import annotations

import html
import logging

from telegram import Update
from telegram.error import BadRequest, TelegramError
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot.app import services
from bot.i18n import t
from bot.telegram_io import is_not_modified, reply, user_info, user_language

log = logging.getLogger(__name__)


async def reload_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    user = update.effective_user
    if not svc.settings.is_admin(user.id if user else None):
        log.warning("refused /reload from user %s", user.id if user else "?")
        await update.effective_message.reply_text(t(user_language(update), "error.admin_only"))
        return
    outcome = await svc.announcer.check(force=True)
    if not outcome.notified:  # a newly broken file was just sent to every admin, this one included
        await update.effective_message.reply_text(outcome.text)


async def announcement_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    svc = services(context)
    user = update.effective_user
    if not svc.settings.is_admin(user.id if user else None):
        await query.answer(t(user_language(update), "error.admin_only"), show_alert=True)
        return
    _, action, raw_id = (query.data.split(":") + ["", ""])[:3]
    if action not in ("post", "discard") or not raw_id.isdigit():
        await query.answer(t(user_language(update), "error.unknown_action"))
        return
    await query.answer()
    if action == "post":
        try:
            text = await svc.announcer.post(int(raw_id))
        except TelegramError as exc:
            # The channel refused (bot not admin there, chat gone...): say so to the admin who pressed Post.
            # Not the global handler: a Forbidden from the channel must not mark this admin as blocked.
            log.warning("announcement %s could not be posted: %s", raw_id, exc)
            chat = svc.settings.announce_chat or "-"
            await query.message.reply_text(t(user_language(update), "announce.post_failed", chat=html.escape(chat),
                                             error=html.escape(str(exc))))
            return
    else:
        text = await svc.announcer.discard(int(raw_id))
    if query.message is not None:
        try:
            await query.edit_message_reply_markup(None)
        except BadRequest as exc:
            if not is_not_modified(exc):  # a second tap: the keyboard is already gone, the reply still matters
                raise
        await query.message.reply_text(text)


async def subscribe(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await services(context).conversation.subscribe(user_info(update), list(context.args or []))
    await reply(update.effective_message, answer)


async def unsubscribe(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await services(context).conversation.unsubscribe(user_info(update), list(context.args or []))
    await reply(update.effective_message, answer)


async def subscriptions(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await reply(update.effective_message, await services(context).conversation.subscriptions(user_info(update)))


def register(application: Application) -> None:
    application.add_handler(CommandHandler("reload", reload_command))
    application.add_handler(CallbackQueryHandler(announcement_button, pattern=r"^ann:"))
    application.add_handler(CommandHandler("subscribe", subscribe))
    application.add_handler(CommandHandler("unsubscribe", unsubscribe))
    application.add_handler(CommandHandler("subscriptions", subscriptions))
