"""Alembic environment of the collection service: runs on the connection the caller passes in
(``rankscope serve migrate`` or the SQLite start-up), or on ``sqlalchemy.url`` when run with the
``alembic`` command itself."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from rankscope.service.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = engine_from_config(
        config.get_section(config.config_ini_section) or {},
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.begin() as conn:
        _run(conn)
