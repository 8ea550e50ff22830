"""One SQLite writer at a time, queued by the operating system instead of SQLite's busy handler.

SQLite lets one connection write at a time. A connection that finds the database locked
retries from its busy handler, sleeping between tries (up to 100 ms each): with several
``rankscope serve`` worker processes writing batches, most of the waiting was those sleeps
(bench/RESULTS.md, "Writers across processes"). :class:`WriteLock` queues the writers first: the
threads of one process on a mutex, the processes on an ``flock`` of a file beside the database,
which wakes the next writer as soon as the lock is free. Writers that do not take it (another
program, the command line's admin commands) are still kept apart by SQLite itself.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: threads are still queued
    fcntl = None  # type: ignore[assignment]

#: the lock file's name: the database file's name plus this
SUFFIX = "-writelock"


class WriteLock:
    """A context manager held around every write transaction of one SQLite database."""

    def __init__(self, database: str | None) -> None:
        self._mutex = threading.Lock()
        self._fd: int | None = None
        if fcntl is not None and database and database != ":memory:":
            path = os.path.expanduser(database) + SUFFIX
            try:
                self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                self._fd = None  # e.g. a read-only directory: SQLite's own locking remains

    def __enter__(self) -> None:
        self._mutex.acquire()
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._mutex.release()
                raise

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._mutex.release()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


__all__ = ["SUFFIX", "WriteLock"]
