"""Dependencies of the online loop's routes: event filters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from rankscope.service.api.deps import CurrentPrincipal, parse_date
from rankscope.service.errors import bad_request, forbidden
from rankscope.service.store.online import EventFilters


def event_filters(
    principal: CurrentPrincipal,
    start_date: Annotated[
        str | None,
        Query(alias="startDate", max_length=64, description="ISO 8601 date or date-time (UTC)"),
    ] = None,
    end_date: Annotated[
        str | None,
        Query(alias="endDate", max_length=64, description="ISO 8601; a date alone: whole day"),
    ] = None,
    topic_id: Annotated[str | None, Query(alias="topicId", max_length=255)] = None,
    search_type: Annotated[str | None, Query(alias="searchType", max_length=64)] = None,
    arm: Annotated[str | None, Query(max_length=255)] = None,
    experiment: Annotated[str | None, Query(max_length=255)] = None,
    user_id: Annotated[
        str | None,
        Query(alias="userId", max_length=255, description="service role: one user's events"),
    ] = None,
) -> EventFilters:
    start = parse_date(start_date, "startDate", end=False)
    end = parse_date(end_date, "endDate", end=True)
    if start is not None and end is not None and start > end:
        raise bad_request(
            "startDate is after endDate",
            {"startDate": start.isoformat(), "endDate": end.isoformat()},
        )
    if user_id is not None and not principal.is_service and user_id != principal.user_id:
        raise forbidden("only the service role may read another user's events")
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

__all__ = ["EventRowFilters", "event_filters"]
