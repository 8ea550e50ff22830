"""PostgreSQL plumbing shared by the ``postgres`` and ``pgvector`` engines: connecting (psycopg 3,
imported lazily), DSNs without passwords in messages, table names, the content marker kept in a
table's comment, and closing (dropping the table when asked).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from rankscope.config import environment
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import install_command

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

# Imported where used, so that this module imports without them: psycopg (the pg extra).

PG_EXTRA_HINT = f"install the PostgreSQL extra: {install_command('pg')}"
DSN_ENV = "RANKSCOPE_PG_DSN"
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def import_psycopg() -> Any:
    """The ``psycopg`` module, or an EngineError saying how to install it."""
    try:
        import psycopg
    except ImportError as exc:
        raise EngineError(
            f"the PostgreSQL engines need psycopg 3 ({exc}); {PG_EXTRA_HINT}"
        ) from exc
    return psycopg


def redact_dsn(dsn: str) -> str:
    """The DSN with any password removed, safe to show in messages and logs."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(dsn)
        params.pop("password", None)
        return make_conninfo("", **params) or "(libpq defaults)"
    except Exception:
        # unparseable: scrub what looks like a password rather than echo the string as given
        scrubbed = re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn, flags=re.I)
        return re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", scrubbed)


def resolve_dsn(dsn: str | None, engine: str) -> str:
    if dsn is None:
        dsn = environment().pg_dsn
    if not dsn or not isinstance(dsn, str):
        raise ConfigError(
            f"{engine} engine needs a PostgreSQL DSN",
            value=dsn,
            hint=(
                f"pass dsn='host=... dbname=... user=...' (or a postgresql:// URL) in the engine "
                f"options, or set {DSN_ENV}"
            ),
        )
    return dsn


def connect(dsn: str, engine: str, connect_timeout: float) -> psycopg.Connection[Any]:
    """An autocommit connection, or an EngineError naming the DSN (no password) and the reason."""
    pg = import_psycopg()
    timeout = max(1, round(connect_timeout))
    try:
        conn: psycopg.Connection[Any] = pg.connect(
            dsn, autocommit=True, connect_timeout=timeout, application_name="rankscope"
        )
    except pg.ProgrammingError as exc:  # a malformed DSN
        raise ConfigError(
            f"{engine} engine: invalid PostgreSQL DSN {redact_dsn(dsn)!r}: {exc}",
            hint="use 'host=... port=... dbname=... user=...' or a postgresql:// URL",
        ) from exc
    except pg.Error as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise EngineError(
            f"{engine} engine cannot connect to PostgreSQL at {redact_dsn(dsn)!r}: {reason}. "
            f"Check that the server is running and the DSN (host, port, dbname, user) is right"
        ) from exc
    return conn


def table_identifier(name: str, option: str = "table") -> sql.Identifier:
    """``name`` or ``schema.name`` as a quoted identifier; plain SQL names only."""
    from psycopg import sql

    parts = name.split(".")
    if len(parts) > 2 or not all(_PLAIN_NAME.fullmatch(p) and len(p) <= 63 for p in parts):
        raise ConfigError(
            f"option {option!r} must be a table name or schema.table made of letters, digits, "
            f"_ and $ (at most 63 characters each)",
            value=name,
        )
    return sql.Identifier(*parts)


def quoted_table(name: str) -> str:
    """``name`` (``table`` or ``schema.table``) quoted for ``to_regclass``."""
    return ".".join('"' + p + '"' for p in name.split("."))


def table_comment(conn: psycopg.Connection[Any], name: str) -> str | None:
    """The comment on table ``name``; the engines keep their content digest there."""
    row = conn.execute(
        "SELECT obj_description(to_regclass(%s), 'pg_class')", [quoted_table(name)]
    ).fetchone()
    return None if row is None else row[0]


def close_connection(conn: psycopg.Connection[Any], drop_table: str | None) -> None:
    """Close ``conn``, first dropping ``drop_table`` when given; closed even if the drop fails."""
    try:
        if drop_table:
            from psycopg import sql

            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table_identifier(drop_table)))
    finally:
        conn.close()


class PgConnection:
    """The connection and table lifecycle both PostgreSQL engines share: one autocommit
    connection opened at first use and checked by :meth:`_setup`; on close, the table dropped
    when this engine filled a table named after its content (or ``drop_on_close=True``)."""

    name: ClassVar[str]
    dsn: str
    connect_timeout: float
    drop_on_close: bool | None
    _conn: psycopg.Connection[Any] | None
    _closed: bool
    _table_name: str | None
    _auto_table: bool
    _filled_table: bool

    @property
    def table(self) -> str | None:
        """The table searched: the given name or the content-addressed one after indexing."""
        return self._table_name

    def _setup(self, conn: psycopg.Connection[Any]) -> None:
        """Checks on a new connection (an error here closes it)."""

    def _connect(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise EngineError(f"{self.name} engine is closed; create a new one")
        if self._conn is None:
            conn = connect(self.dsn, self.name, self.connect_timeout)
            try:
                self._setup(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _drops_table(self) -> bool:
        if self.drop_on_close is None:
            return self._auto_table and self._filled_table
        return bool(self.drop_on_close)

    def _table_to_drop(self) -> str | None:
        return self._table_name if self._drops_table() else None

    def close(self) -> None:
        if self._conn is not None:
            try:
                close_connection(self._conn, self._table_to_drop())
            finally:
                self._conn = None
        self._closed = True


def pg_error(engine: str, doing: str, exc: Exception) -> EngineError:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return EngineError(f"{engine} engine failed while {doing}: {reason}")
