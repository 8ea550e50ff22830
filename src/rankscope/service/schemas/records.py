"""The bodies of the records resource (``/api/metrics/retrieval``; camelCase on the wire):
feedback and thresholds in, records, summaries, series and breakdowns out. The collect bodies
are :mod:`rankscope.collect.wire`'s ``MetricCreate`` and ``BatchCreate``, here with the
service's limits (:func:`collect_models`).

Field names follow the design this service replaces (``retrievedDocuments``, ``documentId``,
``f1Score``, ``averageMRR``, ...). In the list and summary payloads ``averagePrecision`` is the
mean *precision* and ``averageAP`` the mean *average precision* (MAP); the names are kept for
compatibility.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from rankscope.collect.wire import (
    MAX_JUDGMENTS,
    BatchCreate,
    Camel,
    Id,
    Judgments,
    MetricCreate,
    RetrievedDocumentCreate,
    bounded_dict,
)
from rankscope.service.schemas.common import SCHEMA_BUILD, DateRange, TimeRange

JudgmentSource = Literal["provided", "heuristic", "feedback"]

# -- in --------------------------------------------------------------------------------------


def collect_models(
    max_documents: int, max_records: int
) -> tuple[type[MetricCreate], type[BatchCreate]]:
    """The collect bodies with the service's limits as list lengths, which pydantic checks as
    it goes: the 1,001st document (or record) ends validation, so an oversized list is refused
    before the rest of its items are read. One pair of classes per pair of limits."""
    with SCHEMA_BUILD:
        return _collect_models(max_documents, max_records)


@functools.cache
def _collect_models(
    max_documents: int, max_records: int
) -> tuple[type[MetricCreate], type[BatchCreate]]:

    class LimitedMetric(MetricCreate):
        retrieved_documents: list[RetrievedDocumentCreate] = Field(
            max_length=max_documents, fail_fast=True
        )

    class LimitedBatch(BatchCreate):
        records: list[LimitedMetric] = Field(max_length=max_records, fail_fast=True)  # type: ignore[assignment]

    return LimitedMetric, LimitedBatch


class FeedbackCreate(Camel):
    """``POST /api/metrics/retrieval/{id}/feedback``: judgments that arrive later.

    ``judgments`` (graded) wins over ``relevantDocumentIds`` (grade 1 each); the new judgments
    replace the record's judgments, every other retrieved document counts as not relevant.
    """

    relevant_document_ids: list[Id] | None = Field(None, max_length=MAX_JUDGMENTS, fail_fast=True)
    judgments: Judgments | None = None


class ThresholdsUpdate(Camel):
    """A user's thresholds for heuristic rows: ``*`` (any type) or a search type label."""

    thresholds: Annotated[
        dict[
            Annotated[str, StringConstraints(min_length=1, max_length=64)],
            Annotated[float, Field(strict=True, ge=0.0, le=1.0)] | None,
        ],
        bounded_dict(64),
    ] = Field(description="null removes a threshold (at most 64 entries)")


# -- out -------------------------------------------------------------------------------------


class RankedDocumentPublic(Camel):
    position: int
    document_id: str
    document_name: str | None = None
    chunk_index: int | None = None
    score: float


class MetricPublic(Camel):
    """One stored record: the design's fields, then what this service adds."""

    id: uuid.UUID
    query: str
    query_id: str | None
    user_id: str
    timestamp: int = Field(
        description="when the retrieval happened: whole seconds since the Unix epoch (UTC), "
        "as in the design (1234567890)"
    )
    timestamp_iso: dt.datetime = Field(description="the same moment to the microsecond (UTC)")
    total_retrieved: int
    total_relevant: int
    relevant_retrieved: int
    precision: float
    recall: float
    f1_score: float
    mean_reciprocal_rank: float
    average_precision: float
    ndcg: float
    document_chunks_retrieved: int
    web_results_retrieved: int
    total_sources: int
    min_score: float | None
    max_score: float | None
    average_score: float | None
    search_types: dict[str, bool] | None
    search_type: str
    topic_id: str | None
    document_ids: list[str] | None
    judgment_source: JudgmentSource
    threshold: float | None
    cutoff: int
    rankscope_version: str
    collect_id: str | None
    arm: str | None


