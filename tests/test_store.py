"""The store on both engines (SQLite and PostgreSQL: the `store` and `db_target` fixtures): migrations, restart
durability, field-level updates without lost writes, announcements, alerts."""
from __future__ import annotations

import asyncio
import sqlite3

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bot.store.schema as store_module
from bot.store import (
    INTEGRITY_ERRORS,
    MIGRATIONS,
    PREFERENCE_FIELDS,
    Preferences,
    Store,
    is_postgres_url,
    split_sql_script,
)
from bot.store.database import pg_ddl, pg_placeholders, redacted

LATEST_VERSION = MIGRATIONS[-1][0]

# One valid value per preference field, and a second one to prove an overwrite happened.
SAMPLE_VALUES = {
    "language": ("de", "en"),
    "precision": ("int4", "fp8"),
    "kv_precision": ("fp8", "fp16"),
    "context_tokens": (32_768, 131_072),
    "batch": (4, 16),
    "coin": ("BTC", "USDT"),
    "billing": ("month", "hour"),
    "region": ("eu", "us"),
    "engine": ("vllm", "llama.cpp"),
    "vllm": ("0.11.0", "0.20.0"),
}


class Probe:
    """Looks at a database with the engine's own client (sqlite3, psql), outside the code under test."""

    def __init__(self, target: str, server) -> None:
        self.target, self.server = target, server

    def version(self) -> int:
        if self.server is None:
            with sqlite3.connect(self.target) as conn:
                return conn.execute("PRAGMA user_version").fetchone()[0]
        return int(self.server.psql(self.target, "SELECT max(version) FROM schema_version"))

    def set_version(self, version: int) -> None:
        if self.server is None:
            with sqlite3.connect(self.target) as conn:
                conn.execute(f"PRAGMA user_version = {version}")
        else:
            self.server.psql(self.target, "CREATE TABLE schema_version (version BIGINT NOT NULL); "
                                          f"INSERT INTO schema_version VALUES ({version})")

    def tables(self) -> set[str]:
        if self.server is None:
            with sqlite3.connect(self.target) as conn:
                return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return set(self.server.psql(self.target, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                   .split())

    def schema(self) -> list:
        if self.server is None:
            with sqlite3.connect(self.target) as conn:
                return conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
        return self.server.psql(self.target, "SELECT table_name, column_name, data_type, column_default "
                                             "FROM information_schema.columns WHERE table_schema = 'public' "
                                             "ORDER BY 1, 2").splitlines()


@pytest.fixture
def probe(request, db_target):
    server = request.getfixturevalue("postgres_server") if is_postgres_url(db_target) else None
    return Probe(db_target, server)


# -- migrations and durability ----------------------------------------------------------------------------------


def test_migration_versions_strictly_increase():
    versions = [version for version, _ in MIGRATIONS]
    assert versions == sorted(set(versions))
    assert versions[0] == 1


def test_split_sql_script_keeps_semicolons_inside_literals_and_triggers():
    script = """
        CREATE TABLE t (a TEXT DEFAULT 'x;y');
        -- a comment; with a semicolon
        CREATE TRIGGER trg AFTER INSERT ON t BEGIN UPDATE t SET a = 'z;'; END;
        -- trailing comment
    """
    statements = split_sql_script(script)
    assert len(statements) == 2
    assert "'x;y'" in statements[0]
    assert statements[1].rstrip().endswith("END;")


async def test_migrations_from_empty(tmp_path):
    path = tmp_path / "nested" / "dir" / "cardfit.sqlite3"
    store = await Store.open(path)
    try:
        assert path.exists()  # the parent directories were created
        assert store.schema_version == LATEST_VERSION
    finally:
        await store.close()
    probe = Probe(str(path), None)
    assert probe.version() == LATEST_VERSION
    assert {"users", "subscriptions", "announcements", "alerts"} <= probe.tables()


async def test_migrations_from_empty_on_either_engine(db_target, probe):
    store = await Store.open(db_target)
    try:
        assert store.schema_version == LATEST_VERSION
    finally:
        await store.close()
    assert probe.version() == LATEST_VERSION
    assert {"users", "subscriptions", "announcements", "alerts", "announcement_parts"} <= probe.tables()


async def test_memory_database_is_migrated(store):
    assert store.schema_version == LATEST_VERSION
    assert await store.count_users() == 0


async def test_reopen_applies_nothing_new_and_a_restart_loses_nothing(db_target, probe):
    path = db_target
    first = await Store.open(path)
    await first.set_preference(7, "precision", "int4")
    await first.touch_user(7, "de")
    await first.remember_question(7, "llama 70b 32k", "m=llama-70b;c=32768")
    announcement_id = await first.begin_announcement("gpurenthub", "a" * 64, "cards: []\n", "New prices")
    await first.subscribe(7, "h100-80gb", 2.5)
    await first.enqueue_alerts(announcement_id, [(7, "H100 is cheaper")])
    await first.close()

    schema_before = probe.schema()

    second = await Store.open(path)
    try:
        assert second.schema_version == LATEST_VERSION
        prefs = await second.get_preferences(7)
        assert (prefs.precision, prefs.telegram_language) == ("int4", "de")
        assert (prefs.last_question, prefs.last_payload) == ("llama 70b 32k", "m=llama-70b;c=32768")
        assert await second.subscriptions(7) == [("h100-80gb", 2.5)]
        assert [a.id for a in await second.pending_announcements()] == [announcement_id]
        assert await second.next_alerts() == [(1, announcement_id, 7, "H100 is cheaper", False)]
    finally:
        await second.close()
    assert probe.schema() == schema_before


async def test_reopen_applies_only_the_missing_migrations(db_target, monkeypatch):
    path = db_target
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS[:2])
    old = await Store.open(path)
    assert old.schema_version == 2
    # As that version's code wrote a setting (this code's writes name columns of later migrations).
    await old._database.write_one("INSERT INTO users (user_id, coin, created_at, updated_at) VALUES (?, ?, ?, ?)",
                                  (1, "BTC", 1.0, 1.0))
    await old.subscribe(1, "a100-80gb", None)
    await old.close()

    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS)
    new = await Store.open(path)
    try:
        assert new.schema_version == LATEST_VERSION
        assert (await new.get_preferences(1)).coin == "BTC"
        assert await new.subscriptions(1) == [("a100-80gb", None)]
        assert await new.begin_announcement("c", "s", "text", "msg") is not None
    finally:
        await new.close()


