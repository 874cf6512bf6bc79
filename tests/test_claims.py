"""Claims and delivery intents combined (docs/operations.md, replicas): who counts as a live holder
(bot/store/owners.py), what a dead holder's claims become, and that a live replica's lease keeps every other
replica off its alerts on both engines. The SIGKILL of a real replica is in tests/test_replicas_crash.py."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from bot.config import load_settings
from bot.operators.alerts import AlertDelivery
from bot.store import MIGRATIONS, Store
from bot.store import owners as owners_module
from bot.store.alerts import INTERRUPTED
from bot.store.owners import new_owner, owner_alive, process_boot, this_boot, this_place
from tests.support.botharness import TOKEN

ADMIN = 42


def owner_of(place: str, pid: int, boot: str, nonce: str = "0badc0de") -> str:
    return f"{place}:{pid}:{boot}:{nonce}"


@pytest.fixture
def sleeper():
    """A live process of this host that is not this one."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process of this host that has exited (and was reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


# -- who is alive -------------------------------------------------------------------------------------------------


def test_this_process_and_its_other_senders_are_alive():
    mine, other = new_owner(), new_owner()
    assert mine != other  # one per sender: several Applications in one process hold apart claims
    assert owner_alive(mine) and owner_alive(other)
    assert owner_of(this_place(), os.getpid(), this_boot()) == mine.rsplit(":", 1)[0] + ":0badc0de"


def test_a_live_process_of_this_host_is_alive_and_a_dead_one_is_not(sleeper, dead_pid):
    boot = process_boot(sleeper.pid)
    assert boot is not None and boot != this_boot()
    assert owner_alive(owner_of(this_place(), sleeper.pid, boot))
    assert not owner_alive(owner_of(this_place(), dead_pid, "anything"))


