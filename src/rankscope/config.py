"""rankscope's settings from the environment: every ``RANKSCOPE_*`` variable it reads, in one place.

:func:`environment` reads them when called (the CLI and tests set variables at run time), and
:data:`VARIABLES` names and describes each one; the README's table lists the same. The
collection service has its own settings object (``rankscope.service.settings``, pydantic-settings,
variables ``RANKSCOPE_SERVE_*``), as it also reads a file and passes its settings to worker
processes. An empty variable counts as unset.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: variable name -> what it sets (the README's table of environment variables shows the same)
VARIABLES: dict[str, str] = {
    "RANKSCOPE_CACHE_DIR": "folder of the embedding cache (embeddings.sqlite) and the judgment "
    "cache (judgments.sqlite); default $XDG_CACHE_HOME/rankscope, else ~/.cache/rankscope",
    "RANKSCOPE_PG_DSN": "PostgreSQL connection string of the postgres and pgvector engines when "
    "their `dsn` option is not given",
    "RANKSCOPE_JUDGE_CONFIG": "judge settings file (YAML or TOML) when `--config` is not given",
    "RANKSCOPE_PG_BINDIR": "folder holding initdb, pg_ctl and postgres, for the throwaway "
    "PostgreSQL server of rankscope.testing.pgcluster (default: found on PATH or under "
    "/usr/lib/postgresql)",
}


@dataclass(frozen=True, slots=True)
class Environment:
    """The values of :data:`VARIABLES` (None where unset)."""

    cache_dir: Path
    pg_dsn: str | None = None
    judge_config: Path | None = None
    pg_bindir: Path | None = None

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Environment:
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            return env.get(name) or None

        cache = get("RANKSCOPE_CACHE_DIR")
        xdg = get("XDG_CACHE_HOME")
        if cache is not None:
            cache_dir = Path(cache).expanduser()
        elif xdg is not None:
            cache_dir = Path(xdg).expanduser() / "rankscope"
        else:
            cache_dir = Path.home() / ".cache" / "rankscope"
        judge = get("RANKSCOPE_JUDGE_CONFIG")
        bindir = get("RANKSCOPE_PG_BINDIR")
        return cls(
            cache_dir=cache_dir,
            pg_dsn=get("RANKSCOPE_PG_DSN"),
            judge_config=None if judge is None else Path(judge).expanduser(),
            pg_bindir=None if bindir is None else Path(bindir).expanduser(),
        )


def environment() -> Environment:
    """The settings as the environment holds them now."""
    return Environment.read()
