"""The tables of the collection service (SQLAlchemy 2 declarative models).

The schema itself is created by the Alembic migrations in ``migrations/``; these models describe
it for queries (and a test checks that the migrated database matches them). The ranked list and
the judgments of each record are JSON columns of its row: they are always read and written whole,
and one row per record keeps collection fast.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, cast

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

JUDGMENT_SOURCES = ("provided", "heuristic", "feedback")
ROLES = ("user", "service")

JsonType = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps no offset: store UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # a value produced by an SQL function on SQLite
            value = dt.datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)  # type: ignore[no-any-return]
        return value.astimezone(dt.UTC)  # type: ignore[no-any-return]


class Base(DeclarativeBase):
    pass


class RetrievalMetric(Base):
    """One retrieval as the application saw it, with its per-query measures."""

    __tablename__ = "retrieval_metrics"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    query: Mapped[str] = mapped_column(Text, nullable=False)
    query_id: Mapped[str | None] = mapped_column(String(255))
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)

    total_retrieved: Mapped[int] = mapped_column(Integer, nullable=False)
    total_relevant: Mapped[int] = mapped_column(Integer, nullable=False)
    relevant_retrieved: Mapped[int] = mapped_column(Integer, nullable=False)
    precision: Mapped[float] = mapped_column(Float, nullable=False)
    recall: Mapped[float] = mapped_column(Float, nullable=False)
    f1_score: Mapped[float] = mapped_column(Float, nullable=False)
    mean_reciprocal_rank: Mapped[float] = mapped_column(Float, nullable=False)
    average_precision: Mapped[float] = mapped_column(Float, nullable=False)
    ndcg: Mapped[float] = mapped_column(Float, nullable=False)

    document_chunks_retrieved: Mapped[int] = mapped_column(Integer, nullable=False)
    web_results_retrieved: Mapped[int] = mapped_column(Integer, nullable=False)
    total_sources: Mapped[int] = mapped_column(Integer, nullable=False)
    min_score: Mapped[float | None] = mapped_column(Float)
    max_score: Mapped[float | None] = mapped_column(Float)
    average_score: Mapped[float | None] = mapped_column(Float)

    search_types: Mapped[dict[str, bool] | None] = mapped_column(JsonType)
    search_type: Mapped[str] = mapped_column(String(64), nullable=False)
    topic_id: Mapped[str | None] = mapped_column(String(255))
    document_ids: Mapped[list[str] | None] = mapped_column(JsonType)

    ranked_list: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, nullable=False)
    judgments: Mapped[dict[str, int]] = mapped_column(JsonType, nullable=False)
    judgment_source: Mapped[str] = mapped_column(String(16), nullable=False)
    threshold: Mapped[float | None] = mapped_column(Float)
    cutoff: Mapped[int] = mapped_column(Integer, nullable=False)
    rankscope_version: Mapped[str] = mapped_column(String(32), nullable=False)

    collect_id: Mapped[str | None] = mapped_column(String(255))
    arm: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        CheckConstraint(
            "judgment_source IN ('provided', 'heuristic', 'feedback')",
            name="ck_retrieval_metrics_judgment_source",
        ),
        CheckConstraint("user_id <> ''", name="ck_retrieval_metrics_user_id"),
        UniqueConstraint("user_id", "collect_id", name="uq_retrieval_metrics_user_collect"),
        Index("ix_retrieval_metrics_user_id", "user_id"),
        Index("ix_retrieval_metrics_timestamp", timestamp.desc()),
        Index("ix_retrieval_metrics_topic_id", "topic_id"),
        Index("ix_retrieval_metrics_query_id", "query_id"),
        Index("ix_retrieval_metrics_user_timestamp", "user_id", "timestamp"),
    )


class ApiKey(Base):
    """An API key: only its SHA-256 is stored; the key itself is shown once, at creation."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    role: Mapped[str] = mapped_column(String(16), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (CheckConstraint("role IN ('user', 'service')", name="ck_api_keys_role"),)


class UserThreshold(Base):
    """A user's own relevance threshold for heuristic rows, per search type ('*': any)."""

    __tablename__ = "user_thresholds"

    user_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    search_type: Mapped[str] = mapped_column(String(64), primary_key=True)
    threshold: Mapped[float] = mapped_column(Float, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)