async def test_a_failing_migration_leaves_the_previous_version(db_target, probe, monkeypatch):
    path = db_target
    broken = [*MIGRATIONS, (LATEST_VERSION + 1, "CREATE TABLE extra (x INTEGER); SELECT no_such_function();")]
    monkeypatch.setattr(store_module, "MIGRATIONS", broken)
    expected = asyncpg.UndefinedFunctionError if is_postgres_url(path) else sqlite3.OperationalError
    with pytest.raises(expected):
        await Store.open(path)
    assert probe.version() == LATEST_VERSION
    assert "extra" not in probe.tables()


async def test_a_database_from_newer_code_is_refused(db_target, probe):
    path = db_target
    probe.set_version(LATEST_VERSION + 1)
    with pytest.raises(RuntimeError, match="newer"):
        await Store.open(path)


async def test_file_database_runs_in_wal_mode(tmp_path):
    path = tmp_path / "cardfit.sqlite3"
    store = await Store.open(path)
    try:
        await store.set_preference(1, "region", "eu")
        assert (tmp_path / "cardfit.sqlite3-wal").exists()
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:  # WAL is persistent in the file, so a fresh connection sees it
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- preferences --------------------------------------------------------------------------------------------------


async def test_unknown_user_gets_defaults_and_no_row(store):
    assert await store.get_preferences(42) == Preferences(user_id=42)
    assert await store.count_users() == 0


@pytest.mark.parametrize("field", PREFERENCE_FIELDS)
async def test_set_overwrite_and_clear_each_preference(store, field):
    first, second = SAMPLE_VALUES[field]
    prefs = await store.set_preference(5, field, first)
    assert getattr(prefs, field) == first
    assert prefs.updated_at > 0
    assert getattr(await store.set_preference(5, field, second), field) == second
    assert getattr(await store.get_preferences(5), field) == second
    cleared = await store.set_preference(5, field, None)
    assert getattr(cleared, field) is None
    assert await store.get_preferences(5) == cleared
    assert await store.count_users() == 1


