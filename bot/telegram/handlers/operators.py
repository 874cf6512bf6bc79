"""Operators: the Post/Discard buttons under an announcement preview and the Post again / It is there answer
about a channel part whose fate is unknown. /reload and the price-alert commands are commands of the table
(bot/features/commands.py)."""
from __future__ import annotations

import html
import logging

from telegram import Message, Update
from telegram.error import BadRequest, TelegramError
from telegram.ext import CallbackQueryHandler

from bot.features.callbacks import AnnouncementButton, PartButton
from bot.features.feature import unknown_button
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import answer_tap, is_not_modified, query_of, show, user_id, user_language
from bot.texts.i18n import t
from bot.texts.render import clip

log = logging.getLogger(__name__)


async def _admin_button(update: Update, context: CustomContext,
                        kind: type[AnnouncementButton] | type[PartButton]) -> AnnouncementButton | PartButton | None:
    """The decoded button when an admin pressed a valid one; otherwise the presser is answered and None."""
    query = query_of(update)
    if not kind.matches(query.data):  # a query without data: PTB offers it to every pattern
        await show(query, unknown_button(context.caller))
        return None
    if not context.settings.is_admin(user_id(update)):
        await query.answer(t(user_language(update), "error.admin_only"), show_alert=True)
        return None
    button = kind.decode(query.data)
    if button is None:
        await query.answer(t(user_language(update), kind.invalid_notice))
        return None
    await answer_tap(query)  # the admin's action goes on when only this answer fails
    return button


async def _drop_keyboard(update: Update) -> None:
    """Remove the buttons of the pressed message; a second tap (keyboard already gone) is no error."""
    try:
        await query_of(update).edit_message_reply_markup(None)
    except BadRequest as exc:
        if not is_not_modified(exc):
            raise


async def announcement_button(update: Update, context: CustomContext) -> None:
    button = await _admin_button(update, context, AnnouncementButton)
    if not isinstance(button, AnnouncementButton):
        return
    query = query_of(update)
    if button.action == "post":
        try:
            text = await context.announcer.post(button.announcement_id)
        except TelegramError as exc:
            # The channel refused (bot not admin there, chat gone...): say so to the admin who pressed Post.
            # Not the global handler: a Forbidden from the channel must not mark this admin as blocked.
            log.warning("announcement %s could not be posted: %s", button.announcement_id, exc)
            chat = context.settings.announce_chat or "-"
            if isinstance(query.message, Message):
                await query.message.reply_text(t(user_language(update), "announce.post_failed",
                                                 chat=html.escape(chat), error=html.escape(str(exc)[:300])))
            return
    else:
        text = await context.announcer.discard(button.announcement_id)
    if query.message is not None:
        await _drop_keyboard(update)
        if isinstance(query.message, Message):  # not one too old for the bot to reach
            await query.message.reply_text(clip(text))


async def part_button(update: Update, context: CustomContext) -> None:
    button = await _admin_button(update, context, PartButton)
    if not isinstance(button, PartButton):
        return
    query = query_of(update)
    try:
        text = await context.announcer.resolve_part(button.announcement_id, button.part, button.action)
    except TelegramError as exc:  # as for Post: the channel refused; this admin is not blocked
        log.warning("announcement %s could not be continued: %s", button.announcement_id, exc)
        text = t(user_language(update), "announce.post_failed", chat=html.escape(context.settings.announce_chat or "-"),
                 error=html.escape(str(exc)))
    await _drop_keyboard(update)
    if isinstance(query.message, Message):
        await query.message.reply_text(text)


def register(application: CardfitApplication) -> None:
    # Before the answer buttons' catch-all: the admin check comes first for these.
    application.add_handler(CallbackQueryHandler(announcement_button, pattern=AnnouncementButton.matches))
    application.add_handler(CallbackQueryHandler(part_button, pattern=PartButton.matches))
