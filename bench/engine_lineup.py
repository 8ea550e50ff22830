"""The engines the comparison scripts in bench/ run beside a suite's own, as suite configurations.

Shared by ``cranfield_engines.py`` and ``demo_engines.py``. An engine that cannot run here is left
out with a line on stderr saying why: anserini without its jar or Java, typesense without its
server binary, postgres and pgvector without PostgreSQL (pgvector also without the extension),
elasticsearch / opensearch unless ``RANKSCOPE_ES_URL`` / ``RANKSCOPE_OPENSEARCH_URL`` name a
cluster. :func:`engine_servers` starts the local servers (a throwaway PostgreSQL cluster, a
Typesense server) and stops them when the block ends, also on an error or an interruption.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

#: one suite configuration, as in a suite file's ``engines`` list
EngineSpec = dict[str, Any]

#: Anserini's defaults (Porter, stop words, k1 0.9, b 0.4), and the configuration of the public
#: Lucene BM25 run in data/cranfield/runs (StandardAnalyzer, k1 1.2, b 0.75)
ANSERINI_VARIANTS: dict[str, dict[str, Any]] = {
    "anserini": {},
    "anserini-lucene": {"analyzer": "standard", "k1": 1.2, "b": 0.75},
}


def left_out(name: str, why: object) -> None:
    print(f"{name} left out: {why}", file=sys.stderr)


def anserini_engines(
    variants: Mapping[str, Mapping[str, Any]] = ANSERINI_VARIANTS,
) -> list[EngineSpec]:
    """One configuration per variant (name -> engine options), or none without jar or Java."""
    try:
        from rankscope.engines.anserini import find_jar, find_java_home
    except ImportError as exc:
        left_out("anserini", exc)
        return []
    if find_jar() is None or find_java_home() is None:
        left_out("anserini", "no Anserini jar or no Java")
        return []
    return [_spec(name, "anserini", options) for name, options in variants.items()]


def cluster_engines() -> list[EngineSpec]:
    """elasticsearch / opensearch on the clusters the environment names (their ``url`` option
    defaults to the variable), none otherwise: no such server runs on this machine."""
    found = []
    for name, variable in (
        ("elasticsearch", "RANKSCOPE_ES_URL"),
        ("opensearch", "RANKSCOPE_OPENSEARCH_URL"),
    ):
        if os.environ.get(variable):
            found.append(_spec(name, name, {}))
        else:
            left_out(name, f"${variable} is not set")
    return found


@contextmanager
def engine_servers(
    database: str, *, pgvector: Mapping[str, Any] | None = None
) -> Iterator[list[EngineSpec]]:
    """typesense, postgres and (with ``pgvector`` options, when the extension is installed)
    pgvector configurations, on a Typesense server and a throwaway PostgreSQL cluster (database
    ``database``) that live as long as the block."""
    engines: list[EngineSpec] = []
    with ExitStack() as stack:
        try:
            from rankscope.testing.typesense import TypesenseServer, TypesenseServerError
        except ImportError as exc:
            left_out("typesense", exc)
        else:
            try:
                typesense = stack.enter_context(TypesenseServer.start())
            except TypesenseServerError as exc:
                left_out("typesense", exc)
            else:
                engines.append(
                    _spec(
                        "typesense",
                        "typesense",
                        {"url": typesense.url, "api_key": typesense.api_key},
                    )
                )
        from rankscope.testing.pgcluster import PgCluster, PgClusterError

        try:
            cluster = stack.enter_context(PgCluster.start())
            dsn = cluster.create_database(database)
        except PgClusterError as exc:
            left_out("postgres and pgvector", exc)
        else:
            engines.append(_spec("postgres", "postgres", {"dsn": dsn}))
            if pgvector is not None:
                if "vector" in cluster.available_extensions():
                    engines.append(_spec("pgvector", "pgvector", {"dsn": dsn, **pgvector}))
                else:
                    left_out("pgvector", "the PostgreSQL server has no vector extension")
        yield engines


def write_suite(path: Path, suite: Mapping[str, Any]) -> Path:
    """Write a suite (a suite file's mapping) to ``path`` for :func:`rankscope.suite.load_suite`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(suite), sort_keys=False, allow_unicode=True))
    return path


def _spec(name: str, engine: str, options: Mapping[str, Any]) -> EngineSpec:
    spec: EngineSpec = {"name": name, "engine": engine}
    if options:
        spec["options"] = dict(options)
    return spec
