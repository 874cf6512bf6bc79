"""A real, throwaway PostgreSQL server for the suite: initdb + pg_ctl in a temporary directory on a free port.

PostgreSQL refuses to run as root, and the suite runs as root in CI: the server then runs as the `postgres` user
(Debian's `postgresql` package creates it; scripts/ensure-postgres.sh installs the package). As any other user it
runs as that user. Without the binaries (a developer laptop) the PostgreSQL tests skip with the reason, except
under CI=true, where a skip would hide that the second engine was never tested: there they fail.
"""
from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SERVER_USER = "postgres"
SCRATCH = "/dev/shm"
SCRATCH_ROOM = 2 << 30  # bytes free there before the server's files go there (a suite uses well under 1 GiB)


def _binaries() -> Path | None:
    """The directory holding initdb and pg_ctl: on PATH, else Debian's versioned directory (newest first)."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda path: int(Path(path).parent.parent.name), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _scratch_parent() -> str | None:
    """Where the server's directory goes: a memory file system (/dev/shm) when it has room, else the default
    temporary directory. Each test's database is a copy of template0 (~7.5 MB, ~300 files); removing 75 of them
    from a disk mounted with `discard` (as on this project's machines) took 60 s at the end of every session,
    and a memory file system also makes CREATE DATABASE cheaper. Durability is already off (see start)."""
    try:
        room = os.statvfs(SCRATCH)
    except OSError:
        return None
    if room.f_bavail * room.f_frsize < SCRATCH_ROOM or not os.access(SCRATCH, os.W_OK | os.X_OK):
        return None
    return SCRATCH


def unavailable_reason() -> str | None:
    """Why no server can be started here, or None when one can."""
    if _binaries() is None:
        return ("PostgreSQL binaries (initdb, pg_ctl) not found: run scripts/ensure-postgres.sh "
                "(apt-get install postgresql)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
    return None


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int = field(default_factory=_free_port)
    user: str = SERVER_USER
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *command: str) -> subprocess.CompletedProcess[str]:
        if os.geteuid() == 0:
            command = ("runuser", "-u", self.user, "--", *command)
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        if os.geteuid() == 0:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        else:
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
                  "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        # A test server: durability off (fsync, synchronous_commit) makes the per-test databases cheap.
        for attempt in range(3):
            options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
                          "-o", options, "-w", "-t", "60", "start")
                return
            except subprocess.CalledProcessError:
                # The free port was probed, then released: another process (a second pytest-xdist worker
                # starting its own server) may have taken it meanwhile. Another port, twice.
                log = self.root / "server.log"
                if attempt == 2 or "could not bind" not in (log.read_text(errors="replace") if log.exists() else ""):
                    raise
                self.port = _free_port()

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"cardfit_test_{next(self._names)}"
        self._run(str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                  "-d", "postgres", "-q", "-c", f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def psql(self, url: str, sql: str) -> str:
        """Run SQL with psql (outside the code under test); the unaligned, tuples-only output."""
        return self._run(str(self.bindir / "psql"), url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                         "-c", sql).stdout.strip()


def start_or_skip() -> PostgresServer:
    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and the PostgreSQL tests would skip: {reason}", pytrace=False)
        pytest.skip(reason)
    bindir = _binaries()
    assert bindir is not None
    server = PostgresServer(bindir=bindir, root=Path(tempfile.mkdtemp(prefix="cardfit-pg-", dir=_scratch_parent())))
    try:
        server.start()
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(server.root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {exc.stderr or exc.stdout}", pytrace=False)
    return server
