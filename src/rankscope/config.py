"""rankscope's settings from the environment: every ``RANKSCOPE_*`` variable it reads, in one place.

:func:`environment` reads them when called (the CLI and tests set variables at run time), and
:data:`VARIABLES` names and describes each one; the README's table lists the same. An empty
variable counts as unset.

rankscope has four settings objects, each read from its own source by its own part:

- :class:`Environment` (here): the ``RANKSCOPE_*`` variables, defaults the others fall back on;
- :class:`rankscope.suite.schema.SuiteSettings`: a suite file's ``settings:`` (how the benchmark
  measures), validated with the rest of the suite and recorded in results.json;
- :class:`rankscope.judge.config.JudgeSettings`: the judge's YAML or TOML file (providers, prices,
  limits), named by ``--config`` or ``RANKSCOPE_JUDGE_CONFIG``;
- ``rankscope.service.settings.ServiceSettings``: the collection service's file and its
  ``RANKSCOPE_SERVE_*`` variables (pydantic-settings), passed to worker processes.

They stay apart: each belongs to one command and one file format, and a suite's or a judge
file's settings are part of what a result records, while the environment is not.
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
    "RANKSCOPE_ES_URL": "Elasticsearch cluster URL of the elasticsearch engine (and of the "
    "opensearch engine when RANKSCOPE_OPENSEARCH_URL is unset) when its `url` option is not given",
    "RANKSCOPE_OPENSEARCH_URL": "OpenSearch cluster URL of the opensearch engine when its `url` "
    "option is not given",
    "RANKSCOPE_TYPESENSE_URL": "Typesense server URL of the typesense engine when its `url` option "
    "is not given",
    "RANKSCOPE_TYPESENSE_API_KEY": "Typesense API key of the typesense engine when its `api_key` "
    "option is not given",
    "RANKSCOPE_ANSERINI_JAR": "Anserini fat jar of the anserini engine when its `jar` option is "
    "not given (default: the jar in pyserini's distribution)",
    "RANKSCOPE_ANNOTATE_TOKEN": "token that `rankscope annotate`'s page and API calls need when "
    "`--token` is not given (default: a new random one each start)",
    "RANKSCOPE_TOKEN": "API key or JWT that `rankscope serve import-ubi --url` sends to a running "
    "service when `--token` is not given",
}


@dataclass(frozen=True, slots=True)
class Environment:
    """The values of :data:`VARIABLES` (None where unset)."""

    cache_dir: Path
    pg_dsn: str | None = None
    judge_config: Path | None = None
    pg_bindir: Path | None = None
    es_url: str | None = None
    opensearch_url: str | None = None
    typesense_url: str | None = None
    typesense_api_key: str | None = None
    anserini_jar: Path | None = None

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
        jar = get("RANKSCOPE_ANSERINI_JAR")
        return cls(
            cache_dir=cache_dir,
            pg_dsn=get("RANKSCOPE_PG_DSN"),
            judge_config=None if judge is None else Path(judge).expanduser(),
            pg_bindir=None if bindir is None else Path(bindir).expanduser(),
            es_url=get("RANKSCOPE_ES_URL"),
            opensearch_url=get("RANKSCOPE_OPENSEARCH_URL"),
            typesense_url=get("RANKSCOPE_TYPESENSE_URL"),
            typesense_api_key=get("RANKSCOPE_TYPESENSE_API_KEY"),
            anserini_jar=None if jar is None else Path(jar).expanduser(),
        )


def environment() -> Environment:
    """The settings as the environment holds them now."""
    return Environment.read()
