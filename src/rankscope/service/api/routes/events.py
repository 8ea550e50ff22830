"""``/api/events``: search impressions and interactions (UBI-compatible), their summary, and
interleaving experiments credited from them."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from rankscope.collect.wire import EventsCreate, Id
from rankscope.service.analysis.experiments import interleaving_summary
from rankscope.service.analysis.summaries import events_summary as summarise_events
from rankscope.service.api.common import ERRORS, Limit, MinImpressions, Offset, body_of, parse_body
from rankscope.service.api.deps import CurrentPrincipal, EventRowFilters, State
from rankscope.service.ingest.events import event_rows, parse_events
from rankscope.service.ingest.requests import owner_of
from rankscope.service.schemas.common import Envelope
from rankscope.service.schemas.events import EventPublic, EventsPage, EventsResult, EventsSummary
from rankscope.service.schemas.experiments import InterleavingPublic

router = APIRouter(prefix="/api/events", tags=["events"], responses=ERRORS)


@router.post(
    "",
    status_code=201,
    response_model=Envelope[EventsResult],
    summary="Record impressions and interactions (a batch; idempotent by eventId)",
    openapi_extra=body_of(EventsCreate),
)
async def post_events(request: Request, principal: CurrentPrincipal, state: State) -> Response:
    limit = state.settings.max_batch_events
    attributes = state.settings.max_event_attributes_bytes
    events = await parse_body(request, lambda raw: parse_events(raw, limit, attributes))
    rows = event_rows(events, lambda user: owner_of(principal, user), dt.datetime.now(dt.UTC))
    outcomes = await run_in_threadpool(state.stores.events.write, principal, rows)
    items = [
        {"id": str(i), "eventId": e.event_id, "duplicate": dup}
        for (i, dup), e in zip(outcomes, events, strict=True)
    ]
    dups = sum(dup for _, dup in outcomes)
    data = {"accepted": len(outcomes) - dups, "duplicates": dups, "events": items}
    return Response(
        orjson.dumps({"success": True, "data": data}),
        status_code=201,
        media_type="application/json",
    )


def public_event(row: dict[str, Any]) -> EventPublic:
    data = {k: row[k] for k in EventPublic.model_fields if k in row}
    data["dwell_time_seconds"] = row["dwell_seconds"]
    return EventPublic.model_validate(data)


@router.get("", response_model=Envelope[EventsPage], summary="Events, newest first")
def list_events(
    principal: CurrentPrincipal,
    state: State,
    filters: EventRowFilters,
    query_id: Annotated[str | None, Query(alias="queryId", max_length=255)] = None,
    action: Annotated[str | None, Query(max_length=100)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Envelope[EventsPage]:
    rows, truncated = state.stores.events.page(
        principal,
        filters,
        limit,
        offset,
        query_id=query_id,
        action=action,
        max_bytes=state.settings.max_page_bytes,
    )
    return Envelope(
        data=EventsPage(
            limit=limit,
            offset=offset,
            next_offset=offset + len(rows),
            truncated=truncated,
            events=[public_event(r) for r in rows],
        )
    )


@router.get(
    "/summary",
    response_model=Envelope[EventsSummary],
    summary="Impressions, clicks, CTR, mean click position, zero-result rate",
)
def events_summary(
    principal: CurrentPrincipal, state: State, filters: EventRowFilters
) -> Envelope[EventsSummary]:
    return Envelope(data=summarise_events(state.stores, principal, filters))


@router.get(
    "/interleaving",
    response_model=Envelope[InterleavingPublic],
    summary="An interleaving experiment: wins, losses, ties and a sign test",
)
def interleaving(
    principal: CurrentPrincipal,
    state: State,
    filters: EventRowFilters,
    experiment: Annotated[Id, Query(description="the experiment's name (impressions' field)")],
    arms: Annotated[
        str | None,
        Query(max_length=600, description="the two teams, a,b (default: in name order)"),
    ] = None,
    alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05,
    min_impressions: MinImpressions = None,
) -> Envelope[InterleavingPublic]:
    summary = interleaving_summary(
        state.stores,
        principal,
        filters,
        state.settings,
        experiment=experiment,
        arms=arms,
        alpha=alpha,
        min_impressions=min_impressions,
    )
    return Envelope(data=summary)
