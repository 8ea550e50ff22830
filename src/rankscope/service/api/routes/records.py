"""``/api/metrics/retrieval``: collect records, read them back, summarise, compare arms, export,
feedback."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from pydantic import ValidationError
from starlette.background import BackgroundTask

from rankscope.collect.wire import BatchCreate, MetricCreate
from rankscope.service.analysis.clicks import click_qrels, event_filters_of
from rankscope.service.analysis.experiments import columns_of, compare_records
from rankscope.service.analysis.export import export_file
from rankscope.service.analysis.summaries import group_stats, summary
from rankscope.service.api.common import (
    ERRORS,
    MinImpressions,
    Offset,
    PageSize,
    body_of,
    parse_body,
)
from rankscope.service.api.deps import CurrentPrincipal, RowFilters, State
from rankscope.service.errors import not_found, unprocessable
from rankscope.service.ingest.requests import body_details, owner_of, read_record
from rankscope.service.ingest.rows import NewRecord, judgments_of
from rankscope.service.nul import refuse_nul_json
from rankscope.service.schemas.common import DateRange, Envelope, TimeRange
from rankscope.service.schemas.experiments import ArmsComparison
from rankscope.service.schemas.records import (
    BatchResult,
    Breakdown,
    BreakdownGroup,
    FeedbackCreate,
    MetricDetail,
    MetricPublic,
    MetricsList,
    RankedDocumentPublic,
    SummaryPublic,
    Timeseries,
    TimeseriesPoint,
)
from rankscope.service.stored_measures import MEASURE_API_NAMES

router = APIRouter(prefix="/api/metrics/retrieval", tags=["retrieval metrics"], responses=ERRORS)

JudgmentChoice = Annotated[
    Literal["auto", "judged", "heuristic"],
    Query(
        description="which rows the top-level averages cover: judged (provided or feedback) "
        "or heuristic; auto: judged when there are any. Both are always in byJudgmentSource."
    ),
]

#: orders of a page of records: a stored measure's API name (ascending, worst first) or
#: -name (descending), and the column each sorts by
SORT_COLUMNS = MEASURE_API_NAMES
SORT_CHOICES = (*SORT_COLUMNS, *(f"-{name}" for name in SORT_COLUMNS))
if TYPE_CHECKING:
    SortChoice = str
else:
    SortChoice = Literal[SORT_CHOICES]

_ROW_FIELDS = tuple(f for f in MetricPublic.model_fields if f != "timestamp_iso")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_SECOND = dt.timedelta(seconds=1)


def _column_order(sort: str | None) -> str | None:
    """A sort choice as the store's order: the measure's column, ``-`` kept."""
    if sort is None:
        return None
    name = sort.removeprefix("-")
    return sort[: len(sort) - len(name)] + SORT_COLUMNS[name]


def utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def epoch_seconds(moment: dt.datetime) -> int:
    """Whole seconds since 1970-01-01 UTC (rounded down), the design's ``timestamp``."""
    return (utc(moment) - _EPOCH) // _SECOND


def milliseconds(moment: dt.datetime) -> str:
    """The design's date form: UTC to the millisecond (truncated), ``2026-01-31T23:59:59.999Z``."""
    return utc(moment).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    data = {k: row[k] for k in _ROW_FIELDS}
    data["timestamp_iso"] = moment = row["timestamp"]
    data["timestamp"] = epoch_seconds(moment)
    return data


def public(row: dict[str, Any]) -> MetricPublic:
    return MetricPublic.model_validate(_fields(row))


def detail(row: dict[str, Any]) -> MetricDetail:
    data = _fields(row)
    data["ranked_list"] = [RankedDocumentPublic.model_validate(d) for d in row["ranked_list"]]
    data["judgments"] = row["judgments"]
    return MetricDetail.model_validate(data)


@router.post(
    "/collect",
    status_code=201,
    response_model=Envelope[MetricPublic],
    summary="Collect one retrieval",
    responses={200: {"description": "a record with this collectId was already stored"}},
    openapi_extra=body_of(MetricCreate),
)
async def collect(request: Request, principal: CurrentPrincipal, state: State) -> Response:
    settings = state.settings
    record, unknown = await parse_body(request, lambda raw: read_record(settings, raw))
    owner = owner_of(principal, record.user_id)
    outcome = await state.batcher.submit(principal, NewRecord(record, owner))
    status, row = 201, outcome.row
    if row is None:
        row = await run_in_threadpool(state.store.get, principal, outcome.id)
        if row is None:  # pragma: no cover - the stored record vanished between two statements
            raise not_found("the record stored under this collectId is gone")
        status = 200
    # serialised once here (the busiest route); the model above documents the same body
    data = public(row).model_dump(mode="json", by_alias=True)
    return Response(
        orjson.dumps({"success": True, "data": data}),
        status_code=status,
        media_type="application/json",
        headers=unknown.headers(),
    )


