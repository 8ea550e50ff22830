"""PostgreSQL: batches written through COPY (a temporary table, then one INSERT ... SELECT) store
exactly what one INSERT per row stores, with the same outcomes (duplicates by collectId, the
first of a repeated key wins) and the same row-level security (a real server started by the
tests)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from sqlalchemy import Engine, select

from rankscope.collect.wire import MetricCreate
from rankscope.service.ingest.rows import NewRecord, build_rows, settings_thresholds
from rankscope.service.ingest.writer import MetricsStore, WriteGroup
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal, make_engine
from rankscope.service.store.models import metrics_table
from rankscope.service.store.records import COPY_MIN_ROWS, WriteOutcome
from serve_helpers import PgDatabase, record

pytestmark = [pytest.mark.service, pytest.mark.postgres]
psycopg = pytest.importorskip("psycopg")

NOW = dt.datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=dt.UTC)


def _bodies() -> list[dict[str, Any]]:
    """Records that exercise every column kind: text needing COPY escapes, nulls, JSON with
    quotes and unicode, graded judgments, old and offset timestamps, repeated collectIds."""
    docs = [
        {"documentId": 'd\t1\\"x', "documentName": "line\nbreak", "chunkIndex": 0, "score": 0.9},
        {"documentId": "é-2", "score": 0.123456789012345678},
        {"documentId": 'd\t1\\"x', "chunkIndex": 3, "score": 0.5, "content": "not stored"},
        {"documentId": "d4", "score": -1e-300},
    ]
    out: list[dict[str, Any]] = []
    for i in range(3 * COPY_MIN_ROWS):
        body = record(f"query {i}\t\\N \\. ✓", docs=docs[: 1 + i % 4])
        if i % 3 == 0:
            body["relevantDocumentIds"] = ['d\t1\\"x', "missing"]
        elif i % 3 == 1:
            body["judgments"] = {"é-2": 2, "d4": 0}
        if i % 2 == 0:
            body["collectId"] = f"c-{i % 10}"  # c-0 .. c-8 repeat inside the batch
        if i % 5 == 0:
            body["timestamp"] = "0999-01-02T03:04:05.5+02:00"
        body["options"] = {
            "topicId": None if i % 4 == 0 else f"t{i % 3}",
            "searchTypes": {"semantic": True, "web": i % 2 == 0},
            "webResultsCount": i % 3,
            "documentIds": ["a", 'b"'] if i % 6 == 0 else None,
            "cutoff": 2 if i % 7 == 0 else None,
            "arm": "B" if i % 2 else None,
        }
        if i % 4 == 0:
            body["queryId"] = f"q-{i}"
        out.append(body)
    return out


def _rows(bodies: list[dict[str, Any]], user: str) -> list[dict[str, Any]]:
    settings = ServiceSettings(database_url="sqlite://")
    return build_rows(
        [NewRecord(MetricCreate.model_validate(b), user) for b in bodies],
        settings_thresholds(settings),
        now=NOW,
    )


def _write(
    engine: Engine, principal: Principal, rows: list[dict[str, Any]], copy: bool
) -> list[WriteOutcome]:
    store = MetricsStore(engine, settings_thresholds(ServiceSettings(database_url="sqlite://")))
    with engine.connect() as conn, conn.begin():
        store.act_as(conn, principal)
        assert store._may_copy(conn)
        return store._insert_copy(conn, rows) if copy else store._insert_each(conn, rows)


def _stored(admin_dsn: str) -> tuple[list[Any], list[Any]]:
    """Every row, typed (SQLAlchemy) and as PostgreSQL's own text of each value."""
    engine = make_engine(admin_dsn, pool_size=1)
    try:
        with engine.connect() as conn:
            typed = conn.execute(select(metrics_table).order_by(metrics_table.c.id)).all()
            names = ", ".join(f'"{c.name}"::text' for c in metrics_table.columns)
            text = conn.exec_driver_sql(f"SELECT {names} FROM retrieval_metrics ORDER BY id").all()
        return list(typed), list(text)
    finally:
        engine.dispose()


def _clear(admin_dsn: str) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM retrieval_metrics")


