"""The online loop: search events, alerts, per-user settings (retention).

- ``search_events``: impressions and interactions (``POST /api/events``), idempotent per user
  and client event id (``UNIQUE (user_id, event_id)``).
- ``alerts``: regressions found by the alert rules, with their webhook delivery state; one per
  user and ``dedup_key`` (rule, scope and window), so a second check of the same window adds
  nothing.
- ``user_settings``: a user's retention in days (``rankscope serve purge`` deletes older rows).

On PostgreSQL the three tables get the same row-level security as ``retrieval_metrics``
(0001): ENABLEd and FORCEd, ``rankscope_app`` sees and writes only rows whose ``user_id`` equals
``current_setting('rankscope.user_id')``, ``rankscope_service`` everything. Grants to the app
role: events ``SELECT, INSERT`` (never changed, never deleted by a user), alerts ``SELECT``
(the checker writes them as the service role), user settings ``SELECT, INSERT, UPDATE,
DELETE`` of its own row. The service role also deletes (purge).

Revision ID: 0002_online
Revises: 0001_initial
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002_online"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "search_events",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("event_id", sa.String(255)),
        sa.Column("action", sa.String(100), nullable=False),
        sa.Column("query_id", sa.String(255)),
        sa.Column("query", sa.Text()),
        sa.Column("document_id", sa.String(255)),
        sa.Column("position", sa.Integer()),
        sa.Column("dwell_seconds", sa.Float()),
        sa.Column("result_count", sa.Integer()),
        sa.Column("topic_id", sa.String(255)),
        sa.Column("search_type", sa.String(64)),
        sa.Column("arm", sa.String(255)),
        sa.Column("experiment", sa.String(255)),
        sa.Column("team", sa.String(255)),
        sa.Column("session_id", sa.String(255)),
        sa.Column("client_id", sa.String(255)),
        sa.Column("application", sa.String(255)),
        sa.Column("attributes", _JSON),
        sa.Column("timestamp", _TS, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.CheckConstraint("user_id <> ''", name="ck_search_events_user_id"),
        sa.UniqueConstraint("user_id", "event_id", name="uq_search_events_user_event"),
    )
    op.create_index("ix_search_events_user_timestamp", "search_events", ["user_id", "timestamp"])
    op.create_index("ix_search_events_user_query", "search_events", ["user_id", "query_id"])
    op.create_index("ix_search_events_experiment", "search_events", ["experiment"])

    op.create_table(
        "alerts",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("rule", sa.String(255), nullable=False),
        sa.Column("scope", sa.String(32), nullable=False),
        sa.Column("scope_value", sa.String(255)),
        sa.Column("measure", sa.String(64), nullable=False),
        sa.Column("judgment_source", sa.String(16), nullable=False),
        sa.Column("method", sa.String(32), nullable=False),
        sa.Column("window_start", _TS, nullable=False),
        sa.Column("window_end", _TS, nullable=False),
        sa.Column("baseline_start", _TS, nullable=False),
        sa.Column("baseline_end", _TS, nullable=False),
        sa.Column("current_mean", sa.Float()),
        sa.Column("baseline_mean", sa.Float()),
        sa.Column("delta", sa.Float()),
        sa.Column("ci_low", sa.Float()),
        sa.Column("ci_high", sa.Float()),
        sa.Column("effect_size", sa.Float()),
        sa.Column("p_value", sa.Float()),
        sa.Column("n_current", sa.Integer(), nullable=False),
        sa.Column("n_baseline", sa.Integer(), nullable=False),
        sa.Column("paired_queries", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("dedup_key", sa.String(255), nullable=False),
        sa.Column("delivery_status", sa.String(16), nullable=False),
        sa.Column("delivery_attempts", sa.Integer(), nullable=False),
        sa.Column("delivered_at", _TS),
        sa.Column("last_error", sa.Text()),
        sa.Column("created_at", _TS, nullable=False),
        sa.CheckConstraint("user_id <> ''", name="ck_alerts_user_id"),
        sa.CheckConstraint(
            "delivery_status IN ('pending', 'delivered', 'failed', 'none')",
            name="ck_alerts_delivery_status",
        ),
        sa.UniqueConstraint("user_id", "dedup_key", name="uq_alerts_user_dedup"),
    )
    op.create_index("ix_alerts_user_created", "alerts", ["user_id", "created_at"])

    op.create_table(
        "user_settings",
        sa.Column("user_id", sa.String(255), primary_key=True),
        sa.Column("retention_days", sa.Integer()),
        sa.Column("updated_at", _TS, nullable=False),
        sa.CheckConstraint(
            "retention_days IS NULL OR retention_days >= 1", name="ck_user_settings_days"
        ),
    )

    if op.get_bind().dialect.name == "postgresql":
        _postgres_security()


def _postgres_security() -> None:
    grants = {
        "search_events": "SELECT, INSERT",
        "alerts": "SELECT",
        "user_settings": "SELECT, INSERT, UPDATE, DELETE",
    }
    for table, rights in grants.items():
        op.execute(f"GRANT {rights} ON {table} TO rankscope_app")
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO rankscope_service")
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY {table}_own_rows ON {table} TO rankscope_app "
            "USING (user_id = current_setting('rankscope.user_id', true)) "
            "WITH CHECK (user_id = current_setting('rankscope.user_id', true))"
        )
        op.execute(
            f"CREATE POLICY {table}_service ON {table} TO rankscope_service "
            "USING (true) WITH CHECK (true)"
        )


def downgrade() -> None:
    op.drop_table("user_settings")
    op.drop_index("ix_alerts_user_created", "alerts")
    op.drop_table("alerts")
    op.drop_index("ix_search_events_experiment", "search_events")
    op.drop_index("ix_search_events_user_query", "search_events")
    op.drop_index("ix_search_events_user_timestamp", "search_events")
    op.drop_table("search_events")