async def test_a_setting_of_an_older_update_is_not_written_over_a_newer_one(store):
    """An update handled again after a crash (its marks lost with the store) must not revert what a later update
    set and acknowledged: settings compare the update ids that asked for them."""
    assert (await store.set_preference(5, "batch", 8, order=100)).batch == 8
    assert (await store.set_preference(5, "batch", 50, order=102)).batch == 50
    assert (await store.set_preference(5, "batch", 8, order=100)).batch == 50  # the older one, handled again
    assert (await store.set_preference(5, "coin", "XMR", order=101)).coin == "XMR"  # older only than a batch
    assert (await store.set_preference(5, "batch", 50, order=102)).batch == 50  # the same update again: as it was
    assert (await store.set_preference(5, "batch", 9)).batch == 9  # without an update (the terminal chat): written
    assert (await store.set_preference(5, "batch", 7, order=101)).batch == 9  # ... and the order is kept
    assert (await store.set_preference(5, "batch", 10, order=103)).batch == 10


async def test_a_setting_is_compared_with_the_last_write_of_its_own_field_only(store):
    """batch 50 (update 10), coin XMR (update 11), then update 10 handled again: it writes batch 50 again (no
    newer batch exists) and coin stays XMR; update 9's batch, older than update 10's, is not written."""
    await store.set_preference(5, "batch", 50, order=10)
    await store.set_preference(5, "coin", "XMR", order=11)
    again = await store.set_preference(5, "batch", 50, order=10)
    assert (again.batch, again.coin) == (50, "XMR")
    assert (await store.set_preference(5, "batch", 8, order=9)).batch == 50
    # Cleared by a newer update: an older one's value does not come back either.
    await store.set_preference(5, "coin", None, order=12)
    assert (await store.set_preference(5, "coin", "BTC", order=11)).coin is None


async def test_migration_17_seeds_each_field_order_from_the_user_order(db_target, monkeypatch):
    """A row written under migration 16 (one order per user) keeps that rule for each field: an update older than
    its last setting writes nothing; a newer one writes, and then only its own field's order counts."""
    monkeypatch.setattr(store_module, "MIGRATIONS", [m for m in MIGRATIONS if m[0] <= 16])
    old = await Store.open(db_target)
    assert old.schema_version == 16
    await old._database.write_one("INSERT INTO users (user_id, batch, settings_order, created_at, updated_at) "
                                  "VALUES (?, ?, ?, ?, ?)", (1, 50, 100, 1.0, 1.0))
    await old.close()

    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS)
    new = await Store.open(db_target)
    try:
        assert new.schema_version == LATEST_VERSION
        assert (await new.get_preferences(1)).vllm is None
        assert (await new.set_preference(1, "batch", 8, order=99)).batch == 50
        assert (await new.set_preference(1, "coin", "XMR", order=99)).coin is None
        assert (await new.set_preference(1, "coin", "XMR", order=101)).coin == "XMR"
        assert (await new.set_preference(1, "batch", 8, order=100)).batch == 8
    finally:
        await new.close()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("last_question", "x"),  # a real column, but not a preference
        ("blocked", True),
        ("user_id", 3),
        ("language; DROP TABLE users", "en"),
        ("batch", True),
        ("batch", 0),
        ("context_tokens", "32k"),
        ("context_tokens", 1.5),
        ("coin", 5),
    ],
)
async def test_invalid_preference_raises_and_writes_nothing(store, field, value):
    with pytest.raises(ValueError):
        await store.set_preference(1, field, value)
    assert await store.count_users() == 0


async def test_setting_one_field_keeps_the_others(store):
    await store.set_preference(1, "precision", "int4")
    await store.set_preference(1, "coin", "BTC")
    await store.remember_question(1, "how much for qwen 32b", None)
    prefs = await store.get_preferences(1)
    assert (prefs.precision, prefs.coin, prefs.last_question) == ("int4", "BTC", "how much for qwen 32b")


async def test_touch_user_records_language_and_clears_blocked(store):
    await store.touch_user(3, "de")
    await store.mark_blocked(3)
    assert (await store.get_preferences(3)).blocked is True
    await store.touch_user(3, None)
    prefs = await store.get_preferences(3)
    assert prefs.blocked is False
    assert prefs.telegram_language == "de"  # an update without language_code keeps the last one seen
    await store.touch_user(3, "en")
    assert (await store.get_preferences(3)).telegram_language == "en"
    await store.mark_blocked(3, False)
    assert (await store.get_preferences(3)).blocked is False


