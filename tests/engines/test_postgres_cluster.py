"""The throwaway PostgreSQL cluster used by the PostgreSQL tests (rankscope.testing.pgcluster)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from rankscope.testing.pgcluster import (
    PgCluster,
    PgClusterError,
    _run_as_prefix,
    find_bindir,
    reap_stale_clusters,
)
from rankscope.util.proc import exists

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def bindir() -> Path:
    found = find_bindir()
    if found is None:
        pytest.skip("PostgreSQL server binaries not found; run scripts/install-system-deps")
    return found


def test_database_names_must_be_plain(bindir: Path, tmp_path: Path) -> None:
    cluster = PgCluster(bindir, tmp_path, 5432, [])
    with pytest.raises(PgClusterError, match="not a plain identifier"):
        cluster.create_database("x; DROP DATABASE postgres")


def test_killed_owner_leaves_a_cluster_that_the_next_start_reaps(bindir: Path) -> None:
    code = (
        "import time\n"
        "from rankscope.testing.pgcluster import PgCluster\n"
        "c = PgCluster.start()\n"
        "print(c.root, c.create_database('leak'), flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        root = Path(line[0])
        assert "dbname=leak" in " ".join(line)
        server_pid = int((root / "data" / "postmaster.pid").read_text().split()[0])
    finally:
        proc.kill()
        proc.communicate()
    assert exists(server_pid), "the server outlives the killed test process"
    removed = reap_stale_clusters(bindir, _run_as_prefix()[0])
    assert root in removed
    assert not root.exists()
    deadline = time.monotonic() + 30
    while exists(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not exists(server_pid)


def test_live_clusters_are_not_reaped(bindir: Path, postgres_dsn: str) -> None:
    before = set(Path(tempfile.gettempdir()).glob("rankscope-pg-*"))
    reap_stale_clusters(bindir, _run_as_prefix()[0])
    assert before <= set(Path(tempfile.gettempdir()).glob("rankscope-pg-*"))
