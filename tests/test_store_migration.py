"""Schema 6: the announcement key's two hashes in their own columns. A database at schema 5, with keys packed as
"<sha256>@<base sha256>", migrates without losing a row, an alert or a part, and announcing still finds the keys
it wrote before: the UNIQUE constraint still decides who posts."""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
import yaml

import bot.store.schema as schema
from bot.config import load_settings
from bot.features.core import CatalogHolder
from bot.operators.announce import Announcer
from bot.store import INTEGRITY_ERRORS, MIGRATIONS, Store
from catalog.loader import load_catalog

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
CHANNEL = "@cardfit_news"
A, B, C, D = ("a" * 64, "b" * 64, "c" * 64, "d" * 64)
MIGRATIONS_TO_6 = [migration for migration in MIGRATIONS if migration[0] <= 6]


class RecordingSender:
    def __init__(self) -> None:
        self.sent: list[tuple[int | str, str]] = []

    async def send_message(self, chat_id, text, **kwargs):
        self.sent.append((chat_id, text))

        class Message:
            message_id = len(self.sent)

        return Message()

    async def edit_message_text(self, *args, **kwargs):
        return True


async def schema_5_database(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS[:5])
    old = await Store.open(path)
    assert old.schema_version == 5
    await old.close()
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)


def insert_v5(conn: sqlite3.Connection, catalog_id: str, packed_key: str, text: str, message: str,
              status: str) -> int:
    """An announcement row exactly as the code of schema 5 wrote it."""
    now = time.time()
    cursor = conn.execute(
        "INSERT INTO announcements (catalog_id, sha256, catalog_text, message, status, message_ids, created_at, "
        "posted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (catalog_id, packed_key, text, message, status, "[]" if status == "posted" else None, now,
         now if status == "posted" else None))
    return int(cursor.lastrowid)


async def test_packed_keys_are_split_and_nothing_is_lost(tmp_path, monkeypatch):
    path = tmp_path / "cardfit.sqlite3"
    await schema_5_database(path, monkeypatch)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        baseline = insert_v5(conn, "gpurenthub", A, "v-a", "(baseline)", "posted")
        posted = insert_v5(conn, "gpurenthub", f"{B}@{A}", "v-b", "B", "posted")
        pending = insert_v5(conn, "gpurenthub", f"{C}@{B}", "v-c", "C", "pending")
        discarded = insert_v5(conn, "gpurenthub", f"{D}@{B}", "v-d", "D", "discarded")
        other = insert_v5(conn, "gpuwithcrypto", C, "w-c", "(baseline)", "posted")
        conn.execute("INSERT INTO users (user_id, created_at, updated_at) VALUES (7, 1, 1)")
        conn.execute("INSERT INTO alerts (announcement_id, user_id, text, status, created_at) "
                     "VALUES (?, 7, 'B is cheaper', 'queued', 1)", (posted,))
        conn.execute("INSERT INTO announcement_parts (announcement_id, part, message_id, sent_at) "
                     "VALUES (?, 0, 501, 1)", (posted,))

    store = await Store.open(path)
    try:
        assert store.schema_version == MIGRATIONS[-1][0]  # was 6: every later migration keeps the data too
        with sqlite3.connect(path) as conn:
            rows = conn.execute("SELECT id, catalog_id, sha256, base_sha256, status FROM announcements ORDER BY id")
            assert rows.fetchall() == [
                (baseline, "gpurenthub", A, "", "posted"), (posted, "gpurenthub", B, A, "posted"),
                (pending, "gpurenthub", C, B, "pending"), (discarded, "gpurenthub", D, B, "discarded"),
                (other, "gpuwithcrypto", C, "", "posted")]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            references = {row[2] for table in ("alerts", "announcement_parts")
                          for row in conn.execute(f"PRAGMA foreign_key_list({table})")}
            assert references == {"announcements"}
        assert await store.last_announced("gpurenthub") == B
        assert await store.last_announced_text("gpurenthub") == "v-b"
        [record] = await store.pending_announcements()
        assert (record.id, record.sha256, record.base_sha256, record.catalog_text) == (pending, C, B, "v-c")
        assert [(a.announcement_id, a.user_id, a.text) for a in await store.next_alerts()] == [
            (posted, 7, "B is cheaper")]
        assert await store.announcement_parts(posted) == {0: 501}
        # The keys written before still decide: begun (pending, posted, discarded) is begun.
        for sha, base in ((C, B), (D, B), (B, A), (A, "")):
            assert await store.begin_announcement("gpurenthub", sha, "x", "x", base_sha256=base) is None
        # Going back to an earlier file after B was posted is a new key, as it was before.
        assert await store.begin_announcement("gpurenthub", A, "v-a", "A again", base_sha256=B) is not None
        # Foreign keys are on again after the migration, and still cascade.
        with pytest.raises(sqlite3.IntegrityError):
            await store.enqueue_alerts(12345, [(7, "nowhere")])
    finally:
        await store.close()