async def test_concurrent_field_updates_are_all_kept(store):
    users = range(1, 26)  # 25 users x 8 fields = 200 coroutines at once

    def value_for(user_id: int, field: str) -> int | str:
        if field in ("context_tokens", "batch"):
            return user_id * 100 + PREFERENCE_FIELDS.index(field) + 1
        return f"{field}-{user_id}"

    writes = [
        store.set_preference(user_id, field, value_for(user_id, field))
        for user_id in users
        for field in PREFERENCE_FIELDS
    ]
    assert len(writes) == 25 * len(PREFERENCE_FIELDS)  # 200 with the 8 fields it was written for
    await asyncio.gather(*writes)
    assert await store.count_users() == 25
    for user_id in users:
        prefs = await store.get_preferences(user_id)
        for field in PREFERENCE_FIELDS:
            assert getattr(prefs, field) == value_for(user_id, field)


async def test_two_stores_on_one_file_never_lose_each_others_fields(db_target):
    path = db_target
    store_a = await Store.open(path)
    store_b = await Store.open(path)
    try:
        rounds = 30
        writes_a = [store_a.set_preference(1, "precision", f"p{i}") for i in range(rounds)]
        writes_b = [store_b.set_preference(1, "coin", f"c{i}") for i in range(rounds)]
        interleaved = [write for pair in zip(writes_a, writes_b, strict=True) for write in pair]
        await asyncio.gather(*interleaved, store_a.touch_user(1, "de"), store_b.remember_question(1, "q", "p"))
        for reader in (store_a, store_b):
            prefs = await reader.get_preferences(1)
            assert prefs.precision == f"p{rounds - 1}"
            assert prefs.coin == f"c{rounds - 1}"
            assert (prefs.telegram_language, prefs.last_question) == ("de", "q")
    finally:
        await store_a.close()
        await store_b.close()


# -- atomicity ----------------------------------------------------------------------------------------------------


async def test_a_bad_row_rolls_back_the_whole_alert_batch(store):
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "cards: []\n", "msg")
    rows = [(1, "first"), (2, "second"), (3, None), (4, "fourth")]  # NULL text violates NOT NULL
    with pytest.raises(INTEGRITY_ERRORS):
        await store.enqueue_alerts(announcement_id, rows)
    assert await store.next_alerts() == []
    assert (await store.alert_progress(announcement_id))["total"] == 0
    # the connection is usable again: no transaction was left open
    assert await store.enqueue_alerts(announcement_id, [(1, "first"), (2, "second")]) == 2


async def test_alerts_for_an_unknown_announcement_are_refused(store):
    with pytest.raises(INTEGRITY_ERRORS):
        await store.enqueue_alerts(999, [(1, "text")])
    assert await store.next_alerts() == []


async def test_a_cancelled_write_leaves_the_connection_usable(store):
    task = asyncio.create_task(store.set_preference(1, "coin", "BTC"))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await store.set_preference(2, "coin", "ETH")
    assert (await store.get_preferences(2)).coin == "ETH"


# -- announcements ------------------------------------------------------------------------------------------------


async def test_announcement_is_begun_at_most_once(store):
    first = await store.begin_announcement("gpurenthub", "sha-1", "v1: yaml\n", "Prices changed")
    assert isinstance(first, int)
    assert await store.begin_announcement("gpurenthub", "sha-1", "v1: yaml\n", "Prices changed") is None
    pending = await store.pending_announcements()
    assert len(pending) == 1
    assert pending[0].id == first
    assert {key: getattr(pending[0], key) for key in ("catalog_id", "sha256", "message", "status")} == {
        "catalog_id": "gpurenthub",
        "sha256": "sha-1",
        "message": "Prices changed",
        "status": "pending",
    }
    assert pending[0].created_at > 0
    assert await store.last_announced("gpurenthub") is None  # pending is not announced yet

    await store.mark_announcement_posted(first, [101, 102])
    assert await store.last_announced("gpurenthub") == "sha-1"
    assert await store.last_announced_text("gpurenthub") == "v1: yaml\n"
    assert await store.pending_announcements() == []
    assert await store.begin_announcement("gpurenthub", "sha-1", "v1: yaml\n", "again") is None
    versions = await store.announced_versions()
    assert [(catalog_id, sha) for catalog_id, sha, _ in versions] == [("gpurenthub", "sha-1")]
    await store.mark_announcement_posted(first, [999])  # a repeat keeps the first record
    assert len(await store.announced_versions()) == 1


