"""Precomputed results: a run file (TREC, BEIR TSV, JSONL, CSV, Parquet...) answers queries by id.

Useful to put a system that cannot be called from here (a production log, a colleague's run)
next to live engines in one benchmark. The query text and kind do not matter: the ranking
stored for the query id is returned, in trec_eval order (score descending, ties by doc id
descending). A query id missing from the file gets no hits, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rankscope.engines.base import (
    QUERY_KINDS,
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    register_engine,
)
from rankscope.errors import ConfigError

# rankscope.data's readers (pyarrow) are imported when the run is read, not with the engine.


@register_engine("run_file")
class RunFileEngine(Engine):
    """Answers from a run file. Options: ``path`` (the run file), ``format`` (``auto``)."""

    name = "run_file"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(QUERY_KINDS)
    thread_safe = True

    def __init__(self, path: str | Path, *, format: str = "auto") -> None:
        from rankscope.data import read_run

        if not isinstance(path, (str, Path)) or not str(path):
            raise ConfigError("run_file engine needs a 'path' to a run file", value=path)
        self.path = Path(path)
        if not self.path.is_file():
            raise ConfigError(
                "run file not found",
                path=self.path,
                hint="give the path of a TREC (or BEIR/JSONL/CSV/Parquet) run file",
            )
        run = read_run(self.path, format=format)
        self.run_name = run.name
        self._rankings = {q: run.ranking(q) for q in run.query_ids}

    def index(self, docs: Iterable[Document]) -> None:
        """Nothing to index: the answers were computed elsewhere."""

    def _search(self, query: Query, k: int) -> list[Hit]:
        return [Hit(doc_id=d, score=s) for d, s in self._rankings.get(query.id, [])[:k]]

    @property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(self._rankings)
