"""Implicit judgments in the service: click logs from stored events, graded per (normalised
query, document) by :mod:`rankscope.online.clicks`, as qrels for exports and evaluations.

The click log pools every arm's events (only the user, dates, topic and search type narrow
it): two arms compared on click judgments are judged by the same labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope.online.clicks import DEFAULT_THRESHOLDS, ClickJudgments, GradeThresholds, Model
from rankscope.online.clicks import click_judgments as grade_clicks
from rankscope.online.queries import normalise_query
from rankscope.service.analysis.sessions import (
    CLICK_LOG_ACTIONS,
    Sessions,
    missing_texts,
    sessions_of,
)
from rankscope.service.ingest import measures
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import Filters


@dataclass(frozen=True)
class ClickQrels:
    """Click grades by normalised query text, and how they were made."""

    judgments: ClickJudgments
    sessions: Sessions
    by_query: dict[str, dict[str, int]]

    @property
    def source(self) -> str:
        return f"clicks:{self.judgments.model}"


def thresholds_for(settings: ServiceSettings, model: Model) -> GradeThresholds:
    given = settings.click_grade_thresholds.get(model)
    return GradeThresholds(*given) if given is not None else DEFAULT_THRESHOLDS[model]


def event_filters_of(filters: Filters) -> EventFilters:
    """The events behind click judgments for a selection of records (every arm)."""
    return EventFilters.of_records(filters, arm=False)


def click_qrels(
    stores: Stores,
    principal: Principal,
    filters: EventFilters,
    settings: ServiceSettings,
    *,
    model: Model | None = None,
    min_impressions: int | None = None,
) -> ClickQrels:
    """Grade the selection's click log by ``model`` (settings' default when None)."""
    chosen: Model = model or settings.click_model
    rows = stores.events.rows(principal, filters, CLICK_LOG_ACTIONS)
    texts = stores.records.query_texts(principal, missing_texts(rows))
    sessions = sessions_of(rows, texts)
    judged = grade_clicks(
        sessions.log,
        chosen,
        min_impressions=min_impressions or settings.click_min_impressions,
        thresholds=thresholds_for(settings, chosen),
        satisfied_dwell_seconds=settings.click_satisfied_dwell_seconds,
    )
    return ClickQrels(judged, sessions, judged.qrels_dict())


def scored_with(
    rows: Sequence[Mapping[str, Any]], by_query: Mapping[str, Mapping[str, int]]
) -> list[tuple[Mapping[str, Any], measures.QueryMeasures]]:
    """Each record whose normalised query has click grades, with its measures computed
    against them (one ``evaluate()`` call); records without grades are left out."""
    kept = []
    items = []
    for row in rows:
        grades = by_query.get(normalise_query(row["query"]))
        if not grades:
            continue
        doc_ids = [item["document_id"] for item in row["ranked_list"]]
        ranking = measures.shown_ranking(doc_ids, row["cutoff"])
        items.append(measures.Evaluable(str(row["id"]), ranking, dict(grades)))
        kept.append(row)
    return list(zip(kept, measures.score(items), strict=True))


__all__ = ["ClickQrels", "click_qrels", "event_filters_of", "scored_with", "thresholds_for"]
