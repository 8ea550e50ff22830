"""The write path stores exactly what it stored before it was made faster: every column of a
varied set of records, byte for byte (stored_rows.json holds the reference), through
``MetricsStore.write`` and through ``build_rows`` plus the SQLAlchemy insert."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from stored_rows import DEFAULT_THRESHOLD, GOLDEN, NOW, OWN, THRESHOLDS, bodies, stored

from rankscope.collect.wire import MetricCreate
from rankscope.service.ingest.rows import NewRecord, build_rows, rescore, with_user_thresholds
from rankscope.service.ingest.writer import MetricsStore, WriteGroup
from rankscope.service.store.db import Principal, make_engine, migrate
from rankscope.service.store.models import metrics_table
from rankscope.service.stored_measures import VALUE_COLUMNS

pytestmark = pytest.mark.service
SERVICE = Principal(user_id="svc", role="service")


def _lookup(_user: str, search_type: str) -> float:
    return THRESHOLDS.get(search_type, DEFAULT_THRESHOLD)


def _records() -> list[NewRecord]:
    return [NewRecord(MetricCreate.model_validate(b), user) for user, b in bodies()]


def _without_ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "id"} for row in rows]


def _store(tmp_path: Path) -> MetricsStore:
    engine = make_engine(f"sqlite:///{tmp_path / 'rows.sqlite'}")
    migrate(engine)
    store = MetricsStore(engine, _lookup)
    for user, values in OWN.items():
        store.set_thresholds(SERVICE, user, dict(values))
    return store


def test_write_stores_every_column_as_before(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    store = _store(tmp_path)
    records = _records()
    try:
        (outcomes,) = store.write([WriteGroup(SERVICE, records)], now=NOW)
    finally:
        store.close()
    rows = stored(tmp_path / "rows.sqlite")
    assert _without_ids(rows) == golden
    # one row per record, each under the id its outcome reports, as 32 lowercase hex digits
    assert [r["id"] for r in rows] == [o.id.hex for o in outcomes]
    assert all(re.fullmatch("[0-9a-f]{32}", r["id"]) for r in rows)
    assert not any(o.duplicate for o in outcomes)
    # JSON text byte for byte (the dict comparison above compares it as text already)
    for row, want in zip(rows, golden, strict=True):
        for column in ("ranked_list", "judgments", "search_types", "document_ids"):
            assert row[column] == want[column], column


def test_outcome_rows_equal_what_is_read_back(tmp_path: Path) -> None:
    """The row a single collect answers with (WriteOutcome.row) equals the stored record."""
    store = _store(tmp_path)
    try:
        (outcomes,) = store.write([WriteGroup(SERVICE, _records())], now=NOW)
        for outcome in outcomes:
            assert outcome.row is not None
            read = store.get(SERVICE, outcome.id)
            assert read is not None
            assert outcome.row == read
    finally:
        store.close()


def test_build_rows_through_sqlalchemy_store_the_same(tmp_path: Path) -> None:
    """build_rows' rows inserted by SQLAlchemy's own column types: the same values (JSON
    read back as JSON: SQLAlchemy writes a JSON null as the text 'null' where the fast insert
    writes SQL NULL)."""
    golden = json.loads(GOLDEN.read_text())
    rows = build_rows(_records(), with_user_thresholds(OWN, _lookup), now=NOW)
    engine = make_engine(f"sqlite:///{tmp_path / 'core.sqlite'}")
    migrate(engine)
    with engine.begin() as conn:
        conn.execute(metrics_table.insert(), rows)
    with engine.connect() as conn:
        typed = conn.execute(select(metrics_table).order_by(metrics_table.c.id)).mappings().all()
    engine.dispose()
    got = stored(tmp_path / "core.sqlite")
    json_columns = ("ranked_list", "judgments", "search_types", "document_ids")
    for row, want, read in zip(_without_ids(got), golden, typed, strict=True):
        for column, value in want.items():
            if column in json_columns:
                assert json.loads(row[column]) == (None if value is None else json.loads(value))
                assert read[column] == (None if value is None else json.loads(value))
            else:
                assert row[column] == value, column


def test_measure_columns_hold_the_values_of_score() -> None:
    """build_rows writes score_values' tuples into the columns by name: each column holds the
    QueryMeasures field of its name, for every record."""
    records = _records()
    rows = build_rows(records, with_user_thresholds(OWN, _lookup), now=NOW)
    for row in rows:  # rescore: the feedback path, one record at a time
        assert {c: row[c] for c in VALUE_COLUMNS} == rescore(row, row["judgments"])
