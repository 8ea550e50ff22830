"""PostgreSQL: row-level security of the online tables (search_events, alerts, user_settings)
proven with hand-written SQL as the app role, and the online loop running as that role."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from online_traffic import send, simulate

from rankscope.service.admin import open_online, run_purge
from rankscope.service.analysis.alerts import check_alerts
from rankscope.service.app import create_app
from rankscope.testing.traffic import Universe
from serve_helpers import PgDatabase, bearer, make_keys

pytestmark = [pytest.mark.service, pytest.mark.postgres]
psycopg = pytest.importorskip("psycopg")

EVENT = (
    "INSERT INTO search_events (id, user_id, action, query_id, timestamp, created_at) "
    "VALUES (%s, %s, 'click', 'q', now(), now())"
)
ALERT = (
    "INSERT INTO alerts (id, user_id, rule, scope, measure, judgment_source, method, "
    "window_start, window_end, baseline_start, baseline_end, n_current, n_baseline, "
    "paired_queries, message, dedup_key, delivery_status, delivery_attempts, created_at) "
    "VALUES (%s, %s, 'r', 'user', 'ndcg', 'judged', 'welch', now(), now(), now(), now(), 1, 1, "
    "0, 'm', %s, 'none', 0, now())"
)
TABLES = ("alerts", "search_events", "user_settings")


def _as_user(conn: Any, user: str) -> None:  # a psycopg.Connection
    conn.execute("SELECT set_config('rankscope.user_id', %s, true)", (user,))


def test_online_tables_have_forced_rls(pg_database: PgDatabase) -> None:
    with psycopg.connect(pg_database.app_dsn) as conn:
        rows = conn.execute(
            "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
            "WHERE relname = ANY(%s) ORDER BY relname",
            (list(TABLES),),
        ).fetchall()
        assert rows == [(t, True, True) for t in TABLES]


def test_users_cannot_touch_each_others_online_rows(pg_database: PgDatabase) -> None:
    with psycopg.connect(pg_database.admin_dsn, autocommit=True) as admin:
        for user in ("alice", "bob"):
            admin.execute(EVENT, (uuid.uuid4(), user))
            admin.execute(ALERT, (uuid.uuid4(), user, f"k-{user}"))
        admin.execute("INSERT INTO user_settings VALUES ('bob', 10, now())")
    with psycopg.connect(pg_database.app_dsn) as conn:
        for table in TABLES:  # no user named: nothing visible
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        conn.rollback()
        _as_user(conn, "alice")
        assert conn.execute("SELECT user_id FROM search_events").fetchall() == [("alice",)]
        assert conn.execute("SELECT user_id FROM alerts").fetchall() == [("alice",)]
        assert conn.execute("SELECT count(*) FROM user_settings").fetchone() == (0,)
        conn.execute(EVENT, (uuid.uuid4(), "alice"))  # own events: allowed
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # row-level security
            conn.execute(EVENT, (uuid.uuid4(), "bob"))
        conn.rollback()
        for sql in (
            "UPDATE search_events SET action = 'x'",  # events are never changed by users
            "DELETE FROM search_events",
            "UPDATE alerts SET message = 'x'",  # alerts are written by the service role
            "DELETE FROM alerts",
        ):
            _as_user(conn, "alice")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
                conn.execute(sql)
            conn.rollback()
        _as_user(conn, "alice")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(ALERT, (uuid.uuid4(), "alice", "mine"))
        conn.rollback()
        _as_user(conn, "alice")
        conn.execute("INSERT INTO user_settings VALUES ('alice', 30, now())")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO user_settings VALUES ('bob', 1, now())")
        conn.rollback()
        _as_user(conn, "alice")
        assert conn.execute("DELETE FROM user_settings WHERE user_id = 'bob'").rowcount == 0
        assert conn.execute("UPDATE user_settings SET retention_days = 1").rowcount == 0
        for table in TABLES:
            _as_user(conn, "alice")
            conn.execute("SET LOCAL row_security = off")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"SELECT * FROM {table}")
            conn.rollback()
            _as_user(conn, "alice")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="must be owner"):
                conn.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
            conn.rollback()
        # the service role, taken per transaction, sees and deletes everything
        conn.execute("SET LOCAL ROLE rankscope_service")
        assert conn.execute("SELECT count(*) FROM search_events").fetchone() == (2,)
        assert conn.execute("DELETE FROM alerts").rowcount == 2
        conn.rollback()


def test_online_loop_as_the_app_role(pg_database: PgDatabase) -> None:
    keys = make_keys(pg_database.admin_dsn)
    universe = Universe.make(10, 10, seed=2)
    now = dt.datetime.now(dt.UTC)
    start = now - dt.timedelta(days=8)
    base = simulate(
        universe, 150, noise=1.0, seed=1, judged=True, start=start, spacing=dt.timedelta(minutes=65)
    )
    worse = simulate(
        universe,
        40,
        noise=2.5,
        seed=2,
        judged=True,
        prefix="w",
        start=now - dt.timedelta(hours=12),
        spacing=dt.timedelta(minutes=10),
    )
    settings = pg_database.settings(
        alert_rules=[{"name": "drop", "min_n": 10, "min_delta": 0.02}], retention_days=30
    )
    with TestClient(create_app(settings)) as client:
        send(client, keys.alice, base)
        send(client, keys.alice, worse)
        send(client, keys.bob, simulate(universe, 20, noise=1.0, seed=3, prefix="bob"))
        alice = client.get("/api/events/summary", headers=bearer(keys.alice)).json()["data"]
        bob = client.get("/api/events/summary", headers=bearer(keys.bob)).json()["data"]
        assert alice["searches"] == 190 and bob["searches"] == 20
        graded = client.get("/api/judgments/clicks", headers=bearer(keys.bob)).json()["data"]
        assert graded["sessions"] == 20
        r = client.post("/api/alerts/check", headers=bearer(keys.service))
        assert r.status_code == 200, r.text
        fired = r.json()["data"]["fired"]
        assert [(a["userId"], a["deliveryStatus"]) for a in fired] == [("alice", "none")]
        assert client.get("/api/alerts", headers=bearer(keys.bob)).json()["data"]["alerts"] == []
        mine = client.get("/api/alerts", headers=bearer(keys.alice)).json()["data"]["alerts"]
        assert len(mine) == 1
        put = client.put("/api/retention", json={"retentionDays": 1}, headers=bearer(keys.bob))
        assert put.status_code == 200
    with open_online(settings) as online:  # the check as a command, as the app role: nothing new
        assert check_alerts(online, settings, now).fired == []
    counts = run_purge(settings, now=now + dt.timedelta(days=2))
    # bob keeps 1 day, alice the default 30: bob's records of two days ago go, alice's stay
    assert counts["bob"]["records"] == 20 and counts["alice"] == {
        "records": 0,
        "events": 0,
        "alerts": 0,
    }