async def test_discarded_version_counts_as_handled_but_not_announced(store):
    posted = await store.begin_announcement("gpurenthub", "sha-1", "v1\n", "m1")
    await store.mark_announcement_posted(posted, [1])
    discarded = await store.begin_announcement("gpurenthub", "sha-2", "v2\n", "m2")
    await store.discard_announcement(discarded)
    assert await store.begin_announcement("gpurenthub", "sha-2", "v2\n", "m2") is None
    assert await store.pending_announcements() == []
    assert await store.last_announced("gpurenthub") == "sha-1"
    assert await store.last_announced_text("gpurenthub") == "v1\n"
    with pytest.raises(ValueError):
        await store.mark_announcement_posted(discarded, [2])
    with pytest.raises(ValueError):
        await store.discard_announcement(posted)
    with pytest.raises(ValueError):
        await store.discard_announcement(12345)


async def test_last_announced_is_per_catalog_and_latest(store):
    for sha in ("a", "b"):
        announcement_id = await store.begin_announcement("gpurenthub", sha, f"text {sha}", "m")
        await store.mark_announcement_posted(announcement_id, [])
    other = await store.begin_announcement("gpuwithcrypto", "a", "other text", "m")
    await store.mark_announcement_posted(other, [7])
    assert await store.last_announced("gpurenthub") == "b"
    assert await store.last_announced_text("gpurenthub") == "text b"
    assert await store.last_announced("gpuwithcrypto") == "a"
    assert await store.last_announced("unknown") is None
    assert [sha for _, sha, _ in await store.announced_versions()] == ["a", "b", "a"]


# -- subscriptions -------------------------------------------------------------------------------------------------


async def test_subscribe_upserts_and_unsubscribe_counts(store):
    await store.subscribe(1, "h100-80gb", 2.0)
    await store.subscribe(1, "h100-80gb", 1.5)  # replaces, not duplicates
    await store.subscribe(1, "a100-80gb", None)
    assert await store.subscriptions(1) == [("a100-80gb", None), ("h100-80gb", 1.5)]
    assert await store.unsubscribe(1, "h100-80gb") == 1
    assert await store.unsubscribe(1, "h100-80gb") == 0
    await store.subscribe(1, "l40s", 0.8)
    assert await store.unsubscribe(1) == 2
    assert await store.subscriptions(1) == []
    with pytest.raises(ValueError):
        await store.subscribe(1, "l40s", -1)
    with pytest.raises(ValueError):
        await store.subscribe(1, "l40s", float("nan"))


async def test_subscribers_for_excludes_blocked_users(store):
    for user_id in (30, 10, 20):
        await store.subscribe(user_id, "h100-80gb", float(user_id))
    await store.subscribe(40, "a100-80gb", None)
    await store.mark_blocked(20)
    assert await store.subscribers_for("h100-80gb") == [(10, 10.0), (30, 30.0)]
    await store.touch_user(20, "en")  # writing to the bot again makes them reachable
    assert await store.subscribers_for("h100-80gb") == [(10, 10.0), (20, 20.0), (30, 30.0)]
    assert await store.subscribers_for("nobody-card") == []


# -- alert delivery -------------------------------------------------------------------------------------------------


async def test_enqueue_is_idempotent_and_progress_counts(store):
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    rows = [(user_id, f"alert for {user_id}") for user_id in (1, 2, 3, 4)]
    assert await store.enqueue_alerts(announcement_id, rows) == 4
    assert await store.enqueue_alerts(announcement_id, rows) == 0
    assert await store.enqueue_alerts(announcement_id, [*rows, (5, "late joiner")]) == 1
    assert await store.alert_progress(announcement_id) == {
        "total": 5, "sent": 0, "failed": 0, "blocked": 0, "queued": 5,
    }

    queued = await store.next_alerts(limit=2)
    assert [(alert.user_id, alert.text) for alert in queued] == [(1, "alert for 1"), (2, "alert for 2")]
    assert all(row[1] == announcement_id for row in queued)
    await store.mark_alert(queued[0][0], "sent")
    await store.mark_alert(queued[1][0], "blocked", "Forbidden: bot was blocked by the user")
    third = (await store.next_alerts(limit=1))[0]
    await store.mark_alert(third[0], "failed", "Bad Request: chat not found")
    assert await store.alert_progress(announcement_id) == {
        "total": 5, "sent": 1, "failed": 1, "blocked": 1, "queued": 2,
    }
    assert [row[2] for row in await store.next_alerts()] == [4, 5]
    assert (await store.get_preferences(2)).blocked is True  # a 'blocked' alert marks its user

    await store.mark_alert(queued[0][0], "failed", "late duplicate")  # the first outcome wins
    assert (await store.alert_progress(announcement_id))["sent"] == 1
    assert await store.alert_progress(12345) == {"total": 0, "sent": 0, "failed": 0, "blocked": 0, "queued": 0}
    with pytest.raises(ValueError):
        await store.mark_alert(queued[0][0], "queued")
    with pytest.raises(ValueError):
        await store.mark_alert(99999, "sent")


