"""The end-of-run check for processes left running (tests/processes.py, tests/conftest.py):
an orphan a test leaves behind is found by the run's mark, and a shell run in its own process
group takes its background server with it, also when the shell is stopped half-way."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import processes
from processes import leftovers, process_group, stop
from rankscope.util.proc import running

#: a shell that starts a long sleep in the background (as the README starts the service) and
#: exits: the sleep's parent is gone, init adopts it
ORPHAN = "{ sleep 300; } >/dev/null 2>&1 & echo $!"


def test_an_orphan_carrying_the_mark_is_found_and_stopped() -> None:
    mark = f"orphan-test-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, processes.MARK: mark}
    done = subprocess.run(["bash", "-c", ORPHAN], env=env, capture_output=True, text=True)
    orphan = int(done.stdout.split()[-1])
    try:
        found = leftovers(mark)
        assert [p.pid for p in found if "sleep" in p.command] != []
        assert all(p.ppid != os.getpid() for p in found)  # adopted, not our child
        stop(found)
        assert not running(orphan)
        assert leftovers(mark) == []
    finally:
        if running(orphan):
            os.kill(orphan, 9)


def test_a_process_group_stops_the_background_server_of_its_shell() -> None:
    mark = f"group-test-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, processes.MARK: mark}
    with process_group(["bash", "-c", ORPHAN], cwd=Path.cwd(), env=env) as shell:
        out, _ = shell.communicate(timeout=30)
    orphan = int(out.split()[-1])
    try:
        assert not running(orphan)
        assert leftovers(mark) == []
    finally:
        if running(orphan):
            os.kill(orphan, 9)


def test_a_process_group_is_stopped_when_the_test_fails_half_way() -> None:
    mark = f"fail-test-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, processes.MARK: mark}
    script = f"{ORPHAN}; exec {sys.executable} -c 'import time; time.sleep(300)'"
    started = time.monotonic()
    try:
        with process_group(["bash", "-c", script], cwd=Path.cwd(), env=env) as shell:
            shell.communicate(timeout=0.5)  # the shell runs on: TimeoutExpired
    except subprocess.TimeoutExpired:
        pass
    assert time.monotonic() - started < 15
    assert leftovers(mark) == []


def test_multiprocessing_s_own_tracker_is_not_left_over() -> None:
    """The resource tracker a process pool starts exits with this process: not a leftover."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    tracker = resource_tracker._resource_tracker._pid  # type: ignore[attr-defined]  # private
    assert tracker is not None
    mark = os.environ.get(processes.MARK, "unmarked")
    assert tracker not in [p.pid for p in leftovers(mark, parent=os.getpid())]