def test_a_killed_process_not_yet_reaped_is_dead(sleeper):
    boot = process_boot(sleeper.pid)
    assert boot is not None
    sleeper.kill()
    deadline = time.monotonic() + 10
    while process_boot(sleeper.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # the kill takes effect; nobody reaps it: a zombie
    assert not owner_alive(owner_of(this_place(), sleeper.pid, boot))


def test_a_reused_pid_does_not_keep_a_dead_holder_alive(sleeper):
    # The holder had this pid once; the process that has it now started later.
    assert not owner_alive(owner_of(this_place(), sleeper.pid, "earlier.1"))


def test_a_restarted_container_does_not_take_its_predecessors_claims_for_its_own():
    # Same host name, same pid (pid 1 in a container), an earlier start: the claims of the process killed before.
    assert not owner_alive(owner_of(this_place(), os.getpid(), "earlier.1"))


def test_another_hosts_replica_and_unreadable_ids_are_trusted_until_their_lease_runs_out(dead_pid):
    assert owner_alive(owner_of("other-host", dead_pid, "b.1"))
    assert owner_alive(f"{this_place()}:{dead_pid}:0badc0de")  # the id before boot tokens
    assert owner_alive("a")  # a sender name from the store tests


def test_without_proc_a_live_pid_counts_as_alive_and_a_dead_one_not(monkeypatch, sleeper, dead_pid, tmp_path):
    place, boot = this_place(), this_boot()  # cached from the real /proc
    monkeypatch.setattr(owners_module, "PROC", tmp_path / "no-proc")
    assert process_boot(sleeper.pid) is None
    assert owner_alive(owner_of(place, sleeper.pid, "r0123456789ab"))
    assert not owner_alive(owner_of(place, dead_pid, "r0123456789ab"))
    assert owner_alive(owner_of(place, os.getpid(), boot))
    assert not owner_alive(owner_of(place, os.getpid(), "r0123456789ab"))


# -- dead holders' claims on both engines ------------------------------------------------------------------------


async def queue(store: Store, users: range) -> int:
    announcement_id = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
    assert announcement_id is not None
    await store.enqueue_alerts(announcement_id, [(user_id, f"alert {user_id}") for user_id in users])
    return announcement_id


async def test_release_dead_claims_frees_only_a_dead_holders_queued_alerts(db_target, sleeper, dead_pid):
    live = owner_of(this_place(), sleeper.pid, process_boot(sleeper.pid) or "")
    dead = owner_of(this_place(), dead_pid, "earlier.1")
    remote = owner_of("other-host", dead_pid, "b.1")
    store = await Store.open(db_target)
    try:
        await queue(store, range(1, 16))
        held = {owner: {alert.id for alert in await store.claim_alerts(owner, 5)} for owner in (live, dead, remote)}
        in_flight = min(held[dead])
        assert await store.claim_alert(in_flight, dead)  # the dead holder's send in flight: 'sending'
        assert await store.release_dead_claims(owner_alive) == 4
        mine = new_owner()
        assert {alert.id for alert in await store.claim_alerts(mine, 100)} == held[dead] - {in_flight}
        assert not await store.claim_alert(min(held[live]), mine)  # a live holder's and
        assert not await store.claim_alert(min(held[remote]), mine)  # another host's stay theirs
        assert await store.release_dead_claims(owner_alive) == 0  # my claims are a live holder's
    finally:
        await store.close()


async def test_release_dead_posting_claims_frees_a_dead_posters_announcement_only(db_target, sleeper, dead_pid):
    live = owner_of(this_place(), sleeper.pid, process_boot(sleeper.pid) or "")
    store = await Store.open(db_target)
    try:
        by_dead = await store.begin_announcement("gpurenthub", "sha-1", "yaml", "msg")
        by_live = await store.begin_announcement("gpurenthub", "sha-2", "yaml", "msg")
        assert by_dead is not None and by_live is not None
        assert await store.claim_announcement(by_dead, owner_of(this_place(), os.getpid(), "earlier.1"))
        assert await store.claim_announcement(by_live, live)
        mine = new_owner()
        assert not await store.claim_announcement(by_dead, mine)  # held until released or the lease runs out
        await store.release_dead_posting_claims(owner_alive)
        assert await store.claim_announcement(by_dead, mine)
        assert not await store.claim_announcement(by_live, mine)
    finally:
        await store.close()


async def test_a_sending_alert_under_a_live_lease_is_left_and_an_expired_one_is_repeated_once(db_target):
    a, b = await Store.open(db_target), await Store.open(db_target)  # two replicas, on two hosts
    replica_a, replica_b = owner_of("host-a", 7, "a.1"), owner_of("host-b", 7, "b.1")
    try:
        announcement_id = await queue(a, range(1, 4))
        [first, second, third] = await a.claim_alerts(replica_a, 3)
        assert await a.claim_alert(first.id, replica_a)  # a's send in flight, under a live lease
        assert await a.claim_alert(second.id, replica_a, lease_s=-1.0)  # a died mid-send; its lease ran out
        assert await b.settle_interrupted_alerts(owner_alive) == {announcement_id: 1}
        # The cut-off second is b's to send once more, labeled; the third is still a's (a live lease).
        assert [(alert.id, alert.resent) for alert in await b.claim_alerts(replica_b, 100)] == [(second.id, True)]
        assert await b.claim_alert(second.id, replica_b, lease_s=-1.0)  # b died while the repeat went out
        assert await a.settle_interrupted_alerts(owner_alive) == {announcement_id: 1}  # now unknown, for good
        assert not await b.claim_alert(first.id, replica_b) and not await b.claim_alert(second.id, replica_b)
        await a.mark_alert(first.id, "sent")  # a's outcome lands: the first outcome wins
        await b.mark_alert(second.id, "sent")  # a late outcome does not revive the counted one
        rows = {int(row["id"]): (row["status"], row["error"])
                for row in await a._database.fetch("SELECT id, status, error FROM alerts")}
        assert rows == {first.id: ("sent", None), second.id: ("unknown", INTERRUPTED),
                        third.id: ("queued", None)}
        assert await a.alert_unknown(announcement_id) == 1
        assert await a.claim_alert(third.id, replica_a, lease_s=-1.0)  # taken up, then a died again
        await b.settle_interrupted_alerts(owner_alive)  # its first cut: queued once more
        assert await a.alert_progress(announcement_id) == {"total": 3, "sent": 1, "failed": 0, "blocked": 0,
                                                           "queued": 1}
        assert await a.alert_unknown(announcement_id) == 1
    finally:
        await a.close()
        await b.close()


async def test_queued_alerts_under_a_live_lease_wait_and_are_taken_once_it_ran_out(db_target):
    a, b = await Store.open(db_target), await Store.open(db_target)
    replica_a, replica_b = owner_of("host-a", 7, "a.1"), owner_of("host-b", 7, "b.1")
    replica_c = owner_of("host-c", 7, "c.1")  # died holding its batch; its lease ran out
    try:
        await queue(a, range(1, 7))
        live = {alert.id for alert in await a.claim_alerts(replica_a, 3)}
        expired = {alert.id for alert in await a.claim_alerts(replica_c, 3, lease_s=-1.0)}
        assert len(live) == len(expired) == 3 and not live & expired
        assert {alert.id for alert in await b.claim_alerts(replica_b, 100)} == expired
        assert not await a.claim_alert(min(expired), replica_c)  # c came back too late: b holds them now
        assert not await b.claim_alert(min(live), replica_b)
        assert await b.claim_alert(min(expired), replica_b)
    finally:
        await a.close()
        await b.close()


async def test_replicas_starting_at_once_on_an_empty_database_migrate_it_once(postgres_server):
    """deploy/compose.yaml starts both replicas together on a fresh database: before the migration lock was
    taken outside the migration's transaction, all but one failed with 'relation "users" already exists'."""
    url = postgres_server.create_database()
    stores = await asyncio.gather(*(Store.open(url) for _ in range(4)), return_exceptions=True)
    try:
        assert [store.schema_version if isinstance(store, Store) else store for store in stores] == [
            MIGRATIONS[-1][0]] * 4
    finally:
        for store in stores:
            if isinstance(store, Store):
                await store.close()


# -- a restarted container resumes at once ------------------------------------------------------------------------


class Sender:
    def __init__(self) -> None:
        self.sent: list[tuple[int | str, str]] = []
        self.edits: list[tuple[int | str | None, int | None, str]] = []

    async def send_message(self, chat_id, text, *, reply_markup=None):
        self.sent.append((chat_id, text))
        return SimpleNamespace(message_id=len(self.sent))

    async def edit_message_text(self, text, chat_id=None, message_id=None):
        self.edits.append((chat_id, message_id, text))


async def test_a_restarted_container_sends_its_predecessors_claims_at_once_and_repeats_the_cut_off_one(db_target):
    """pid 1 again, the same host name: before boot tokens its predecessor's claims looked like its own and
    waited for the lease (ALERT_LEASE_S); now they are released at its start."""
    settings = load_settings(bot_token=TOKEN, db=db_target, admin_ids=f"{ADMIN}", send_rate_per_s=10_000)
    predecessor = owner_of(this_place(), os.getpid(), "earlier.1")
    store = await Store.open(db_target)
    try:
        announcement_id = await queue(store, range(101, 111))
        batch = await store.claim_alerts(predecessor, 100)
        assert await store.claim_alert(batch[0].id, predecessor)  # killed between the send and its record
        sender = Sender()
        delivery = AlertDelivery(settings, store, sender)
        await delivery.resume()
        assert delivery._delivery is not None
        await asyncio.wait_for(delivery._delivery, 10)
        alerts = [chat for chat, text in sender.sent if chat != ADMIN]
        assert sorted(alerts) == list(range(101, 111))  # the cut-off one (101) is sent once more, labeled
        [repeat] = [text for chat, text in sender.sent if chat == 101]
        assert repeat.startswith("🔁 <i>Sent again after a restart")
        assert all("Sent again" not in text for chat, text in sender.sent if chat != 101)
        assert await store.alert_progress(announcement_id) == {"total": 10, "sent": 10, "failed": 0, "blocked": 0,
                                                               "queued": 0}
        assert await store.alert_unknown(announcement_id) == 0
        [progress] = [text for chat, text in sender.sent if chat == ADMIN]
        assert "10 / 10" in (sender.edits[-1][2] if sender.edits else progress)
    finally:
        await store.close()
