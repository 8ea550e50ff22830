"""The service's JSON bodies (camelCase on the wire), split by role: ``*Create`` comes in,
``*Public`` goes out.

Field names follow the design this service replaces (``retrievedDocuments``, ``documentId``,
``f1Score``, ``averageMRR``, ...). In the list and summary payloads ``averagePrecision`` is the
mean *precision* and ``averageAP`` the mean *average precision* (MAP); the names are kept for
compatibility.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from typing import Annotated, Any, Generic, Literal, NotRequired, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    with_config,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

Id = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]
JudgmentSource = Literal["provided", "heuristic", "feedback"]

# Numbers and flags are strict: "0.9" or true is refused, not read as 0.9 or 1 (a JSON integer
# is still a valid float).
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Count = Annotated[int, Field(strict=True)]
Flag = Annotated[bool, Field(strict=True)]
# trec_eval's nDCG builds a gain table with one entry per grade up to the largest: bounded so a
# request cannot make that table (and its cost) huge
Grade = Annotated[int, Field(strict=True, ge=-100, le=100)]

#: the most judgments one record or feedback may carry, as relevantDocumentIds or as judgments
MAX_JUDGMENTS = 100_000
#: the most documents a search may have been limited to (options.documentIds)
MAX_DOCUMENT_IDS = 10_000
#: entries of a dict validated at a time: a dict of bad entries stops at the first bad slice
_DICT_SLICE = 256


def bounded_dict(limit: int) -> WrapValidator:
    """A dict's size checked before its entries, which are then validated a slice at a time,
    stopping at the first slice with an error: a huge dict of bad entries costs no more than
    a small one (pydantic checks a dict's max_length only after every entry, and lists every
    bad entry)."""

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if not isinstance(value, dict):
            return handler(value)
        if len(value) > limit:
            raise PydanticCustomError(
                "too_long",
                "Dictionary should have at most {max_length} items, not {actual_length}",
                {"max_length": limit, "actual_length": len(value)},
            )
        if len(value) <= _DICT_SLICE:
            return handler(value)
        items = list(value.items())
        out: dict[Any, Any] = {}
        for start in range(0, len(items), _DICT_SLICE):
            out.update(handler(dict(items[start : start + _DICT_SLICE])))
        return out

    return WrapValidator(check)


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
    chunkIndex: NotRequired[Annotated[int, Field(strict=True, ge=0, le=2**31 - 1)] | None]
    content: NotRequired[Annotated[str | None, Field(description="accepted; not stored")]]
    score: Finite


class SearchTypes(Camel):
    semantic: Flag = False
    keyword: Flag = False
    hybrid: Flag = False
    web: Flag = False

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
    web_results_count: Annotated[Count, Field(ge=0, le=1_000_000)] | None = None
    document_ids: list[Id] | None = Field(
        None,
        max_length=MAX_DOCUMENT_IDS,
        fail_fast=True,
        description="documents the search was limited to",
    )
    cutoff: Annotated[Count, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="evaluate the first N distinct documents (default: all)"
    )
    arm: Id | None = Field(
        None, description="experiment arm or configuration this retrieval ran under"
    )


Judgments = Annotated[dict[Id, Grade], bounded_dict(MAX_JUDGMENTS)]


class MetricCreate(Camel):
    """``POST /api/metrics/retrieval/collect``: one retrieval.

    Lists stop at their first bad item (``fail_fast``), so that a huge list of bad items costs
    no more than one; the service checks each list's length before its items
    (:func:`collect_models`)."""

    query: Text
    query_id: Id | None = None
    retrieved_documents: list[RetrievedDocumentCreate] = Field(
        fail_fast=True, description="in the order shown (at most max_documents_per_record)"
    )
    relevant_document_ids: list[Id] | None = Field(
        None,
        max_length=MAX_JUDGMENTS,
        fail_fast=True,
        description="ground truth: every relevant document (at most 100,000)",
    )
    judgments: Judgments | None = Field(
        None,
        description="graded ground truth {documentId: grade}, at most 100,000; wins over "
        "relevantDocumentIds",
    )
    options: CollectOptions | None = None
    collect_id: Id | None = Field(
        None,
        description="client-chosen id that makes retries safe: a second request with the "
        "same collectId stores nothing and returns the first record",
    )
    timestamp: dt.datetime | None = Field(
        None,
        description="when the retrieval happened (default: when the request arrived); ISO 8601 "
        "or seconds since the Unix epoch, from 1970-01-01 to a day past the server's clock",
    )
    user_id: Id | None = Field(
        None, description="the user the record belongs to (service role only; default: caller)"
    )


class BatchCreate(Camel):
    """``POST /api/metrics/retrieval/collect/batch``: many records, one transaction.
    Validation stops at the first invalid record."""

    records: list[MetricCreate] = Field(fail_fast=True)


@functools.cache
def collect_models(
    max_documents: int, max_records: int
) -> tuple[type[MetricCreate], type[BatchCreate]]:
    """The collect bodies with the service's limits as list lengths, which pydantic checks as
    it goes: the 1,001st document (or record) ends validation, so an oversized list is refused
    before the rest of its items are read. One pair of classes per pair of limits."""

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
    queries: list[MetricPublic]


class DateRange(Camel):
    """The design's range: UTC to the millisecond, ``2026-01-31T23:59:59.999Z``."""

    start: str
    end: str


class RecordRange(Camel):
    """The first and last record of the selection, to the microsecond (null when none)."""

    start: dt.datetime | None
    end: dt.datetime | None


class SummaryPublic(MetricsSummary):
    date_range: DateRange = Field(
        description="the filter's dates; where a filter leaves a side open, the selection's "
        "first or last record (the time of the request when it has none)"
    )
    record_range: RecordRange


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
    error_count: int | None = Field(
        None,
        description="validation_error only: the errors found (details lists the first 20; "
        "validation stops at the first bad item of a list)",
    )


class ErrorEnvelope(Camel):
    success: Literal[False] = False
    error: ErrorBody


__all__ = [
    "MAX_DOCUMENT_IDS",
    "MAX_JUDGMENTS",
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
    "RecordRange",
    "RetrievedDocumentCreate",
    "SearchTypes",
    "SourceGroups",
    "SummaryPublic",
    "Thresholds",
    "ThresholdsUpdate",
    "Timeseries",
    "TimeseriesPoint",
    "bounded_dict",
    "collect_models",
]
