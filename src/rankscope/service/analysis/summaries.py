"""Summaries of stored rows: the records' means with intervals (judged and heuristic rows never
mixed), and the events' counts and rates with Wilson intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rankscope.service.analysis.intervals import mean_interval
from rankscope.service.schemas.common import TimeRange, from_value
from rankscope.service.schemas.events import EventsSummary, Rate
from rankscope.service.schemas.records import (
    GroupStats,
    MeanWithInterval,
    MetricsSummary,
    SourceGroups,
)
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import GroupRow
from rankscope.service.stored_measures import MEASURE_COLUMNS, STORED_MEASURES

Kind = Literal["judged", "heuristic"]


def group_stats(row: GroupRow | None) -> GroupStats:
    """Count and each measure's mean with its 95% interval (zeros for an empty group)."""
    values: dict[str, MeanWithInterval] = {}
    for name in MEASURE_COLUMNS:
        if row is None or row.count == 0:
            values[name] = MeanWithInterval(mean=0.0, low=None, high=None)
            continue
        values[name] = mean_interval(row.count, row.means[name], row.variances[name])
    if row is None:
        return GroupStats(count=0, zero_results=0, **values)
    return GroupStats(count=row.count, zero_results=row.zero_results, **values)


def summary(
    rows: Sequence[GroupRow], choice: Literal["auto", "judged", "heuristic"]
) -> MetricsSummary:
    """The design's averages for one kind of rows, and both kinds apart.

    ``auto`` picks the judged rows when the selection has any, else the heuristic rows.
    ``totalQueries`` counts the selection, both kinds: a client pages through the list while
    ``offset < totalQueries``.
    """
    by_kind = {r.kind: r for r in rows}
    judged = group_stats(by_kind.get("judged"))
    heuristic = group_stats(by_kind.get("heuristic"))
    auto: Kind = "judged" if judged.count > 0 else "heuristic"
    kind: Kind = auto if choice == "auto" else choice
    top = judged if kind == "judged" else heuristic
    return MetricsSummary.model_validate(
        {
            "total_queries": judged.count + heuristic.count,
            **{m.summary_field: getattr(top, m.column).mean for m in STORED_MEASURES},
            "judgment_source": kind,
            "by_judgment_source": SourceGroups(judged=judged, heuristic=heuristic),
        }
    )


def rate(numerator: int, denominator: int) -> Rate:
    """A proportion with its 95% Wilson interval (scipy's binomtest)."""
    if denominator == 0:
        return Rate(value=None, low=None, high=None, numerator=0, denominator=0)
    from scipy.stats import binomtest

    ci = binomtest(numerator, denominator).proportion_ci(0.95, method="wilson")
    return Rate(
        value=numerator / denominator,
        low=float(ci.low),
        high=float(ci.high),
        numerator=numerator,
        denominator=denominator,
    )


def events_summary(stores: Stores, principal: Principal, filters: EventFilters) -> EventsSummary:
    """Impressions, clicks, click-through and zero-result rates and the rest of
    ``GET /api/events/summary`` for a selection of events."""
    c = stores.events.counts(principal, filters)
    # the counts (searches, clicks, thumbs_up, other_actions, ...) are read from c by name
    return from_value(
        EventsSummary,
        c,
        click_through_rate=rate(min(c.clicks, c.impressions), c.impressions),
        query_click_rate=rate(c.sessions_clicked, c.sessions_with_impressions),
        mean_click_position=(
            c.click_position_sum / c.clicks_with_position if c.clicks_with_position else None
        ),
        zero_result_rate=rate(c.zero_result_searches, c.searches_with_count),
        mean_dwell_seconds=c.dwell_sum / c.dwell_count if c.dwell_count else None,
        date_range=TimeRange(start=filters.start or c.first, end=filters.end or c.last),
    )


__all__ = ["events_summary", "group_stats", "rate", "summary"]