@router.post(
    "/collect/batch",
    status_code=201,
    response_model=Envelope[BatchResult],
    summary="Collect many retrievals in one transaction",
    openapi_extra=body_of(BatchCreate),
)
async def collect_batch(request: Request, principal: CurrentPrincipal, state: State) -> Response:
    reply = await state.bulk.store_batch(principal, await request.body())
    return Response(
        reply.body, status_code=201, media_type="application/json", headers=reply.headers()
    )


@router.get(
    "",
    response_model=Envelope[MetricsList],
    summary="Averages and one page of records (newest first, or worst first with sort)",
)
def list_metrics(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    limit: PageSize = 100,
    offset: Offset = 0,
    judgments: JudgmentChoice = "auto",
    sort: Annotated[
        SortChoice | None,
        Query(
            description="order of the records: newest first by default; a measure sorts "
            "ascending (worst first), -measure descending; ties newest first"
        ),
    ] = None,
) -> Envelope[MetricsList]:
    limit = min(limit, state.settings.max_page_size)
    head = summary(state.store.aggregate(principal, filters), judgments)
    rows, truncated = state.store.page(
        principal,
        filters,
        limit,
        offset,
        _column_order(sort),
        max_bytes=state.settings.max_page_bytes,
    )
    return Envelope(
        data=MetricsList(
            **head.model_dump(),
            limit=limit,
            offset=offset,
            next_offset=offset + len(rows),
            truncated=truncated,
            queries=[public(r) for r in rows],
        )
    )


@router.get("/summary", response_model=Envelope[SummaryPublic], summary="Averages and date range")
def summary_route(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    judgments: JudgmentChoice = "auto",
) -> Envelope[SummaryPublic]:
    head = summary(state.store.aggregate(principal, filters), judgments)
    first, last = state.store.date_range(principal, filters)
    start = filters.start or first or dt.datetime.now(dt.UTC)
    end = max(filters.end or last or dt.datetime.now(dt.UTC), start)
    dates = DateRange(start=milliseconds(start), end=milliseconds(end))
    return Envelope(
        data=SummaryPublic(
            **head.model_dump(), date_range=dates, record_range=TimeRange(start=first, end=last)
        )
    )


@router.get(
    "/timeseries",
    response_model=Envelope[Timeseries],
    summary="Means per hour, day or week (UTC; weeks start on Monday), with 95% intervals",
)
def timeseries(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    bucket: Literal["hour", "day", "week"] = "day",
) -> Envelope[Timeseries]:
    rows = state.store.aggregate(principal, filters, bucket=bucket)
    points = [
        TimeseriesPoint(start=r.keys[0], judgment_source=r.kind, stats=group_stats(r)) for r in rows
    ]
    return Envelope(data=Timeseries(bucket=bucket, points=points))


@router.get(
    "/breakdown",
    response_model=Envelope[Breakdown],
    summary="Means per topic, search type or arm, with 95% intervals",
)
def breakdown(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    by: Annotated[
        Literal["topic", "searchType", "arm", "user"],
        Query(description="user: per user (the service role sees every user)"),
    ] = "topic",
) -> Envelope[Breakdown]:
    rows = state.store.aggregate(principal, filters, by=by)
    groups = [
        BreakdownGroup(key=r.keys[0], judgment_source=r.kind, stats=group_stats(r)) for r in rows
    ]
    return Envelope(data=Breakdown(by=by, groups=groups))


@router.get(
    "/export",
    summary="Records as qrels and run files (TREC or JSONL) or a suite, for rankscope eval",
    response_class=Response,
    responses={
        200: {
            "description": "a zip file, or one text file with part=qrels|run; trec and suite "
            "leave out records with a document id holding whitespace and count them in "
            "X-Rankscope-Skipped (skipped.jsonl in the zip lists them). One export holds at "
            "most max_export_lines qrels and run lines (and at least one whole record): "
            "X-Rankscope-Truncated: true when the selection holds more, and "
            "X-Rankscope-Next-Offset the offset that continues it",
            "headers": {
                "X-Rankscope-Queries": {
                    "description": "records exported",
                    "schema": {"type": "integer"},
                },
                "X-Rankscope-Skipped": {
                    "description": "records left out for a document id a TREC file cannot hold",
                    "schema": {"type": "integer"},
                },
                "X-Rankscope-Truncated": {
                    "description": "true when the selection holds records after this part",
                    "schema": {"type": "string", "enum": ["true", "false"]},
                },
                "X-Rankscope-Next-Offset": {
                    "description": "the offset of the next part: offset + the records read",
                    "schema": {"type": "integer"},
                },
            },
            "content": {"application/zip": {}, "text/plain": {}, "application/x-ndjson": {}},
        }
    },
)
def export(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    format: Literal["trec", "jsonl", "suite"] = "trec",
    judgments: Annotated[
        Literal["judged", "heuristic", "provided", "feedback", "clicks"],
        Query(
            description="which rows: judged (provided and feedback) by default; clicks: every "
            "record whose query has click grades, judged by them (see /api/judgments/clicks)"
        ),
    ] = "judged",
    part: Annotated[
        Literal["qrels", "run", "queries"] | None,
        Query(description="one file instead of a zip (trec and jsonl)"),
    ] = None,
    click_model: Annotated[
        Literal["ctr", "coec", "dbn"] | None,
        Query(alias="clickModel", description="judgments=clicks: the click model"),
    ] = None,
    min_impressions: MinImpressions = None,
    offset: Annotated[
        int,
        Query(
            ge=0,
            le=1_000_000_000,
            description="the first record of this part, in the export's order (oldest first, "
            "ties by id): X-Rankscope-Next-Offset of the previous part",
        ),
    ] = 0,
) -> Response:
    clicks = None
    if judgments == "clicks":
        graded = click_qrels(
            state.stores,
            principal,
            event_filters_of(filters),
            state.settings,
            model=click_model,
            min_impressions=min_impressions,
        )
        clicks = (graded.by_query, graded.source)
        judgments = "judged"  # the rows are chosen by their click grades, not their source
    out = export_file(
        state.store,
        principal,
        filters,
        format,
        judgments,
        part,
        clicks,
        max_lines=state.settings.max_export_lines,
        offset=offset,
    )
    # sent from disk in chunks, the folder removed once sent
    return FileResponse(
        out.path,
        media_type=out.media_type,
        headers=out.headers,
        background=BackgroundTask(out.remove),
    )


