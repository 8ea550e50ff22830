"""Files and secrets: the SQLite database and its -wal, -shm and lock files are created 0600;
an HS256 secret needs 32 bytes; a JWT needs a numeric exp no further ahead than
jwt_max_lifetime_seconds."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

from rankscope.errors import ConfigError
from rankscope.service.app import create_app
from rankscope.service.settings import load_settings
from serve_helpers import COLLECT, METRICS, bearer, make_keys, record, sqlite_settings

pytestmark = pytest.mark.service
SECRET = "a-long-test-secret-of-at-least-32-bytes!"
YEAR_9999 = 253_402_300_799  # 9999-12-31T23:59:59Z


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_sqlite_files_are_created_private(tmp_path: Path) -> None:
    db = tmp_path / "data" / "metrics.sqlite"
    settings = sqlite_settings(db)
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings)) as client:
        assert client.post(COLLECT, json=record(), headers=bearer(keys.alice)).status_code == 201
        files = {p.name: _mode(p) for p in db.parent.iterdir()}
    # (before: 0644 each, readable by every local user)
    assert files == {
        "metrics.sqlite": 0o600,
        "metrics.sqlite-wal": 0o600,
        "metrics.sqlite-shm": 0o600,
        "metrics.sqlite-writelock": 0o600,
    }


@pytest.mark.usefixtures("umask_022")
def test_local_mode_creates_its_file_private(tmp_path: Path) -> None:
    from rankscope.collect import MetricsClient

    path = tmp_path / "local.sqlite"
    with MetricsClient.local(path, flush_interval=0.01) as client:
        client.collect("q", [("a", 0.9)])
        assert client.flush(timeout=10)
        assert _mode(path) == 0o600 and _mode(tmp_path / "local.sqlite-wal") == 0o600


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    db.touch(mode=0o640)
    os.chmod(db, 0o640)
    make_keys(f"sqlite:///{db}")
    assert _mode(db) == 0o640


def test_a_short_hs256_secret_is_refused_without_repeating_it() -> None:
    short = "hunter2-is-31-bytes-long-......"
    assert len(short.encode()) == 31
    with pytest.raises(ConfigError) as caught:
        load_settings(jwt_secret=short)
    message = str(caught.value)
    assert "invalid service setting jwt_secret" in message
    assert "the HS256 secret is 31 bytes; it needs at least 32" in message
    assert "secrets.token_urlsafe(32)" in message and short not in message
    with pytest.raises(ConfigError, match="is 1 bytes"):
        load_settings(jwt_secret="x")
    assert load_settings(jwt_secret=short + "!").jwt_secret is not None  # 32 bytes


def _status(client: TestClient, claims: dict[str, Any]) -> tuple[int, str]:
    token = jwt.encode({"sub": "alice", **claims}, SECRET, algorithm="HS256")
    r = client.get(METRICS, headers=bearer(token))
    return r.status_code, r.json()["error"]["message"] if r.status_code != 200 else ""


def test_jwt_expiry_must_be_a_near_number(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", jwt_secret=SECRET)
    assert settings.jwt_max_lifetime_seconds == 86_400 and settings.jwt_leeway_seconds == 30
    now = int(time.time())
    with TestClient(create_app(settings)) as client:
        assert _status(client, {"exp": now + 3600}) == (200, "")
        assert _status(client, {"exp": now + 86_400 + 20}) == (200, "")  # within the leeway
        assert _status(client, {"exp": now - 20}) == (200, "")  # expired, within the leeway
        far = (
            401,
            "the JWT expires more than 86400 s from now (jwt_max_lifetime_seconds): issue "
            "shorter-lived tokens, or use an API key for a long-lived service",
        )
        assert _status(client, {"exp": now + 86_400 + 40}) == far
        assert _status(client, {"exp": YEAR_9999}) == far
        assert _status(client, {"exp": str(now + 3600)}) == (
            401,
            "the JWT's exp claim must be a number (seconds since 1970-01-01 UTC), not str",
        )
        assert _status(client, {"exp": now + 60, "iat": str(now)})[0] == 401
        assert _status(client, {"exp": now + 60, "nbf": str(now)})[0] == 401
    # 0 lifts the limit
    unlimited = sqlite_settings(
        tmp_path / "m.sqlite", jwt_secret=SECRET, jwt_max_lifetime_seconds=0
    )
    with TestClient(create_app(unlimited)) as client:
        assert _status(client, {"exp": YEAR_9999}) == (200, "")
