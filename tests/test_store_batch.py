"""One transaction per answer on both engines: Database.write_many is all or none, and
UserRepository.remember_answer writes what remember_question and keep_request wrote."""
from __future__ import annotations

import pytest

from bot.store import CONTEXT_TTL_S, INTEGRITY_ERRORS, Store
from engine.sizing.rule import SizeRequest


async def test_remember_answer_writes_the_user_and_the_chat_context(store):
    await store.remember_answer(5, "70B int4", "S70Pi4", "de", (5, SizeRequest(params_b=70, precision="int4"),
                                                                 "S70Pi4"))
    prefs = await store.get_preferences(5)
    assert (prefs.last_question, prefs.last_payload, prefs.telegram_language, prefs.blocked) == \
        ("70B int4", "S70Pi4", "de", False)
    kept = await store.kept_request(5)
    assert kept is not None and (kept.params_b, kept.precision) == (70, "int4")


async def test_remember_answer_without_a_chat_keeps_no_context_and_keeps_the_known_language(store):
    await store.touch_user(6, "de")
    await store.mark_blocked(6)
    await store.remember_answer(6, "7B", "S7", None, None)
    prefs = await store.get_preferences(6)
    assert (prefs.last_question, prefs.telegram_language, prefs.blocked) == ("7B", "de", False)
    assert await store.kept_request(6) is None


async def test_remember_answer_sweeps_day_old_contexts(store):
    import time

    await store.keep_request(7, SizeRequest(params_b=7), "S7", now=time.time() - CONTEXT_TTL_S - 10)
    await store.remember_answer(8, "13B", "S13", None, (8, SizeRequest(params_b=13), "S13"))
    rows = await store._database.fetch("SELECT chat_id FROM chat_context ORDER BY chat_id")
    assert [row[0] for row in rows] == [8]


async def test_write_many_is_all_or_none(store):
    await store.touch_user(9, "en")
    good = ("UPDATE users SET last_question = ? WHERE user_id = ?", ("changed", 9))
    bad = ("INSERT INTO users (user_id, blocked, created_at, updated_at) VALUES (?, ?, ?, ?)", (9, 0, 1.0, 1.0))
    with pytest.raises(INTEGRITY_ERRORS):
        await store._database.write_many([good, bad])  # the second breaks users' primary key
    assert (await store.get_preferences(9)).last_question is None
    await store._database.write_many([good])
    assert (await store.get_preferences(9)).last_question == "changed"


async def test_concurrent_calls_on_sqlite_take_effect_in_order_each_with_its_own_outcome():
    import asyncio

    store = await Store.open(":memory:")
    try:
        await store.touch_user(1, "en")
        bad = ("INSERT INTO users (user_id, blocked, created_at, updated_at) VALUES (?, ?, ?, ?)", (1, 0, 1.0, 1.0))
        outcomes = await asyncio.gather(
            store.remember_question(1, "first", None),
            store._database.write_many([bad]),  # fails alone
            *(store.touch_user(user, "de") for user in range(2, 40)),
            store.get_preferences(1),  # came after the first write: sees it
            return_exceptions=True)
        assert isinstance(outcomes[1], INTEGRITY_ERRORS)
        assert [o for i, o in enumerate(outcomes) if i != 1 and isinstance(o, BaseException)] == []
        assert outcomes[-1].last_question == "first"
        assert all(prefs.telegram_language == "de" for prefs in outcomes[2:-1])
    finally:
        await store.close()


async def test_a_sweep_that_fails_never_fails_the_answer(store, monkeypatch):
    import bot.store.users as users

    broken = [("DELETE FROM no_such_table WHERE updated_at < ?", (0.0,))]
    monkeypatch.setattr(users, "due_sweep", lambda database, now: broken)
    await store.remember_answer(7, "70B int4", "S70Pi4", "en", (7, SizeRequest(params_b=70), "S70"))
    assert (await store.get_preferences(7)).last_question == "70B int4"
    assert (await store.kept_request(7)) is not None
