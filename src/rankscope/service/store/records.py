"""The records (``retrieval_metrics``): inserted as ready-made rows, read back as pages,
streams and aggregates, each in one transaction acting as a principal.

The rows come from the write path (:mod:`rankscope.service.ingest`), which computes their
measures; the store neither scores nor validates.
"""

from __future__ import annotations

import datetime as dt
import operator
import uuid
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    case,
    func,
    literal,
    select,
    tuple_,
    type_coerce,
    update,
)

from rankscope.service.store.base import Database, chunks, owner_filter
from rankscope.service.store.db import Principal
from rankscope.service.store.models import UTCDateTime, metrics_table

M = metrics_table.c
Bucket = Literal["hour", "day", "week"]
GroupBy = Literal["topic", "searchType", "arm", "user"]
JudgmentKind = Literal["judged", "heuristic"]
#: records an export reads from the database at a time
EXPORT_CHUNK_ROWS = 4


@dataclass(frozen=True)
class Filters:
    """Which rows a read covers. ``user_id`` narrows a service-role read to one user."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None
    topic_id: str | None = None
    search_type: str | None = None
    arm: str | None = None
    judgment_source: str | None = None
    user_id: str | None = None


class WriteOutcome(NamedTuple):
    """What became of one written record (a named tuple: one per record)."""

    id: uuid.UUID
    duplicate: bool
    row: dict[str, Any] | None  # the inserted row (None for a duplicate)


@dataclass(frozen=True)
class GroupRow:
    """Aggregates of one group: count, and per measure the mean and the sample variance
    (divided by n - 1; 0 for a group of one)."""

    keys: tuple[Any, ...]
    kind: JudgmentKind
    count: int
    means: dict[str, float]
    variances: dict[str, float]
    zero_results: int = 0  # rows that retrieved nothing


def _kind() -> ColumnElement[str]:
    return case((M.judgment_source == "heuristic", literal("heuristic")), else_=literal("judged"))


class RecordStore(Database):
    """Reads and writes of the records. ``averaged``: the columns whose means (and sample
    variances) :meth:`aggregate` gives, the measures of
    :data:`rankscope.service.stored_measures.MEASURE_COLUMNS` (the store knows no measure)."""

    def __init__(self, engine: Engine, averaged: Sequence[str]) -> None:
        super().__init__(engine)
        self.averaged = tuple(averaged)
        # per role: may it create the temporary table of the COPY path (checked once)
        self._temp_allowed: dict[str, bool] = {}

    def user_filter(self, principal: Principal, filters: Filters) -> list[ColumnElement[bool]]:
        """The conditions of a read of ``filters``' records as ``principal``."""
        conds = owner_filter(metrics_table, principal, filters.user_id)
        if filters.start is not None:
            conds.append(M.timestamp >= filters.start)
        if filters.end is not None:
            conds.append(M.timestamp <= filters.end)
        if filters.topic_id is not None:
            conds.append(M.topic_id == filters.topic_id)
        if filters.search_type is not None:
            conds.append(M.search_type == filters.search_type)
        if filters.arm is not None:
            conds.append(M.arm == filters.arm)
        if filters.judgment_source == "judged":  # provided and feedback
            conds.append(M.judgment_source != "heuristic")
        elif filters.judgment_source is not None:
            conds.append(M.judgment_source == filters.judgment_source)
        return conds

    # -- writes ------------------------------------------------------------------------------

    def insert(
        self, groups: Sequence[tuple[Principal, list[dict[str, Any]]]]
    ) -> list[list[WriteOutcome]]:
        """Store each group's rows as its principal, all in one transaction; duplicates (same
        user and ``collectId``) are not stored again and come back with the stored id."""
        out: list[list[WriteOutcome]] = []
        with self.transaction(None, write=True) as conn:
            for principal, rows in groups:
                self.act_as(conn, principal)
                out.append(self._insert(conn, rows))
        return out

    def _insert(self, conn: Connection, rows: list[dict[str, Any]]) -> list[WriteOutcome]:
        if not rows:
            return []
        if self.postgres and len(rows) >= COPY_MIN_ROWS and self._may_copy(conn):
            return self._insert_copy(conn, rows)
        return self._insert_each(conn, rows)

    def _insert_each(self, conn: Connection, rows: list[dict[str, Any]]) -> list[WriteOutcome]:
        """``INSERT ... ON CONFLICT (user_id, collect_id) DO NOTHING`` per row, then the stored
        ids of the rows that carry a ``collectId`` (the first of a key wins)."""
        # the driver's executemany on ready-made tuples: SQLAlchemy's per-row type processing
        # costs more than the insert itself at thousands of rows per second
        sql, convert = _insert_plan(self.postgres)
        conn.exec_driver_sql(sql, [convert(row) for row in rows])
        return _outcomes(conn, rows)

    def _may_copy(self, conn: Connection) -> bool:
        """Whether the current role may create temporary tables (PostgreSQL grants it to
        PUBLIC by default; a database where it was revoked gets the per-row INSERT)."""
        role = conn.exec_driver_sql("SELECT current_user").scalar_one()
        allowed = self._temp_allowed.get(role)
        if allowed is None:
            allowed = bool(
                conn.exec_driver_sql(
                    "SELECT has_database_privilege(current_database(), 'TEMPORARY')"
                ).scalar_one()
            )
            self._temp_allowed[role] = allowed
        return allowed

    def _insert_copy(self, conn: Connection, rows: list[dict[str, Any]]) -> list[WriteOutcome]:
        """The rows through ``COPY`` into a temporary table, then one ``INSERT ... SELECT ...
        ON CONFLICT (user_id, collect_id) DO NOTHING`` (PostgreSQL): one statement instead of
        one per row, with the outcomes of :meth:`_insert_each`. (PostgreSQL refuses ``COPY
        FROM`` into a table under row-level security; the ``INSERT`` applies its policies, as
        the current user of the transaction.)"""
        _copy_rows(conn, rows)
        return _outcomes(conn, rows)

    def modify(
        self,
        principal: Principal,
        record_id: uuid.UUID,
        change: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> dict[str, Any] | None:
        """Update a record with the columns ``change`` computes from it, in one transaction
        that holds the row (``FOR UPDATE`` on PostgreSQL); the record as updated, or None when
        the principal has no such record."""
        with self.transaction(principal, write=True) as conn:
            conds = [M.id == record_id, *self.user_filter(principal, Filters())]
            query = select(metrics_table).where(*conds)
            if self.postgres:
                query = query.with_for_update()
            found = conn.execute(query).mappings().first()
            if found is None:
                return None
            row = dict(found)
            values = change(row)
            conn.execute(update(metrics_table).where(M.id == record_id).values(**values))
            return {**row, **values}

    # -- reads -------------------------------------------------------------------------------

    def get(self, principal: Principal, record_id: uuid.UUID) -> dict[str, Any] | None:
        with self.transaction(principal) as conn:
            conds = [M.id == record_id, *self.user_filter(principal, Filters())]
            row = conn.execute(select(metrics_table).where(*conds)).mappings().first()
            return dict(row) if row is not None else None

    def page(
        self,
        principal: Principal,
        filters: Filters,
        limit: int,
        offset: int,
        sort: str | None = None,
        *,
        max_bytes: int,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Records newest first, or by a column (``sort``: ascending, ``-column`` descending;
        ties newest first), the ranked lists and judgments left out; at most ``limit`` and
        about ``max_bytes`` (see :meth:`Database.fetch_bounded_page`)."""
        columns = [c for c in metrics_table.c if c.name not in ("ranked_list", "judgments")]
        order: list[ColumnElement[Any]] = []
        if sort is not None:
            column = M[sort.removeprefix("-")]
            order.append(column.desc() if sort.startswith("-") else column.asc())
        query = (
            select(*columns)
            .where(*self.user_filter(principal, filters))
            .order_by(*order, M.timestamp.desc(), M.id)
        )
        return self.fetch_bounded_page(principal, query, limit, offset, max_bytes)

    def rows(
        self, principal: Principal, filters: Filters, columns: Sequence[str], offset: int = 0
    ) -> Generator[dict[str, Any], None, None]:
        """The ``columns`` of every record of the selection, oldest first (ties by id, so an
        ``offset`` continues where an earlier read stopped), streamed (for exports): a few rows
        at a time, since one row may hold 100,000 judgments (megabytes as Python objects). Only
        the columns asked for are read and decoded (an export needs neither a record's
        document ids nor its measures)."""
        with self.transaction(principal) as conn:
            result = conn.execution_options(yield_per=EXPORT_CHUNK_ROWS).execute(
                select(*(M[name] for name in columns))
                .where(*self.user_filter(principal, filters))
                .order_by(M.timestamp, M.id)
                .offset(offset)
            )
            # closed also when the reader stops early (a full export part): else PostgreSQL's
            # server-side cursor is left to the garbage collector
            with result:
                for row in result.mappings():
                    yield dict(row)

    def date_range(
        self, principal: Principal, filters: Filters
    ) -> tuple[dt.datetime | None, dt.datetime | None]:
        with self.transaction(principal) as conn:
            row = conn.execute(
                select(
                    type_coerce(func.min(M.timestamp), UTCDateTime),
                    type_coerce(func.max(M.timestamp), UTCDateTime),
                ).where(*self.user_filter(principal, filters))
            ).one()
            return row[0], row[1]

    def aggregate(
        self,
        principal: Principal,
        filters: Filters,
        *,
        bucket: Bucket | None = None,
        by: GroupBy | None = None,
    ) -> list[GroupRow]:
        """Count, means and sample variances of the measures, per judgment kind (judged or
        heuristic, never mixed) and per time bucket or group.

        The variance is summed from each value's deviation from its group's mean (a window
        average over the group, then one grouped pass), not E[x^2] - E[x]^2, whose two nearly
        equal terms cancel: a group of equal values has variance 0 exactly."""
        keys: list[ColumnElement[Any]] = []
        if bucket is not None:
            keys.append(self._bucket(bucket))
        if by is not None:
            columns = {
                "topic": M.topic_id,
                "searchType": M.search_type,
                "arm": M.arm,
                "user": M.user_id,
            }
            keys.append(columns[by])
        group = [*keys, _kind()]
        inner_columns: list[ColumnElement[Any]] = [
            *(k.label(f"key{i}") for i, k in enumerate(keys)),
            _kind().label("kind"),
            M.total_retrieved.label("total_retrieved"),
        ]
        for name in self.averaged:
            inner_columns.append(M[name].label(f"v_{name}"))
            inner_columns.append(func.avg(M[name]).over(partition_by=group).label(f"m_{name}"))
        inner = select(*inner_columns).where(*self.user_filter(principal, filters)).subquery("g")
        g = inner.c
        values: list[ColumnElement[Any]] = [
            func.count().label("n"),
            func.sum(case((g.total_retrieved == 0, 1), else_=0)).label("zero"),
        ]
        for name in self.averaged:
            deviation = g[f"v_{name}"] - g[f"m_{name}"]
            values.append(func.avg(g[f"v_{name}"]).label(f"mean_{name}"))
            values.append(func.sum(deviation * deviation).label(f"ss_{name}"))
        key_columns = [g[f"key{i}"] for i in range(len(keys))]
        query = (
            select(*key_columns, g.kind, *values)
            .group_by(*key_columns, g.kind)
            .order_by(*key_columns, g.kind)
        )
        with self.transaction(principal) as conn:
            out = []
            for row in conn.execute(query).mappings():
                n = int(row["n"])
                out.append(
                    GroupRow(
                        keys=tuple(row[f"key{i}"] for i in range(len(keys))),
                        kind=row["kind"],
                        count=n,
                        means={m: float(row[f"mean_{m}"]) for m in self.averaged},
                        variances={
                            m: float(row[f"ss_{m}"]) / (n - 1) if n > 1 else 0.0
                            for m in self.averaged
                        },
                        zero_results=int(row["zero"] or 0),
                    )
                )
            return out

    def _bucket(self, bucket: Bucket) -> ColumnElement[Any]:
        if self.postgres:
            expr = func.date_trunc(bucket, func.timezone("UTC", M.timestamp))
        else:
            fmt = "%Y-%m-%d %H:00:00" if bucket == "hour" else "%Y-%m-%d 00:00:00"
            if bucket == "week":  # the Monday of the week: next Sunday (or today), minus 6 days
                expr = func.strftime(fmt, M.timestamp, "weekday 0", "-6 days")
            else:
                expr = func.strftime(fmt, M.timestamp)
        return type_coerce(expr, UTCDateTime)

    def metric_rows(
        self, principal: Principal, filters: Filters, columns: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The named columns of every record in the selection, oldest first."""
        cols = [metrics_table.c[name] for name in columns]
        with self.transaction(principal) as conn:
            rows = conn.execute(
                select(*cols)
                .where(*self.user_filter(principal, filters))
                .order_by(M.timestamp, M.id)
            ).mappings()
            return [dict(r) for r in rows]

    def query_texts(self, principal: Principal, query_ids: Sequence[str]) -> dict[str, str]:
        """The query text of collected records with these ``queryId`` values."""
        out: dict[str, str] = {}
        if not query_ids:
            return out
        with self.transaction(principal) as conn:
            for chunk in chunks(sorted(set(query_ids)), 500):
                conds = [M.query_id.in_(chunk), *self.user_filter(principal, Filters())]
                for qid, text in conn.execute(select(M.query_id, M.query).where(*conds)):
                    out.setdefault(qid, text)
        return out


_JSON_COLUMNS = frozenset({"search_types", "document_ids", "ranked_list", "judgments"})
_TIME_COLUMNS = frozenset({"timestamp", "created_at", "updated_at"})


def _insert_plan(postgres: bool) -> tuple[str, Any]:
    """The INSERT (duplicates by user and collectId skipped) and a row -> parameters function,
    storing values exactly as the SQLAlchemy column types would."""
    names = [c.name for c in metrics_table.columns]
    mark = "%s" if postgres else "?"
    sql = (
        f"INSERT INTO retrieval_metrics ({', '.join(chr(34) + n + chr(34) for n in names)}) "
        f"VALUES ({', '.join([mark] * len(names))}) "
        "ON CONFLICT (user_id, collect_id) DO NOTHING"
    )

    utc = dt.UTC
    dumps = orjson.dumps
    last: list[Any] = [None, None]  # rows of one write share created_at: format it once

    def as_time(v: Any) -> Any:
        if v is None:
            return None
        if v is last[0]:
            return last[1]
        out = v if v.tzinfo is utc else v.astimezone(utc)
        if not postgres:
            # SQLAlchemy's SQLite DATETIME text (%04d-%02d-%02d %02d:%02d:%02d.%06d)
            out = out.replace(tzinfo=None).isoformat(" ", "microseconds")
        last[0], last[1] = v, out
        return out

    values_of = operator.itemgetter(*names)
    id_at = names.index("id")
    json_at = [i for i, n in enumerate(names) if n in _JSON_COLUMNS]
    time_at = [i for i, n in enumerate(names) if n in _TIME_COLUMNS]

    def convert(row: dict[str, Any]) -> tuple[Any, ...]:
        # called per row of every write: the conversions are inlined, not a call per column
        values = list(values_of(row))
        if not postgres:
            values[id_at] = values[id_at].hex
        for i in json_at:
            v = values[i]
            if v is not None:
                values[i] = dumps(v).decode()
        for i in time_at:
            v = values[i]
            values[i] = last[1] if v is last[0] else as_time(v)
        return tuple(values)  # SQLAlchemy passes on tuples only

    return sql, convert


#: from this many rows on, PostgreSQL writes use COPY (below it, the per-row INSERT costs less
#: than the extra round trips)
COPY_MIN_ROWS = 16


def _outcomes(conn: Connection, rows: list[dict[str, Any]]) -> list[WriteOutcome]:
    """After an ``INSERT ... ON CONFLICT DO NOTHING`` of ``rows``: per row, the stored id and
    whether it was a repeat (a ``collectId`` already stored, by this call or an earlier one)."""
    keyed = [(r["user_id"], r["collect_id"]) for r in rows if r["collect_id"] is not None]
    if not keyed:  # nothing could be a repeat
        return [WriteOutcome(row["id"], False, row) for row in rows]
    stored = _stored_ids(conn, keyed)
    out = []
    for row in rows:
        key = (row["user_id"], row["collect_id"])
        if row["collect_id"] is not None and stored.get(key, row["id"]) != row["id"]:
            out.append(WriteOutcome(stored[key], True, None))
        else:
            out.append(WriteOutcome(row["id"], False, row))
    return out


def _stored_ids(
    conn: Connection, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], uuid.UUID]:
    """The ids stored (and visible to the current user) under ``(user_id, collect_id)`` keys."""
    stored: dict[tuple[str, str], uuid.UUID] = {}
    for chunk in chunks(sorted(set(keys)), 400):
        found = conn.execute(
            select(M.id, M.user_id, M.collect_id).where(tuple_(M.user_id, M.collect_id).in_(chunk))
        )
        stored.update({(r.user_id, r.collect_id): r.id for r in found})
    return stored


def _copy_rows(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """``COPY`` the rows (text format, on the connection's psycopg connection, inside its
    transaction) into a temporary table, insert them from there in their order (the first of a
    repeated ``(user_id, collect_id)`` wins, as with one INSERT per row) and drop the table.
    The values are the INSERT's parameters, so they are stored exactly as
    :meth:`RecordStore._insert_each` stores them (a regression test compares the two)."""
    driver = conn.connection.driver_connection
    assert driver is not None
    _, convert = _insert_plan(True)
    with driver.cursor() as cur:
        cur.execute(_COPY_TABLE)
        with cur.copy(_COPY_IN) as copy:
            for i, row in enumerate(rows):
                copy.write_row((*convert(row), i))
        cur.execute(_COPY_INSERT)
        cur.execute("DROP TABLE rs_copy_metrics")


_COLUMN_LIST = ", ".join(f'"{c.name}"' for c in metrics_table.columns)
# ON COMMIT DROP: gone with the transaction even when a statement fails; dropped after use as
# well, so that the next group of the same transaction can create it again
_COPY_TABLE = (
    "CREATE TEMPORARY TABLE rs_copy_metrics (LIKE retrieval_metrics, ord integer) ON COMMIT DROP"
)
_COPY_IN = f"COPY rs_copy_metrics ({_COLUMN_LIST}, ord) FROM STDIN"
_COPY_INSERT = (
    f"INSERT INTO retrieval_metrics ({_COLUMN_LIST}) "
    f"SELECT {_COLUMN_LIST} FROM rs_copy_metrics ORDER BY ord "
    "ON CONFLICT (user_id, collect_id) DO NOTHING"
)


__all__ = [
    "COPY_MIN_ROWS",
    "Filters",
    "GroupRow",
    "RecordStore",
    "WriteOutcome",
]
