"""The service's JSON bodies (camelCase on the wire), split by role: ``*Create`` comes in,
``*Public`` goes out.

Field names follow the design this service replaces (``retrievedDocuments``, ``documentId``,
``f1Score``, ``averageMRR``, ...). In the list and summary payloads ``averagePrecision`` is the
mean *precision* and ``averageAP`` the mean *average precision* (MAP); the names are kept for
compatibility.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Generic, Literal, NotRequired, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, with_config
from pydantic.alias_generators import to_camel
from typing_extensions import TypedDict

Id = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]
JudgmentSource = Literal["provided", "heuristic", "feedback"]


Finite = Annotated[float, Field(allow_inf_nan=False)]
# trec_eval's nDCG builds a gain table with one entry per grade up to the largest: bounded so a
# request cannot make that table (and its cost) huge
Grade = Annotated[int, Field(ge=-100, le=100)]


class Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


# -- in --------------------------------------------------------------------------------------


@with_config(ConfigDict(extra="forbid"))
class RetrievedDocumentCreate(TypedDict):
    """One retrieved chunk or document, in the order the application used them. (A TypedDict:
    validating thousands of them per batch costs a fifth of what model instances cost.)"""

    documentId: Id
    documentName: NotRequired[Annotated[str, StringConstraints(max_length=1000)] | None]
    chunkIndex: NotRequired[Annotated[int, Field(ge=0, le=2**31 - 1)] | None]
    content: NotRequired[Annotated[str | None, Field(description="accepted; not stored")]]
    score: Finite


class SearchTypes(Camel):
    semantic: bool = False
    keyword: bool = False
    hybrid: bool = False
    web: bool = False

    def names(self) -> list[str]:
        flags = (
            ("semantic", self.semantic),
            ("keyword", self.keyword),
            ("hybrid", self.hybrid),
            ("web", self.web),
        )
        return [name for name, on in flags if on]

    def flags(self) -> dict[str, bool]:
        return {
            "semantic": self.semantic,
            "keyword": self.keyword,
            "hybrid": self.hybrid,
            "web": self.web,
        }


class CollectOptions(Camel):
    topic_id: Id | None = None
    search_types: SearchTypes | None = None
    web_results_count: Annotated[int, Field(ge=0, le=1_000_000)] | None = None
    document_ids: list[Id] | None = Field(
        None, max_length=10_000, description="documents the search was limited to"
    )
    cutoff: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="evaluate the first N distinct documents (default: all)"
    )
    arm: Id | None = Field(
        None, description="experiment arm or configuration this retrieval ran under"
    )


class MetricCreate(Camel):
    """``POST /api/metrics/retrieval/collect``: one retrieval."""

    query: Text
    query_id: Id | None = None
    retrieved_documents: list[RetrievedDocumentCreate] = Field(
        description="in the order shown (at most max_documents_per_record)"
    )
    relevant_document_ids: list[Id] | None = Field(
        None, max_length=100_000, description="ground truth: every relevant document"
    )
    judgments: dict[Id, Grade] | None = Field(
        None, description="graded ground truth {documentId: grade}; wins over relevantDocumentIds"
    )
    options: CollectOptions | None = None
    collect_id: Id | None = Field(
        None,
        description="client-chosen id that makes retries safe: a second request with the "
        "same collectId stores nothing and returns the first record",
    )
    timestamp: dt.datetime | None = Field(
        None, description="when the retrieval happened (default: when the request arrived)"
    )
    user_id: Id | None = Field(
        None, description="the user the record belongs to (service role only; default: caller)"
    )


class BatchCreate(Camel):
    """``POST /api/metrics/retrieval/collect/batch``: many records, one transaction."""

    records: list[MetricCreate]


class FeedbackCreate(Camel):
    """``POST /api/metrics/retrieval/{id}/feedback``: judgments that arrive later.

    ``judgments`` (graded) wins over ``relevantDocumentIds`` (grade 1 each); the new judgments
    replace the record's judgments, every other retrieved document counts as not relevant.
    """

    relevant_document_ids: list[Id] | None = Field(None, max_length=100_000)
    judgments: dict[Id, Grade] | None = None


class ThresholdsUpdate(Camel):
    """A user's thresholds for heuristic rows: ``*`` (any type) or a search type label."""

    thresholds: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=64)],
        Annotated[float, Field(ge=0.0, le=1.0)] | None,
    ] = Field(description="null removes a threshold")


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
    timestamp: dt.datetime
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


class Interval(Camel):
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
    precision: Interval
    recall: Interval
    f1_score: Interval
    mean_reciprocal_rank: Interval
    average_precision: Interval
    ndcg: Interval


class Averages(Camel):
    """The design's summary fields. ``averagePrecision``: mean precision; ``averageAP``: mean
    average precision (MAP)."""

    total_queries: int
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
    queries: list[MetricPublic]


class DateRange(Camel):
    start: dt.datetime | None
    end: dt.datetime | None


class SummaryPublic(MetricsSummary):
    date_range: DateRange


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


class Health(Camel):
    status: Literal["ok"]


class Me(Camel):
    """Who a token acts as (``GET /api/me``)."""

    user_id: str
    role: Literal["user", "service"]


class Ready(Camel):
    status: Literal["ok", "unavailable"]
    database: str
    schema_revision: str | None


# -- envelopes -------------------------------------------------------------------------------

T = TypeVar("T")


class Envelope(Camel, Generic[T]):
    success: Literal[True] = True
    data: T


class ErrorBody(Camel):
    code: str
    message: str
    details: Any = None


class ErrorEnvelope(Camel):
    success: Literal[False] = False
    error: ErrorBody


__all__ = [
    "Averages",
    "BatchCreate",
    "BatchItem",
    "BatchResult",
    "Breakdown",
    "BreakdownGroup",
    "CollectOptions",
    "DateRange",
    "Envelope",
    "ErrorBody",
    "ErrorEnvelope",
    "FeedbackCreate",
    "GroupStats",
    "Health",
    "Interval",
    "Me",
    "MetricCreate",
    "MetricDetail",
    "MetricPublic",
    "MetricsList",
    "MetricsSummary",
    "RankedDocumentPublic",
    "Ready",
    "RetrievedDocumentCreate",
    "SearchTypes",
    "SourceGroups",
    "SummaryPublic",
    "Thresholds",
    "ThresholdsUpdate",
    "Timeseries",
    "TimeseriesPoint",
]
