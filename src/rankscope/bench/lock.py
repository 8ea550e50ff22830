"""One benchmark per output folder at a time: a lock file holding the owner's process id.

The lock is an advisory ``flock`` on ``<out>/.rankscope.lock``, so it is released when its
process ends however it ends (no stale lock after a crash or SIGKILL); the file keeps the pid
of the holder, which the refusal names. Where ``fcntl`` is missing (Windows), the file is
created exclusively instead and a lock whose process is gone is taken over.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from rankscope.errors import InputError
from rankscope.util.proc import exists

LOCK_FILE = ".rankscope.lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]


class FolderLock:
    """``with FolderLock(out):`` holds the output folder or raises :class:`InputError`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        if fcntl is not None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode("ascii", "replace").strip()
                os.close(fd)
                raise self._busy(holder) from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        else:  # pragma: no cover - not on POSIX
            fd = self._exclusive()
        self._fd = fd
        return self

    def _exclusive(self) -> int:  # pragma: no cover - not on POSIX
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                holder = self.path.read_text(encoding="ascii", errors="replace").strip()
                if holder.isdigit() and exists(int(holder)):
                    raise self._busy(holder) from None
                self.path.unlink(missing_ok=True)  # its process is gone
                continue
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        raise self._busy("unknown")

    def _busy(self, holder: str) -> InputError:
        who = f"process {holder}" if holder else "another process"
        return InputError(
            f"the output folder is in use by another benchmark ({who})",
            path=self.folder,
            hint="wait for it to finish, or give this one another --out folder",
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)
        if fcntl is None:  # pragma: no cover - not on POSIX
            self.path.unlink(missing_ok=True)
        os.close(self._fd)  # closing releases the flock
        self._fd = None
