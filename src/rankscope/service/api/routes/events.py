"""``/api/events``: search impressions and interactions (UBI-compatible), their summary, and
interleaving experiments credited from them."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from rankscope.online.interleaving import summarise
from rankscope.service.analysis.sessions import event_rows
from rankscope.service.api.deps import CurrentPrincipal, State
from rankscope.service.api.online_deps import EventRowFilters
from rankscope.service.api.routes.records import ERRORS, body_of, parse_body
from rankscope.service.errors import ApiError, invalid_fields, too_large, unprocessable
from rankscope.service.ingest.requests import (
    SHAPE_CHECK_BYTES,
    body_details,
    check_timestamp,
    owner_of,
)
from rankscope.service.nul import refuse_nul_json
from rankscope.service.schemas.events import (
    DateRange,
    EventCreate,
    EventPublic,
    EventsCreate,
    EventsPage,
    EventsResult,
    EventsSummary,
    InterleavingPublic,
    Rate,
    events_models,
)
from rankscope.service.schemas.records import Envelope, Id
from rankscope.service.store.events import EventFilters

router = APIRouter(prefix="/api/events", tags=["events"], responses=ERRORS)


def _too_many(limit: int) -> ApiError:
    return too_large(
        f"more than {limit} events in one request (max_batch_events)", {"limitEvents": limit}
    )


def parse_events(raw: bytes, limit: int) -> list[EventCreate]:
    """``{"events": [...]}`` or a bare JSON list of at most ``limit`` events (413 past it);
    errors name each field path; U+0000 in any string is a 422. Timestamps lie from 1970 to a
    day past the server's clock."""
    refuse_nul_json(raw)
    wrapped, bare = events_models(limit)
    if len(raw) > SHAPE_CHECK_BYTES:  # the list's length before pydantic builds it (ingest)
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        given = body.get("events") if isinstance(body, dict) else body
        if isinstance(given, list) and len(given) > limit:
            raise _too_many(limit)
    try:
        if raw.lstrip()[:1] == b"[":
            events = bare.validate_json(raw)
        else:
            events = wrapped.model_validate_json(raw).events
    except ValidationError as exc:
        details = body_details(exc)
        if any(d["type"] == "too_long" and d["path"] in ("body", "body.events") for d in details):
            raise _too_many(limit) from None
        raise invalid_fields(details, exc.error_count()) from None
    now = dt.datetime.now(dt.UTC)
    prefix = "body" if raw.lstrip()[:1] == b"[" else "body.events"
    for i, event in enumerate(events):
        check_timestamp(event.timestamp, f"{prefix}.{i}.timestamp", now)
    return events


@router.post(
    "",
    status_code=201,
    response_model=Envelope[EventsResult],
    summary="Record impressions and interactions (a batch; idempotent by eventId)",
    openapi_extra=body_of(EventsCreate),
)
async def post_events(request: Request, principal: CurrentPrincipal, state: State) -> Response:
    limit = state.settings.max_batch_events
    events = await parse_body(request, lambda raw: parse_events(raw, limit))
    rows = event_rows(events, lambda user: owner_of(principal, user), dt.datetime.now(dt.UTC))
    outcomes = await run_in_threadpool(state.online.write_events, principal, rows)
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
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> Envelope[EventsPage]:
    rows = state.online.events_page(
        principal, filters, limit, offset, query_id=query_id, action=action
    )
    return Envelope(
        data=EventsPage(limit=limit, offset=offset, events=[public_event(r) for r in rows])
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


@router.get(
    "/summary",
    response_model=Envelope[EventsSummary],
    summary="Impressions, clicks, CTR, mean click position, zero-result rate",
)
def events_summary(
    principal: CurrentPrincipal, state: State, filters: EventRowFilters
) -> Envelope[EventsSummary]:
    c = state.online.event_counts(principal, filters)
    return Envelope(
        data=EventsSummary(
            searches=c.searches,
            impressions=c.impressions,
            clicks=c.clicks,
            click_through_rate=rate(min(c.clicks, c.impressions), c.impressions),
            query_click_rate=rate(c.sessions_clicked, c.sessions_with_impressions),
            mean_click_position=(
                c.click_position_sum / c.clicks_with_position if c.clicks_with_position else None
            ),
            clicks_with_position=c.clicks_with_position,
            zero_result_rate=rate(c.zero_result_searches, c.searches_with_count),
            thumbs_up=c.thumbs_up,
            thumbs_down=c.thumbs_down,
            cited=c.cited,
            mean_dwell_seconds=c.dwell_sum / c.dwell_count if c.dwell_count else None,
            other_actions=c.other_actions,
            experiments=c.experiments,
            date_range=DateRange(start=filters.start or c.first, end=filters.end or c.last),
        )
    )


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
    min_impressions: Annotated[
        int | None, Query(alias="minImpressions", ge=1, le=1_000_000)
    ] = None,
) -> Envelope[InterleavingPublic]:
    chosen = dataclasses.replace(filters, experiment=experiment)
    shown = state.online.event_rows(principal, chosen, ["impression"])
    teams: dict[str, dict[str, str]] = {}
    names: set[str] = set()
    for row in shown:
        if row["team"] is None:
            continue
        teams.setdefault(row["query_id"], {}).setdefault(row["document_id"], row["team"])
        names.add(row["team"])
    pair = _arms(arms, names)
    if pair is None:  # fewer than two teams shown: nothing to compare yet
        return Envelope(
            data=InterleavingPublic(
                experiment=experiment,
                arms=sorted(names),
                impressions=len(teams),
                clicked=0,
                wins=0,
                losses=0,
                ties=0,
                preference=0.0,
                p_value=None,
                alpha=alpha,
                min_impressions=min_impressions or state.settings.interleaving_min_impressions,
                verdict="insufficient_data",
                winner=None,
            )
        )
    clicks = state.online.event_rows(
        principal, EventFilters(user_id=filters.user_id), ["click"], query_ids=list(teams)
    )
    clicked: dict[str, set[str]] = {}
    for row in clicks:
        clicked.setdefault(row["query_id"], set()).add(row["document_id"])
    credits = []
    for qid, slots in teams.items():
        won = [slots[d] for d in clicked.get(qid, ()) if d in slots]
        credits.append((won.count(pair[0]), won.count(pair[1])))
    s = summarise(
        credits,
        names=pair,
        alpha=alpha,
        min_impressions=min_impressions or state.settings.interleaving_min_impressions,
    )
    return Envelope(
        data=InterleavingPublic(
            experiment=experiment,
            arms=list(pair),
            impressions=s.impressions,
            clicked=s.clicked,
            wins=s.wins,
            losses=s.losses,
            ties=s.ties,
            preference=s.preference,
            p_value=s.p_value,
            alpha=alpha,
            min_impressions=s.min_impressions,
            verdict=s.verdict,
            winner=s.winner,
        )
    )


def _arms(given: str | None, seen: set[str]) -> tuple[str, str] | None:
    if given is not None:
        parts = [p.strip() for p in given.split(",") if p.strip()]
        if len(parts) != 2 or parts[0] == parts[1]:
            raise unprocessable(
                "arms takes two different names: arms=a,b",
                [{"path": "query.arms", "message": "two names", "type": "value_error"}],
            )
        return parts[0], parts[1]
    if len(seen) > 2:
        raise unprocessable(
            f"the experiment's impressions name {len(seen)} teams ({', '.join(sorted(seen))}); "
            "an interleaving compares two: choose them with arms=a,b",
            [{"path": "query.arms", "message": "more than two teams", "type": "value_error"}],
        )
    if len(seen) < 2:
        return None
    first, second = sorted(seen)
    return first, second