class MetricDetail(MetricPublic):
    """One record with its ranked list and judgments (``GET .../{id}``, feedback)."""

    ranked_list: list[RankedDocumentPublic]
    judgments: dict[str, int]


class MeanWithInterval(Camel):
    """A mean with its 95% confidence interval (null bounds below two values)."""

    mean: float
    low: float | None
    high: float | None


class GroupStats(Camel):
    """Means of the six measures over a group of rows of one judgment kind."""

    count: int
    zero_results: int = Field(
        0, description="rows that retrieved nothing (totalRetrieved 0); rate = zeroResults/count"
    )
    precision: MeanWithInterval
    recall: MeanWithInterval
    f1_score: MeanWithInterval
    mean_reciprocal_rank: MeanWithInterval
    average_precision: MeanWithInterval
    ndcg: MeanWithInterval


class Averages(Camel):
    """The design's summary fields. ``averagePrecision``: mean precision; ``averageAP``: mean
    average precision (MAP)."""

    total_queries: int = Field(
        description="records in the selection, judged and heuristic (the averages cover the "
        "rows judgmentSource names; byJudgmentSource counts each kind)"
    )
    average_precision: float
    average_recall: float
    average_f1_score: float
    average_mrr: float = Field(alias="averageMRR")
    average_ap: float = Field(alias="averageAP")
    average_ndcg: float = Field(alias="averageNDCG")


class SourceGroups(Camel):
    judged: GroupStats
    heuristic: GroupStats


class MetricsSummary(Averages):
    """The averages (of the rows named by ``judgmentSource``; never judged and heuristic rows
    mixed) and both kinds apart in ``byJudgmentSource``."""

    judgment_source: Literal["judged", "heuristic"]
    by_judgment_source: SourceGroups


class MetricsList(MetricsSummary):
    """``GET /api/metrics/retrieval``: the summary plus one page of records, newest first."""

    limit: int
    offset: int
    next_offset: int = Field(description="the offset of the next page: offset + the items given")
    truncated: bool = Field(
        description="true when the page stopped at max_page_bytes before limit items (page on "
        "from nextOffset)"
    )
    queries: list[MetricPublic]


class SummaryPublic(MetricsSummary):
    date_range: DateRange = Field(
        description="the filter's dates; where a filter leaves a side open, the selection's "
        "first or last record (the time of the request when it has none)"
    )
    record_range: TimeRange = Field(
        description="the first and last record of the selection (null when none)"
    )


class TimeseriesPoint(Camel):
    start: dt.datetime
    judgment_source: Literal["judged", "heuristic"]
    stats: GroupStats


class Timeseries(Camel):
    bucket: Literal["hour", "day", "week"]
    points: list[TimeseriesPoint]


class BreakdownGroup(Camel):
    key: str | None
    judgment_source: Literal["judged", "heuristic"]
    stats: GroupStats


class Breakdown(Camel):
    by: Literal["topic", "searchType", "arm", "user"]
    groups: list[BreakdownGroup]


class BatchItem(Camel):
    id: uuid.UUID
    collect_id: str | None
    duplicate: bool


class BatchResult(Camel):
    accepted: int
    duplicates: int
    records: list[BatchItem]


class Thresholds(Camel):
    default: float
    by_search_type: dict[str, float]
    own: dict[str, float]


__all__ = [
    "Averages",
    "BatchItem",
    "BatchResult",
    "Breakdown",
    "BreakdownGroup",
    "FeedbackCreate",
    "GroupStats",
    "JudgmentSource",
    "MeanWithInterval",
    "MetricDetail",
    "MetricPublic",
    "MetricsList",
    "MetricsSummary",
    "RankedDocumentPublic",
    "SourceGroups",
    "SummaryPublic",
    "Thresholds",
    "ThresholdsUpdate",
    "Timeseries",
    "TimeseriesPoint",
    "collect_models",
]