async def test_alert_progress_survives_a_restart(db_target):
    path = db_target
    store = await Store.open(path)
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    await store.enqueue_alerts(announcement_id, [(1, "a"), (2, "b"), (3, "c")])
    first = (await store.next_alerts(limit=1))[0]
    await store.mark_alert(first[0], "sent")
    await store.close()

    restarted = await Store.open(path)
    try:
        assert [row[2] for row in await restarted.next_alerts()] == [2, 3]  # resumes, never repeats user 1
        assert await restarted.enqueue_alerts(announcement_id, [(1, "a"), (2, "b"), (3, "c")]) == 0
    finally:
        await restarted.close()


# -- model-based check --------------------------------------------------------------------------------------------

_value_for_field = {
    "language": st.sampled_from(["en", "de"]),
    "precision": st.sampled_from(["fp16", "fp8", "int8", "int4"]),
    "kv_precision": st.sampled_from(["fp16", "fp8"]),
    "context_tokens": st.integers(min_value=1, max_value=2_000_000),
    "batch": st.integers(min_value=1, max_value=512),
    "coin": st.text(max_size=8),
    "billing": st.sampled_from(["hour", "day", "week", "month"]),
    "region": st.text(max_size=12),
    "engine": st.sampled_from(["vllm", "llama.cpp"]),
    "vllm": st.sampled_from(["0.11.0", "0.20.0", "0.34.0"]),
}
_operation = st.tuples(st.integers(min_value=1, max_value=3), st.sampled_from(PREFERENCE_FIELDS)).flatmap(
    lambda user_and_field: st.tuples(
        st.just(user_and_field[0]),
        st.just(user_and_field[1]),
        st.none() | _value_for_field[user_and_field[1]],
    )
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=st.lists(_operation, max_size=25))
def test_random_set_and_clear_sequences_match_a_dict_model(operations):
    async def run() -> None:
        store = await Store.open(":memory:")
        try:
            model: dict[int, dict[str, object]] = {}
            for user_id, field, value in operations:
                await store.set_preference(user_id, field, value)
                model.setdefault(user_id, dict.fromkeys(PREFERENCE_FIELDS))[field] = value
            assert await store.count_users() == len(model)
            for user_id in (1, 2, 3):
                prefs = await store.get_preferences(user_id)
                expected = model.get(user_id, dict.fromkeys(PREFERENCE_FIELDS))
                assert {field: getattr(prefs, field) for field in PREFERENCE_FIELDS} == expected
        finally:
            await store.close()

    asyncio.run(run())


# -- alert claims (several senders on one database) --------------------------------------------------------------


async def test_claims_are_disjoint_own_claims_return_and_a_dead_senders_lease_expires(db_target):
    a, b = await Store.open(db_target), await Store.open(db_target)
    try:
        announcement_id = await a.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
        await a.enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in range(1, 41)])
        first, second = await asyncio.gather(a.claim_alerts("a", 15), b.claim_alerts("b", 15, lease_s=0.3))
        ids_a, ids_b = {alert.id for alert in first}, {alert.id for alert in second}
        assert len(ids_a) == len(ids_b) == 15 and not ids_a & ids_b
        again = {alert.id for alert in await a.claim_alerts("a", 100)}  # its own, and the 10 nobody held
        assert ids_a < again and not again & ids_b and len(again) == 25
        assert await b.claim_alerts("c", 100) == []  # everything is held
        await asyncio.sleep(0.4)  # "b" died: its lease ran out
        assert {alert.id for alert in await b.claim_alerts("c", 100)} == ids_b
        assert await a.release_alerts("a") == 25
        assert {alert.id for alert in await b.claim_alerts("d", 100)} == again
        await a.mark_alert(min(again), "sent")
        assert await a.release_alerts("d") == 24  # a sent alert is no longer claimed, nor claimable
        assert min(again) not in {alert.id for alert in await a.claim_alerts("e", 100)}
    finally:
        await a.close()
        await b.close()


