"""The SQLite write lock queues writers across threads and processes (flock on a file)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rankscope.service.store.writelock import SUFFIX, WriteLock

pytest.importorskip("fcntl")

TRY_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy")
else:
    print("free")
"""


def other_process_sees(lock_file: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", TRY_LOCK, str(lock_file)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_the_lock_file_is_held_while_writing_and_free_after(tmp_path: Path) -> None:
    database = tmp_path / "service.sqlite"
    lock = WriteLock(str(database))
    lock_file = tmp_path / ("service.sqlite" + SUFFIX)
    assert lock_file.exists()
    with lock:
        assert other_process_sees(lock_file) == "busy"
    assert other_process_sees(lock_file) == "free"
    lock.close()


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    lock = WriteLock(str(tmp_path / "db.sqlite"))
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        for _ in range(20):
            with lock:
                with guard:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.0005)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
    lock.close()


def test_an_error_inside_releases_the_lock(tmp_path: Path) -> None:
    lock = WriteLock(str(tmp_path / "db.sqlite"))
    with pytest.raises(RuntimeError), lock:
        raise RuntimeError("failed write")
    assert other_process_sees(tmp_path / ("db.sqlite" + SUFFIX)) == "free"
    with lock:  # and this process can take it again
        pass
    lock.close()


def test_memory_and_unwritable_places_fall_back_to_the_thread_lock(tmp_path: Path) -> None:
    with WriteLock(":memory:"):
        pass
    with WriteLock(None):
        pass
    missing = tmp_path / "no" / "such" / "folder" / "db.sqlite"
    lock = WriteLock(str(missing))
    with lock:
        pass
    assert not missing.parent.exists()
