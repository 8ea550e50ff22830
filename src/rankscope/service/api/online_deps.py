"""Dependencies of the online loop's routes: event filters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from rankscope.service.api.deps import (
    ArmQuery,
    CurrentPrincipal,
    EndDateQuery,
    StartDateQuery,
    TopicIdQuery,
    acting_user,
    date_range,
)
from rankscope.service.store.events import EventFilters


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

__all__ = ["EventRowFilters", "event_filters"]
