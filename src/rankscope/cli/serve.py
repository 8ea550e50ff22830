"""``rankscope serve``: the online collection service and its administration commands."""

from __future__ import annotations

import importlib.util
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from rankscope.cli.options import Alias, aliases
from rankscope.errors import RankscopeError
from rankscope.util.extras import needs_extra


class Role(StrEnum):
    user = "user"
    service = "service"


# Every value left out comes from the settings (RANKSCOPE_SERVE_* variables, the --config
# file); the defaults shown are the settings' own (tests/cli/test_cli_serve.py checks them).
DATABASE = typer.Option(
    None,
    "--database-url",
    metavar="URL",
    help="sqlite:///FILE, postgresql://... or a libpq DSN (else $RANKSCOPE_SERVE_DATABASE_URL "
    "or the settings file's database_url).",
    show_default="sqlite:///rankscope-metrics.sqlite",
)
#: the key commands act as the owner
ADMIN_DATABASE = typer.Option(
    None,
    "--database-url",
    metavar="URL",
    help="The owner's URL.",
    show_default="admin_database_url, else database_url",
)
CONFIG = typer.Option(
    None,
    "--config",
    metavar="FILE",
    help="TOML or YAML settings file (else $RANKSCOPE_SERVE_CONFIG).",
    show_default=False,
)
#: ``-d``, kept hidden for one release (docs/cli.md)
OLD_DATABASE = Alias("-d", "database_url", "--database-url")

serve_app = typer.Typer(
    name="serve",
    help="Collect retrieval metrics from production: the HTTP service and its administration.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")


def _need_extra() -> None:
    missing = [
        m
        for m in (
            "fastapi",
            "uvicorn",
            "sqlalchemy",
            "alembic",
            "pydantic_settings",
            "jwt",
            "orjson",
            "scipy",
        )
        if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise RankscopeError(needs_extra("rankscope serve", ", ".join(missing), "serve"))


def _settings(**given: Any) -> Any:
    _need_extra()
    from rankscope.service.settings import load_settings

    return load_settings(**given)


@serve_app.callback()
@aliases(OLD_DATABASE)
def serve(
    ctx: typer.Context,
    database_url: str | None = DATABASE,
    host: str | None = typer.Option(
        None, "--host", metavar="HOST", help="Address to listen on.", show_default="127.0.0.1"
    ),
    port: int | None = typer.Option(
        None, "--port", "-p", metavar="PORT", help="Port.", show_default="8000"
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-w", metavar="N", help="Worker processes.", show_default="1"
    ),
    bulk_processes: int | None = typer.Option(
        None,
        "--bulk-processes",
        metavar="N",
        help="Processes that store batch requests, shared by all connections (0: threads of "
        "each worker). Set it to the number of cores for heavy batch traffic.",
        show_default="0",
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        metavar="SCORE",
        help="Default relevance threshold of heuristic rows.",
        show_default="0.7",
    ),
    config: Path | None = CONFIG,
) -> None:
    """Start the service (SQLite by default: no set-up). OpenAPI at http://HOST:PORT/docs."""
    if ctx.invoked_subcommand is not None:
        return
    settings = _settings(
        database_url=database_url,
        host=host,
        port=port,
        workers=workers,
        bulk_processes=bulk_processes,
        default_threshold=threshold,
        config_file=config,
    )
    from rankscope.service.admin import serve as run

    run(settings, announce=lambda line: typer.echo(line, err=True))


@serve_app.command("migrate")
@aliases(OLD_DATABASE)
def migrate_cmd(
    database_url: str | None = ADMIN_DATABASE,
    revision: str = typer.Option("head", "--revision", metavar="REVISION", help="Target revision."),
    config: Path | None = CONFIG,
) -> None:
    """Create or upgrade the tables (and, on PostgreSQL, the roles and row-level security)."""
    settings = _settings(admin_database_url=database_url, config_file=config)
    from rankscope.service.admin import migrate_database

    done = migrate_database(settings, revision)
    typer.echo(
        f"{done.database}: schema {done.before or 'empty'} -> {done.after}"
        + (" (already current)" if done.before == done.after else "")
    )


@serve_app.command("create-key")
@aliases(OLD_DATABASE)
def create_key_cmd(
    user: str = typer.Option(..., "--user", "-u", metavar="USER", help="The user the key acts as."),
    role: Role = typer.Option(Role.user, "--role", help="user, or service (every user's rows)."),
    name: str | None = typer.Option(None, "--name", metavar="NAME", help="A label for the key."),
    database_url: str | None = ADMIN_DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Create an API key and print it (only its hash is stored: it cannot be shown again)."""
    settings = _settings(admin_database_url=database_url, config_file=config)
    from rankscope.service.admin import new_key

    key, info = new_key(settings, user, role.value, name)
    typer.echo(key)
    typer.echo(
        f"key id {info.id} for user {info.user_id!r} (role {info.role}), stored in "
        f"{database_shown(settings.admin_url)}; the service accepts it when it runs on that "
        "database",
        err=True,
    )


def database_shown(url: str) -> str:
    """Where a database URL points, for people: a SQLite file's absolute path (a relative one
    depends on the folder a command runs in), else the URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path in ("", ":memory:"):
            return "an in-memory SQLite database"
        return f"the SQLite file {Path(path).expanduser().resolve()}"
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        url = urlunsplit(parts._replace(netloc=netloc))
    return url


@serve_app.command("revoke-key")
@aliases(OLD_DATABASE)
def revoke_key_cmd(
    key: str = typer.Argument(..., metavar="KEY", help="The key, or its id (the part after rsk_)."),
    database_url: str | None = ADMIN_DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Revoke an API key (running services stop accepting it within api_key_cache_seconds)."""
    settings = _settings(admin_database_url=database_url, config_file=config)
    from rankscope.service.admin import remove_key

    info = remove_key(settings, key)
    typer.echo(f"revoked key {info.id} of user {info.user_id!r}")


@serve_app.command("list-keys")
@aliases(OLD_DATABASE)
def list_keys_cmd(
    database_url: str | None = ADMIN_DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """List API keys (ids, users, roles; never the keys)."""
    settings = _settings(admin_database_url=database_url, config_file=config)
    from rankscope.service.admin import keys

    for info in keys(settings):
        state = f"revoked {info.revoked_at:%Y-%m-%d}" if info.revoked_at else "active"
        typer.echo(f"{info.id}\t{info.user_id}\t{info.role}\t{state}\t{info.name or ''}")