class SearchEvent(Base):
    """One search impression or interaction (``POST /api/events``; UBI-compatible fields)."""

    __tablename__ = "search_events"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    event_id: Mapped[str | None] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(100), nullable=False)
    query_id: Mapped[str | None] = mapped_column(String(255))
    query: Mapped[str | None] = mapped_column(Text)
    document_id: Mapped[str | None] = mapped_column(String(255))
    position: Mapped[int | None] = mapped_column(Integer)
    dwell_seconds: Mapped[float | None] = mapped_column(Float)
    result_count: Mapped[int | None] = mapped_column(Integer)
    topic_id: Mapped[str | None] = mapped_column(String(255))
    search_type: Mapped[str | None] = mapped_column(String(64))
    arm: Mapped[str | None] = mapped_column(String(255))
    experiment: Mapped[str | None] = mapped_column(String(255))
    team: Mapped[str | None] = mapped_column(String(255))
    session_id: Mapped[str | None] = mapped_column(String(255))
    client_id: Mapped[str | None] = mapped_column(String(255))
    application: Mapped[str | None] = mapped_column(String(255))
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        CheckConstraint("user_id <> ''", name="ck_search_events_user_id"),
        UniqueConstraint("user_id", "event_id", name="uq_search_events_user_event"),
        Index("ix_search_events_user_timestamp", "user_id", "timestamp"),
        Index("ix_search_events_user_query", "user_id", "query_id"),
        Index("ix_search_events_experiment", "experiment"),
    )


class Alert(Base):
    """A regression found by an alert rule, and the state of its webhook delivery."""

    __tablename__ = "alerts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    rule: Mapped[str] = mapped_column(String(255), nullable=False)
    scope: Mapped[str] = mapped_column(String(32), nullable=False)
    scope_value: Mapped[str | None] = mapped_column(String(255))
    measure: Mapped[str] = mapped_column(String(64), nullable=False)
    judgment_source: Mapped[str] = mapped_column(String(16), nullable=False)
    method: Mapped[str] = mapped_column(String(32), nullable=False)
    window_start: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    window_end: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    baseline_start: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    baseline_end: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)
    current_mean: Mapped[float | None] = mapped_column(Float)
    baseline_mean: Mapped[float | None] = mapped_column(Float)
    delta: Mapped[float | None] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    effect_size: Mapped[float | None] = mapped_column(Float)
    p_value: Mapped[float | None] = mapped_column(Float)
    n_current: Mapped[int] = mapped_column(Integer, nullable=False)
    n_baseline: Mapped[int] = mapped_column(Integer, nullable=False)
    paired_queries: Mapped[int] = mapped_column(Integer, nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)
    dedup_key: Mapped[str] = mapped_column(String(255), nullable=False)
    delivery_status: Mapped[str] = mapped_column(String(16), nullable=False)
    delivery_attempts: Mapped[int] = mapped_column(Integer, nullable=False)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        CheckConstraint("user_id <> ''", name="ck_alerts_user_id"),
        CheckConstraint(
            "delivery_status IN ('pending', 'delivered', 'failed', 'none')",
            name="ck_alerts_delivery_status",
        ),
        UniqueConstraint("user_id", "dedup_key", name="uq_alerts_user_dedup"),
        Index("ix_alerts_user_created", "user_id", "created_at"),
    )


class UserSetting(Base):
    """Per-user settings of the online loop: how many days records and events are kept."""

    __tablename__ = "user_settings"

    user_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    retention_days: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        CheckConstraint(
            "retention_days IS NULL OR retention_days >= 1", name="ck_user_settings_days"
        ),
    )


metrics_table = cast(Table, RetrievalMetric.__table__)
events_table = cast(Table, SearchEvent.__table__)
alerts_table = cast(Table, Alert.__table__)
user_settings_table = cast(Table, UserSetting.__table__)
api_keys_table = cast(Table, ApiKey.__table__)
thresholds_table = cast(Table, UserThreshold.__table__)

__all__ = [
    "JUDGMENT_SOURCES",
    "ROLES",
    "Alert",
    "ApiKey",
    "Base",
    "RetrievalMetric",
    "SearchEvent",
    "UTCDateTime",
    "UserSetting",
    "UserThreshold",
    "alerts_table",
    "api_keys_table",
    "events_table",
    "metrics_table",
    "thresholds_table",
    "user_settings_table",
]
