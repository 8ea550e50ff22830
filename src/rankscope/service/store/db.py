"""Database connections: URLs and DSNs, SQLite set-up (WAL), migrations, per-transaction users.

On PostgreSQL every transaction names its user with ``set_config('rankscope.user_id', ...,
true)`` (local to the transaction, so a pooled connection never carries a user into the next
request) and, for the service role, ``SET LOCAL ROLE rankscope_service``. The row-level security
policies created by the migrations read those; see ``migrations/versions/0001_initial.py``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from rankscope.errors import ConfigError

MIGRATIONS = Path(__file__).with_name("migrations")
APP_ROLE = "rankscope_app"
SERVICE_ROLE = "rankscope_service"
USER_SETTING = "rankscope.user_id"

SqliteSynchronous = Literal["NORMAL", "FULL"]
#: page cache of each SQLite connection (KiB)
SQLITE_CACHE_KIB = 16384
# the pragma's text from a checked value only (it cannot be a bound parameter)
_SYNCHRONOUS: dict[str, str] = {"NORMAL": "NORMAL", "FULL": "FULL"}


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: a user (own rows only) or the service role (every row)."""

    user_id: str
    role: Literal["user", "service"] = "user"

    @property
    def is_service(self) -> bool:
        return self.role == "service"


def to_url(database: str) -> tuple[URL, dict[str, Any]]:
    """A SQLAlchemy URL (and connect arguments) for a URL, a libpq DSN or a SQLite file path."""
    raw = database.strip()
    if not raw:
        raise ConfigError("empty database URL", hint="Give sqlite:///file.sqlite or a DSN")
    if "://" not in raw:
        if "=" in raw:  # a libpq key/value DSN: host=... dbname=...
            from psycopg.conninfo import conninfo_to_dict

            try:
                params = conninfo_to_dict(raw)
            except Exception as exc:
                raise ConfigError(
                    "cannot read the PostgreSQL DSN", value=_hide_dsn(raw), hint=str(exc)
                ) from exc
            return make_url("postgresql+psycopg://"), {k: v for k, v in params.items()}
        return make_url(f"sqlite:///{raw}"), {}
    try:
        url = make_url(raw)
    except ArgumentError as exc:
        raise ConfigError(
            "cannot read the database URL",
            value=_hide(raw),
            hint="Use sqlite:///path/file.sqlite or postgresql://user:password@host/db",
        ) from exc
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        url = url.set(drivername="postgresql+psycopg")
    if url.drivername not in ("sqlite", "postgresql+psycopg"):
        raise ConfigError(
            "unsupported database",
            value=url.drivername,
            hint="rankscope serve stores metrics in SQLite or PostgreSQL",
        )
    return url, {}


def _hide(raw: str) -> str:
    with contextlib.suppress(Exception):
        return make_url(raw).render_as_string(hide_password=True)
    return raw


def _hide_dsn(raw: str) -> str:
    return " ".join(p if not p.startswith("password=") else "password=***" for p in raw.split())


def describe(database: str) -> str:
    """The URL with its password hidden, for messages and logs."""
    raw = database.strip()
    if "://" not in raw and "=" in raw:
        return _hide_dsn(raw)
    url, _ = to_url(database)
    return url.render_as_string(hide_password=True)


def make_engine(
    database: str, *, pool_size: int = 10, sqlite_synchronous: SqliteSynchronous = "NORMAL"
) -> Engine:
    """An engine for the service: SQLite in WAL mode with a busy timeout (and
    ``sqlite_synchronous``: NORMAL survives crashes of the process, FULL also power loss), or
    psycopg 3."""
    url, connect_args = to_url(database)
    if url.get_backend_name() == "sqlite":
        path = url.database
        if path and path != ":memory:" and not url.query.get("uri"):
            file = Path(path).expanduser()
            file.parent.mkdir(parents=True, exist_ok=True)
            create_private(file)
        engine = create_engine(
            url,
            json_serializer=_json,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=pool_size,
            max_overflow=pool_size,
        )
        event.listen(engine, "connect", functools.partial(_sqlite_pragmas, sqlite_synchronous))
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(
        url,
        json_serializer=_json,
        connect_args=connect_args,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
    )


def create_private(file: Path) -> None:
    """Create ``file`` empty with mode 0600 unless it exists. The database holds every user's
    queries; SQLite gives its -wal, -shm and journal files the database file's mode, so they
    are private too (otherwise all four would be 0644 under the usual umask 022)."""
    try:
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _sqlite_pragmas(synchronous: SqliteSynchronous, dbapi_conn: Any, _record: Any) -> None:
    # pysqlite's own transaction handling is switched off so that BEGIN IMMEDIATE below takes
    # the write lock up front (no deadlock between two readers that both want to write)
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA synchronous={_SYNCHRONOUS[synchronous]}")
    cur.execute("PRAGMA busy_timeout=30000")
    # 16 MiB of page cache per connection instead of SQLite's 2 MiB: the six indexes of
    # retrieval_metrics outgrow 2 MiB after some 50,000 rows, and every insert then reads
    # their pages back (a batched record's insert took 27 µs at 120,000 rows, 18 µs with it)
    cur.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Connection) -> None:
    mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def act_as(conn: Connection, principal: Principal) -> None:
    """Name the user (and role) for the rest of the current PostgreSQL transaction."""
    conn.execute(
        text("SELECT set_config(:name, :user, true)"),
        {"name": USER_SETTING, "user": principal.user_id},
    )
    if principal.is_service:
        conn.exec_driver_sql(f"SET LOCAL ROLE {SERVICE_ROLE}")


# -- migrations ----------------------------------------------------------------------------------


def _alembic_config(conn: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


def head_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None  # the package ships at least one migration
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return _revision_on(conn)


def migrate(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Upgrade the schema to ``revision``; returns the revisions before and after."""
    from alembic import command

    # IMMEDIATE: on SQLite the write lock is taken before alembic reads its version, so two
    # processes starting together migrate one after the other instead of failing
    with (
        engine.connect().execution_options(sqlite_begin="IMMEDIATE") as conn,
        conn.begin(),
    ):
        before = _revision_on(conn)
        command.upgrade(_alembic_config(conn), revision)
        after = _revision_on(conn)
    return before, after


def _revision_on(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as conn:
        command.downgrade(_alembic_config(conn), revision)


__all__ = [
    "APP_ROLE",
    "SERVICE_ROLE",
    "USER_SETTING",
    "Principal",
    "SqliteSynchronous",
    "act_as",
    "create_private",
    "current_revision",
    "describe",
    "head_revision",
    "is_postgres",
    "make_engine",
    "migrate",
    "to_url",
]
