"""The chart button: answer the query at once, draw the answer's chart in a worker thread, send it as a photo."""
from __future__ import annotations

import asyncio
import html

from telegram import Update
from telegram.ext import CallbackQueryHandler

from bot.features.callbacks import ChartButton
from bot.features.chart import ChartData, press_chart, render_png
from bot.telegram.context import CardfitApplication, CustomContext
from bot.telegram.ptb import answer_tap, is_shared, query_of, show
from bot.texts.render import CAPTION_LIMIT, clip


async def chart_button(update: Update, context: CustomContext) -> None:
    query = query_of(update)
    outcome = await press_chart(context.core, context.caller, query.data, shared=is_shared(update))
    if not isinstance(outcome, ChartData):
        await show(query, outcome)
        return
    await answer_tap(query)  # the spinner stops before the drawing, which takes a few hundred ms
    chat = update.effective_chat
    if chat is None:  # a button under an inline message: no chat to send a photo to
        return
    png = await asyncio.to_thread(render_png, outcome)  # matplotlib is CPU-bound: off the event loop
    # A 400 or 403 goes to the global error handler like every other send (bot/telegram/handlers/errors.py).
    await context.bot.send_photo(chat.id, photo=png, caption=clip(html.escape(outcome.caption), CAPTION_LIMIT))


def register(application: CardfitApplication) -> None:
    application.add_handler(CallbackQueryHandler(chart_button, pattern=ChartButton.matches))