async def test_senders_draining_one_queue_at_once_send_each_alert_once(db_target):
    stores = [await Store.open(db_target) for _ in range(4)]
    try:
        announcement_id = await stores[0].begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
        await stores[0].enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in range(100)])
        sent: list[int] = []

        async def drain(store: Store, owner: str) -> None:
            while batch := await store.claim_alerts(owner, 3):
                for alert in batch:
                    sent.append(alert.user_id)
                    await asyncio.sleep(0)  # the send: another sender runs meanwhile
                    await store.mark_alert(alert.id, "sent")

        await asyncio.gather(*(drain(store, f"sender-{index}") for index, store in enumerate(stores)))
        assert sorted(sent) == list(range(100))
        assert (await stores[0].alert_progress(announcement_id))["sent"] == 100
    finally:
        for store in stores:
            await store.close()


# -- the SQL translation for PostgreSQL (bot/store/database.py) ---------------------------------------------------


def test_placeholders_are_numbered_outside_literals_and_comments():
    sql = "SELECT '?', \"a?\" FROM t -- why?\nWHERE a = ? AND b = '' || ? /* ? */ AND c IN (?, ?)"
    assert pg_placeholders(sql) == (
        "SELECT '?', \"a?\" FROM t -- why?\nWHERE a = $1 AND b = '' || $2 /* ? */ AND c IN ($3, $4)")
    assert pg_placeholders("UPDATE t SET a = 'it''s ?' WHERE id = ?") == "UPDATE t SET a = 'it''s ?' WHERE id = $1"


def test_ddl_types_are_mapped_once_and_literals_kept():
    ddl = pg_ddl("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, n integer NOT NULL, "
                 "x REAL DEFAULT 'REAL INTEGER', b BLOB, note TEXT CHECK (note <> 'integer'))")
    assert ddl == ("CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL, "
                   "x DOUBLE PRECISION DEFAULT 'REAL INTEGER', b BYTEA, note TEXT CHECK (note <> 'integer'))")


def test_a_postgres_url_is_logged_without_its_password():
    assert redacted("postgresql://cardfit:s3cret@db:5432/cardfit") == "postgresql://cardfit:***@db:5432/cardfit"
    assert redacted("postgresql://db/cardfit") == "postgresql://db/cardfit"
    assert redacted("var/cardfit.sqlite3") == "var/cardfit.sqlite3"


async def test_statements_report_rows_counts_and_last_ids_alike(store):
    """The cursor-shaped Result of Connection.execute, the same on both engines: what repository code reads."""
    async with store._database.transaction() as db:
        await db.execute(db.ddl("CREATE TABLE scratch (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)"))
        first = await db.execute("INSERT INTO scratch (name, n) VALUES (?, ?)", ("a", 1))
        second = await db.execute("INSERT INTO scratch (name, n) VALUES (?, ?)", ("b", 2))
        assert (first.rowcount, second.rowcount) == (1, 1) and second.lastrowid == first.lastrowid + 1
        skipped = await db.execute("INSERT INTO scratch (name, n) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                                   ("a", 3))
        assert skipped.rowcount == 0
        changed = await db.execute(
            "WITH picked AS (SELECT id FROM scratch WHERE n >= ?) UPDATE scratch SET n = n + 10 "
            "WHERE id IN (SELECT id FROM picked)", (1,))
        assert changed.rowcount == 2
        rows = await (await db.execute("SELECT name, n FROM scratch WHERE n > ? ORDER BY name", (0,))).fetchall()
        assert [(row["name"], row[1]) for row in rows] == [("a", 11), ("b", 12)]
        gone = await db.execute("DELETE FROM scratch WHERE name = ? RETURNING id", ("b",))
        assert gone.rowcount == 1 and gone.rows[0]["id"] == second.lastrowid
        await db.execute("DROP TABLE scratch")
