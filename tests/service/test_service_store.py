"""The store: migrations create what the models describe, SQLite runs in WAL mode, URLs and
DSNs are understood, and concurrent writers lose nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest
from sqlalchemy import inspect

from rankscope.errors import ConfigError
from rankscope.service.settings import load_settings
from rankscope.service.store.db import (
    current_revision,
    describe,
    downgrade,
    head_revision,
    make_engine,
    migrate,
    to_url,
)
from rankscope.service.store.models import Base
from serve_helpers import (
    BATCH,
    COLLECT,
    METRICS,
    PgDatabase,
    bearer,
    live_server,
    make_keys,
    record,
)

pytestmark = pytest.mark.service


def _diff(url: str) -> list[object]:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(compare_metadata(MigrationContext.configure(conn), Base.metadata))
    finally:
        engine.dispose()


def test_sqlite_migrations_match_the_models(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    engine = make_engine(url)
    assert migrate(engine) == (None, head_revision())
    assert migrate(engine) == (head_revision(), head_revision())  # idempotent
    assert _diff(url) == []
    names = {ix["name"] for ix in inspect(engine).get_indexes("retrieval_metrics")}
    assert {
        "ix_retrieval_metrics_user_id",
        "ix_retrieval_metrics_timestamp",
        "ix_retrieval_metrics_topic_id",
        "ix_retrieval_metrics_query_id",
        "ix_retrieval_metrics_user_timestamp",
    } <= names
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    downgrade(engine, "base")
    assert current_revision(engine) is None
    assert "retrieval_metrics" not in inspect(engine).get_table_names()
    migrate(engine)
    engine.dispose()


def test_sqlite_synchronous_is_normal_by_default_and_full_on_request(tmp_path: Path) -> None:
    """WAL with synchronous=NORMAL keeps acknowledged records through a crash of the service
    (not through a power loss); sqlite_synchronous=FULL syncs every commit."""
    from fastapi.testclient import TestClient

    from rankscope.service.app import create_app
    from serve_helpers import sqlite_settings

    for setting, pragma in (("NORMAL", 1), ("FULL", 2)):
        settings = sqlite_settings(tmp_path / f"{setting}.sqlite", sqlite_synchronous=setting)
        with TestClient(create_app(settings)) as client:
            engine = client.app.state.service.store.engine  # type: ignore[attr-defined]
            with engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == pragma
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine = make_engine(f"sqlite:///{tmp_path / 'default.sqlite'}")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
        # 16 MiB of page cache (negative: KiB), not SQLite's 2 MiB
        assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -16384
    engine.dispose()
    assert load_settings().sqlite_synchronous == "NORMAL"


@pytest.mark.postgres
def test_postgres_migrations_match_the_models(pg_database: PgDatabase) -> None:
    assert _diff(pg_database.admin_dsn) == []


def test_urls_and_dsns() -> None:
    assert str(to_url("metrics.sqlite")[0]) == "sqlite:///metrics.sqlite"
    assert to_url("postgresql://u:p@h/db")[0].drivername == "postgresql+psycopg"
    url, args = to_url("host=/tmp port=5432 dbname=x user=u")
    assert url.drivername == "postgresql+psycopg" and args["dbname"] == "x"
    assert "secret" not in describe("postgresql://u:secret@h/db")
    assert "secret" not in describe("host=h password=secret dbname=x")
    with pytest.raises(ConfigError, match="unsupported database"):
        to_url("mysql://u@h/db")
    with pytest.raises(ConfigError, match="empty"):
        to_url(" ")


def test_settings_from_environment_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(
        'default_threshold = 0.6\nport = 9000\n[thresholds]\n"semantic+keyword" = 0.5\n'
    )
    monkeypatch.setenv("RANKSCOPE_SERVE_CONFIG", str(config))
    monkeypatch.setenv("RANKSCOPE_SERVE_PORT", "9100")
    settings = load_settings()
    assert settings.default_threshold == 0.6 and settings.port == 9100  # env beats file
    assert settings.thresholds == {"keyword+semantic": 0.5}
    assert load_settings(port=9200).port == 9200  # options beat env
    yaml_file = tmp_path / "serve.yaml"
    yaml_file.write_text("max_batch_records: 50\n")
    assert load_settings(config_file=yaml_file).max_batch_records == 50
    with pytest.raises(ConfigError, match="default_threshold"):
        load_settings(default_threshold=2)
    with pytest.raises(ConfigError, match="unknown search type"):
        load_settings(thresholds={"vector": 0.5})
    monkeypatch.setenv("RANKSCOPE_SERVE_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="not found"):
        load_settings()


def _hammer(url: str, key: str, threads: int, per_thread: int, batch: int) -> int:
    """Collect from many threads at once; returns how many records were acknowledged."""
    acked = 0
    lock = threading.Lock()

    def worker(n: int) -> None:
        nonlocal acked
        mine = 0
        with httpx.Client(base_url=url, headers=bearer(key), timeout=60) as client:
            for i in range(per_thread):
                if batch and i % 5 == 0:
                    body = {"records": [record(f"t{n} b{i} {j}") for j in range(batch)]}
                    r = client.post(BATCH, json=body)
                    mine += r.json()["data"]["accepted"] if r.status_code == 201 else 0
                else:
                    r = client.post(COLLECT, json=record(f"t{n} {i}"))
                    mine += r.status_code == 201
        with lock:
            acked += mine

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return acked


def _count(url: str, key: str) -> int:
    data = httpx.get(url + METRICS, headers=bearer(key), params={"limit": 1}).json()["data"]
    groups = data["byJudgmentSource"]
    return int(groups["judged"]["count"] + groups["heuristic"]["count"])


def test_concurrent_writers_on_sqlite_lose_nothing(tmp_path: Path) -> None:
    settings = load_settings(database_url=f"sqlite:///{tmp_path / 'm.sqlite'}")
    keys = make_keys(settings.database_url)
    # two servers (two engines, as two worker processes would have) on one SQLite file
    with live_server(settings) as one, live_server(settings) as two:
        results: list[int] = []
        pair = [
            threading.Thread(target=lambda u=u: results.append(_hammer(u, keys.alice, 6, 40, 20)))
            for u in (one, two)
        ]
        for t in pair:
            t.start()
        for t in pair:
            t.join()
        assert _count(one, keys.alice) == sum(results) == 2 * 6 * (32 + 8 * 20)


@pytest.mark.postgres
def test_concurrent_writers_on_postgres_lose_nothing(pg_database: PgDatabase) -> None:
    keys = make_keys(pg_database.admin_dsn)
    with live_server(pg_database.settings()) as url:
        acked = _hammer(url, keys.bob, 8, 25, 10)
        assert _count(url, keys.bob) == acked == 8 * (20 + 5 * 10)
        assert _count(url, keys.alice) == 0


def test_the_fast_insert_stores_what_sqlalchemy_would(tmp_path: Path) -> None:
    """The batch insert hands the driver ready-made parameters; stored values must be those
    SQLAlchemy's column types write (ids, JSON, UTC date-times, nulls)."""
    import datetime as dt

    from sqlalchemy import select

    from rankscope.collect.wire import MetricCreate
    from rankscope.service.ingest.rows import NewRecord, build_rows, settings_thresholds
    from rankscope.service.ingest.writer import MetricsStore
    from rankscope.service.settings import ServiceSettings
    from rankscope.service.store.models import metrics_table

    settings = ServiceSettings(database_url="sqlite://")
    bodies = [
        record(),
        {**record(), "collectId": "c-1", "timestamp": "0999-01-02T03:04:05.5+02:00"},
        {**record(), "judgments": {"d2": 3}, "options": {"cutoff": 2, "arm": "b"}},
    ]
    rows = build_rows(
        [NewRecord(MetricCreate.model_validate(b), "alice") for b in bodies],
        settings_thresholds(settings),
        now=dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC),
    )
    stored = []
    for name in ("fast", "core"):
        engine = make_engine(f"sqlite:///{tmp_path / name}.sqlite")
        migrate(engine)
        with engine.begin() as conn:
            if name == "fast":
                MetricsStore(engine, settings_thresholds(settings))._insert(conn, rows)
            else:
                conn.execute(metrics_table.insert(), rows)
        with engine.connect() as conn:
            typed = conn.execute(select(metrics_table).order_by(metrics_table.c.id)).all()
            raw = conn.exec_driver_sql(
                "SELECT id, timestamp, created_at, ranked_list, judgments"
                " FROM retrieval_metrics ORDER BY id"
            ).all()
            stored.append((typed, raw))
        engine.dispose()
    assert len(stored[0][0]) == 3
    assert stored[0] == stored[1]
    # (a JSON null is stored as SQL NULL by the fast insert, as the text 'null' by SQLAlchemy's
    # JSON type; both read back as None)
