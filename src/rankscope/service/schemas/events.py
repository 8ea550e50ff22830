"""JSON bodies of the online loop (camelCase on the wire): events, click judgments, A/B
comparison, interleaving, alerts, retention. ``*Create`` comes in, ``*Public`` goes out.

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

from pydantic import Field, StringConstraints, TypeAdapter, model_validator

from rankscope.service.schemas.records import Camel, Count, Finite, Id, Interval, Text

#: actions the service gives a meaning to; any other name (UBI allows custom ones such as
#: ``add_to_cart``) is stored and counted, not interpreted
KNOWN_ACTIONS = ("search", "impression", "click", "dwell", "thumbs_up", "thumbs_down", "cited")
#: actions about one document of a results page
DOCUMENT_ACTIONS = ("impression", "click", "dwell", "thumbs_up", "thumbs_down", "cited")

ActionName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class EventCreate(Camel):
    """One impression or interaction, keyed by query id, document id and position."""

    event_id: Id | None = Field(
        None,
        description="client-chosen id that makes retries safe: an event whose eventId is "
        "already stored for this user is not stored again",
    )
    action: ActionName = Field(
        description="search, impression, click, dwell, thumbs_up, thumbs_down, cited (UBI's "
        "action_name); other names are stored and not interpreted"
    )
    query_id: Id | None = Field(
        None, description="one results page (UBI query_id); required for the known actions"
    )
    query: Text | None = Field(None, description="the query text (UBI user_query)")
    document_id: Id | None = Field(
        None, description="the result acted on (UBI object_id); required for document actions"
    )
    position: Annotated[Count, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="1-based rank on the page; required for impressions"
    )
    dwell_time_seconds: Annotated[Finite, Field(ge=0, le=1e7)] | None = Field(
        None, description="seconds spent on the document (dwell events, or on a click)"
    )
    result_count: Annotated[Count, Field(ge=0, le=1_000_000_000)] | None = Field(
        None, description="results the search returned (search events; 0 = zero results)"
    )
    topic_id: Id | None = None
    search_type: Label | None = Field(None, description="e.g. semantic, keyword+semantic")
    arm: Id | None = Field(None, description="the A/B arm or configuration that served the page")
    experiment: Id | None = Field(None, description="an interleaving experiment's name")
    team: Id | None = Field(
        None, description="interleaving: the ranker (arm) that contributed this slot"
    )
    session_id: Id | None = None
    client_id: Id | None = None
    application: Id | None = None
    attributes: dict[str, Any] | None = Field(None, description="anything else (kept as is)")
    timestamp: dt.datetime | None = Field(
        None,
        description="default: when the request arrived; from 1970-01-01 to a day past the "
        "server's clock",
    )
    user_id: Id | None = Field(None, description="service role only: the event's user")

    @model_validator(mode="after")
    def _required_by_action(self) -> EventCreate:
        if self.action in KNOWN_ACTIONS and self.query_id is None:
            raise ValueError(f"a {self.action!r} event needs queryId")
        if self.action in DOCUMENT_ACTIONS and self.document_id is None:
            raise ValueError(f"a {self.action!r} event needs documentId")
        if self.action == "impression" and self.position is None:
            raise ValueError("an 'impression' event needs position (1 = top)")
        if self.action == "dwell" and self.dwell_time_seconds is None:
            raise ValueError("a 'dwell' event needs dwellTimeSeconds")
        return self


class EventsCreate(Camel):
    """``POST /api/events``: ``{"events": [...]}`` (a bare JSON list is accepted too).
    Validation stops at the first invalid event."""

    events: list[EventCreate] = Field(fail_fast=True)


@functools.cache
def events_models(max_events: int) -> tuple[type[EventsCreate], TypeAdapter[list[EventCreate]]]:
    """``{"events": [...]}`` and the bare list, with ``max_batch_events`` as the lists' length:
    pydantic checks it as it goes, so the event past the limit ends validation."""

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
    events: list[EventPublic]


class Rate(Camel):
    """A proportion with its 95% Wilson interval (null without any trial)."""

    value: float | None
    low: float | None
    high: float | None
    numerator: int
    denominator: int


class DateRange(Camel):
    start: dt.datetime | None
    end: dt.datetime | None


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
    date_range: DateRange


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


class CalibrationGroup(Camel):
    group: str | None
    pairs: int
    positives: int
    current_threshold: float | None
    kappa_current: float | None
    agreement_current: float | None
    best_threshold: float | None
    kappa_best: float | None
    agreement_best: float | None
    applicable: bool = Field(description="the best threshold lies in 0..1 and can be set")


class CalibrationPublic(Camel):
    labels: str = Field(description="clicks:<model> or the qrels file")
    by: Literal["searchType", "arm"]
    min_grade: int
    groups: list[CalibrationGroup]


# -- A/B and interleaving ------------------------------------------------------------------------


class CiPublic(Camel):
    low: float
    high: float
    level: float
    method: str


class MeasureDifference(Camel):
    measure: str
    test: Literal["welch", "paired_t"]
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None = Field(description="mean(a) - mean(b)")
    ci: CiPublic | None
    bootstrap_ci: CiPublic | None
    effect_size: float | None
    p_value: float | None
    p_adjusted: float | None = Field(description="Holm over the measures compared")
    verdict: Literal["a", "b", "no_difference", "insufficient_data"]
    winner: str | None


class ArmsComparison(Camel):
    arms: list[str]
    paired: bool
    judgment_source: str = Field(description="judged, heuristic or clicks:<model>")
    alpha: float
    min_sample: int
    correction: str
    records: dict[str, int]
    measures: list[MeasureDifference]


class InterleavingPublic(Camel):
    experiment: str
    arms: list[str]
    impressions: int = Field(description="query ids with impressions in the experiment")
    clicked: int
    wins: int = Field(description="impressions the first arm won")
    losses: int
    ties: int
    preference: float
    p_value: float | None = Field(description="exact two-sided sign test")
    alpha: float
    min_impressions: int
    verdict: Literal["a", "b", "no_difference", "insufficient_data"]
    winner: str | None


# -- alerts and retention ------------------------------------------------------------------------


class AlertPublic(Camel):
    id: uuid.UUID
    user_id: str
    rule: str
    scope: str
    scope_value: str | None
    measure: str
    judgment_source: str
    method: str
    window_start: dt.datetime
    window_end: dt.datetime
    baseline_start: dt.datetime
    baseline_end: dt.datetime
    current_mean: float | None
    baseline_mean: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    effect_size: float | None
    p_value: float | None
    n_current: int
    n_baseline: int
    paired_queries: int
    message: str
    delivery_status: Literal["pending", "delivered", "failed", "none"]
    delivery_attempts: int
    delivered_at: dt.datetime | None
    last_error: str | None
    created_at: dt.datetime


class AlertsPage(Camel):
    limit: int
    offset: int
    alerts: list[AlertPublic]


class AlertCheck(Camel):
    checked_at: dt.datetime
    groups: int = Field(description="(rule, user, scope) groups evaluated")
    fired: list[AlertPublic]


class RetentionUpdate(Camel):
    retention_days: Annotated[Count, Field(ge=1, le=100_000)] | None = Field(
        description="days to keep records, events and alerts; null: the service default"
    )


class RetentionPublic(Camel):
    user_id: str
    retention_days: int | None
    default_retention_days: int | None
    effective_retention_days: int | None


__all__ = [
    "DOCUMENT_ACTIONS",
    "KNOWN_ACTIONS",
    "AlertCheck",
    "AlertPublic",
    "AlertsPage",
    "ArmsComparison",
    "CalibrationGroup",
    "CalibrationPublic",
    "CiPublic",
    "ClickJudgmentPublic",
    "ClickJudgmentsPublic",
    "DateRange",
    "EventCreate",
    "EventItem",
    "EventPublic",
    "EventsCreate",
    "EventsPage",
    "EventsResult",
    "EventsSummary",
    "InterleavingPublic",
    "Interval",
    "MeasureDifference",
    "Rate",
    "RetentionPublic",
    "RetentionUpdate",
    "Thresholds3",
    "events_models",
]
