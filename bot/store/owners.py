"""Who holds a claim (an alert batch, an announcement's post): a sender's owner id and whether its holder may still
be running.

An owner id is "<host>:<pid>:<boot>:<nonce>". Boot is the process's start (the kernel's boot id and the process
start time from /proc), so a process that got the pid of a dead one (a restarted container is pid 1 again, with
the same host name) never takes the dead one's claims for its own; nonce tells apart the senders of one process
(several Applications, as in the tests). Where /proc is missing, boot is random. The host name is the place:
replicas need host names of their own (Docker and Kubernetes give every container one; a restarted container
keeps its own). Two replicas sharing one (host networking) see each other's processes as dead.

A wrong "dead" verdict costs no duplicate: a sender moves an alert queued -> sending in one conditional UPDATE
and sends only when that changed the row, so freeing a live sender's claims can only make its in-flight alert
count as unknown. A wrong "alive" verdict costs time: the claims wait for their lease.
"""
from __future__ import annotations

import os
import socket
import uuid
from functools import cache
from pathlib import Path

PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def process_boot(pid: int) -> str | None:
    """The start of process `pid` on this machine ("<boot id>.<start ticks>"), or None without /proc or without
    such a live process. Field 22 of /proc/<pid>/stat (proc(5)) is the start time in clock ticks since boot; the text
    before it is cut at the last ')' since the command name may hold spaces and parentheses."""
    stat = _read(PROC / str(pid) / "stat")
    boot_id = _read(PROC / "sys" / "kernel" / "random" / "boot_id")
    if stat is None or boot_id is None:
        return None
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20 or not fields[19].isdigit() or fields[0] in ("Z", "X"):
        return None  # a zombie (killed, not yet reaped by its parent) holds nothing any more
    return f"{boot_id.replace('-', '')[:12]}.{fields[19]}"


@cache  # one place per process: every owner id it makes names the same host
def this_place() -> str:
    return socket.gethostname()


@cache  # one value per process: without /proc the random stand-in must not change between its owner ids
def this_boot() -> str:
    return process_boot(os.getpid()) or f"r{uuid.uuid4().hex[:12]}"


def new_owner() -> str:
    """A fresh owner id for one sender of this process."""
    return f"{this_place()}:{os.getpid()}:{this_boot()}:{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str) -> bool:
    """Whether the sender holding a claim may still be running. Another place's sender (or an id this version
    cannot read) is trusted until its lease runs out; a sender of this place whose process is gone, or whose pid
    now belongs to a later process (this one included), is dead at once."""
    parts = owner.split(":")
    if len(parts) != 4:
        return True
    place, pid_text, boot, _nonce = parts
    if place != this_place() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        # Same pid: this process (another sender of it) or an earlier process that had this pid.
        return boot == this_boot()
    current = process_boot(pid)
    if current is not None:
        return current == boot  # a different start: the pid was reused by another process
    if process_boot(os.getpid()) is not None:
        return False  # /proc works here and has no such process
    try:  # no /proc: only whether some process has this pid
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
