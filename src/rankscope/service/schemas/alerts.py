"""The bodies of alerts (``/api/alerts``) and retention (``/api/retention``), camelCase on the
wire."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import Field

from rankscope.collect.wire import Camel, Count


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


__all__ = ["AlertCheck", "AlertPublic", "AlertsPage", "RetentionPublic", "RetentionUpdate"]
