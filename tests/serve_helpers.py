"""Helpers for the service and client tests (tests/service, tests/collect): settings, keys,
request bodies, and a live uvicorn server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

from rankscope.service.settings import ServiceSettings, load_settings
from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.keys import create_key

COLLECT = "/api/metrics/retrieval/collect"
BATCH = "/api/metrics/retrieval/collect/batch"
METRICS = "/api/metrics/retrieval"


def doc(doc_id: str, score: float, **extra: Any) -> dict[str, Any]:
    return {"documentId": doc_id, "score": score, **extra}


def record(
    query: str = "q", docs: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "query": query,
        "retrievedDocuments": docs if docs is not None else [doc("a", 0.9), doc("b", 0.4)],
        **extra,
    }


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Service:
    """The app behind a TestClient (fixture ``service`` in tests/service/conftest.py)."""

    client: TestClient
    keys: Keys
    settings: ServiceSettings


@dataclass
class PgDatabase:
    """A migrated PostgreSQL database (fixture ``pg_database``)."""

    admin_dsn: str  # the owner (the cluster's superuser in tests)
    app_dsn: str  # rankscope_app: neither superuser nor BYPASSRLS

    def settings(self, **extra: object) -> ServiceSettings:
        given: dict[str, object] = {
            "database_url": self.app_dsn,
            "admin_database_url": self.admin_dsn,
            **extra,
        }
        return load_settings(**given)


@dataclass
class Keys:
    alice: str
    bob: str
    service: str


def make_keys(admin_url: str) -> Keys:
    engine = make_engine(admin_url, pool_size=1)
    try:
        if engine.dialect.name == "sqlite":
            migrate(engine)
        return Keys(
            alice=create_key(engine, "alice")[0],
            bob=create_key(engine, "bob")[0],
            service=create_key(engine, "svc", "service")[0],
        )
    finally:
        engine.dispose()


def sqlite_settings(path: Path, **extra: Any) -> ServiceSettings:
    return load_settings(database_url=f"sqlite:///{path}", **extra)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def live_server(settings: ServiceSettings) -> Iterator[str]:
    """The app under uvicorn in a thread of this process; yields its base URL."""
    import uvicorn

    from rankscope.service.app import create_app

    port = free_port()
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def wait_ready(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not become ready")
        time.sleep(0.1)
