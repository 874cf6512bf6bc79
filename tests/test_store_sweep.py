"""bot/store/contexts.py: day-old chat contexts are deleted by a write at most once a minute (SWEEP_EVERY_S), not
by every answer; a context older than a day is never read back in between. Both engines (the `store` fixture)."""
from __future__ import annotations

from bot.store import CONTEXT_TTL_S
from bot.store.contexts import SWEEP_EVERY_S
from engine.sizing.rule import SizeRequest

T = 2_000_000.0


async def chats(store) -> list[int]:
    rows = await store._database.fetch("SELECT chat_id FROM chat_context ORDER BY chat_id")
    return [int(row["chat_id"]) for row in rows]


async def old_context(store, chat_id: int) -> None:
    await store._database.write_one(
        "INSERT INTO chat_context (chat_id, payload, request_json, updated_at) VALUES (?, ?, ?, ?)",
        (chat_id, "S7", "{}", T - CONTEXT_TTL_S - 100))


async def test_the_sweep_runs_once_a_minute_and_reads_never_see_what_it_left(store):
    await store.keep_request(1, SizeRequest(params_b=7), "S7", now=T)  # the first write sweeps
    await old_context(store, 2)
    await store.keep_request(3, SizeRequest(params_b=13), "S13", now=T + SWEEP_EVERY_S / 2)
    assert await chats(store) == [1, 2, 3]  # within the minute: not swept ...
    assert await store.kept_request(2, now=T + SWEEP_EVERY_S / 2) is None  # ... and not read back either
    await store.remember_answer(4, "70B", "S70", None, (4, SizeRequest(params_b=70), "S70"))  # now: a day later
    assert await chats(store) == [4]  # swept: 1 and 3 are day-old by then too
    assert await store.kept_request(4) is not None


async def test_a_clock_gone_back_sweeps_again(store):
    await store.keep_request(1, SizeRequest(params_b=7), "S7", now=T)
    await old_context(store, 2)
    await store.keep_request(3, SizeRequest(params_b=13), "S13", now=T - 1)
    assert await chats(store) == [1, 3]


async def test_each_store_keeps_its_own_minute(store, tmp_path):
    from bot.store import Store

    await store.keep_request(1, SizeRequest(params_b=7), "S7", now=T)
    other = await Store.open(tmp_path / "other.sqlite3")
    try:
        await other._database.write_one(
            "INSERT INTO chat_context (chat_id, payload, request_json, updated_at) VALUES (?, ?, ?, ?)",
            (2, "S7", "{}", T - CONTEXT_TTL_S - 100))
        await other.keep_request(3, SizeRequest(params_b=13), "S13", now=T + 1)  # its first write: swept
        assert await chats(other) == [3]
    finally:
        await other.close()
