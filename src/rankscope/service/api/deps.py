"""Shared dependencies: the service state, the caller (authenticated, rate limited), the
filters of records and of events.

Routes take them as ``Annotated`` aliases: ``principal: CurrentPrincipal``, ``state: State``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from rankscope.service.api.limits import RequestLimiter
from rankscope.service.auth import Authenticator
from rankscope.service.errors import ApiError, bad_request, forbidden, unprocessable
from rankscope.service.ingest.batcher import WriteBatcher
from rankscope.service.ingest.bulk import BulkWriter
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.schemas.common import parse_moment
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import Filters


@dataclass
class ServiceState:
    settings: ServiceSettings
    store: MetricsStore
    auth: Authenticator
    batcher: WriteBatcher
    limiter: RequestLimiter
    stores: Stores
    bulk: BulkWriter


# The dependencies of every request are coroutines: FastAPI runs a plain function dependency
# in a worker thread, a hand-off that costs more CPU than the function itself.


async def get_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.service
    return state


State = Annotated[ServiceState, Depends(get_state)]

_bearer = HTTPBearer(auto_error=False, description="an API key (rsk_...) or a JWT")


async def current_principal(
    request: Request,
    state: State,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    authorization = request.headers.get("authorization")
    principal = state.auth.principal_without_io(authorization)
    if principal is None:  # an API key to look up: the database, in a worker thread
        principal = await run_in_threadpool(state.auth.principal, authorization)
    wait = state.limiter.retry_after(principal.user_id)
    if wait is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"more than {state.settings.rate_limit_per_second:g} requests per second; retry "
            f"after {wait:.2f} s",
            {"retryAfterSeconds": round(wait, 3)},
            headers={"Retry-After": str(max(1, round(wait + 0.5)))},
        )
    return principal


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


def parse_date(value: str | None, name: str, *, end: bool) -> dt.datetime | None:
    """The query parameter ``name`` as a moment in UTC (:func:`~rankscope.service.schemas.
    common.parse_moment`); None when absent or empty, a 422 when it is not a date."""
    if value is None or value == "":
        return None
    try:
        return parse_moment(value, end=end)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first datetime in UTC
        raise unprocessable(
            f"{name} is outside the years 1 to 9999 in UTC",
            [
                {
                    "path": f"query.{name}",
                    "message": f"out of range: {value!r}",
                    "type": "date_range",
                }
            ],
        ) from None
    except ValueError:
        raise unprocessable(
            f"{name} is not a date: use ISO 8601 (2024-05-01 or 2024-05-01T12:00:00Z)",
            [
                {
                    "path": f"query.{name}",
                    "message": f"not an ISO 8601 date: {value!r}",
                    "type": "date_parsing",
                }
            ],
        ) from None


StartDateQuery = Annotated[
    str | None,
    Query(alias="startDate", max_length=64, description="ISO 8601 date or date-time (UTC)"),
]
EndDateQuery = Annotated[
    str | None,
    Query(alias="endDate", max_length=64, description="ISO 8601; a date alone: whole day"),
]
TopicIdQuery = Annotated[str | None, Query(alias="topicId", max_length=255)]
ArmQuery = Annotated[str | None, Query(max_length=255)]


def date_range(
    start_date: str | None, end_date: str | None
) -> tuple[dt.datetime | None, dt.datetime | None]:
    """The ``startDate``/``endDate`` pair as UTC moments; 400 when the start is after the end."""
    start = parse_date(start_date, "startDate", end=False)
    end = parse_date(end_date, "endDate", end=True)
    if start is not None and end is not None and start > end:
        raise bad_request(
            "startDate is after endDate",
            {"startDate": start.isoformat(), "endDate": end.isoformat()},
        )
    return start, end


OtherUserQuery = Annotated[
    str | None, Query(alias="userId", max_length=255, description="service role: another user")
]


def acting_user(principal: Principal, user_id: str | None, action: str) -> str:
    """The user a request acts on: the caller, or ``user_id`` when the caller is the service
    role; anyone else naming another user gets 403 "only the service role may <action>"."""
    if user_id is None or user_id == principal.user_id:
        return principal.user_id
    if not principal.is_service:
        raise forbidden(f"only the service role may {action}")
    return user_id


async def filters(
    principal: CurrentPrincipal,
    start_date: StartDateQuery = None,
    end_date: EndDateQuery = None,
    topic_id: TopicIdQuery = None,
    search_type: Annotated[
        str | None, Query(alias="searchType", max_length=64, description="e.g. semantic")
    ] = None,
    arm: ArmQuery = None,
    judgment_source: Annotated[
        str | None,
        Query(
            alias="judgmentSource",
            pattern="^(provided|heuristic|feedback|judged)$",
            description="judged: provided and feedback",
        ),
    ] = None,
    user_id: Annotated[
        str | None,
        Query(alias="userId", max_length=255, description="service role: one user's records"),
    ] = None,
) -> Filters:
    start, end = date_range(start_date, end_date)
    acting_user(principal, user_id, "read another user's records")
    return Filters(
        start=start,
        end=end,
        topic_id=topic_id,
        search_type=search_type,
        arm=arm,
        judgment_source=judgment_source,
        user_id=user_id,
    )


RowFilters = Annotated[Filters, Depends(filters)]


async def event_filters(
    principal: CurrentPrincipal,
    start_date: StartDateQuery = None,
    end_date: EndDateQuery = None,
    topic_id: TopicIdQuery = None,
    search_type: Annotated[str | None, Query(alias="searchType", max_length=64)] = None,
    arm: ArmQuery = None,
    experiment: Annotated[str | None, Query(max_length=255)] = None,
    user_id: Annotated[
        str | None,
        Query(alias="userId", max_length=255, description="service role: one user's events"),
    ] = None,
) -> EventFilters:
    start, end = date_range(start_date, end_date)
    acting_user(principal, user_id, "read another user's events")
    return EventFilters(
        start=start,
        end=end,
        topic_id=topic_id,
        search_type=search_type,
        arm=arm,
        experiment=experiment,
        user_id=user_id,
    )


EventRowFilters = Annotated[EventFilters, Depends(event_filters)]

__all__ = [
    "ArmQuery",
    "CurrentPrincipal",
    "EndDateQuery",
    "EventRowFilters",
    "OtherUserQuery",
    "RowFilters",
    "ServiceState",
    "StartDateQuery",
    "State",
    "TopicIdQuery",
    "acting_user",
    "current_principal",
    "date_range",
    "event_filters",
    "filters",
    "get_state",
    "parse_date",
]
