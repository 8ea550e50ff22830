"""SQLite files: opened one way, versioned one way, private.

rankscope keeps four SQLite files of its own (the judgment cache, a folder's batch record, the
annotation store, the embedding cache). Each is opened by :func:`connect`: the file is created
with mode 0600 (it holds texts and judgments the caller did not ask to share; SQLite gives its
``-wal`` and ``-shm`` files the same mode), in WAL mode (readers do not wait for a writer), with
``synchronous`` FULL unless the caller says otherwise (a committed answer survives a power cut),
a 30-second busy timeout and foreign keys on. A file that exists keeps its mode.

:func:`check_version` stamps a file's schema version (``PRAGMA user_version``) and refuses a
file written by a newer rankscope with a clear error, instead of misreading its tables.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Literal

from rankscope.errors import InputError, RankscopeError
from rankscope.util.files import PRIVATE_MODE

#: how long a connection waits for another's lock before it fails (seconds)
BUSY_TIMEOUT = 30.0

Synchronous = Literal["FULL", "NORMAL"]


def create_private(path: str | os.PathLike[str]) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists (its folders too); True if it was
    created."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def connect(
    path: str | os.PathLike[str],
    *,
    synchronous: Synchronous = "FULL",
    isolation_level: Literal["DEFERRED", "IMMEDIATE", "EXCLUSIVE"] | None = "DEFERRED",
    check_same_thread: bool = False,
) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` (created 0600 if new) with rankscope's pragmas
    (see the module). Raises ``OSError`` or ``sqlite3.Error``, which the caller turns into its
    own error naming the file."""
    create_private(path)
    db = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT,
        isolation_level=isolation_level,
        check_same_thread=check_same_thread,
    )
    try:
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        db.close()
        raise
    return db


def check_version(
    db: sqlite3.Connection,
    version: int,
    *,
    what: str,
    path: str | os.PathLike[str],
    error: type[RankscopeError] = InputError,
) -> int:
    """The file's schema version: a file without one (0: new, or written before files were
    versioned, in the same format) is stamped ``version``; a newer one than ``version`` is
    refused with ``error`` naming ``what`` and the file. Returns the version found."""
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if found > version:
        raise error(
            f"{what} {os.fspath(path)} has schema version {found}; this rankscope reads up to "
            f"{version}: upgrade rankscope, or use another file"
        )
    if found == 0:
        db.execute(f"PRAGMA user_version={int(version)}")
        if not db.in_transaction and db.isolation_level is not None:
            db.commit()
    return found


__all__ = ["BUSY_TIMEOUT", "Synchronous", "check_version", "connect", "create_private"]
