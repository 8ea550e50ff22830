"""Start-up of the application: the serving process tunes its garbage collector, a process
that only embeds the app (tests, notebooks) keeps its own settings."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

from fastapi.testclient import TestClient

from rankscope.service.app import create_app, create_app_from_env
from rankscope.service.server import GC_GEN0_THRESHOLD
from rankscope.service.settings import ENV_PREFIX
from serve_helpers import sqlite_settings


@pytest.fixture
def gc_state() -> Iterator[None]:
    threshold = gc.get_threshold()
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_the_serving_process_freezes_start_up_objects_and_collects_less_often(
    tmp_path: Path, gc_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = sqlite_settings(tmp_path / "metrics.sqlite")
    monkeypatch.setenv(ENV_PREFIX + "DATABASE_URL", settings.database_url)
    default = gc.get_threshold()
    assert default[0] < GC_GEN0_THRESHOLD
    with TestClient(create_app_from_env()) as client:
        assert client.get("/healthz").status_code == 200
        assert gc.get_threshold() == (GC_GEN0_THRESHOLD, default[1], default[2])
        assert gc.get_freeze_count() > 0


def test_an_embedded_app_leaves_the_collector_alone(tmp_path: Path, gc_state: None) -> None:
    before = gc.get_threshold()
    with TestClient(create_app(sqlite_settings(tmp_path / "metrics.sqlite"))) as client:
        assert client.get("/healthz").status_code == 200
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0


def test_requests_of_a_serving_process_import_neither_scipy_nor_pandas(tmp_path: Path) -> None:
    """The records page's intervals use scipy.stats: imported by the first such request, it
    cost that request 0.9 s of CPU and ~50 MB (bench/bench_bounds.py); a serving process
    imports it at start. The Qrels and Run that score a collected record (and that an export
    writes) are built without pyarrow's pa.array, whose first call imports pandas."""
    import os
    import subprocess
    import sys

    from serve_helpers import make_keys

    settings = sqlite_settings(tmp_path / "metrics.sqlite")
    key = make_keys(settings.database_url).alice
    script = "\n".join(
        [
            "import sys",
            "from fastapi.testclient import TestClient",
            "from rankscope.service.app import create_app_from_env",
            "with TestClient(create_app_from_env()) as client:",
            "    started = set(sys.modules)",
            "    headers = {'Authorization': 'Bearer ' + sys.argv[1]}",
            "    for grade in (0, 1, 1):",
            "        docs = [{'documentId': 'a', 'score': 1}]",
            "        body = {'query': 'q', 'retrievedDocuments': docs, 'judgments': {'a': grade}}",
            "        r = client.post('/api/metrics/retrieval/collect', json=body, headers=headers)",
            "        assert r.status_code == 201, r.text",
            "    for path in ('', '/export?format=trec', '/export?format=jsonl'):",
            "        r = client.get('/api/metrics/retrieval' + path, headers=headers)",
            "        assert r.status_code == 200, r.text",
            "    new = set(sys.modules) - started",
            "    print(sorted(m for m in new if m.split('.')[0] in ('scipy', 'pandas')))",
        ]
    )
    env = {**os.environ, ENV_PREFIX + "DATABASE_URL": settings.database_url}
    done = subprocess.run(
        [sys.executable, "-c", script, key],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # before: scipy, pandas and 700-odd of their modules
