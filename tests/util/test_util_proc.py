"""The /proc readers: a child's state, parent, process group, CPU time and memory, its name
read whole when it holds spaces and parentheses, and a zombie or a reaped child told apart."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rankscope.util.proc import (
    children,
    cpu_model,
    exists,
    proc_stat,
    processes,
    rss_mb,
    running,
    status_field,
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")

#: spends about 0.3 s of CPU, then waits to be stopped
BUSY = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_a_busy_child_is_read_whole() -> None:
    child = subprocess.Popen([sys.executable, "-c", BUSY + "time.sleep(300)"])
    try:
        deadline = time.monotonic() + 30
        while (stat := proc_stat(child.pid)) is not None and stat.cpu_seconds < 0.3:
            assert time.monotonic() < deadline, stat
            time.sleep(0.05)
        assert stat is not None
        assert (stat.pid, stat.ppid, stat.pgrp) == (child.pid, os.getpid(), os.getpgrp())
        assert stat.name.startswith("python")
        assert stat.running and running(child.pid)
        assert 0.3 <= stat.cpu_seconds < 30
        rss = rss_mb(child.pid)
        assert rss is not None and 1 < rss < 1024
        assert child.pid in [s.pid for s in children(os.getpid())]
        assert child.pid in [s.pid for s in processes()]
    finally:
        child.kill()
        child.wait(timeout=30)


def test_a_name_with_spaces_and_parentheses(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    if sleep is None:
        pytest.skip("no sleep command")
    # the kernel keeps the first 15 characters of the executable's name
    odd = tmp_path / "a) b (c) d"
    shutil.copy(sleep, odd)
    child = subprocess.Popen([str(odd), "300"])
    try:
        stat = proc_stat(child.pid)
        deadline = time.monotonic() + 30
        while stat is not None and stat.name != "a) b (c) d":  # the fork is named python first
            assert time.monotonic() < deadline, stat
            time.sleep(0.05)
            stat = proc_stat(child.pid)
        assert stat is not None
        assert (stat.ppid, stat.state in ("S", "R")) == (os.getpid(), True)
    finally:
        child.kill()
        child.wait(timeout=30)


def test_a_zombie_exists_but_is_not_running_and_a_reaped_child_is_gone() -> None:
    assert exists(os.getpid())
    assert exists(1)  # init, whoever owns it (EPERM for another user means it exists)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while (stat := proc_stat(child.pid)) is not None and stat.state != "Z":
            assert time.monotonic() < deadline, stat
            time.sleep(0.05)
        assert stat is not None and not stat.running
        assert not running(child.pid)
        assert exists(child.pid)  # until it is reaped
        assert rss_mb(child.pid) is None  # a zombie has no memory left
    finally:
        child.wait(timeout=30)
    assert proc_stat(child.pid) is None
    assert rss_mb(child.pid) is None
    assert not running(child.pid)
    assert not exists(child.pid)


def test_a_status_field_is_read_by_its_key() -> None:
    umask = os.umask(0o027)
    try:
        assert status_field("self", "Umask") == "0027"
    finally:
        os.umask(umask)
    assert status_field(os.getpid(), "Pid") == str(os.getpid())
    assert status_field("self", "NoSuchKey") is None


def test_the_cpu_model_is_the_first_model_name_of_cpuinfo() -> None:
    names = [
        line.split(":", 1)[1].strip()
        for line in Path("/proc/cpuinfo").read_text().splitlines()
        if line.startswith("model name")
    ]
    assert cpu_model() == (names[0] if names else platform.processor() or "unknown")
