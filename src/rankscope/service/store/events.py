"""Reads and writes of the online loop (events, alerts, user settings, purge), each in one
transaction acting as a principal, through :class:`~rankscope.service.store.records.
MetricsStore`'s transactions: every statement filters by user in SQL as well (SQLite has no
row-level security); on PostgreSQL the policies of migration 0002 enforce it again.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Table, and_, case, delete, func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from rankscope.service.store.db import Principal
from rankscope.service.store.models import (
    UTCDateTime,
    alerts_table,
    events_table,
    metrics_table,
    user_settings_table,
)
from rankscope.service.store.records import Filters, MetricsStore

E = events_table.c
A = alerts_table.c
M = metrics_table.c
KNOWN = ("search", "impression", "click", "dwell", "thumbs_up", "thumbs_down", "cited")


@dataclass(frozen=True)
class EventFilters:
    """Which events a read covers. ``user_id`` narrows a service-role read to one user."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None
    topic_id: str | None = None
    search_type: str | None = None
    arm: str | None = None
    experiment: str | None = None
    user_id: str | None = None

    @classmethod
    def of_records(cls, filters: Filters, *, arm: bool = True) -> EventFilters:
        """The events of a selection of records: the same dates, topic, search type and user,
        and the same arm unless ``arm=False`` (every arm)."""
        return cls(
            start=filters.start,
            end=filters.end,
            topic_id=filters.topic_id,
            search_type=filters.search_type,
            arm=filters.arm if arm else None,
            user_id=filters.user_id,
        )


@dataclass(frozen=True)
class EventCounts:
    searches: int
    impressions: int
    clicks: int
    sessions_with_impressions: int
    sessions_clicked: int
    click_position_sum: float
    clicks_with_position: int
    searches_with_count: int
    zero_result_searches: int
    thumbs_up: int
    thumbs_down: int
    cited: int
    dwell_sum: float
    dwell_count: int
    other_actions: dict[str, int]
    experiments: dict[str, int]
    first: dt.datetime | None
    last: dt.datetime | None


