"""The events (``search_events``): impressions and interactions, written idempotently by
``eventId`` and read back as pages, rows for the click models and counts, each in one
transaction acting as a principal (on PostgreSQL the policies of migration 0002 apply too)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from rankscope.collect.wire import KNOWN_ACTIONS
from rankscope.service.store.base import Database, chunks, owner_filter
from rankscope.service.store.db import Principal
from rankscope.service.store.models import UTCDateTime, events_table
from rankscope.service.store.records import Filters

E = events_table.c


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


class EventStore:
    """Reads and writes of the events."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _event_conds(
        self, principal: Principal, filters: EventFilters
    ) -> list[ColumnElement[bool]]:
        conds = owner_filter(events_table, principal, filters.user_id)
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

    def write(
        self, principal: Principal, rows: Sequence[dict[str, Any]]
    ) -> list[tuple[uuid.UUID, bool]]:
        """Insert events; one with a stored (user, eventId) is skipped and comes back as
        ``(stored id, True)``. One transaction."""
        if not rows:
            return []
        insert = pg_insert if self.db.postgres else sqlite_insert
        stmt = insert(events_table).on_conflict_do_nothing(index_elements=["user_id", "event_id"])
        with self.db.transaction(principal, write=True) as conn:
            conn.execute(stmt, list(rows))
            keyed = sorted({(r["user_id"], r["event_id"]) for r in rows if r["event_id"]})
            stored: dict[tuple[str, str], uuid.UUID] = {}
            for chunk in chunks(keyed, 400):
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

    def page(
        self,
        principal: Principal,
        filters: EventFilters,
        limit: int,
        offset: int,
        *,
        query_id: str | None = None,
        action: str | None = None,
        max_bytes: int,
    ) -> tuple[list[dict[str, Any]], bool]:
        """A page of events, newest first, of at most ``limit`` events and about
        ``max_bytes`` (see :meth:`Database.fetch_bounded_page`)."""
        conds = self._event_conds(principal, filters)
        if query_id is not None:
            conds.append(E.query_id == query_id)
        if action is not None:
            conds.append(E.action == action)
        query = select(events_table).where(*conds).order_by(E.timestamp.desc(), E.id)
        return self.db.fetch_bounded_page(principal, query, limit, offset, max_bytes)

    def rows(
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
        with self.db.transaction(principal) as conn:
            if query_ids is None:
                result = conn.execute(select(*cols).where(*conds).order_by(E.timestamp, E.id))
                out = [dict(r) for r in result.mappings()]
            else:
                for chunk in chunks(sorted(set(query_ids)), 500):
                    result = conn.execute(
                        select(*cols)
                        .where(*conds, E.query_id.in_(chunk))
                        .order_by(E.timestamp, E.id)
                    )
                    out.extend(dict(r) for r in result.mappings())
        return out

    def counts(self, principal: Principal, filters: EventFilters) -> EventCounts:
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
            .where(*conds, E.action.not_in(KNOWN_ACTIONS))
            .group_by(E.action)
            .order_by(E.action)
        )
        experiments = (
            select(E.experiment, func.count(func.distinct(E.query_id)))
            .where(*conds, E.action == "impression", E.experiment.is_not(None))
            .group_by(E.experiment)
            .order_by(E.experiment)
        )
        with self.db.transaction(principal) as conn:
            t = conn.execute(totals).mappings().one()
            shown, clicked = conn.execute(sessions).one()
            other = {a: int(n) for a, n in conn.execute(others)}
            shown_in = {x: int(n) for x, n in conn.execute(experiments)}
        ts = UTCDateTime()
        dialect = self.db.engine.dialect
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


__all__ = ["EventCounts", "EventFilters", "EventStore"]
