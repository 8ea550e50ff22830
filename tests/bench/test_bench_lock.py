"""Two benchmarks cannot write one output folder at once: the second is refused, naming the
first one's process; the lock goes when its process does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bench_suites import make_suite

from rankscope.bench import run_benchmark
from rankscope.bench.lock import LOCK_FILE, FolderLock
from rankscope.errors import InputError
from rankscope.suite import load_suite

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from rankscope.bench.lock import FolderLock
    with FolderLock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(60)
    """
)


def test_second_benchmark_on_a_locked_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    suite = load_suite(make_suite(tmp_path, "- {name: first, engine: benchtest-overlap}"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(InputError) as refused:
            run_benchmark(suite, out)
        message = str(refused.value)
        assert f"in use by another benchmark (process {holder.pid})" in message
        assert str(out) in message and "another --out" in message
        assert not (out / "results.json").exists()
    finally:
        holder.kill()
        holder.communicate()
    # the holder was killed: its lock went with it
    result = run_benchmark(suite, out)
    assert result.config("first").status == "ok"
    assert (out / LOCK_FILE).read_text() == ""  # released


def test_a_second_lock_in_one_process_is_refused_and_release_frees_it(tmp_path: Path) -> None:
    with FolderLock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())
        with pytest.raises(InputError, match=f"process {os.getpid()}"), FolderLock(tmp_path):
            pass
    with FolderLock(tmp_path):
        pass
