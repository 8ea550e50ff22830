"""PostgreSQL: migrations, roles and row-level security proven with hand-written SQL, and the
service running as the app role (a real server started by the tests)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rankscope.errors import ServiceError
from rankscope.service.app import create_app
from rankscope.service.store.db import head_revision
from serve_helpers import COLLECT, METRICS, PgDatabase, bearer, make_keys, record

pytestmark = [pytest.mark.service, pytest.mark.postgres]
psycopg = pytest.importorskip("psycopg")

INSERT = (
    "INSERT INTO retrieval_metrics (id, user_id, query, timestamp, total_retrieved, "
    "total_relevant, relevant_retrieved, precision, recall, f1_score, mean_reciprocal_rank, "
    "average_precision, ndcg, document_chunks_retrieved, web_results_retrieved, total_sources, "
    "search_type, ranked_list, judgments, judgment_source, cutoff, rankscope_version, "
    "created_at, updated_at) VALUES (%s, %s, 'q', now(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
    "'none', '[]', '{}', 'heuristic', 0, 'test', now(), now())"
)


def _seed(db: PgDatabase) -> None:
    # the owner (a superuser here) writes one row for each user
    with psycopg.connect(db.admin_dsn, autocommit=True) as conn:
        for user in ("alice", "bob"):
            conn.execute(INSERT, (uuid.uuid4(), user))


def _as_user(conn: Any, user: str) -> None:  # a psycopg.Connection
    conn.execute("SELECT set_config('rankscope.user_id', %s, true)", (user,))


def test_app_role_is_neither_superuser_nor_bypassrls(pg_database: PgDatabase) -> None:
    with psycopg.connect(pg_database.app_dsn) as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper, rolbypassrls, rolinherit FROM pg_roles "
            "WHERE rolname = current_user"
        ).fetchone()
        assert row == ("rankscope_app", False, False, False)
        forced = conn.execute(
            "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
            "WHERE relname IN ('retrieval_metrics', 'user_thresholds') ORDER BY relname"
        ).fetchall()
        assert forced == [("retrieval_metrics", True, True), ("user_thresholds", True, True)]
        rev = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        assert rev == (head_revision(),)


def test_user_a_cannot_read_or_write_user_b_rows_with_hand_written_sql(
    pg_database: PgDatabase,
) -> None:
    _seed(pg_database)
    with psycopg.connect(pg_database.app_dsn) as conn:
        # no user named: nothing visible
        assert conn.execute("SELECT count(*) FROM retrieval_metrics").fetchone() == (0,)
        conn.rollback()
        _as_user(conn, "alice")
        rows = conn.execute("SELECT user_id FROM retrieval_metrics").fetchall()
        assert rows == [("alice",)]
        assert conn.execute(
            "SELECT count(*) FROM retrieval_metrics WHERE user_id = 'bob'"
        ).fetchone() == (0,)
        # updates of another user's rows touch nothing; moving an own row to bob is refused
        assert (
            conn.execute("UPDATE retrieval_metrics SET query = 'x' WHERE user_id = 'bob'").rowcount
            == 0
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE retrieval_metrics SET user_id = 'bob'")
        conn.rollback()
        _as_user(conn, "alice")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # row-level security
            conn.execute(INSERT, (uuid.uuid4(), "bob"))
        conn.rollback()
        _as_user(conn, "alice")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no DELETE grant
            conn.execute("DELETE FROM retrieval_metrics")
        conn.rollback()
        # cannot switch RLS off, become the owner, or keep the user past the transaction
        for sql, message in (
            ("ALTER TABLE retrieval_metrics DISABLE ROW LEVEL SECURITY", "must be owner"),
            ("ALTER TABLE retrieval_metrics NO FORCE ROW LEVEL SECURITY", "must be owner"),
            ("DROP POLICY retrieval_metrics_own_rows ON retrieval_metrics", "must be owner"),
            ("SET ROLE postgres", "permission denied to set role"),
            ("SELECT * FROM retrieval_metrics", "would be affected by row-level security"),
        ):
            _as_user(conn, "alice")
            conn.execute("SET LOCAL row_security = off")  # errors instead of filtering
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=message):
                conn.execute(sql)
            conn.rollback()
        _as_user(conn, "alice")
        conn.commit()
        assert conn.execute("SELECT count(*) FROM retrieval_metrics").fetchone() == (0,)
        conn.rollback()
        # the service role (taken per transaction) sees and writes everything
        conn.execute("SET LOCAL ROLE rankscope_service")
        assert conn.execute("SELECT count(*) FROM retrieval_metrics").fetchone() == (2,)
        conn.execute(INSERT, (uuid.uuid4(), "carol"))
        conn.rollback()
        # a user can read its own thresholds only
        with psycopg.connect(pg_database.admin_dsn, autocommit=True) as admin:
            admin.execute("INSERT INTO user_thresholds VALUES ('bob', '*', 0.5, now())")
        _as_user(conn, "alice")
        assert conn.execute("SELECT count(*) FROM user_thresholds").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO user_thresholds VALUES ('bob', 'web', 0.1, now())")
        conn.rollback()


def test_api_keys_are_read_only_for_the_app(pg_database: PgDatabase) -> None:
    make_keys(pg_database.admin_dsn)
    with psycopg.connect(pg_database.app_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM api_keys").fetchone() == (3,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE api_keys SET revoked_at = NULL")


def test_service_refuses_a_role_that_bypasses_rls(pg_database: PgDatabase) -> None:
    settings = pg_database.settings(database_url=pg_database.admin_dsn)
    with (
        pytest.raises(ServiceError, match="row-level security would not apply"),
        TestClient(create_app(settings)),
    ):
        pass


def test_service_on_postgres_keeps_users_apart(pg_database: PgDatabase) -> None:
    keys = make_keys(pg_database.admin_dsn)
    with TestClient(create_app(pg_database.settings())) as client:
        ids = {}
        for name, key in (("alice", keys.alice), ("bob", keys.bob)):
            r = client.post(COLLECT, json=record(f"{name} query"), headers=bearer(key))
            assert r.status_code == 201, r.text
            ids[name] = r.json()["data"]["id"]
        r = client.post(
            COLLECT,
            json=record("for bob", userId="bob", collectId="c1"),
            headers=bearer(keys.service),
        )
        assert r.status_code == 201 and r.json()["data"]["userId"] == "bob"
        again = client.post(
            COLLECT,
            json=record("for bob", userId="bob", collectId="c1"),
            headers=bearer(keys.service),
        )
        assert again.status_code == 200 and again.json()["data"]["id"] == r.json()["data"]["id"]
        alice = client.get(METRICS, headers=bearer(keys.alice)).json()["data"]
        assert [q["userId"] for q in alice["queries"]] == ["alice"]
        bob = client.get(METRICS, headers=bearer(keys.bob)).json()["data"]
        assert {q["userId"] for q in bob["queries"]} == {"bob"} and len(bob["queries"]) == 2
        everyone = client.get(METRICS, headers=bearer(keys.service)).json()["data"]
        assert len(everyone["queries"]) == 3
        assert client.get(f"{METRICS}/{ids['bob']}", headers=bearer(keys.alice)).status_code == 404
        fb = client.post(
            f"{METRICS}/{ids['bob']}/feedback",
            json={"relevantDocumentIds": ["a"]},
            headers=bearer(keys.alice),
        )
        assert fb.status_code == 404
        fb = client.post(
            f"{METRICS}/{ids['bob']}/feedback",
            json={"relevantDocumentIds": ["a"]},
            headers=bearer(keys.bob),
        )
        assert fb.status_code == 200 and fb.json()["data"]["judgmentSource"] == "feedback"
        ts = client.get(
            f"{METRICS}/timeseries", params={"bucket": "week"}, headers=bearer(keys.bob)
        )
        assert ts.status_code == 200 and ts.json()["data"]["points"]
        assert client.get("/readyz").json()["data"]["database"] == "postgresql"


def test_database_outage_answers_503_and_recovers(pg_database: PgDatabase) -> None:
    keys = make_keys(pg_database.admin_dsn)
    dbname = pg_database.admin_dsn.split("dbname=")[1].split()[0]
    with TestClient(create_app(pg_database.settings()), raise_server_exceptions=False) as client:
        assert client.post(COLLECT, json=record(), headers=bearer(keys.alice)).status_code == 201
        with psycopg.connect(pg_database.admin_dsn, autocommit=True) as admin:
            admin.execute("ALTER ROLE rankscope_app CONNECTION LIMIT 0")
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE usename = 'rankscope_app' AND datname = %s",
                (dbname,),
            )
            try:
                r = client.get(METRICS, headers=bearer(keys.alice))
                assert r.status_code == 503, r.text
                assert r.json()["error"]["code"] == "unavailable"
                assert r.headers["Retry-After"] == "1"
                down = client.post(COLLECT, json=record(), headers=bearer(keys.alice))
                assert down.status_code == 503 and "Traceback" not in down.text
                assert client.get("/readyz").status_code == 503
            finally:
                admin.execute("ALTER ROLE rankscope_app CONNECTION LIMIT -1")
        assert client.get("/readyz").status_code == 200
        again = client.get(METRICS, headers=bearer(keys.alice)).json()["data"]
        assert again["totalQueries"] == 1
