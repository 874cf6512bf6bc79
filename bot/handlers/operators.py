"""Operators and subscribers: /reload, announcement Post/Discard buttons, /subscribe, /unsubscribe, /subscriptions."""
from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from bot.app import services
from bot.i18n import normalize_language, t
from bot.telegram_io import reply, user_info

log = logging.getLogger(__name__)


def _lang(update: Update) -> str:
    return normalize_language(update.effective_user.language_code if update.effective_user else None)


async def reload_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    user = update.effective_user
    if not svc.settings.is_admin(user.id if user else None):
        log.warning("refused /reload from user %s", user.id if user else "?")
        await update.effective_message.reply_text(t(_lang(update), "error.not_allowed"))
        return
    outcome = await svc.announcer.check(force=True)
    if outcome.status != "invalid":  # an invalid file was already reported to every admin
        await update.effective_message.reply_text(outcome.text)


async def announcement_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    svc = services(context)
    user = update.effective_user
    if not svc.settings.is_admin(user.id if user else None):
        await query.answer(t(_lang(update), "error.not_allowed"), show_alert=True)
        return
    _, action, raw_id = (query.data.split(":") + ["", ""])[:3]
    if action not in ("post", "discard") or not raw_id.isdigit():
        await query.answer(t(_lang(update), "error.unknown_action"))
        return
    await query.answer()
    if action == "post":
        text = await svc.announcer.post(int(raw_id))
    else:
        text = await svc.announcer.discard(int(raw_id))
    if query.message is not None:
        await query.edit_message_reply_markup(None)
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
