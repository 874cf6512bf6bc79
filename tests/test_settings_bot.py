"""/set and /settings through the real Application: the vLLM release a user's serving check follows (/set vllm),
and a setting asked for by an older update handled again (after a crash) compared with its own field only."""
from __future__ import annotations

import pytest

from tests.support.botharness import BOT_USERNAME, Harness, harness_settings

QUESTION = "Qwen3-32B on one H100 at 16k"
# `cardfit ask "Qwen3-32B on one H100 at 16k"` with and without --vllm-version 0.11 (the CLI's own numbers): 0.11
# subtracts no CUDA-graph memory but keeps 0.9 of the GPU, the newest sizes its KV cache from measured memory.
NEWEST_ROOM = "room for 23,584 tokens"
ROOM_0_11 = "room for 18,544 tokens"


@pytest.fixture
def settings(tmp_path):
    return harness_settings(tmp_path, rate_limit_messages=50)


def store(bot: Harness):
    return bot.app.bot_data["services"].store


async def test_set_vllm_follows_that_release_until_cleared(bot):
    await bot.send(5, QUESTION)
    assert NEWEST_ROOM in bot.last_text(5)
    await bot.send(5, "/set vllm 0.11")
    assert bot.last_text(5) == "Saved: vllm = <b>0.11.0</b>"
    assert (await store(bot).get_preferences(5)).vllm == "0.11.0"
    await bot.send(5, QUESTION)
    assert ROOM_0_11 in bot.last_text(5)
    await bot.send(5, "/settings")
    assert "vllm: <b>0.11.0</b>" in bot.last_text(5)
    # In a group the answer is read by others: it follows no one's settings, this one neither.
    await bot.send(5, f"@{BOT_USERNAME} {QUESTION}", chat_type="supergroup", chat_id=-1001)
    assert NEWEST_ROOM in bot.last_text(-1001)
    await bot.send(5, "/set vllm default")
    assert bot.last_text(5) == "Cleared: vllm (back to the default)"
    await bot.send(5, QUESTION)
    assert NEWEST_ROOM in bot.last_text(5)
    await bot.send(5, "/settings")
    assert "vllm: <b>0.34.0 (default)</b>" in bot.last_text(5)
    await bot.send(5, "/set vllm 0.20")
    await bot.send(5, "/set vllm latest")  # the word the CLI takes for the newest clears it too
    assert (await store(bot).get_preferences(5)).vllm is None


@pytest.mark.parametrize(("raw", "language_code", "expected"), [
    ("0.99", "en", "0.99 is not a valid value for vllm. Use a vLLM release from 0.10 to 0.34, e.g. 0.11; "
                   "/set vllm default follows the newest."),
    ("0.9", "en", "0.9 is not a valid value for vllm. Use a vLLM release from 0.10 to 0.34, e.g. 0.11; "
                  "/set vllm default follows the newest."),
    ("eleven", "de", "eleven ist kein gültiger Wert für vllm. Verwende ein vLLM-Release von 0.10 bis 0.34, "
                     "z. B. 0.11; /set vllm default folgt dem neuesten."),
])
async def test_an_unknown_vllm_release_is_refused_with_what_is_accepted(bot, raw, language_code, expected):
    await bot.send(6, f"/set vllm {raw}", language_code=language_code)
    assert bot.last_text(6) == expected
    assert (await store(bot).get_preferences(6)).vllm is None


async def test_set_vllm_is_listed_in_both_languages(bot):
    await bot.send(7, "/set")
    assert "engine, vllm." in bot.last_text(7)
    await bot.send(7, "/set colour red", language_code="de")
    assert "engine, vllm." in bot.last_text(7)
    await bot.send(7, "/settings", language_code="de")
    assert "vllm: <b>0.34.0 (Standard)</b>" in bot.last_text(7)


async def test_an_older_update_handled_again_is_compared_with_its_own_field_only(bot):
    """/set batch 50 (update 10), /set coin XMR (update 11), then update 10 handled again: batch stays 50, coin
    stays XMR, and the reply says what is stored."""
    await bot.send(8, "/set batch 50", update_id=10)
    await bot.send(8, "/set coin XMR", update_id=11)
    await bot.send(8, "/set batch 50", update_id=10)
    assert bot.last_text(8) == "Saved: batch = <b>50</b>"
    prefs = await store(bot).get_preferences(8)
    assert (prefs.batch, prefs.coin) == (50, "XMR")


async def test_an_older_update_handled_late_still_writes_a_field_no_newer_update_set(bot):
    """Update 20 (/set batch 50) is handled only after update 21 (/set coin XMR), as after a crash: its batch is
    written, as its reply says (with one order per user it was skipped, and the reply still said "saved")."""
    await bot.send(9, "/set coin XMR", update_id=21)
    await bot.send(9, "/set batch 50", update_id=20)
    assert bot.last_text(9) == "Saved: batch = <b>50</b>"
    prefs = await store(bot).get_preferences(9)
    assert (prefs.batch, prefs.coin) == (50, "XMR")


async def test_an_older_update_over_a_newer_write_of_its_field_is_told_it_was_not_saved(bot):
    await bot.send(10, "/set batch 50", update_id=31)
    await bot.send(10, "/set batch 8", update_id=30)
    assert bot.last_text(10) == "Not saved: a newer message set batch = <b>50</b>, which stays."
    await bot.send(10, "/set coin XMR", update_id=33)
    await bot.send(10, "/set coin default", update_id=32, language_code="de")
    assert bot.last_text(10) == "Nicht gespeichert: Eine neuere Nachricht hat coin = <b>XMR</b> gesetzt, das bleibt."
    await bot.send(10, "/set region default", update_id=35)
    await bot.send(10, "/set region DFW-1", update_id=34)
    assert bot.last_text(10) == "Not saved: a newer message set region = <b>not set</b>, which stays."
    prefs = await store(bot).get_preferences(10)
    assert (prefs.batch, prefs.coin, prefs.region) == (50, "XMR", None)
