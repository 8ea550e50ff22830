"""Migration 0002 on a database that already holds 0001's records: upgrade keeps them, adds
the online tables (with row-level security on PostgreSQL), and downgrades cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from rankscope.service.store.db import downgrade as downgrade_to
from rankscope.service.store.db import make_engine, migrate
from serve_helpers import PgDatabase

pytestmark = pytest.mark.service
ONLINE = {"search_events", "alerts", "user_settings"}
RECORD = (
    "INSERT INTO retrieval_metrics (id, user_id, query, timestamp, total_retrieved, "
    "total_relevant, relevant_retrieved, precision, recall, f1_score, mean_reciprocal_rank, "
    "average_precision, ndcg, document_chunks_retrieved, web_results_retrieved, total_sources, "
    "search_type, ranked_list, judgments, judgment_source, cutoff, rankscope_version, "
    "created_at, updated_at) VALUES ('{id}', 'alice', 'q', CURRENT_TIMESTAMP, 0, 0, 0, 0, 0, "
    "0, 0, 0, 0, 0, 0, 0, 'none', '[]', '{{}}', 'heuristic', 0, 'test', CURRENT_TIMESTAMP, "
    "CURRENT_TIMESTAMP)"
)


def _check(url: str, record_id: str) -> None:
    engine = make_engine(url, pool_size=1)
    try:
        assert migrate(engine, "0001_initial") == (None, "0001_initial")
        with engine.begin() as conn:
            conn.execute(text(RECORD.format(id=record_id)))
        assert not ONLINE & set(inspect(engine).get_table_names())
        assert migrate(engine) == ("0001_initial", "0002_online")
        assert set(inspect(engine).get_table_names()) >= ONLINE
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM retrieval_metrics")).scalar() == 1
        downgrade_to(engine, "0001_initial")
        assert not ONLINE & set(inspect(engine).get_table_names())
        assert migrate(engine)[1] == "0002_online"  # and up again
    finally:
        engine.dispose()


def test_upgrade_keeps_records_on_sqlite(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'm.sqlite'}", "0" * 32)


@pytest.mark.postgres
def test_upgrade_keeps_records_on_postgres(postgres_dsn: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS rs_online_migration")
        conn.execute("CREATE DATABASE rs_online_migration")
    url = make_conninfo("", **{**conninfo_to_dict(postgres_dsn), "dbname": "rs_online_migration"})
    _check(url, "00000000-0000-0000-0000-000000000000")
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename, policyname FROM pg_policies WHERE tablename = ANY(%s) ORDER BY 1, 2",
            (sorted(ONLINE),),
        ).fetchall()
    assert [p for _, p in rows] == [
        "alerts_own_rows",
        "alerts_service",
        "search_events_own_rows",
        "search_events_service",
        "user_settings_own_rows",
        "user_settings_service",
    ]


def test_pg_database_fixture_is_at_head(pg_database: PgDatabase) -> None:
    engine = make_engine(pg_database.admin_dsn, pool_size=1)
    try:
        assert migrate(engine) == ("0002_online", "0002_online")
    finally:
        engine.dispose()