async def test_a_migrated_pending_preview_is_found_by_the_next_reload(tmp_path, monkeypatch):
    catalog_file = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED, catalog_file)
    baseline_text = catalog_file.read_text(encoding="utf-8")
    baseline_sha = hashlib.sha256(catalog_file.read_bytes()).hexdigest()
    data = yaml.safe_load(baseline_text)
    next(card for card in data["cards"] if card["id"] == "a40")["price_monthly_usd"] = 250
    catalog_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    edited_text = catalog_file.read_text(encoding="utf-8")
    edited_sha = hashlib.sha256(catalog_file.read_bytes()).hexdigest()
    catalog_id = load_catalog(str(catalog_file)).catalog.id

    path = tmp_path / "cardfit.sqlite3"
    await schema_5_database(path, monkeypatch)
    with sqlite3.connect(path) as conn:  # schema 5's code saw the baseline, then previewed the edited file
        insert_v5(conn, catalog_id, baseline_sha, baseline_text, "(baseline)", "posted")
        preview = insert_v5(conn, catalog_id, f"{edited_sha}@{baseline_sha}", edited_text, "A40 now $250", "pending")

    settings = load_settings(db=str(path), announce_chat=CHANNEL, admin_ids="42", catalog=str(catalog_file))
    store = await Store.open(path)
    try:
        sender = RecordingSender()
        announcer = Announcer(settings, CatalogHolder(load_catalog(str(catalog_file))), store, sender)
        await announcer.ensure_baseline()
        outcome = await announcer.check(force=True)  # the same file again: the key exists, nothing new
        assert outcome.status == "already" and sender.sent == []
        assert (await announcer.post(preview)).startswith("✅ Posted to @cardfit_news")
        assert [chat for chat, _ in sender.sent] == [CHANNEL]
        catalog_file.write_text(baseline_text, encoding="utf-8")  # back to the baseline price: a new key
        outcome = await announcer.check()
        assert outcome.status == "previewed"
        new = await store.get_announcement(outcome.announcement_id)
        assert new is not None and (new.sha256, new.base_sha256) == (baseline_sha, edited_sha)
        assert (await announcer.check(force=True)).status == "already"
    finally:
        await announcer.stop()
        await store.close()


async def test_postgres_migration_6_splits_packed_keys_in_place(postgres_server, monkeypatch):
    """PostgreSQL runs 6 as ALTER TABLE (schema.POSTGRES_MIGRATIONS): the rows keep their ids, the alerts and parts
    keep their foreign keys, and the new UNIQUE key decides."""
    url = postgres_server.create_database()
    await schema_5_database(url, monkeypatch)

    def insert(catalog_id: str, packed_key: str, text: str, status: str) -> int:
        ids, posted_at = ("'[]'", "1") if status == "posted" else ("NULL", "NULL")
        return int(postgres_server.psql(url, (
            "INSERT INTO announcements (catalog_id, sha256, catalog_text, message, status, message_ids, created_at, "
            f"posted_at) VALUES ('{catalog_id}', '{packed_key}', '{text}', 'm', '{status}', {ids}, 1, {posted_at}) "
            "RETURNING id")).split()[0])

    baseline = insert("gpurenthub", A, "v-a", "posted")
    posted = insert("gpurenthub", f"{B}@{A}", "v-b", "posted")
    pending = insert("gpurenthub", f"{C}@{B}", "v-c", "pending")
    postgres_server.psql(url, "INSERT INTO users (user_id, created_at, updated_at) VALUES (7, 1, 1); "
                              "INSERT INTO alerts (announcement_id, user_id, text, status, created_at) "
                              f"VALUES ({posted}, 7, 'B is cheaper', 'queued', 1); "
                              "INSERT INTO announcement_parts (announcement_id, part, message_id, sent_at) "
                              f"VALUES ({posted}, 0, 501, 1)")

    store = await Store.open(url)
    try:
        assert store.schema_version == MIGRATIONS[-1][0]
        rows = postgres_server.psql(url, "SELECT id, sha256, base_sha256 FROM announcements ORDER BY id")
        assert rows.splitlines() == [f"{baseline}|{A}|", f"{posted}|{B}|{A}", f"{pending}|{C}|{B}"]
        assert await store.last_announced("gpurenthub") == B
        [record] = await store.pending_announcements()
        assert (record.id, record.sha256, record.base_sha256) == (pending, C, B)
        assert [(a.announcement_id, a.user_id) for a in await store.next_alerts()] == [(posted, 7)]
        assert await store.announcement_parts(posted) == {0: 501}
        for sha, base in ((C, B), (B, A), (A, "")):
            assert await store.begin_announcement("gpurenthub", sha, "x", "x", base_sha256=base) is None
        new = await store.begin_announcement("gpurenthub", A, "v-a", "A again", base_sha256=B)
        assert new is not None and new > pending  # the identity continues after the migrated ids
        with pytest.raises(INTEGRITY_ERRORS):  # the foreign keys survived the migration
            await store.enqueue_alerts(12345, [(7, "nowhere")])
    finally:
        await store.close()
