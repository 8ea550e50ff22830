"""The collection service's tables; on PostgreSQL, its roles and row-level security.

PostgreSQL roles (created when missing; the migrating role needs CREATEROLE for that, or a DBA
creates them first):

- ``rankscope_app``: the role the service logs in as. NOSUPERUSER, NOBYPASSRLS, and NOINHERIT:
  it may ``SET ROLE rankscope_service`` but does not hold that role's rights by itself.
- ``rankscope_service``: full access, taken per transaction (``SET LOCAL ROLE``) for requests
  made with a service token.

``retrieval_metrics`` and ``user_thresholds`` have row-level security ENABLEd and FORCEd (the
table owner is bound too): ``rankscope_app`` sees, inserts and updates only rows whose
``user_id`` equals ``current_setting('rankscope.user_id')``, which the service sets per
transaction; without it a session sees nothing. ``api_keys`` is readable by the app (lookups
by hash) and written only by the owner (``create-key``, ``revoke-key``).

Revision ID: 0001_initial
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "retrieval_metrics",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("query_id", sa.String(255)),
        sa.Column("timestamp", _TS, nullable=False),
        sa.Column("total_retrieved", sa.Integer(), nullable=False),
        sa.Column("total_relevant", sa.Integer(), nullable=False),
        sa.Column("relevant_retrieved", sa.Integer(), nullable=False),
        sa.Column("precision", sa.Float(), nullable=False),
        sa.Column("recall", sa.Float(), nullable=False),
        sa.Column("f1_score", sa.Float(), nullable=False),
        sa.Column("mean_reciprocal_rank", sa.Float(), nullable=False),
        sa.Column("average_precision", sa.Float(), nullable=False),
        sa.Column("ndcg", sa.Float(), nullable=False),
        sa.Column("document_chunks_retrieved", sa.Integer(), nullable=False),
        sa.Column("web_results_retrieved", sa.Integer(), nullable=False),
        sa.Column("total_sources", sa.Integer(), nullable=False),
        sa.Column("min_score", sa.Float()),
        sa.Column("max_score", sa.Float()),
        sa.Column("average_score", sa.Float()),
        sa.Column("search_types", _JSON),
        sa.Column("search_type", sa.String(64), nullable=False),
        sa.Column("topic_id", sa.String(255)),
        sa.Column("document_ids", _JSON),
        sa.Column("ranked_list", _JSON, nullable=False),
        sa.Column("judgments", _JSON, nullable=False),
        sa.Column("judgment_source", sa.String(16), nullable=False),
        sa.Column("threshold", sa.Float()),
        sa.Column("cutoff", sa.Integer(), nullable=False),
        sa.Column("rankscope_version", sa.String(32), nullable=False),
        sa.Column("collect_id", sa.String(255)),
        sa.Column("arm", sa.String(255)),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.CheckConstraint(
            "judgment_source IN ('provided', 'heuristic', 'feedback')",
            name="ck_retrieval_metrics_judgment_source",
        ),
        sa.CheckConstraint("user_id <> ''", name="ck_retrieval_metrics_user_id"),
        sa.UniqueConstraint("user_id", "collect_id", name="uq_retrieval_metrics_user_collect"),
    )
    op.create_index("ix_retrieval_metrics_user_id", "retrieval_metrics", ["user_id"])
    op.create_index(
        "ix_retrieval_metrics_timestamp", "retrieval_metrics", [sa.text("timestamp DESC")]
    )
    op.create_index("ix_retrieval_metrics_topic_id", "retrieval_metrics", ["topic_id"])
    op.create_index("ix_retrieval_metrics_query_id", "retrieval_metrics", ["query_id"])
    op.create_index(
        "ix_retrieval_metrics_user_timestamp", "retrieval_metrics", ["user_id", "timestamp"]
    )

    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("name", sa.String(255)),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("revoked_at", _TS),
        sa.CheckConstraint("role IN ('user', 'service')", name="ck_api_keys_role"),
    )

    op.create_table(
        "user_thresholds",
        sa.Column("user_id", sa.String(255), primary_key=True),
        sa.Column("search_type", sa.String(64), primary_key=True),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )

    if op.get_bind().dialect.name == "postgresql":
        _postgres_security()


def _postgres_security() -> None:
    op.execute(
        """
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rankscope_app') THEN
                CREATE ROLE rankscope_app LOGIN NOINHERIT NOSUPERUSER NOBYPASSRLS
                    NOCREATEDB NOCREATEROLE;
            ELSE
                ALTER ROLE rankscope_app NOINHERIT NOSUPERUSER NOBYPASSRLS;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rankscope_service') THEN
                CREATE ROLE rankscope_service NOLOGIN NOSUPERUSER NOBYPASSRLS;
            END IF;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO rankscope_app, rankscope_service',
                           current_schema());
        END
        $$
        """
    )
    op.execute("GRANT rankscope_service TO rankscope_app")
    op.execute("GRANT SELECT, INSERT, UPDATE ON retrieval_metrics TO rankscope_app")
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON retrieval_metrics TO rankscope_service")
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON user_thresholds TO rankscope_app")
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON user_thresholds TO rankscope_service")
    op.execute("GRANT SELECT ON api_keys TO rankscope_app, rankscope_service")
    op.execute("GRANT SELECT ON alembic_version TO rankscope_app, rankscope_service")
    for table in ("retrieval_metrics", "user_thresholds"):
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
    # the roles stay: they belong to the cluster and may serve other databases
    op.drop_table("user_thresholds")
    op.drop_table("api_keys")
    op.drop_index("ix_retrieval_metrics_user_timestamp", "retrieval_metrics")
    op.drop_index("ix_retrieval_metrics_query_id", "retrieval_metrics")
    op.drop_index("ix_retrieval_metrics_topic_id", "retrieval_metrics")
    op.drop_index("ix_retrieval_metrics_timestamp", "retrieval_metrics")
    op.drop_index("ix_retrieval_metrics_user_id", "retrieval_metrics")
    op.drop_table("retrieval_metrics")
