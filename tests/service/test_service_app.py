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
