"""Service fixtures: a migrated SQLite file with keys, a TestClient over the app, and fresh
PostgreSQL databases (in the session's throwaway cluster) with the app role's DSN."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from rankscope.service.app import create_app
from rankscope.service.settings import ServiceSettings
from serve_helpers import Keys, PgDatabase, Service, make_keys, sqlite_settings


@pytest.fixture
def sqlite_db(tmp_path: Path) -> tuple[ServiceSettings, Keys]:
    settings = sqlite_settings(tmp_path / "metrics.sqlite")
    return settings, make_keys(settings.database_url)


@pytest.fixture
def service(sqlite_db: tuple[ServiceSettings, Keys]) -> Iterator[Service]:
    settings, keys = sqlite_db
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, keys, settings)


_numbers = itertools.count()


def _with(dsn: str, **changes: str) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(dsn)
    params.update(changes)
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture
def pg_database(postgres_dsn: str) -> PgDatabase:
    """A new database, migrated by the owner; roles exist cluster-wide after the first."""
    psycopg = pytest.importorskip("psycopg")
    name = f"rs_service_{next(_numbers)}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        try:
            conn.execute(f"CREATE DATABASE {name}")
        except psycopg.Error as exc:
            pytest.skip(f"cannot create a database for the service tests: {exc}")
    admin = _with(postgres_dsn, dbname=name)
    from sqlalchemy.exc import ProgrammingError

    from rankscope.service.store.db import make_engine, migrate

    engine = make_engine(admin, pool_size=1)
    try:
        migrate(engine)
    except ProgrammingError as exc:  # e.g. RANKSCOPE_TEST_PG_DSN without CREATEROLE
        pytest.skip(f"cannot create the service's roles on this server: {exc}")
    finally:
        engine.dispose()
    return PgDatabase(admin, _with(admin, user="rankscope_app"))
