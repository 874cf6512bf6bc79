"""Per-user flood control for questions and answer buttons: over the limit, one polite notice, then silence.

Only what costs a sizing answer counts (questions, /size, answer buttons); commands and group chatter that is not
addressed to the bot do not.
"""
from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import ContextTypes

from bot.app import services
from bot.i18n import t
from bot.telegram_io import user_language

log = logging.getLogger(__name__)


async def admit(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """True when this user may have another answer now; otherwise tell them once per window and say False."""
    user = update.effective_user
    if user is None:
        return True
    allowed, notice = services(context).flood.check(user.id)
    if allowed:
        return True
    log.info("flood: dropping an update from user %s", user.id)
    lang = user_language(update)
    if update.callback_query is not None:
        await update.callback_query.answer(t(lang, "error.rate_limited") if notice else None)
    elif notice and update.effective_message is not None:
        await update.effective_message.reply_text(t(lang, "error.rate_limited"))
    return False
