"""A process's state, parent, CPU time and memory, read from Linux's ``/proc``, and whether it
exists at all (:func:`exists`, signal 0, on any POSIX system).

What a benchmark or a test measures of a server it started (the CPU time one request costs it,
its RSS growth), what it checks of the processes it leaves (running, a zombie, whose child),
whether a lock's or a folder's owner is still there, and the process's own umask: one reading
of ``/proc/<pid>/stat`` and ``/proc/<pid>/status`` for all of them. CPU time is what a request
costs a process whatever else the machine runs, where wall time is not. Elsewhere than Linux
the /proc readers answer ``None`` (no such process) and :func:`children` an empty list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class ProcStat:
    """One line of ``/proc/<pid>/stat``, the fields used: the command's ``name`` (at most 15
    characters), ``state`` (``R``, ``S``, ``Z`` for a zombie, ...), the parent's pid, the
    process group and the user + system CPU seconds so far."""

    pid: int
    name: str
    state: str
    ppid: int
    pgrp: int
    cpu_seconds: float

    @property
    def running(self) -> bool:
        """Not exited: neither a zombie (``Z``) nor dead (``X``)."""
        return self.state not in ("Z", "X")


def proc_stat(pid: int) -> ProcStat | None:
    """The process ``pid`` as ``/proc`` shows it now; ``None`` once it is gone (or elsewhere
    than Linux)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
    head, _, tail = text.rpartition(")")
    fields = tail.split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    name = head.partition("(")[2]
    seconds = ticks / os.sysconf("SC_CLK_TCK")
    return ProcStat(pid, name, fields[0], int(fields[1]), int(fields[2]), seconds)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere what :func:`platform.processor`
    says, or ``"unknown"``), for a benchmark's description of its machine."""
    try:
        lines = (PROC / "cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if line.startswith("model name"):  # "model name\t: AMD EPYC 7B13"
            return line.split(":", 1)[1].strip()
    import platform  # only here: nothing else in this module needs it

    return platform.processor() or "unknown"


def exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie does), asked with signal 0: on any POSIX
    system, /proc or not (a lock's or a folder's owner still there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, as another user's process
        return True
    return True


def running(pid: int) -> bool:
    """Whether ``pid`` exists and has not exited (a zombie has)."""
    stat = proc_stat(pid)
    return stat is not None and stat.running


def processes() -> list[ProcStat]:
    """Every process ``/proc`` shows now, by pid (those gone while it is read left out)."""
    if not PROC.is_dir():
        return []
    found = [proc_stat(int(e.name)) for e in PROC.iterdir() if e.name.isdigit()]
    return sorted((s for s in found if s is not None), key=lambda s: s.pid)


def children(pid: int) -> list[ProcStat]:
    """The processes whose parent is ``pid`` now, by pid."""
    return [s for s in processes() if s.ppid == pid]


def status_field(pid: int | str, key: str) -> str | None:
    """The value of ``key`` in ``/proc/<pid>/status`` (``pid`` may be ``"self"``), such as
    ``"12345 kB"`` for ``VmRSS``; ``None`` when the process is gone or does not show it."""
    try:
        lines = (PROC / str(pid) / "status").read_text().splitlines()
    except OSError:
        return None
    prefix = f"{key}:"
    return next((line[len(prefix) :].strip() for line in lines if line.startswith(prefix)), None)


def rss_mb(pid: int) -> float | None:
    """The resident set size of ``pid`` in MiB (``VmRSS``); ``None`` once it is gone (a zombie
    has no memory left to show)."""
    value = status_field(pid, "VmRSS")  # "12345 kB"
    return None if value is None else int(value.split()[0]) / 1024


__all__ = [
    "PROC",
    "ProcStat",
    "children",
    "cpu_model",
    "exists",
    "proc_stat",
    "processes",
    "rss_mb",
    "running",
    "status_field",
]
