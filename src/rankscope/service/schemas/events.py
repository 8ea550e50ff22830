"""The bodies of the events resource (``/api/events``, ``/api/judgments``; camelCase on the
wire): stored events, their summary, and the click judgments graded from them. The events a
client sends are :mod:`rankscope.collect.wire`'s ``EventCreate``.

Event fields map one to one onto OpenSearch's User Behavior Insights (UBI) event schema:
``action`` is UBI's ``action_name``, ``queryId`` ``query_id``, ``documentId``
``event_attributes.object.object_id``, ``position`` ``event_attributes.position.ordinal``,
``sessionId``/``clientId``/``application``/``timestamp`` the same, ``attributes`` the rest of
``event_attributes`` (see docs/service.md, "Events").
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from rankscope.collect.wire import Camel, EventCreate, EventsCreate
from rankscope.service.schemas.common import SCHEMA_BUILD, TimeRange


def events_models(max_events: int) -> tuple[type[EventsCreate], TypeAdapter[list[EventCreate]]]:
    """``{"events": [...]}`` and the bare list, with ``max_batch_events`` as the lists' length:
    pydantic checks it as it goes, so the event past the limit ends validation."""
    with SCHEMA_BUILD:
        return _events_models(max_events)


@functools.cache
def _events_models(max_events: int) -> tuple[type[EventsCreate], TypeAdapter[list[EventCreate]]]:

    class LimitedEvents(EventsCreate):
        events: list[EventCreate] = Field(max_length=max_events, fail_fast=True)

    bare: TypeAdapter[list[EventCreate]] = TypeAdapter(
        Annotated[list[EventCreate], Field(max_length=max_events, fail_fast=True)]
    )
    return LimitedEvents, bare


class EventItem(Camel):
    id: uuid.UUID
    event_id: str | None
    duplicate: bool


class EventsResult(Camel):
    accepted: int
    duplicates: int
    events: list[EventItem]


class EventPublic(Camel):
    id: uuid.UUID
    user_id: str
    event_id: str | None
    action: str
    query_id: str | None
    query: str | None
    document_id: str | None
    position: int | None
    dwell_time_seconds: float | None
    result_count: int | None
    topic_id: str | None
    search_type: str | None
    arm: str | None
    experiment: str | None
    team: str | None
    session_id: str | None
    client_id: str | None
    application: str | None
    attributes: dict[str, Any] | None
    timestamp: dt.datetime


class EventsPage(Camel):
    limit: int
    offset: int
    next_offset: int = Field(description="the offset of the next page: offset + the items given")
    truncated: bool = Field(
        description="true when the page stopped at max_page_bytes before limit items (page on "
        "from nextOffset)"
    )
    events: list[EventPublic]


class Rate(Camel):
    """A proportion with its 95% Wilson interval (null without any trial)."""

    value: float | None
    low: float | None
    high: float | None
    numerator: int
    denominator: int


class EventsSummary(Camel):
    """``GET /api/events/summary``."""

    searches: int = Field(description="distinct query ids with any event")
    impressions: int
    clicks: int
    click_through_rate: Rate = Field(description="clicks / impressions")
    query_click_rate: Rate = Field(
        description="query ids with at least one click / query ids with impressions"
    )
    mean_click_position: float | None = Field(description="over the clicks with a position")
    clicks_with_position: int = Field(description="the clicks meanClickPosition averages")
    zero_result_rate: Rate = Field(
        description="search events with resultCount 0 / search events with a resultCount"
    )
    thumbs_up: int
    thumbs_down: int
    cited: int
    mean_dwell_seconds: float | None
    other_actions: dict[str, int] = Field(description="counts of actions not interpreted")
    experiments: dict[str, int] = Field(
        description="interleaving experiments: query ids with impressions of each"
    )
    date_range: TimeRange


# -- implicit judgments ------------------------------------------------------------------------


class ClickJudgmentPublic(Camel):
    query_key: str = Field(description="q + 16 hex digits of the normalised query's SHA-256")
    query: str = Field(description="the normalised query text")
    document_id: str
    impressions: int
    clicks: int
    ctr: float
    mean_position: float
    expected_clicks: float
    coec: float | None
    examined: int
    satisfied: int
    attractiveness: float
    satisfaction: float
    dbn: float
    thumbs_up: int
    thumbs_down: int
    cited: int
    grade: int | None = Field(description="0-3 by the model's thresholds; null: unjudged")


class Thresholds3(Camel):
    one: float
    two: float
    three: float


class ClickJudgmentsPublic(Camel):
    model: Literal["ctr", "coec", "dbn"]
    judgment_source: str = Field(description="clicks:<model>")
    thresholds: Thresholds3
    min_impressions: int
    position_prior: list[float] = Field(description="CTR prior of positions 1, 2, ...")
    sessions: int
    pairs: int
    graded: int
    judgments: list[ClickJudgmentPublic]


__all__ = [
    "ClickJudgmentPublic",
    "ClickJudgmentsPublic",
    "EventItem",
    "EventPublic",
    "EventsPage",
    "EventsResult",
    "EventsSummary",
    "Rate",
    "Thresholds3",
    "events_models",
]
