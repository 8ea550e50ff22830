"""No process outlives the test run: the processes a run started, found through /proc, and a
runner that stops a command's whole process group, also when the test fails.

At the start of the session (tests/conftest.py) the run marks its environment with
:data:`MARK` = a value of its own; every process started from it inherits the mark, also one
whose parent exited and that init adopted (a ``rankscope serve`` started in the background of a
shell). At the end of the session :func:`leftovers` lists the marked processes still running
(zombies excepted: they have exited) and the session fails if there is one. Processes started
with an environment that does not derive from ``os.environ`` carry no mark; the direct
children of the run are listed too, whatever their environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rankscope.util import proc
from rankscope.util.proc import PROC

#: the environment variable that marks the processes of one test run
MARK = "RANKSCOPE_TEST_RUN"


@dataclass(frozen=True, slots=True)
class Process:
    pid: int
    ppid: int
    state: str
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}): {self.command[:200]}"


def _read(pid: int) -> Process | None:
    """The process ``pid`` from /proc (None when it is gone or unreadable)."""
    stat = proc.proc_stat(pid)
    if stat is None:
        return None
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    command = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return Process(pid, stat.ppid, stat.state, command or f"({stat.name})")


def _marked(pid: int, mark: str) -> bool:
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return f"{MARK}={mark}".encode() in environ.split(b"\0")


#: helpers Python's multiprocessing starts for this process (a library's process pool does):
#: they exit with it, so they are not left over
_OWN_HELPERS = (
    "from multiprocessing.resource_tracker import main",
    "from multiprocessing.forkserver import main",
)


def leftovers(mark: str, *, parent: int | None = None) -> list[Process]:
    """Running processes (not zombies) that carry ``mark`` or are children of ``parent``,
    other than ``parent`` itself, this process and the multiprocessing helpers of this process
    (:data:`_OWN_HELPERS`)."""
    if not PROC.is_dir():  # pragma: no cover - not Linux
        return []
    me = os.getpid()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in (me, parent):
            continue
        process = _read(int(entry.name))
        if process is None or process.state in ("Z", "X"):
            continue
        if process.ppid == me and any(h in process.command for h in _OWN_HELPERS):
            continue
        if process.ppid == parent or _marked(process.pid, mark):
            found.append(process)
    return sorted(found, key=lambda p: p.pid)


def wait_for_no_leftovers(mark: str, *, parent: int | None, timeout_s: float) -> list[Process]:
    """:func:`leftovers` once none is left or after ``timeout_s`` (a process being stopped
    needs a moment to exit)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = leftovers(mark, parent=parent)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def stop(processes: Sequence[Process], grace_s: float = 2.0) -> None:
    """SIGTERM, then SIGKILL for those still running after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for process in processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            alive = [p for p in processes if proc.running(p.pid)]
            if not alive:
                return
            time.sleep(0.05)


def stop_group(process: subprocess.Popen[str], grace_s: float = 5.0) -> None:
    """Stop ``process`` and everything in its process group (it was started with
    ``start_new_session=True``): SIGTERM, then SIGKILL after ``grace_s``; reaps ``process``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and _group_alive(process.pid):
            time.sleep(0.05)
        if not _group_alive(process.pid):
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # a group whose members have all exited may still hold zombies: those are not running
    return any(s.pgrp == pgid and s.running for s in proc.processes())


@contextlib.contextmanager
def process_group(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
) -> Iterator[subprocess.Popen[str]]:
    """``argv`` started in a process group of its own, its output captured; on leaving (a
    failure or a timeout included) the whole group is stopped: a server a shell started in the
    background goes with it."""
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        stop_group(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
