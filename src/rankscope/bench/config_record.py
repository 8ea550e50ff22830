"""What the runner measures for one configuration: a typed record, also its checkpoint file.

:class:`ConfigRecord` is what :func:`~rankscope.bench.runner.run_config` returns and what
``configs/<name>.json`` holds (its JSON form is the model's own), so a resumed configuration is
read back into exactly the value a fresh run produces. Measures are not part of it: they are
computed from ``rankings`` when the results are assembled, so changed judgments never need a
rerun.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rankscope.suite.schema import BenchConfig

Stage = Literal["chunk", "build", "index", "search"]
Status = Literal["ok", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkHit(_Model):
    """One row of a chunk-level ranking; ``text`` is kept for the top chunks only."""

    chunk_id: str
    doc_id: str
    score: float
    text: str | None = None


class IndexCache(_Model):
    """Embedding-cache use while indexing, as the engine reports it (see the runner): documents
    whose embedding was read from the cache (``hits``) or computed (``misses``)."""

    hits: int
    misses: int

    @property
    def hit_rate(self) -> float | None:
        total = self.hits + self.misses
        return self.hits / total if total else None


class ConfigRecord(_Model):
    """One configuration's run: status, timings, rankings, and the files written from them.

    ``latency_samples_s`` holds, per query, one sample per timed pass (in pass order);
    ``rankings`` the document ranking ``[(doc_id, score), ...]`` of the first timed pass.
    ``skipped_queries`` / ``as_text_queries`` map query ids to why they were skipped or sent
    as plain text (``unsupported_queries``); ``failed_queries`` to the error of each query the
    engine could not run (a :class:`~rankscope.errors.QueryError`), which has no ranking and
    no latency.
    """

    name: str
    #: as it ran (:meth:`BenchConfig.json_safe`: options from Python as their repr)
    config: BenchConfig
    status: Status = "ok"
    error: str | None = None
    stage: Stage | None = None
    started_at: str | None = None
    finished_at: str | None = None
    #: the machine it ran on: timings from different machines are not comparable
    host: str | None = None
    warmup: int = 0
    repeats: int = 1
    key: str | None = None
    #: python modules the configuration runs, with the hash of their source (checkpoint key)
    code: dict[str, str] = Field(default_factory=dict)
    #: why a finished checkpoint of this configuration was not reused
    rerun_reason: str | None = None
    num_documents: int | None = None
    num_units: int | None = None
    fetch_k: int | None = None
    concurrency: int = 1
    index_time_s: float | None = None
    index_cache: IndexCache | None = None
    #: everything the engine reported about its indexing (``index_stats()``)
    index_stats: dict[str, float] = Field(default_factory=dict)
    #: what the engine reported about its searches (``search_stats()``), after the last pass
    search_stats: dict[str, float] = Field(default_factory=dict)
    #: the index and search parameters the engine really searched with, where they can differ
    #: from its options (``Engine.effective_params``: hnswlib's ``ef_search`` is
    #: ``max(ef_search, k)``); empty for engines that search with their options as given
    effective_params: dict[str, int | float | str | bool] = Field(default_factory=dict)
    #: what identifies the searches run: the engine, its options (the store's own replaced by
    #: ``effective_params``), chunking, model and reranker; equal keys ran identical searches
    search_key: str | None = None
    #: what the engine's library said while indexing (``Engine.notes``), once each
    engine_notes: list[str] = Field(default_factory=list)
    #: vector searches: the queries with a vector that got fewer hits than ``fetch_k`` (or
    #: than the units indexed, when fewer)
    short_queries: list[str] = Field(default_factory=list)
    skipped_queries: dict[str, str] = Field(default_factory=dict)
    as_text_queries: dict[str, str] = Field(default_factory=dict)
    failed_queries: dict[str, str] = Field(default_factory=dict)
    latency_samples_s: dict[str, list[float]] = Field(default_factory=dict)
    measured_wall_s: float | None = None
    qps: float | None = None
    rankings: dict[str, list[tuple[str, float]]] = Field(default_factory=dict)
    chunk_rankings: dict[str, list[ChunkHit]] | None = None
    run_file: str | None = None
    run_sha256: str | None = None
    chunks_file: str | None = None
    chunks_sha256: str | None = None
    #: vector searches (engines that know their exact neighbours, see rankscope.bench.ann):
    #: per query, the exact nearest units of the query vector (the largest k of them and the
    #: ties of the last) and the engine's own first units, the two sides of ann_recall@k
    exact_rankings: dict[str, list[tuple[str, float]]] | None = None
    ann_units: dict[str, list[tuple[str, float]]] | None = None
    exact_run_file: str | None = None
    exact_run_sha256: str | None = None
    ann_units_file: str | None = None
    ann_units_sha256: str | None = None
    #: set when read back from a checkpoint instead of run now (not stored)
    resumed: bool = Field(default=False, exclude=True)

    @property
    def ok(self) -> bool:
        return self.status == "ok"
