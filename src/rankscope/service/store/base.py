"""One database for every store: the engine, SQLite's write lock, transactions that act as a
principal, pages of a query, and the checks of the schema and of the role the service connects
as.

Every statement also filters by user in SQL (so SQLite, which has no row-level security, keeps
users apart the same way): :func:`owner_filter` for a table's ``user_id``; on PostgreSQL the
row-level security policies enforce it again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import ColumnElement, Connection, Engine, Select, Table, text
from sqlalchemy.exc import SQLAlchemyError

from rankscope.errors import ServiceError
from rankscope.service.store.db import (
    APP_ROLE,
    SERVICE_ROLE,
    Principal,
    act_as,
    current_revision,
    head_revision,
    is_postgres,
)
from rankscope.service.store.writelock import WriteLock

#: rows a bounded page reads from the database at a time (a record may return megabytes of
#: options.documentIds)
PAGE_CHUNK_ROWS = 8


class Database:
    """The service's database. Thread-safe: one engine, a transaction per call."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.postgres = is_postgres(engine)
        # SQLite allows one writer: writers queue on this lock instead of on SQLite's busy
        # handler, which sleeps up to 100 ms between tries
        self._write_lock = None if self.postgres else WriteLock(engine.url.database)

    def close(self) -> None:
        """Close the engine's connections and the write lock's file."""
        self.engine.dispose()
        if self._write_lock is not None:
            self._write_lock.close()

    # -- transactions ------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(
        self, principal: Principal | None, *, write: bool = False
    ) -> Iterator[Connection]:
        """A transaction (BEGIN IMMEDIATE for writes on SQLite) acting as ``principal`` (None:
        the connection's own role, which then names a principal per statement group with
        :meth:`act_as`)."""
        lock = self._write_lock if write else None
        with lock if lock is not None else contextlib.nullcontext():
            opts = {"sqlite_begin": "IMMEDIATE"} if write else {}
            with self.engine.connect().execution_options(**opts) as conn, conn.begin():
                if principal is not None and self.postgres:
                    act_as(conn, principal)
                yield conn

    def act_as(self, conn: Connection, principal: Principal) -> None:
        """Act as ``principal`` for the rest of a transaction opened as None (PostgreSQL)."""
        if self.postgres:
            conn.exec_driver_sql("SET LOCAL ROLE NONE")
            act_as(conn, principal)

    def fetch_page(
        self, principal: Principal, query: Select[Any], limit: int, offset: int
    ) -> list[dict[str, Any]]:
        """One page of an ordered query's rows, as dictionaries, read as ``principal``."""
        with self.transaction(principal) as conn:
            rows = conn.execute(query.limit(limit).offset(offset)).mappings()
            return [dict(r) for r in rows]

    def fetch_bounded_page(
        self,
        principal: Principal,
        query: Select[Any],
        limit: int,
        offset: int,
        max_bytes: int,
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page of at most ``limit`` rows and about ``max_bytes`` as JSON: rows are read
        in small chunks and the page ends after the row that reaches ``max_bytes`` (a first row
        is always given). Returns the rows and whether the page stopped at the byte bound."""
        rows: list[dict[str, Any]] = []
        size = 0
        with self.transaction(principal) as conn:
            result = conn.execution_options(yield_per=PAGE_CHUNK_ROWS).execute(
                query.limit(limit).offset(offset)
            )
            for row in result.mappings():
                if rows and size >= max_bytes:
                    result.close()
                    return rows, True
                item = dict(row)
                size += len(orjson.dumps(item, default=str))
                rows.append(item)
        return rows, False

    # -- health ------------------------------------------------------------------------------

    def revision(self) -> str | None:
        return current_revision(self.engine)

    def check_schema(self) -> None:
        """Raise ServiceError unless the database is at the migrations' head."""
        try:
            have = self.revision()
        except SQLAlchemyError as exc:
            raise ServiceError(f"cannot reach the database: {_first_line(exc)}") from exc
        want = head_revision()
        if have != want:
            raise ServiceError(
                f"the database schema is at revision {have or 'none'}, this rankscope needs "
                f"{want}: run `rankscope serve migrate` with the owner's URL "
                "(admin_database_url) first"
            )

    def check_role(self) -> RoleProblem | None:
        """On PostgreSQL, what is wrong with the role the service connects as, else None.

        Row-level security protects the users from each other only when the service runs as
        ``rankscope_app`` (or a role that inherits its rights and nothing more): a superuser,
        a BYPASSRLS role or one that holds ``rankscope_service``'s rights without ``SET ROLE``
        sees every user's rows; the tables' owner, or a role without ``rankscope_app``'s
        rights, matches no policy, so it reads nothing and every write is refused."""
        if not self.postgres:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT current_user, rolsuper, rolbypassrls, "
                    f"pg_has_role(current_user, '{SERVICE_ROLE}', 'USAGE'), "
                    f"pg_has_role(current_user, '{APP_ROLE}', 'USAGE'), "
                    f"pg_has_role(current_user, '{SERVICE_ROLE}', 'MEMBER') "
                    "FROM pg_roles WHERE rolname = current_user"
                )
            ).one()
            owned = [
                r[0]
                for r in conn.execute(
                    text(
                        "SELECT c.relname FROM pg_class c WHERE c.oid IN ("
                        + ", ".join(f"to_regclass('{t}')" for t in _PROTECTED_TABLES)
                        + ") AND pg_has_role(current_user, c.relowner, 'USAGE') "
                        "ORDER BY c.relname"
                    )
                )
            ]
        name, superuser, bypassrls, holds_service, holds_app, service_member = row
        fix = (
            f"Connect as {APP_ROLE} (created by `rankscope serve migrate`; give it a password "
            f"with ALTER ROLE {APP_ROLE} PASSWORD '...') and keep the owner's URL in "
            "admin_database_url"
        )
        if superuser or bypassrls:
            what = "a superuser" if superuser else "a BYPASSRLS role"
            return RoleProblem(
                f"the service connects as {name!r}, {what}: row-level security would not "
                f"apply. {fix}",
                bypasses_rls=True,
            )
        if owned:
            return RoleProblem(
                f"the service connects as {name!r}, the owner of {', '.join(owned)}: "
                "row-level security is forced on the owner too and no policy admits it, so "
                f"every read would come back empty and every write be refused. {fix}",
                bypasses_rls=False,
            )
        if holds_service:
            return RoleProblem(
                f"the service connects as {name!r}, which holds the rights of {SERVICE_ROLE} "
                "without SET ROLE (it is that role, or a member with INHERIT): every request "
                f"would read and change every user's rows. {fix} ({APP_ROLE} is a NOINHERIT "
                f"member of {SERVICE_ROLE}; a role of your own must not inherit it)",
                bypasses_rls=True,
            )
        if not holds_app or not service_member:
            lacks = (
                f"does not hold the rights of {APP_ROLE}, so no row-level security policy "
                "admits it: every read would come back empty and every write be refused"
                if not holds_app
                else f"is not a member of {SERVICE_ROLE}, so requests with a service-role "
                "token would fail"
            )
            return RoleProblem(
                f"the service connects as {name!r}, which {lacks}. {fix} (or a role granted "
                f"{APP_ROLE} with INHERIT)",
                bypasses_rls=False,
            )
        return None


@dataclass(frozen=True)
class RoleProblem:
    """Why the service must not run as its PostgreSQL role. ``bypasses_rls``: the role would
    see other users' rows (``allow_privileged_role`` may accept that for experiments); else the
    service could not work at all."""

    message: str
    bypasses_rls: bool


#: the tables under row-level security, and the keys (owned by the migrating role too)
_PROTECTED_TABLES = (
    "retrieval_metrics",
    "user_thresholds",
    "search_events",
    "alerts",
    "user_settings",
    "api_keys",
)


def owner_filter(
    table: Table, principal: Principal, user_id: str | None = None
) -> list[ColumnElement[bool]]:
    """The rows of ``table`` a principal may see: a user's own, or (service role) every user's,
    or ``user_id``'s when it names one."""
    if not principal.is_service:
        return [table.c.user_id == principal.user_id]
    if user_id is not None:
        return [table.c.user_id == user_id]
    return []


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in slices of ``size`` (an ``IN (...)`` list stays below the drivers' limits)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


__all__ = ["Database", "RoleProblem", "chunks", "owner_filter"]
