"""Writing a file atomically: readers see the old file or the new one, never half of one.

Every file rankscope writes whole (results, run files, exports, checkpoints, manifests) goes
through :func:`atomic_write`: a temporary file with a unique name in the target's folder (a
rename is atomic only within one file system), flushed to disk (``fsync``), given its mode,
renamed over the target, and the folder synced so that the rename itself survives a crash.

The permission policy: results and exports get the mode a plain ``open()`` would give them
(``0666`` less the umask, so ``0644`` under the usual umask): they are meant to be shared and
read by other tools. A file that holds a secret (an API key, a password) is written with
``private=True``: ``0600``, readable by its owner alone. SQLite files are ``0600`` as well
(:mod:`rankscope.util.sqlite`): they hold judgments and texts that the caller did not ask to
share.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rankscope.util.proc import status_field

#: the mode of a file that holds a secret (and of SQLite files): its owner reads and writes it
PRIVATE_MODE = 0o600


def atomic_write(
    path: str | os.PathLike[str], write: Callable[[Path], object], *, private: bool = False
) -> Path:
    """Have ``write(tmp)`` write a temporary file next to ``path``, then put it in place
    atomically (see the module). Returns ``path``; on any error the temporary file is removed
    and the old file, if any, is left as it was."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        _fsync_file(tmp)
        # mkstemp creates 0600; a shared file gets the mode a plain open() would (umask honoured)
        os.chmod(tmp, PRIVATE_MODE if private else 0o666 & ~current_umask())
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(out.parent)
    return out


def atomic_write_text(path: str | os.PathLike[str], text: str, *, private: bool = False) -> Path:
    """Write ``text`` (UTF-8, line ends as they are) atomically; see :func:`atomic_write`."""

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)

    return atomic_write(path, write, private=private)


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> Path:
    """``data`` as indented JSON (UTF-8, non-finite numbers as JavaScript writes them) and a
    line end, atomically."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=True) + "\n"
    return atomic_write_text(path, text)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``folder`` durable (where the system allows opening a
    folder; elsewhere nothing)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process umask (read without changing it where /proc tells it)."""
    value = status_field("self", "Umask")  # "0022"
    if value is not None:
        return int(value, 8)
    mask = os.umask(0o022)  # elsewhere: set and restore (not atomic, but brief)
    os.umask(mask)
    return mask


__all__ = [
    "PRIVATE_MODE",
    "atomic_write",
    "atomic_write_json",
    "atomic_write_text",
    "current_umask",
    "fsync_dir",
]