def _chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class OnlineStore:
    """Data access of the online loop; shares the metrics store's engine and transactions."""

    def __init__(self, metrics: MetricsStore) -> None:
        self.metrics = metrics
        self.engine = metrics.engine
        self.postgres = metrics.postgres

    def _owner(
        self, table: Table, principal: Principal, user_id: str | None
    ) -> list[ColumnElement[bool]]:
        if not principal.is_service:
            return [table.c.user_id == principal.user_id]
        if user_id is not None:
            return [table.c.user_id == user_id]
        return []

    def _event_conds(
        self, principal: Principal, filters: EventFilters
    ) -> list[ColumnElement[bool]]:
        conds = self._owner(events_table, principal, filters.user_id)
        if filters.start is not None:
            conds.append(E.timestamp >= filters.start)
        if filters.end is not None:
            conds.append(E.timestamp <= filters.end)
        for column, value in (
            (E.topic_id, filters.topic_id),
            (E.search_type, filters.search_type),
            (E.arm, filters.arm),
            (E.experiment, filters.experiment),
        ):
            if value is not None:
                conds.append(column == value)
        return conds

    # -- events ------------------------------------------------------------------------------

    def write_events(
        self, principal: Principal, rows: Sequence[dict[str, Any]]
    ) -> list[tuple[uuid.UUID, bool]]:
        """Insert events; one with a stored (user, eventId) is skipped and comes back as
        ``(stored id, True)``. One transaction."""
        if not rows:
            return []
        insert = pg_insert if self.postgres else sqlite_insert
        stmt = insert(events_table).on_conflict_do_nothing(index_elements=["user_id", "event_id"])
        with self.metrics._begin(principal, write=True) as conn:
            conn.execute(stmt, list(rows))
            keyed = sorted({(r["user_id"], r["event_id"]) for r in rows if r["event_id"]})
            stored: dict[tuple[str, str], uuid.UUID] = {}
            for chunk in _chunks(keyed, 400):
                found = conn.execute(
                    select(E.id, E.user_id, E.event_id).where(
                        tuple_(E.user_id, E.event_id).in_(chunk)
                    )
                )
                stored.update({(r.user_id, r.event_id): r.id for r in found})
        out = []
        for row in rows:
            key = (row["user_id"], row["event_id"])
            if row["event_id"] is not None and stored.get(key, row["id"]) != row["id"]:
                out.append((stored[key], True))
            else:
                out.append((row["id"], False))
        return out

    def events_page(
        self,
        principal: Principal,
        filters: EventFilters,
        limit: int,
        offset: int,
        *,
        query_id: str | None = None,
        action: str | None = None,
    ) -> list[dict[str, Any]]:
        conds = self._event_conds(principal, filters)
        if query_id is not None:
            conds.append(E.query_id == query_id)
        if action is not None:
            conds.append(E.action == action)
        query = select(events_table).where(*conds).order_by(E.timestamp.desc(), E.id)
        return self.metrics._fetch_page(principal, query, limit, offset)

    def event_rows(
        self,
        principal: Principal,
        filters: EventFilters,
        actions: Sequence[str] | None = None,
        *,
        query_ids: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Events of the selection (only ``actions`` when given), oldest first."""
        conds = self._event_conds(principal, filters)
        if actions is not None:
            conds.append(E.action.in_(list(actions)))
        cols = [c for c in events_table.c if c.name not in ("attributes", "created_at")]
        out: list[dict[str, Any]] = []
        with self.metrics._begin(principal) as conn:
            if query_ids is None:
                result = conn.execute(select(*cols).where(*conds).order_by(E.timestamp, E.id))
                out = [dict(r) for r in result.mappings()]
            else:
                for chunk in _chunks(sorted(set(query_ids)), 500):
                    result = conn.execute(
                        select(*cols)
                        .where(*conds, E.query_id.in_(chunk))
                        .order_by(E.timestamp, E.id)
                    )
                    out.extend(dict(r) for r in result.mappings())
        return out

    def event_counts(self, principal: Principal, filters: EventFilters) -> EventCounts:
        conds = self._event_conds(principal, filters)

        def count_of(action: str) -> ColumnElement[Any]:
            return func.coalesce(func.sum(case((E.action == action, 1), else_=0)), 0)

        clicked_with_pos = and_(E.action == "click", E.position.is_not(None))
        with_count = and_(E.action == "search", E.result_count.is_not(None))
        totals = select(
            func.count(func.distinct(E.query_id)).label("searches"),
            count_of("impression").label("impressions"),
            count_of("click").label("clicks"),
            func.coalesce(func.sum(case((clicked_with_pos, E.position), else_=0)), 0).label(
                "pos_sum"
            ),
            func.coalesce(func.sum(case((clicked_with_pos, 1), else_=0)), 0).label("pos_n"),
            func.coalesce(func.sum(case((with_count, 1), else_=0)), 0).label("with_count"),
            func.coalesce(
                func.sum(case((and_(with_count, E.result_count == 0), 1), else_=0)), 0
            ).label("zero"),
            count_of("thumbs_up").label("up"),
            count_of("thumbs_down").label("down"),
            count_of("cited").label("cited"),
            func.coalesce(func.sum(E.dwell_seconds), 0).label("dwell_sum"),
            func.count(E.dwell_seconds).label("dwell_n"),
            func.min(E.timestamp).label("first"),
            func.max(E.timestamp).label("last"),
        ).where(*conds)
        per_session = (
            select(
                E.query_id.label("qid"),
                func.max(case((E.action == "impression", 1), else_=0)).label("shown"),
                func.max(case((E.action == "click", 1), else_=0)).label("clicked"),
            )
            .where(*conds, E.query_id.is_not(None))
            .group_by(E.query_id)
            .subquery()
        )
        sessions = select(
            func.coalesce(func.sum(per_session.c.shown), 0),
            func.coalesce(
                func.sum(
                    case((and_(per_session.c.shown == 1, per_session.c.clicked == 1), 1), else_=0)
                ),
                0,
            ),
        )
        others = (
            select(E.action, func.count())
            .where(*conds, E.action.not_in(KNOWN))
            .group_by(E.action)
            .order_by(E.action)
        )
        experiments = (
            select(E.experiment, func.count(func.distinct(E.query_id)))
            .where(*conds, E.action == "impression", E.experiment.is_not(None))
            .group_by(E.experiment)
            .order_by(E.experiment)
        )
        with self.metrics._begin(principal) as conn:
            t = conn.execute(totals).mappings().one()
            shown, clicked = conn.execute(sessions).one()
            other = {a: int(n) for a, n in conn.execute(others)}
            shown_in = {x: int(n) for x, n in conn.execute(experiments)}
        ts = UTCDateTime()
        dialect = self.engine.dialect
        return EventCounts(
            searches=int(t["searches"]),
            impressions=int(t["impressions"]),
            clicks=int(t["clicks"]),
            sessions_with_impressions=int(shown),
            sessions_clicked=int(clicked),
            click_position_sum=float(t["pos_sum"]),
            clicks_with_position=int(t["pos_n"]),
            searches_with_count=int(t["with_count"]),
            zero_result_searches=int(t["zero"]),
            thumbs_up=int(t["up"]),
            thumbs_down=int(t["down"]),
            cited=int(t["cited"]),
            dwell_sum=float(t["dwell_sum"]),
            dwell_count=int(t["dwell_n"]),
            other_actions=other,
            experiments=shown_in,
            first=ts.process_result_value(t["first"], dialect),
            last=ts.process_result_value(t["last"], dialect),
        )

    def query_texts(self, principal: Principal, query_ids: Sequence[str]) -> dict[str, str]:
        """The query text of collected records with these ``queryId`` values."""
        out: dict[str, str] = {}
        if not query_ids:
            return out
        with self.metrics._begin(principal) as conn:
            for chunk in _chunks(sorted(set(query_ids)), 500):
                conds = [M.query_id.in_(chunk), *self.metrics._user_filter(principal, Filters())]
                for qid, text in conn.execute(select(M.query_id, M.query).where(*conds)):
                    out.setdefault(qid, text)
        return out

    # -- records (for comparisons, alerts, calibration, sampling) ----------------------------

    def metric_rows(
        self, principal: Principal, filters: Filters, columns: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The named columns of every record in the selection, oldest first."""
        cols = [metrics_table.c[name] for name in columns]
        with self.metrics._begin(principal) as conn:
            rows = conn.execute(
                select(*cols)
                .where(*self.metrics._user_filter(principal, filters))
                .order_by(M.timestamp, M.id)
            ).mappings()
            return [dict(r) for r in rows]

    # -- alerts ------------------------------------------------------------------------------

    def insert_alert(self, principal: Principal, row: dict[str, Any]) -> bool:
        """Store an alert unless one with its (user, dedup key) exists; True when stored."""
        insert = pg_insert if self.postgres else sqlite_insert
        stmt = (
            insert(alerts_table)
            .on_conflict_do_nothing(index_elements=["user_id", "dedup_key"])
            .returning(A.id)
        )
        with self.metrics._begin(principal, write=True) as conn:
            # RETURNING, not rowcount: the driver's rowcount of a skipped conflict differs
            return conn.execute(stmt, row).first() is not None

    def alert(self, principal: Principal, alert_id: uuid.UUID) -> dict[str, Any] | None:
        with self.metrics._begin(principal) as conn:
            conds = [A.id == alert_id, *self._owner(alerts_table, principal, None)]
            found = conn.execute(select(alerts_table).where(*conds)).mappings().first()
            return dict(found) if found is not None else None

    def alerts_page(
        self,
        principal: Principal,
        *,
        start: dt.datetime | None,
        end: dt.datetime | None,
        user_id: str | None,
        status: str | None,
        limit: int,
        offset: int,
    ) -> list[dict[str, Any]]:
        conds = self._owner(alerts_table, principal, user_id)
        if start is not None:
            conds.append(A.created_at >= start)
        if end is not None:
            conds.append(A.created_at <= end)
        if status is not None:
            conds.append(A.delivery_status == status)
        query = select(alerts_table).where(*conds).order_by(A.created_at.desc(), A.id)
        return self.metrics._fetch_page(principal, query, limit, offset)

    def set_delivery(
        self,
        principal: Principal,
        alert_id: uuid.UUID,
        *,
        status: str,
        attempts: int,
        delivered_at: dt.datetime | None,
        error: str | None,
    ) -> None:
        with self.metrics._begin(principal, write=True) as conn:
            conn.execute(
                update(alerts_table)
                .where(A.id == alert_id)
                .values(
                    delivery_status=status,
                    delivery_attempts=attempts,
                    delivered_at=delivered_at,
                    last_error=error,
                )
            )

    # -- user settings and retention ---------------------------------------------------------

    def retention(self, principal: Principal, user_id: str) -> int | None:
        t = user_settings_table
        with self.metrics._begin(principal) as conn:
            row = conn.execute(
                select(t.c.retention_days).where(
                    t.c.user_id == user_id, *self._owner(t, principal, None)
                )
            ).first()
            return None if row is None else row[0]

    def set_retention(self, principal: Principal, user_id: str, days: int | None) -> None:
        t = user_settings_table
        now = dt.datetime.now(dt.UTC)
        with self.metrics._begin(principal, write=True) as conn:
            conn.execute(delete(t).where(t.c.user_id == user_id))
            if days is not None:
                conn.execute(
                    t.insert().values(user_id=user_id, retention_days=days, updated_at=now)
                )

    def users(self, principal: Principal) -> list[str]:
        """Every user with records, events, alerts or settings (service role)."""
        out: set[str] = set()
        with self.metrics._begin(principal) as conn:
            for table in (metrics_table, events_table, alerts_table, user_settings_table):
                out.update(u for (u,) in conn.execute(select(table.c.user_id).distinct()))
        return sorted(out)

    def purge(
        self, principal: Principal, cutoffs: dict[str, dt.datetime], *, dry_run: bool = False
    ) -> dict[str, dict[str, int]]:
        """Delete each user's records, events and alerts older than the user's cutoff; the
        counts per user and table. One transaction (as the service role)."""
        out: dict[str, dict[str, int]] = {}
        with self.metrics._begin(principal, write=True) as conn:
            for user, cutoff in sorted(cutoffs.items()):
                counts = {}
                for name, table, column in (
                    ("records", metrics_table, M.timestamp),
                    ("events", events_table, E.timestamp),
                    ("alerts", alerts_table, A.created_at),
                ):
                    conds = [table.c.user_id == user, column < cutoff]
                    if dry_run:
                        n = conn.execute(select(func.count()).select_from(table).where(*conds))
                        counts[name] = int(n.scalar_one())
                    else:
                        counts[name] = int(conn.execute(delete(table).where(*conds)).rowcount)
                out[user] = counts
        return out


__all__ = ["EventCounts", "EventFilters", "OnlineStore"]