# before "/{record_id}", which would take "compare" as an id
@router.get(
    "/compare",
    response_model=Envelope[ArmsComparison],
    summary="A/B: the difference of each measure between two arms, with CI and a test",
)
def compare(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    arms: Annotated[str, Query(max_length=600, description="the two arms: arms=a,b")],
    paired: Annotated[
        bool, Query(description="pair over the queries seen in both arms (default: unpaired)")
    ] = False,
    judgments: Annotated[
        Literal["auto", "judged", "heuristic", "clicks"],
        Query(
            description="rows judged or heuristic (never mixed; auto: judged when any), or "
            "every record re-judged by click grades"
        ),
    ] = "auto",
    click_model: Annotated[Literal["ctr", "coec", "dbn"] | None, Query(alias="clickModel")] = None,
    measures: Annotated[
        str | None,
        Query(
            max_length=300,
            description=f"comma-separated: {', '.join(MEASURE_API_NAMES)} (default: all)",
        ),
    ] = None,
    alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05,
    min_sample: Annotated[int | None, Query(alias="minSample", ge=2, le=1_000_000)] = None,
    seed: Annotated[int, Query(ge=0, le=2**32 - 1)] = 0,
) -> Envelope[ArmsComparison]:
    names = [a.strip() for a in arms.split(",") if a.strip()]
    if len(names) != 2 or names[0] == names[1]:
        raise unprocessable(
            "arms takes two different arm names: arms=a,b",
            [{"path": "query.arms", "message": "two names", "type": "value_error"}],
        )
    if filters.arm is not None:
        raise unprocessable(
            "compare takes its arms from arms=a,b; leave out the arm filter",
            [{"path": "query.arm", "message": "not with compare", "type": "value_error"}],
        )
    return Envelope(
        data=compare_records(
            state.stores,
            principal,
            filters,
            state.settings,
            arms=(names[0], names[1]),
            paired=paired,
            judgments=judgments,
            click_model=click_model,
            measures=columns_of(measures),
            alpha=alpha,
            min_sample=min_sample,
            seed=seed,
        )
    )


@router.get("/{record_id}", response_model=Envelope[MetricDetail], summary="One record")
def get_record(
    record_id: Annotated[uuid.UUID, Path(description="the record's id")],
    principal: CurrentPrincipal,
    state: State,
) -> Envelope[MetricDetail]:
    row = state.store.get(principal, record_id)
    if row is None:
        raise not_found(f"no record {record_id}")
    return Envelope(data=detail(row))


def _read_feedback(raw: bytes) -> FeedbackCreate:
    """The feedback body, validated by pydantic-core straight from the bytes (an 8 MiB list
    decoded to Python first cost half a second of CPU before it was refused)."""
    refuse_nul_json(raw)
    try:
        return FeedbackCreate.model_validate_json(raw)
    except ValidationError as exc:
        raise unprocessable("invalid feedback body", body_details(exc)[:20]) from None


@router.post(
    "/{record_id}/feedback",
    response_model=Envelope[MetricDetail],
    summary="Judgments that arrive later: stored, measures recomputed, source 'feedback'",
    openapi_extra=body_of(FeedbackCreate),
)
async def feedback(
    record_id: Annotated[uuid.UUID, Path(description="the record's id")],
    request: Request,
    principal: CurrentPrincipal,
    state: State,
) -> Envelope[MetricDetail]:
    body = await parse_body(request, _read_feedback)
    judgments = judgments_of(body.judgments, body.relevant_document_ids)
    if judgments is None:
        raise unprocessable(
            "feedback needs relevantDocumentIds or judgments",
            [
                {
                    "path": "body",
                    "message": "give relevantDocumentIds or judgments",
                    "type": "missing",
                }
            ],
        )
    row = await run_in_threadpool(state.store.feedback, principal, record_id, judgments)
    if row is None:
        raise not_found(f"no record {record_id}")
    return Envelope(data=detail(row))
