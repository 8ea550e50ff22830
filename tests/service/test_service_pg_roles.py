"""The service starts on PostgreSQL only as a role that row-level security keeps to one user:
neither one that inherits rankscope_service (sees every user's rows) nor the tables' owner
(matches no policy: reads nothing, every write refused), with a message saying what is wrong
and how to fix it. Roles are made by hand on the tests' real server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from rankscope.errors import ServiceError
from rankscope.service.app import create_app
from serve_helpers import COLLECT, METRICS, PgDatabase, bearer, make_keys, record

pytestmark = [pytest.mark.service, pytest.mark.postgres]
psycopg = pytest.importorskip("psycopg")
from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: E402


def _dsn(dsn: str, **changes: str) -> str:
    params = conninfo_to_dict(dsn)
    params.update(changes)
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture
def role(pg_database: PgDatabase) -> Iterator[str]:
    """A fresh login role name (dropped afterwards; roles are cluster-wide)."""
    name = f"rs_role_{uuid.uuid4().hex[:8]}"
    yield name
    with psycopg.connect(pg_database.admin_dsn, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {name}")
        conn.execute(f"DROP ROLE IF EXISTS {name}")


def _admin(db: PgDatabase, *statements: str) -> None:
    with psycopg.connect(db.admin_dsn, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def _start(settings_dsn: str, db: PgDatabase) -> None:
    with TestClient(create_app(db.settings(database_url=settings_dsn))):
        pass


def test_a_role_inheriting_the_service_role_is_refused(pg_database: PgDatabase, role: str) -> None:
    _admin(
        pg_database,
        f"CREATE ROLE {role} LOGIN INHERIT",
        f"GRANT rankscope_app TO {role}",
        f"GRANT rankscope_service TO {role}",
    )
    dsn = _dsn(pg_database.app_dsn, user=role)
    # what it would do: with no user set it reads every user's rows
    _admin(
        pg_database,
        "INSERT INTO retrieval_metrics (id, user_id, query, timestamp, total_retrieved, "
        "total_relevant, relevant_retrieved, precision, recall, f1_score, mean_reciprocal_rank, "
        "average_precision, ndcg, document_chunks_retrieved, web_results_retrieved, "
        "total_sources, search_type, ranked_list, judgments, judgment_source, cutoff, "
        "rankscope_version, created_at, updated_at) VALUES "
        f"('{uuid.uuid4()}', 'bob', 'q', now(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'none', "
        "'[]', '{}', 'heuristic', 0, 'test', now(), now())",
    )
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT user_id FROM retrieval_metrics").fetchall() == [("bob",)]
    with pytest.raises(ServiceError) as caught:
        _start(dsn, pg_database)
    message = str(caught.value)
    assert f"connects as '{role}'" in message
    assert "holds the rights of rankscope_service without SET ROLE" in message
    assert "every user's rows" in message and "Connect as rankscope_app" in message
    # allow_privileged_role lets an experiment start anyway, as for BYPASSRLS
    with TestClient(create_app(pg_database.settings(database_url=dsn, allow_privileged_role=True))):
        pass


def test_the_tables_owner_is_refused(pg_database: PgDatabase, role: str) -> None:
    # an owner that is no superuser (a superuser is refused as such), as when a DBA hands the
    # tables to the application's owner role
    tables: tuple[str, ...] = ("alembic_version", "alerts", "api_keys", "retrieval_metrics")
    tables += ("search_events",)
    tables += ("user_settings", "user_thresholds")
    _admin(
        pg_database,
        f"CREATE ROLE {role} LOGIN NOSUPERUSER",
        *(f"ALTER TABLE {t} OWNER TO {role}" for t in tables),
    )
    owner = _dsn(pg_database.app_dsn, user=role)
    with pytest.raises(ServiceError) as caught:
        _start(owner, pg_database)
    message = str(caught.value)
    assert (
        f"connects as '{role}', the owner of alerts, api_keys, retrieval_metrics, "
        "search_events, user_settings, user_thresholds:" in message
    )
    assert "every read would come back empty and every write be refused" in message
    assert "Connect as rankscope_app" in message and "admin_database_url" in message
    # not something allow_privileged_role can wave through: nothing would work
    with pytest.raises(ServiceError, match="the owner of"):
        _start_with(owner, pg_database, allow_privileged_role=True)


def _start_with(dsn: str, db: PgDatabase, **extra: object) -> None:
    with TestClient(create_app(db.settings(database_url=dsn, **extra))):
        pass


def test_a_role_without_the_app_role_is_refused(pg_database: PgDatabase, role: str) -> None:
    _admin(
        pg_database,
        f"CREATE ROLE {role} LOGIN",
        f"GRANT SELECT ON alembic_version, api_keys, retrieval_metrics TO {role}",
    )
    with pytest.raises(ServiceError, match="does not hold the rights of rankscope_app"):
        _start(_dsn(pg_database.app_dsn, user=role), pg_database)


def test_a_role_granted_the_app_role_serves(pg_database: PgDatabase, role: str) -> None:
    # a login role of one's own that inherits rankscope_app (and through it may SET ROLE
    # rankscope_service, whose rights rankscope_app does not inherit) is a correct set-up
    _admin(pg_database, f"CREATE ROLE {role} LOGIN INHERIT", f"GRANT rankscope_app TO {role}")
    keys = make_keys(pg_database.admin_dsn)
    settings = pg_database.settings(database_url=_dsn(pg_database.app_dsn, user=role))
    with TestClient(create_app(settings)) as client:
        for query, key in (("a's", keys.alice), ("b's", keys.bob)):
            assert client.post(COLLECT, json=record(query), headers=bearer(key)).status_code == 201
        mine = client.get(METRICS, headers=bearer(keys.alice)).json()["data"]["queries"]
        assert [q["query"] for q in mine] == ["a's"]
        every = client.get(METRICS, headers=bearer(keys.service)).json()["data"]["queries"]
        assert sorted(q["query"] for q in every) == ["a's", "b's"]
