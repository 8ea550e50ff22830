"""A throwaway PostgreSQL cluster for tests and demos: initdb into a temporary folder, start a
server that listens on a unix socket only (no TCP), hand out DSNs, stop and delete it all.

The server binaries are found in ``$RANKSCOPE_PG_BINDIR``, next to ``pg_config`` or ``initdb`` on
``PATH``, or in Debian's ``/usr/lib/postgresql/<version>/bin`` (newest version first). PostgreSQL
refuses to run as root, so when the current user is root the server runs as the ``postgres``
system user (or ``nobody``) through ``runuser``/``setpriv``; the cluster folder is handed to that
user. Durability is switched off (``fsync``, ``synchronous_commit``, ``full_page_writes``): the
data dies with the cluster anyway.

Usage::

    with PgCluster.start() as cluster:
        dsn = cluster.create_database("demo")
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from rankscope.config import environment
from rankscope.errors import RankscopeError
from rankscope.util.proc import exists

#: what to do when no PostgreSQL server binaries are found (PgClusterError says it)
INSTALL_HINT = (
    "install the PostgreSQL server (as root: scripts/install-system-deps, or "
    "'apt-get install postgresql'), set RANKSCOPE_PG_BINDIR to its bin folder, or point "
    "RANKSCOPE_TEST_PG_DSN at an existing server"
)
#: the cluster's superuser, the user of every DSN the cluster hands out
SUPERUSER = "postgres"
_DEBIAN_ROOT = Path("/usr/lib/postgresql")
_PREFIX = "rankscope-pg-"
#: file in a cluster folder holding the id of the process that owns the cluster
_OWNER_FILE = "owner.pid"


class PgClusterError(RankscopeError):
    """The throwaway cluster cannot be created, started or used."""


def find_bindir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None when there is none."""
    candidates: list[Path] = []
    given = environment().pg_bindir
    if given is not None:
        candidates.append(given)
    for tool in ("pg_config", "initdb", "pg_ctl"):
        found = shutil.which(tool)
        if found:
            # Debian puts symlinks (or the pg_config wrapper) on PATH; resolve to the real folder
            candidates.append(Path(found).resolve().parent)
    if _DEBIAN_ROOT.is_dir():
        versions = [p for p in _DEBIAN_ROOT.iterdir() if p.name.isdigit()]
        for version in sorted(versions, key=lambda p: int(p.name), reverse=True):
            candidates.append(version / "bin")
    for cand in candidates:
        if all((cand / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return cand
    return None


def _free_port() -> int:
    # the server listens on a unix socket only; the port just names the socket file, but a
    # port nobody uses on loopback keeps clients that default to TCP from hitting another server
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as_prefix() -> tuple[list[str], pwd.struct_passwd | None]:
    """The command prefix that drops root privileges, and the user it drops to."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", name, "--"], user
        if shutil.which("setpriv"):
            return [
                "setpriv",
                f"--reuid={user.pw_uid}",
                f"--regid={user.pw_gid}",
                "--clear-groups",
                "--",
            ], user
        break
    raise PgClusterError(
        "running as root and cannot drop privileges for the PostgreSQL server: need a "
        "'postgres' or 'nobody' user and the runuser or setpriv tool; run as a normal user "
        "instead, or set RANKSCOPE_TEST_PG_DSN to an existing server"
    )


class PgCluster:
    """A running throwaway cluster. Create it with :meth:`start`; :meth:`stop` deletes it."""

    def __init__(self, bindir: Path, root: Path, port: int, prefix: Sequence[str]) -> None:
        self.bindir = bindir
        self.root = root
        self.port = port
        self._prefix = list(prefix)
        self._running = False

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root

    @property
    def logfile(self) -> Path:
        return self.root / "server.log"

    @property
    def version(self) -> str:
        return (self.datadir / "PG_VERSION").read_text().strip()

    @classmethod
    def start(
        cls,
        *,
        bindir: Path | None = None,
        timeout: float = 60.0,
        settings: dict[str, str] | None = None,
    ) -> PgCluster:
        """initdb a fresh cluster in a temporary folder and start it; raises PgClusterError."""
        bindir = bindir or find_bindir()
        if bindir is None:
            raise PgClusterError(
                f"no PostgreSQL server binaries (initdb, pg_ctl) found; {INSTALL_HINT}"
            )
        prefix, user = _run_as_prefix()
        reap_stale_clusters(bindir, prefix)
        root = Path(tempfile.mkdtemp(prefix=_PREFIX))
        (root / _OWNER_FILE).write_text(str(os.getpid()))
        if user is not None:
            os.chown(root, user.pw_uid, user.pw_gid)
        cluster = cls(bindir, root, _free_port(), prefix)
        try:
            cluster._initdb()
            cluster._configure(settings or {})
            cluster._start(timeout)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _tool(self, name: str, *args: str, timeout: float = 120.0) -> str:
        cmd = [*self._prefix, str(self.bindir / name), *args]
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, cwd=self.root, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PgClusterError(f"{name} failed to run ({' '.join(cmd)}): {exc}") from exc
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-2000:]
            log = ""
            if self.logfile.exists():
                log = "\nserver log:\n" + self.logfile.read_text(errors="replace")[-2000:]
            raise PgClusterError(
                f"{name} exited with {done.returncode} ({' '.join(cmd)}): {tail}{log}"
            )
        return done.stdout

    def _initdb(self) -> None:
        self._tool(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )

    def _configure(self, settings: dict[str, str]) -> None:
        conf = {
            "listen_addresses": "''",
            "port": str(self.port),
            "unix_socket_directories": _quote_conf(str(self.socket_dir)),
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "shared_buffers": "64MB",
            "max_connections": "40",
            "log_min_messages": "warning",
            **settings,
        }
        lines = "".join(f"{k} = {v}\n" for k, v in conf.items())
        # appending keeps the file's owner (the server user) even when we are root
        path = self.datadir / "postgresql.conf"
        with path.open("a") as fh:
            fh.write("\n# rankscope throwaway cluster\n" + lines)

    def _start(self, timeout: float) -> None:
        self._tool(
            "pg_ctl",
            "-D",
            str(self.datadir),
            "-l",
            str(self.logfile),
            "-w",
            "-t",
            str(int(timeout)),
            "start",
            timeout=timeout + 10,
        )
        self._running = True
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        isready = self.bindir / "pg_isready"
        if not isready.is_file():
            return
        deadline = time.monotonic() + timeout
        while True:
            done = subprocess.run(
                [str(isready), "-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER],
                capture_output=True,
                check=False,
            )
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise PgClusterError(f"PostgreSQL did not become ready within {timeout:.0f}s")
            time.sleep(0.1)

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq key/value DSN for a database of this cluster."""
        return (
            f"host={self.socket_dir} port={self.port} user={SUPERUSER} dbname={dbname} "
            "connect_timeout=10"
        )

    def create_database(self, name: str) -> str:
        """Create a database (name: letters, digits, underscore) and return its DSN."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", name):
            raise PgClusterError(
                f"database name {name!r} is not a plain identifier; use letters, digits and _"
            )
        self._tool(
            "createdb", "-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER, name
        )
        return self.dsn(name)

    def available_extensions(self) -> set[str]:
        """Names of the extensions this server can CREATE (e.g. ``vector`` for pgvector)."""
        out = self._tool(
            "psql",
            "-h",
            str(self.socket_dir),
            "-p",
            str(self.port),
            "-U",
            SUPERUSER,
            "-d",
            "postgres",
            "-Atqc",
            "SELECT name FROM pg_available_extensions",
        )
        return {line.strip() for line in out.splitlines() if line.strip()}

    def stop(self) -> None:
        """Stop the server (immediately: nothing needs to survive) and delete the cluster."""
        if self._running:
            # if it is already dead, deleting the folder is all that is left to do
            with contextlib.suppress(PgClusterError):
                self._tool("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "-w", "stop")
            self._running = False
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def reap_stale_clusters(bindir: Path, prefix: Sequence[str] = ()) -> list[Path]:
    """Stop and delete throwaway clusters whose owning process is gone (a killed test run).

    Only folders this module made (named ``rankscope-pg-*`` in the temp folder, with an owner
    file) are touched, and only when that owner no longer runs. Returns the folders removed.
    """
    removed = []
    for root in Path(tempfile.gettempdir()).glob(_PREFIX + "*"):
        try:
            owner = int((root / _OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue
        if exists(owner):
            continue
        if (root / "data" / "postmaster.pid").exists():
            subprocess.run(
                [
                    *prefix,
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(root / "data"),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


def _quote_conf(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


__all__ = [
    "INSTALL_HINT",
    "SUPERUSER",
    "PgCluster",
    "PgClusterError",
    "find_bindir",
    "reap_stale_clusters",
]
