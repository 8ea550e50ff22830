"""Reads and writes of the collection service, each in one transaction acting as a principal.

Every statement also filters by user in SQL (so SQLite, which has no row-level security, keeps
users apart the same way); on PostgreSQL the row-level security policies enforce it again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import operator
import secrets
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    and_,
    case,
    func,
    literal,
    select,
    text,
    tuple_,
    type_coerce,
    update,
)
from sqlalchemy.exc import SQLAlchemyError

from rankscope.errors import ServiceError
from rankscope.service.ingest.rows import (
    NewRecord,
    ThresholdLookup,
    build_rows,
    rescore,
    with_user_thresholds,
)
from rankscope.service.store.db import (
    APP_ROLE,
    SERVICE_ROLE,
    Principal,
    act_as,
    current_revision,
    head_revision,
    is_postgres,
)
from rankscope.service.store.models import (
    UTCDateTime,
    api_keys_table,
    metrics_table,
    thresholds_table,
)
from rankscope.service.store.writelock import WriteLock

M = metrics_table.c
Bucket = Literal["hour", "day", "week"]
GroupBy = Literal["topic", "searchType", "arm", "user"]
JudgmentKind = Literal["judged", "heuristic"]
MEASURE_COLUMNS = (
    "precision",
    "recall",
    "f1_score",
    "mean_reciprocal_rank",
    "average_precision",
    "ndcg",
)
KEY_PREFIX = "rsk_"
#: the API's names of the stored measures -> their columns
MEASURE_API_NAMES = {
    "precision": "precision",
    "recall": "recall",
    "f1Score": "f1_score",
    "meanReciprocalRank": "mean_reciprocal_rank",
    "averagePrecision": "average_precision",
    "ndcg": "ndcg",
}
# orders of a page of records: newest first, or by a measure (worst first without "-")
SORT_COLUMNS = MEASURE_API_NAMES


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
    """Aggregates of one group: count, and per measure the mean and the mean of squares."""

    keys: tuple[Any, ...]
    kind: JudgmentKind
    count: int
    means: dict[str, float]
    squares: dict[str, float]
    zero_results: int = 0  # rows that retrieved nothing


@dataclass
class WriteGroup:
    """Records one principal writes (for itself, or for users when it is the service)."""

    principal: Principal
    records: list[NewRecord] = field(default_factory=list)


@dataclass(frozen=True)
class KeyInfo:
    id: str
    user_id: str
    role: Literal["user", "service"]
    name: str | None
    created_at: dt.datetime
    revoked_at: dt.datetime | None


def _kind() -> ColumnElement[str]:
    return case((M.judgment_source == "heuristic", literal("heuristic")), else_=literal("judged"))


class MetricsStore:
    """The service's data access. Thread-safe: one engine, a transaction per call."""

    def __init__(
        self, engine: Engine, thresholds: ThresholdLookup, *, cache_seconds: float = 5.0
    ) -> None:
        self.engine = engine
        self.postgres = is_postgres(engine)
        self._thresholds = thresholds
        # users' own thresholds, read once per cache_seconds (this process sees its own
        # changes at once; other worker processes within cache_seconds)
        self._cache_seconds = cache_seconds
        self._own_cache: dict[str, tuple[dict[str, float], float]] = {}
        self._cache_lock = threading.Lock()
        # SQLite allows one writer: writers queue on this lock instead of on SQLite's busy
        # handler, which sleeps up to 100 ms between tries
        self._write_lock = None if self.postgres else WriteLock(engine.url.database)
        # per role: may it create the temporary table of the COPY path (checked once)
        self._temp_allowed: dict[str, bool] = {}

    def close(self) -> None:
        """Close the engine's connections and the write lock's file."""
        self.engine.dispose()
        if self._write_lock is not None:
            self._write_lock.close()

    # -- transactions ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _begin(self, principal: Principal | None, *, write: bool = False) -> Iterator[Connection]:
        """A transaction (BEGIN IMMEDIATE for writes on SQLite) acting as ``principal``."""
        lock = self._write_lock if write else None
        with lock if lock is not None else contextlib.nullcontext():
            opts = {"sqlite_begin": "IMMEDIATE"} if write else {}
            with self.engine.connect().execution_options(**opts) as conn, conn.begin():
                if principal is not None and self.postgres:
                    act_as(conn, principal)
                yield conn

    def _fetch_page(
        self, principal: Principal, query: Select[Any], limit: int, offset: int
    ) -> list[dict[str, Any]]:
        """One page of an ordered query's rows, as dictionaries, read as ``principal``."""
        with self._begin(principal) as conn:
            rows = conn.execute(query.limit(limit).offset(offset)).mappings()
            return [dict(r) for r in rows]

    def _user_filter(self, principal: Principal, filters: Filters) -> list[ColumnElement[bool]]:
        conds: list[ColumnElement[bool]] = []
        if not principal.is_service:
            conds.append(M.user_id == principal.user_id)
        elif filters.user_id is not None:
            conds.append(M.user_id == filters.user_id)
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

    def write(
        self, groups: Sequence[WriteGroup], now: dt.datetime | None = None
    ) -> list[list[WriteOutcome]]:
        """Store every group's records in one transaction; duplicates (same user and
        ``collectId``) are not stored again and come back with the stored id. ``now``: the
        rows' creation time and the default timestamp (default: the current time).

        The measures are computed before the write transaction opens (one ``evaluate()`` for
        all records), so SQLite's write lock is held only for the inserts."""
        if not groups:
            return []
        lookup = with_user_thresholds(self._own_thresholds(groups), self._thresholds)
        flat = [r for g in groups for r in g.records]
        built = build_rows(flat, lookup, now)
        out: list[list[WriteOutcome]] = []
        with self._begin(None, write=True) as conn:
            start = 0
            for group in groups:
                rows_of_group = built[start : start + len(group.records)]
                start += len(group.records)
                self._as(conn, group.principal)
                out.append(self._insert(conn, rows_of_group))
        return out

    def _own_thresholds(self, groups: Sequence[WriteGroup]) -> dict[str, dict[str, float]]:
        """The users' own thresholds (cached), read as each group's principal."""
        now = time.monotonic()
        own: dict[str, dict[str, float]] = {}
        missing: dict[Principal, set[str]] = {}
        with self._cache_lock:
            for group in groups:
                for record in group.records:
                    hit = self._own_cache.get(record.user_id)
                    if hit is not None and hit[1] > now:
                        own[record.user_id] = hit[0]
                    else:
                        missing.setdefault(group.principal, set()).add(record.user_id)
        if not missing:
            return own
        t = thresholds_table
        read: dict[str, dict[str, float]] = {u: {} for users in missing.values() for u in users}
        with self._begin(None) as conn:
            for principal, users in missing.items():
                self._as(conn, principal)
                for row in conn.execute(select(t).where(t.c.user_id.in_(sorted(users)))):
                    read[row.user_id][row.search_type] = row.threshold
        with self._cache_lock:
            if len(self._own_cache) > 100_000:
                self._own_cache.clear()
            for user, values in read.items():
                self._own_cache[user] = (values, now + self._cache_seconds)
        return {**own, **read}

    def _as(self, conn: Connection, principal: Principal) -> None:
        if self.postgres:
            conn.exec_driver_sql("SET LOCAL ROLE NONE")
            act_as(conn, principal)

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

    def feedback(
        self, principal: Principal, record_id: uuid.UUID, judgments: dict[str, int]
    ) -> dict[str, Any] | None:
        """Replace a record's judgments, recompute its measures, mark it ``feedback``."""
        with self._begin(principal, write=True) as conn:
            conds = [M.id == record_id, *self._user_filter(principal, Filters())]
            query = select(metrics_table).where(*conds)
            if self.postgres:
                query = query.with_for_update()
            found = conn.execute(query).mappings().first()
            if found is None:
                return None
            row = dict(found)
            values = rescore(row, judgments)
            values.update(
                judgments=judgments,
                judgment_source="feedback",
                threshold=None,
                updated_at=dt.datetime.now(dt.UTC),
            )
            conn.execute(update(metrics_table).where(M.id == record_id).values(**values))
            return {**row, **values}

    # -- reads -------------------------------------------------------------------------------

    def get(self, principal: Principal, record_id: uuid.UUID) -> dict[str, Any] | None:
        with self._begin(principal) as conn:
            conds = [M.id == record_id, *self._user_filter(principal, Filters())]
            row = conn.execute(select(metrics_table).where(*conds)).mappings().first()
            return dict(row) if row is not None else None

    def page(
        self,
        principal: Principal,
        filters: Filters,
        limit: int,
        offset: int,
        sort: str | None = None,
    ) -> list[dict[str, Any]]:
        """Records newest first, or by a measure (``SORT_COLUMNS``; ascending, worst first,
        ``-name`` descending; ties newest first), the ranked lists and judgments left out."""
        columns = [c for c in metrics_table.c if c.name not in ("ranked_list", "judgments")]
        order: list[ColumnElement[Any]] = []
        if sort is not None:
            column = M[SORT_COLUMNS[sort.removeprefix("-")]]
            order.append(column.desc() if sort.startswith("-") else column.asc())
        query = (
            select(*columns)
            .where(*self._user_filter(principal, filters))
            .order_by(*order, M.timestamp.desc(), M.id)
        )
        return self._fetch_page(principal, query, limit, offset)

    def rows(self, principal: Principal, filters: Filters) -> Iterator[dict[str, Any]]:
        """Every record of the selection, oldest first, streamed (for exports)."""
        with self._begin(principal) as conn:
            result = conn.execution_options(yield_per=1000).execute(
                select(metrics_table)
                .where(*self._user_filter(principal, filters))
                .order_by(M.timestamp, M.id)
            )
            for row in result.mappings():
                yield dict(row)

    def date_range(
        self, principal: Principal, filters: Filters
    ) -> tuple[dt.datetime | None, dt.datetime | None]:
        with self._begin(principal) as conn:
            row = conn.execute(
                select(
                    type_coerce(func.min(M.timestamp), UTCDateTime),
                    type_coerce(func.max(M.timestamp), UTCDateTime),
                ).where(*self._user_filter(principal, filters))
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
        """Count, means and means of squares of the measures, per judgment kind (judged or
        heuristic, never mixed) and per time bucket or group."""
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
        kind = _kind().label("kind")
        values: list[ColumnElement[Any]] = [
            func.count().label("n"),
            func.sum(case((M.total_retrieved == 0, 1), else_=0)).label("zero"),
        ]
        for name in MEASURE_COLUMNS:
            col = M[name]
            values.append(func.avg(col).label(f"mean_{name}"))
            values.append(func.avg(col * col).label(f"sq_{name}"))
        labelled = [k.label(f"key{i}") for i, k in enumerate(keys)]
        query = (
            select(*labelled, kind, *values)
            .where(*self._user_filter(principal, filters))
            .group_by(*[text(f"key{i}") for i in range(len(keys))], text("kind"))
            .order_by(*[text(f"key{i}") for i in range(len(keys))], text("kind"))
        )
        with self._begin(principal) as conn:
            out = []
            for row in conn.execute(query).mappings():
                out.append(
                    GroupRow(
                        keys=tuple(row[f"key{i}"] for i in range(len(keys))),
                        kind=row["kind"],
                        count=int(row["n"]),
                        means={n: float(row[f"mean_{n}"]) for n in MEASURE_COLUMNS},
                        squares={n: float(row[f"sq_{n}"]) for n in MEASURE_COLUMNS},
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

    # -- thresholds --------------------------------------------------------------------------

    def own_thresholds(self, principal: Principal, user_id: str) -> dict[str, float]:
        with self._begin(principal) as conn:
            rows = conn.execute(
                select(thresholds_table.c.search_type, thresholds_table.c.threshold).where(
                    thresholds_table.c.user_id == user_id
                )
            )
            return {r.search_type: r.threshold for r in rows}

    def set_thresholds(
        self, principal: Principal, user_id: str, values: dict[str, float | None]
    ) -> dict[str, float]:
        t = thresholds_table
        now = dt.datetime.now(dt.UTC)
        with self._cache_lock:
            self._own_cache.pop(user_id, None)
        with self._begin(principal, write=True) as conn:
            for search_type, value in values.items():
                conn.execute(
                    t.delete().where(and_(t.c.user_id == user_id, t.c.search_type == search_type))
                )
                if value is not None:
                    conn.execute(
                        t.insert().values(
                            user_id=user_id,
                            search_type=search_type,
                            threshold=value,
                            updated_at=now,
                        )
                    )
        return self.own_thresholds(principal, user_id)

    # -- health ------------------------------------------------------------------------------

    def revision(self) -> str | None:
        return current_revision(self.engine)

    def check_schema(self) -> None:
        """Raise ServiceError unless the database is at the migrations' head."""
        try:
            have = self.revision()
        except SQLAlchemyError as exc:
            raise ServiceError(f"cannot reach the database: {_first_line(exc)}") from exc
        want = head_revision()
        if have != want:
            raise ServiceError(
                f"the database schema is at revision {have or 'none'}, this rankscope needs "
                f"{want}: run `rankscope serve migrate` with the owner's URL "
                "(admin_database_url) first"
            )

    def check_role(self) -> RoleProblem | None:
        """On PostgreSQL, what is wrong with the role the service connects as, else None.

        Row-level security protects the users from each other only when the service runs as
        ``rankscope_app`` (or a role that inherits its rights and nothing more): a superuser,
        a BYPASSRLS role or one that holds ``rankscope_service``'s rights without ``SET ROLE``
        sees every user's rows; the tables' owner, or a role without ``rankscope_app``'s
        rights, matches no policy, so it reads nothing and every write is refused."""
        if not self.postgres:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT current_user, rolsuper, rolbypassrls, "
                    f"pg_has_role(current_user, '{SERVICE_ROLE}', 'USAGE'), "
                    f"pg_has_role(current_user, '{APP_ROLE}', 'USAGE'), "
                    f"pg_has_role(current_user, '{SERVICE_ROLE}', 'MEMBER') "
                    "FROM pg_roles WHERE rolname = current_user"
                )
            ).one()
            owned = [
                r[0]
                for r in conn.execute(
                    text(
                        "SELECT c.relname FROM pg_class c WHERE c.oid IN ("
                        + ", ".join(f"to_regclass('{t}')" for t in _PROTECTED_TABLES)
                        + ") AND pg_has_role(current_user, c.relowner, 'USAGE') "
                        "ORDER BY c.relname"
                    )
                )
            ]
        name, superuser, bypassrls, holds_service, holds_app, service_member = row
        fix = (
            f"Connect as {APP_ROLE} (created by `rankscope serve migrate`; give it a password "
            f"with ALTER ROLE {APP_ROLE} PASSWORD '...') and keep the owner's URL in "
            "admin_database_url"
        )
        if superuser or bypassrls:
            what = "a superuser" if superuser else "a BYPASSRLS role"
            return RoleProblem(
                f"the service connects as {name!r}, {what}: row-level security would not "
                f"apply. {fix}",
                bypasses_rls=True,
            )
        if owned:
            return RoleProblem(
                f"the service connects as {name!r}, the owner of {', '.join(owned)}: "
                "row-level security is forced on the owner too and no policy admits it, so "
                f"every read would come back empty and every write be refused. {fix}",
                bypasses_rls=False,
            )
        if holds_service:
            return RoleProblem(
                f"the service connects as {name!r}, which holds the rights of {SERVICE_ROLE} "
                "without SET ROLE (it is that role, or a member with INHERIT): every request "
                f"would read and change every user's rows. {fix} ({APP_ROLE} is a NOINHERIT "
                f"member of {SERVICE_ROLE}; a role of your own must not inherit it)",
                bypasses_rls=True,
            )
        if not holds_app or not service_member:
            lacks = (
                f"does not hold the rights of {APP_ROLE}, so no row-level security policy "
                "admits it: every read would come back empty and every write be refused"
                if not holds_app
                else f"is not a member of {SERVICE_ROLE}, so requests with a service-role "
                "token would fail"
            )
            return RoleProblem(
                f"the service connects as {name!r}, which {lacks}. {fix} (or a role granted "
                f"{APP_ROLE} with INHERIT)",
                bypasses_rls=False,
            )
        return None


@dataclass(frozen=True)
class RoleProblem:
    """Why the service must not run as its PostgreSQL role. ``bypasses_rls``: the role would
    see other users' rows (``allow_privileged_role`` may accept that for experiments); else the
    service could not work at all."""

    message: str
    bypasses_rls: bool


#: the tables under row-level security, and the keys (owned by the migrating role too)
_PROTECTED_TABLES = (
    "retrieval_metrics",
    "user_thresholds",
    "search_events",
    "alerts",
    "user_settings",
    "api_keys",
)


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
    for chunk in _chunks(sorted(set(keys)), 400):
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
    :meth:`MetricsStore._insert_each` stores them (a regression test compares the two)."""
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


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# -- API keys (the owner's connection: the app role may only read them) ----------------------


def hash_key(key: str) -> str:
    """SHA-256 of a key: keys are 32 random bytes, so a fast hash is safe (no guessing)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(
    engine: Engine, user_id: str, role: Literal["user", "service"] = "user", name: str | None = None
) -> tuple[str, KeyInfo]:
    """A new API key (returned once, never stored) and its record."""
    if not user_id.strip():
        raise ServiceError("an API key needs a non-empty user id")
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        conn.execute(
            api_keys_table.insert().values(
                id=key_id,
                key_hash=hash_key(key),
                user_id=user_id,
                role=role,
                name=name,
                created_at=now,
            )
        )
    return key, KeyInfo(key_id, user_id, role, name, now, None)


def key_id_of(key_or_id: str) -> str:
    """The id part of a key (``rsk_<id>_<secret>``), or the argument when it is an id."""
    if key_or_id.startswith(KEY_PREFIX) and key_or_id.count("_") >= 2:
        return key_or_id[len(KEY_PREFIX) :].split("_", 1)[0]
    return key_or_id


def revoke_key(engine: Engine, key_or_id: str) -> KeyInfo:
    key_id = key_id_of(key_or_id)
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        row = (
            conn.execute(select(api_keys_table).where(api_keys_table.c.id == key_id))
            .mappings()
            .first()
        )
        if row is None:
            raise ServiceError(
                f"no API key with id {key_id!r}; `rankscope serve list-keys` shows them"
            )
        revoked = row["revoked_at"] or now
        conn.execute(
            update(api_keys_table).where(api_keys_table.c.id == key_id).values(revoked_at=revoked)
        )
    return KeyInfo(row["id"], row["user_id"], row["role"], row["name"], row["created_at"], revoked)


def list_keys(engine: Engine) -> list[KeyInfo]:
    with engine.connect() as conn:
        rows = conn.execute(select(api_keys_table).order_by(api_keys_table.c.created_at))
        return [KeyInfo(r.id, r.user_id, r.role, r.name, r.created_at, r.revoked_at) for r in rows]


def lookup_key(engine: Engine, key: str) -> KeyInfo | None:
    """The live key with this value, or None (unknown or revoked)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(api_keys_table).where(api_keys_table.c.key_hash == hash_key(key))
        ).first()
    if row is None or row.revoked_at is not None:
        return None
    return KeyInfo(row.id, row.user_id, row.role, row.name, row.created_at, row.revoked_at)


__all__ = [
    "KEY_PREFIX",
    "MEASURE_API_NAMES",
    "MEASURE_COLUMNS",
    "SORT_COLUMNS",
    "Filters",
    "GroupRow",
    "KeyInfo",
    "MetricsStore",
    "RoleProblem",
    "WriteGroup",
    "WriteOutcome",
    "create_key",
    "hash_key",
    "key_id_of",
    "list_keys",
    "lookup_key",
    "revoke_key",
]