@pytest.mark.parametrize("principal", [Principal("alice"), Principal("svc", "service")])
def test_copy_stores_what_one_insert_per_row_stores(
    pg_database: PgDatabase, principal: Principal
) -> None:
    """Same rows (same ids) through both paths, each into the emptied table: equal row for row
    (typed and as PostgreSQL's text), with equal outcomes. Part of the batch is stored first,
    so both paths also meet keys stored by an earlier request."""
    rows = _rows(_bodies(), "alice")
    # an earlier request stored two of the keys (under ids of its own)
    earlier = [{**r, "id": uuid.uuid4()} for r in rows if r["collect_id"] in ("c-2", "c-4")][:2]
    engine = make_engine(pg_database.app_dsn, pool_size=1)
    results = []
    try:
        for copy in (False, True):
            _clear(pg_database.admin_dsn)
            first = _write(engine, principal, earlier, copy=False)
            outcomes = _write(engine, principal, rows, copy=copy)
            results.append((first, outcomes, _stored(pg_database.admin_dsn)))
    finally:
        engine.dispose()
    (_, each, stored_each), (_, copied, stored_copy) = results
    assert each == copied
    assert stored_each == stored_copy
    typed, _ = stored_each
    # the repeated collectIds were stored once each; every other row was stored
    keys = [r["collect_id"] for r in rows if r["collect_id"] is not None]
    assert len(typed) == len(rows) - len(keys) + len(set(keys))
    duplicates = [o for o in copied if o.duplicate]
    assert len(duplicates) == len(keys) - len(set(keys)) + len(earlier)
    by_key = {(r.user_id, r.collect_id): r.id for r in typed if r.collect_id is not None}
    for row, outcome in zip(rows, copied, strict=True):
        if row["collect_id"] is not None:
            assert outcome.id == by_key[("alice", row["collect_id"])]
        else:
            assert outcome.id == row["id"] and not outcome.duplicate


def test_store_write_uses_copy_for_large_groups_and_keeps_users_apart(
    pg_database: PgDatabase,
) -> None:
    """Through MetricsStore.write, as the app role: a user's group and the service role's group
    (writing for bob) in one transaction both take the COPY path; row-level security still
    refuses a user's rows for someone else, and a user reads back only their own rows."""
    settings = ServiceSettings(database_url="sqlite://")
    engine = make_engine(pg_database.app_dsn, pool_size=2)
    store = MetricsStore(engine, settings_thresholds(settings))
    try:
        mine = [NewRecord(MetricCreate.model_validate(record(f"a{i}")), "alice") for i in range(40)]
        theirs = [NewRecord(MetricCreate.model_validate(record(f"b{i}")), "bob") for i in range(20)]
        out = store.write(
            [
                WriteGroup(Principal("alice"), mine),
                WriteGroup(Principal("svc", "service"), theirs),
            ]
        )
        assert [len(o) for o in out] == [40, 20]
        assert not any(o.duplicate for group in out for o in group)
        with psycopg.connect(pg_database.admin_dsn) as conn:
            counts = dict(
                conn.execute(
                    "SELECT user_id, count(*) FROM retrieval_metrics GROUP BY user_id"
                ).fetchall()
            )
        assert counts == {"alice": 40, "bob": 20}
        # alice may not write bob's rows: the policy's check applies to the INSERT ... SELECT
        forged = [NewRecord(MetricCreate.model_validate(record(f"x{i}")), "bob") for i in range(20)]
        with pytest.raises(Exception, match="row-level security"):
            store.write([WriteGroup(Principal("alice"), forged)])
        with engine.connect() as conn, conn.begin():
            store.act_as(conn, Principal("alice"))
            seen = conn.execute(select(metrics_table.c.user_id).distinct()).scalars().all()
        assert seen == ["alice"]
        ids = {o.id for o in out[0]}
        assert isinstance(next(iter(ids)), uuid.UUID) and len(ids) == 40
    finally:
        engine.dispose()


def test_without_the_temporary_privilege_rows_go_one_by_one(pg_database: PgDatabase) -> None:
    """A database where TEMPORARY was revoked from PUBLIC: writes still work (per-row INSERT)."""
    dbname = psycopg.conninfo.conninfo_to_dict(pg_database.admin_dsn)["dbname"]
    with psycopg.connect(pg_database.admin_dsn, autocommit=True) as conn:
        conn.execute(f'REVOKE TEMPORARY ON DATABASE "{dbname}" FROM PUBLIC')
    settings = ServiceSettings(database_url="sqlite://")
    engine = make_engine(pg_database.app_dsn, pool_size=1)
    store = MetricsStore(engine, settings_thresholds(settings))
    try:
        records = [
            NewRecord(MetricCreate.model_validate(record(f"a{i}", collectId=f"k{i % 30}")), "alice")
            for i in range(40)
        ]
        (out,) = store.write([WriteGroup(Principal("alice"), records)])
        assert sum(o.duplicate for o in out) == 10
        with engine.connect() as conn:
            assert not store._may_copy(conn)
    finally:
        engine.dispose()
