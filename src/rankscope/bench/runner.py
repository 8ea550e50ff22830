"""Run a suite: per configuration, chunk, index (timed), warm up, then measure repeated runs.

The corpus is streamed: one pass before the first configuration learns what the run needs of it
(:func:`~rankscope.bench.corpus.scan_corpus`: size, fields, fingerprint, the judged ids it holds),
then each configuration's engine reads it again from its source as it indexes, so the process
holds the engine's index and not a parsed copy of the corpus beside it. The index time therefore
includes reading (and chunking) the corpus, as any indexing pipeline's does.

For each configuration the runner

1. chunks the documents as the engine reads them, when the configuration asks for it (engines
   index chunks);
2. builds the engine and indexes, timing it;
3. runs every query ``warmup`` times untimed, then ``repeats`` times timed, one latency sample
   per query execution; queries run in a thread pool of ``concurrency`` workers when the engine
   says it is ``thread_safe``;
4. maps chunk hits back to documents (a document ranks where its best chunk ranks), fetching
   ``max_k × chunk_fetch_factor`` chunks so that ``max_k`` distinct documents usually come back,
   and reads the texts of the top chunks (for graders) back from the corpus;
5. checkpoints the record (rankings, latencies, index time) and writes its TREC run file;
6. hands the memory the engine held back to the operating system, so that configurations do
   not stack up.

A query the engine cannot run (it raises :class:`~rankscope.errors.QueryError`: too many terms,
text it cannot take) is a failed query: recorded with its message, not run again in later passes,
and left out of the comparison as a skipped query is; the configuration goes on, and fails only
when every query it ran failed. Any other error fails the configuration:
a configuration that raises is recorded as failed with its message and the others still run;
``KeyboardInterrupt`` stops the benchmark, and finished configurations are kept for ``resume``.
With ``ray=RayOptions(...)`` the configurations run as Ray tasks instead
(:mod:`rankscope.bench.ray_runner`), each through the same :meth:`RunInputs.run`, and are
checkpointed here as each task ends.
Measures are computed at the end from all rankings, by :mod:`rankscope.bench.evaluation`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import importlib
import json
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from rankscope.bench.ann import engine_units, exact_rankings
from rankscope.bench.assemble import (
    QRELS_STEMS,
    assemble_results,
    comparison_sets,
    restrict,
    result_qrels,
)
from rankscope.bench.build import build_engine
from rankscope.bench.checkpoint import Checkpoints, check_file_names
from rankscope.bench.checks import check_judgments, host_warnings, retrieval_warnings
from rankscope.bench.code import Unlocatable, code_fingerprint
from rankscope.bench.config_record import ChunkHit, ConfigRecord, IndexCache, Stage
from rankscope.bench.corpus import scan_corpus
from rankscope.bench.lock import FolderLock
from rankscope.bench.outputs import (
    FileFormat,
    file_format,
    remove_results,
    remove_run_files,
    run_files_intact,
    write_pattern_runs,
    write_qrels_file,
    write_run_files,
)
from rankscope.bench.results import BenchmarkResult
from rankscope.data.qrels import Qrels
from rankscope.engines.base import Document, Engine, Hit, Query
from rankscope.engines.chunking import (
    check_chunking,
    chunk_parent,
    collapse_to_documents,
    iter_chunks,
)
from rankscope.engines.stream import DocumentStream
from rankscope.errors import ConfigError, QueryError, RankscopeError, UnsupportedQueryError
from rankscope.suite.corpus import iter_documents
from rankscope.suite.model import Suite
from rankscope.suite.schema import BenchConfig, ChunkingSpec, CorpusSpec, SuiteSettings
from rankscope.util.files import atomic_write_text


class Reporter(Protocol):
    """Receives progress; the CLI shows it as a progress bar."""

    def start(self, config: BenchConfig, total: int) -> None: ...

    def advance(self, steps: int = 1) -> None: ...

    def finish(self, config: BenchConfig, status: str, resumed: bool) -> None: ...


@dataclass(frozen=True)
class RemoteRun:
    """The records of the configurations run elsewhere, by name, and what results.json should
    say about how they ran (configurations that ran side by side on one machine)."""

    records: dict[str, ConfigRecord]
    warnings: list[str]


class RemoteRunner(Protocol):
    """Runs configurations in other processes (:class:`rankscope.bench.ray_runner.RayOptions`:
    as Ray tasks); checkpoints, run files and results.json stay with this process."""

    def check_installed(self) -> None:
        """Raise a :class:`~rankscope.errors.RankscopeError` saying what to install, if needed."""

    def run(
        self,
        inputs: RunInputs,
        pending: Sequence[PendingConfig],
        store: Callable[[PendingConfig, ConfigRecord], ConfigRecord],
        report: Reporter,
    ) -> RemoteRun:
        """Run ``pending``; ``store`` checkpoints each record as it arrives."""
        ...


class NullReporter:
    """A :class:`Reporter` that shows nothing (the default without a progress bar)."""

    def start(self, config: BenchConfig, total: int) -> None:
        pass

    def advance(self, steps: int = 1) -> None:
        pass

    def finish(self, config: BenchConfig, status: str, resumed: bool) -> None:
        pass


@dataclass
class _QueryFailure(Exception):
    query_id: str
    error: Exception
    #: set when every one of this many queries failed (QueryError), this one first
    every: int = 0

    @property
    def prefix(self) -> str:
        if self.every:
            return f"every query failed ({self.every}), the first, query {self.query_id!r}: "
        return f"query {self.query_id!r}: "


def run_benchmark(
    suite: Suite,
    out_dir: str | Path,
    *,
    resume: bool = True,
    reporter: Reporter | None = None,
    engine_factory: Callable[[BenchConfig], Engine] = build_engine,
    ray: RemoteRunner | None = None,
) -> BenchmarkResult:
    """Run every configuration of ``suite``, writing results under ``out_dir``.

    With ``ray``, the configurations to run are Ray tasks on a cluster (see
    :mod:`rankscope.bench.ray_runner`); checkpoints, run files and results.json are written
    here, by this process, exactly as in a local run.
    """
    check_file_names([c.name for c in suite.configs])
    if ray is not None:
        ray.check_installed()  # before the lock and the corpus scan: a missing extra is input
    out = Path(out_dir)
    with FolderLock(out):
        return _run_locked(suite, out, resume, reporter or NullReporter(), engine_factory, ray)


def _run_locked(
    suite: Suite,
    out: Path,
    resume: bool,
    report: Reporter,
    engine_factory: Callable[[BenchConfig], Engine],
    ray: RemoteRunner | None = None,
) -> BenchmarkResult:
    qrels = suite.qrels()  # resolve judgments before the long work: errors surface early
    judgments = result_qrels(suite, qrels)
    if len(judgments) == 0:
        raise ConfigError(
            f"suite {suite.name!r} has no judgments for its queries, so no quality measure can "
            "be computed",
            hint="give queries `judgments`, a `needle_doc_id` or `expected_files`/"
            "`expected_symbols`, or the suite a `qrels` file",
        )
    threshold = suite.settings.relevance_threshold
    scan = scan_corpus(suite.corpus(), {doc for _, doc, _ in judgments})
    warnings = check_judgments(scan.count, scan.found, judgments, qrels, threshold, suite.path)
    fmt = file_format(_ids(suite, judgments)) if scan.trec_safe_ids else "jsonl"
    inputs = RunInputs.of(suite, scan.fields, scan.count, engine_factory)
    context = _checkpoint_context(suite, scan.fingerprint)

    # The folder stays consistent at every moment: results.json (and the judgments beside it)
    # go first, as they will not match once anything runs; --fresh then forgets the
    # checkpoints before deleting their files. An interruption leaves finished
    # configurations and no results.json; results.json comes back when the run completes.
    remove_results(out)
    checkpoints = Checkpoints(out)
    if not resume:
        checkpoints.clear()
        remove_run_files(out)
    atomic_write_text(out / "suite.resolved.yaml", suite.resolved_yaml())

    def store(pending: PendingConfig, record: ConfigRecord) -> ConfigRecord:
        return _store(pending, record, out, fmt, checkpoints, report)

    found: list[ConfigRecord | PendingConfig] = []
    how_they_ran: list[str] = []
    with suite_modules(suite.base_dir):
        for config in suite.configs:
            found.append(_from_checkpoint(config, out, fmt, context, checkpoints, resume, report))
            if ray is None and isinstance(found[-1], PendingConfig):
                found[-1] = store(found[-1], inputs.run(config, report))
            release_memory()
        if ray is not None:
            pending = [f for f in found if isinstance(f, PendingConfig)]
            ran = ray.run(inputs, pending, store, report)
            found = [
                ran.records[f.config.name] if isinstance(f, PendingConfig) else f for f in found
            ]
            how_they_ran = ran.warnings
    records = [f for f in found if isinstance(f, ConfigRecord)]

    # relevance: pattern scores code-search queries by pattern units; the checks above and the
    # retrieval warning look at the documents the patterns match
    scored = result_qrels(suite, suite.scored_qrels()) if suite.by_pattern() else judgments
    write_pattern_runs(out, records, suite.pattern_credit(), fmt)
    qrels_files = {
        view: write_qrels_file(out, restrict(scored, set(ids)), QRELS_STEMS[view], fmt)
        for view, ids in comparison_sets(suite, scored, records).items()
    }
    warnings += retrieval_warnings(records, judgments, threshold)
    warnings += host_warnings(records) + how_they_ran
    result = assemble_results(
        suite, records, scored, qrels_files, warnings, num_documents=scan.count
    )
    atomic_write_text(out / "results.json", result.to_json())
    return result


@dataclass(frozen=True)
class RunInputs:
    """What running a configuration reads, in a form that can travel to another process (a
    Ray worker): where the corpus is (it is read there, from its source), what a scan learned
    of it, the queries and settings, and how engines are built."""

    corpus: CorpusSpec
    #: absolute, so that a process with another working directory finds the same files
    base_dir: Path
    fields: tuple[str, ...]
    count: int
    queries: list[Query]
    settings: SuiteSettings
    engine_factory: Callable[[BenchConfig], Engine] = build_engine

    @classmethod
    def of(
        cls,
        suite: Suite,
        fields: Sequence[str],
        count: int,
        engine_factory: Callable[[BenchConfig], Engine] = build_engine,
    ) -> RunInputs:
        return cls(
            corpus=suite.spec.corpus,
            base_dir=suite.base_dir.resolve(),
            fields=tuple(fields),
            count=count,
            queries=list(suite.queries),
            settings=suite.settings,
            engine_factory=engine_factory,
        )

    def documents(self) -> DocumentStream:
        spec, base_dir = self.corpus, self.base_dir
        return DocumentStream(
            lambda: iter_documents(spec, base_dir), fields=self.fields, count=self.count
        )

    def run(self, config: BenchConfig, reporter: Reporter | None = None) -> ConfigRecord:
        """Benchmark ``config`` (:func:`run_config`), the suite's python modules importable."""
        with suite_modules(self.base_dir):
            return run_config(
                config,
                self.documents(),
                self.queries,
                self.settings,
                reporter,
                self.engine_factory,
            )


@dataclass(frozen=True)
class PendingConfig:
    """A configuration to run now (no valid checkpoint), with what its checkpoint will hold."""

    config: BenchConfig
    key: str
    code: dict[str, str]
    rerun_reason: str | None


def _from_checkpoint(
    config: BenchConfig,
    out: Path,
    fmt: FileFormat,
    context: tuple[object, ...],
    checkpoints: Checkpoints,
    resume: bool,
    report: Reporter,
) -> ConfigRecord | PendingConfig:
    """A configuration's record from its checkpoint when still valid, else what running it
    needs."""
    rerun_reason = None
    try:
        code = code_fingerprint(config)
        key = config.key(*context, code) if code else config.key(*context)
    except Unlocatable as error:
        code, key = {}, f"unresumable-{time.time_ns()}"
        rerun_reason = f"not resumable: {error} cannot be fingerprinted"
    record = checkpoints.load(config.name, key) if resume else None
    if resume and record is None and code:
        previous = checkpoints.previous(config.name)
        changed = [m for m, h in code.items() if previous and previous.code.get(m) != h]
        if previous is not None and previous.ok and changed:
            rerun_reason = f"python code changed since the checkpoint: {', '.join(changed)}"
    if record is None:
        return PendingConfig(config, key, code, rerun_reason)
    record.resumed = True
    if not run_files_intact(out, record):
        write_run_files(out, record, fmt)  # removed or changed since: write it again
    report.finish(config, "ok", resumed=True)
    return record


def _store(
    pending: PendingConfig,
    record: ConfigRecord,
    out: Path,
    fmt: FileFormat,
    checkpoints: Checkpoints,
    report: Reporter,
) -> ConfigRecord:
    """Checkpoint a record just run (and write its run files), as soon as it is there."""
    record.key = pending.key
    record.code = pending.code
    record.rerun_reason = pending.rerun_reason
    if record.ok:
        write_run_files(out, record, fmt)
    checkpoints.save(record)
    report.finish(pending.config, record.status, resumed=False)
    return record


@contextmanager
def suite_modules(base_dir: Path) -> Iterator[None]:
    """Python modules next to the suite file import while the suite runs (python engine
    ``search: my_module:search``), as paths in a suite are relative to it."""
    folder = str(base_dir.resolve())
    sys.path.insert(0, folder)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def run_config(
    config: BenchConfig,
    docs: Iterable[Document],
    queries: Sequence[Query],
    settings: SuiteSettings,
    reporter: Reporter | None = None,
    engine_factory: Callable[[BenchConfig], Engine] = build_engine,
) -> ConfigRecord:
    """Benchmark one configuration; failures are returned as a record, never raised.

    ``docs`` is a :class:`~rankscope.engines.stream.DocumentStream` (read as the engine indexes
    it, and again for the texts of the top chunks) or a list. ``KeyboardInterrupt`` (and other
    non-``Exception`` exits) propagate.
    """
    report = reporter or NullReporter()
    passes = settings.warmup + settings.repeats
    report.start(config, total=1 + passes * len(queries))
    record = ConfigRecord(
        name=config.name,
        config=config.json_safe(),
        started_at=_now(),
        host=socket.gethostname(),
        warmup=settings.warmup,
        repeats=settings.repeats,
    )
    stage: Stage = "chunk"
    try:
        source = DocumentStream.of(docs)
        tally = _Tally()
        units, chunking = source, config.chunking
        if chunking is not None:
            check_chunking(chunking.size, chunking.overlap, chunking.unit)
            units = source.through(partial(iter_chunks, **chunking.model_dump()))
        units = units.through(tally, count=units.count)
        fetch_k = settings.max_k * (settings.chunk_fetch_factor if chunking is not None else 1)
        record.fetch_k = fetch_k

        stage = "build"
        with engine_factory(config) as engine:
            # refuse (or skip) unsupported kinds before spending time on indexing
            queries, skipped, as_text = _supported(engine, queries, settings.unsupported_queries)
            record.skipped_queries = skipped
            record.as_text_queries = as_text
            report.advance(len(skipped) * passes)
            stage = "index"
            started = time.perf_counter()
            engine.index(units)
            record.index_time_s = time.perf_counter() - started
            record.index_stats, record.index_cache = read_index_stats(engine)
            record.effective_params = read_effective_params(engine, fetch_k)
            record.search_key = search_key(record.config, engine, record.effective_params)
            record.engine_notes = read_engine_notes(engine)
            record.num_documents, record.num_units = _counts(source, units, tally)
            report.advance(1)

            stage = "search"
            workers = settings.concurrency if engine.thread_safe else 1
            record.concurrency = workers
            samples: dict[str, list[float]] = {q.id: [] for q in queries}
            first: dict[str, list[Hit]] | None = None
            failed: dict[str, QueryError] = {}
            wall = 0.0
            executed = 0  # every timed execution in the wall time, a query's that failed later too
            with ThreadPoolExecutor(max_workers=workers) if workers > 1 else _NoPool() as pool:
                for pass_no in range(passes):
                    hits, times, elapsed, errors = _run_pass(engine, queries, fetch_k, pool, report)
                    if errors:  # a failed query is not run again; its later passes count done
                        failed.update(errors)
                        queries = [q for q in queries if q.id not in errors]
                        report.advance(len(errors) * (passes - pass_no - 1))
                        if not queries:
                            qid, error = next(iter(failed.items()))
                            raise _QueryFailure(qid, error, every=len(failed))
                    if pass_no < settings.warmup:
                        continue
                    wall += elapsed
                    executed += len(times)
                    for qid, seconds in times.items():
                        samples[qid].append(seconds)
                    if first is None:
                        first = hits
            record.search_stats = read_search_stats(engine)
            if first is not None:
                # untimed: the exact neighbours ann_recall@k compares the engine's hits with
                depth = max(settings.k)
                record.exact_rankings = exact_rankings(engine, queries, depth)
                if record.exact_rankings is not None:
                    record.ann_units = engine_units(first, depth)
                    record.short_queries = short_queries(
                        first, record.exact_rankings, fetch_k, record.index_stats
                    )
        assert first is not None  # repeats >= 1 is enforced by the schema
        record.failed_queries = {qid: str(error) for qid, error in failed.items()}
        for qid in failed:  # what a query that failed in a later pass measured before
            samples.pop(qid, None)
            first.pop(qid, None)
        record.latency_samples_s = samples
        record.measured_wall_s = wall
        # the wall time holds the passes a query ran before it failed: so does the count
        record.qps = executed / wall if wall > 0 else None
        stage = "chunk"
        chunked = chunking is not None
        record.rankings, record.chunk_rankings = _rankings(first, chunked, settings.max_k)
        if chunking is not None and record.chunk_rankings:
            add_chunk_texts(record.chunk_rankings, source, chunking, depth=max(settings.k))
    except _QueryFailure as failure:
        _fail(record, stage, failure.error, failure.prefix)
    except Exception as error:
        _fail(record, stage, error, "")
    record.finished_at = _now()
    return record


def _supported(
    engine: Engine, queries: Sequence[Query], policy: str
) -> tuple[list[Query], dict[str, str], dict[str, str]]:
    """The queries the engine will run, ``{query_id: reason}`` for skipped ones, and
    ``{query_id: note}`` for those sent as plain text (``unsupported_queries``)."""
    runnable: list[Query] = []
    skipped: dict[str, str] = {}
    as_text: dict[str, str] = {}
    for query in queries:
        try:
            engine.check_kind(query)
        except UnsupportedQueryError:
            if policy == "skip":
                # an engine may refuse only some queries of a kind it supports (typesense:
                # boolean queries with `should` terms): the reason must not claim the whole kind
                some = "some " if query.kind in engine.supported_kinds else ""
                skipped[query.id] = f"{some}{query.kind} queries are not supported by {engine.name}"
                continue
            if policy != "as_text":
                raise
            plain = plain_text_query(query)
            engine.check_kind(plain)  # an engine without plain queries fails as before
            as_text[query.id] = f"{query.kind} query sent as plain text to {engine.name}"
            query = plain
        runnable.append(query)
    return runnable, skipped, as_text


def plain_text_query(query: Query) -> Query:
    """The query as a ``query_string`` query over its text (a boolean query's text, or its
    must/should terms when it has none)."""
    text = query.text.strip() or " ".join((*query.must, *query.should))
    return Query(id=query.id, text=text, kind="query_string", category=query.category)


def read_index_stats(engine: Engine) -> tuple[dict[str, float], IndexCache | None]:
    """What the engine reports about its indexing (``engine.index_stats()``, a mapping of
    counts; engines without it report nothing), and the embedding-cache hits and misses in it
    (``embedding_cache_hits`` / ``embedding_cache_misses``)."""
    stats = _engine_counts(engine, "index_stats")
    hits = stats.get("embedding_cache_hits", stats.get("cache_hits"))
    misses = stats.get("embedding_cache_misses", stats.get("cache_misses"))
    if hits is None or misses is None:
        return stats, None
    return stats, IndexCache(hits=int(hits), misses=int(misses))


def read_effective_params(engine: Engine, k: int) -> dict[str, int | float | str | bool]:
    """The parameters the engine searches ``k`` deep with (``engine.effective_params(k)``);
    nothing for an engine without it, or one whose report fails."""
    hook = getattr(engine, "effective_params", None)
    try:
        found = hook(k) if callable(hook) else None
    except Exception:  # a report, not the benchmark: never fail a configuration over it
        return {}
    if not isinstance(found, Mapping):
        return {}
    return {str(key): v for key, v in found.items() if isinstance(v, int | float | str | bool)}


def read_engine_notes(engine: Engine) -> list[str]:
    """What the engine's library said while indexing (``engine.notes()``), each once."""
    hook = getattr(engine, "notes", None)
    try:
        found = hook() if callable(hook) else None
    except Exception:
        return []
    if not isinstance(found, list | tuple):
        return []
    return list(dict.fromkeys(str(n) for n in found))


def search_key(
    spec: BenchConfig, engine: Engine, effective: Mapping[str, int | float | str | bool]
) -> str:
    """What identifies the searches a configuration ran: its spec without its name, the
    store's own options replaced by the parameters it really searched with. Two
    configurations with equal keys are duplicates (hnswlib with ``ef_search`` 10 and 50 at
    ``k`` = 100 both search with ef = 100)."""
    options = dict(spec.options)
    if effective:
        own = getattr(type(engine), "store_options", None)
        for name in own() if callable(own) else ():
            options.pop(name, None)
        options["searched with"] = dict(effective)
    data = spec.model_dump(exclude={"name"}) | {"options": options}
    return json.dumps(data, sort_keys=True, default=repr)


def short_queries(
    first: Mapping[str, list[Hit]],
    exact: Mapping[str, list[tuple[str, float]]],
    fetch_k: int,
    index_stats: Mapping[str, float],
) -> list[str]:
    """The queries with a vector (an exact neighbour) that got fewer than ``fetch_k`` hits, or
    fewer than the units indexed when there are fewer: an approximate index that stopped short
    (faiss's HNSW with ``ef_search`` below k, IVF cells holding fewer than k vectors)."""
    units = int(index_stats.get("vectors", fetch_k))
    wanted = min(fetch_k, units)
    return [qid for qid, hits in first.items() if exact.get(qid) and len(hits) < wanted]


def read_search_stats(engine: Engine) -> dict[str, float]:
    """What the engine reports about its searches (``engine.search_stats()``, e.g. whether
    they went through an approximate index); nothing for engines without it."""
    return _engine_counts(engine, "search_stats")


def _engine_counts(engine: Engine, method: str) -> dict[str, float]:
    """The numeric values of the mapping that ``engine.<method>()`` returns ({} when it has no
    such method, returns something else, or raises)."""
    hook = getattr(engine, method, None)
    try:
        found = hook() if callable(hook) else hook
    except Exception:  # a report, not the benchmark: never fail a configuration over it
        return {}
    if not isinstance(found, Mapping):
        return {}
    return {
        str(k): float(v)
        for k, v in found.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _fail(record: ConfigRecord, stage: Stage, error: Exception, prefix: str) -> None:
    record.status = "failed"
    record.stage = stage
    kind = "" if isinstance(error, RankscopeError) else f"{type(error).__name__}: "
    record.error = f"{stage} failed: {prefix}{kind}{error}"
    record.rankings = {}
    record.chunk_rankings = None
    record.latency_samples_s = {}
    record.exact_rankings = None
    record.ann_units = None


class _NoPool:
    """Runs tasks inline (engines that are not thread-safe, or concurrency 1)."""

    def __enter__(self) -> _NoPool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Callable[[Query], Any], items: Sequence[Query]) -> list[Any]:
        return [fn(item) for item in items]


def _run_pass(
    engine: Engine, queries: Sequence[Query], k: int, pool: Any, report: Reporter
) -> tuple[dict[str, list[Hit]], dict[str, float], float, dict[str, QueryError]]:
    """One pass over the queries: hits, latencies, wall time, and the queries that failed
    (:class:`QueryError`); any other error stops the pass (:class:`_QueryFailure`)."""

    def one(query: Query) -> tuple[str, list[Hit] | QueryError, float]:
        started = time.perf_counter()
        try:
            hits: list[Hit] | QueryError = engine.search(query, k)
        except QueryError as error:
            hits = error
        except Exception as error:
            raise _QueryFailure(query.id, error) from error
        elapsed = time.perf_counter() - started
        report.advance(1)
        return query.id, hits, elapsed

    started = time.perf_counter()
    outcomes = list(pool.map(one, queries))
    wall = time.perf_counter() - started
    hits = {qid: h for qid, h, _ in outcomes if not isinstance(h, QueryError)}
    times = {qid: t for qid, h, t in outcomes if not isinstance(h, QueryError)}
    errors = {qid: h for qid, h, _ in outcomes if isinstance(h, QueryError)}
    return hits, times, wall, errors


def _rankings(
    hits: dict[str, list[Hit]], chunked: bool, max_k: int
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[ChunkHit]] | None]:
    """Document rankings (``[(doc, score), ...]``) and, when chunked, the chunk rankings (without
    their texts: see :func:`add_chunk_texts`)."""
    docs: dict[str, list[tuple[str, float]]] = {}
    chunks: dict[str, list[ChunkHit]] | None = {} if chunked else None
    for qid, ranked in hits.items():
        if chunks is None:
            docs[qid] = [(h.doc_id, float(h.score)) for h in ranked[:max_k]]
            continue
        collapsed = collapse_to_documents(ranked, max_k)
        docs[qid] = [(h.doc_id, float(h.score)) for h in collapsed]
        # keep the chunks up to the one that contributed the last kept document
        wanted = {h.doc_id for h in collapsed}
        kept: list[ChunkHit] = []
        for h in ranked:
            if not wanted:
                break
            parent = chunk_parent(h.doc_id)
            kept.append(ChunkHit(chunk_id=h.doc_id, doc_id=parent, score=float(h.score)))
            wanted.discard(parent)
        chunks[qid] = kept
    return docs, chunks


def add_chunk_texts(
    chunks: Mapping[str, Sequence[ChunkHit]],
    docs: Iterable[Document],
    chunking: ChunkingSpec,
    depth: int,
) -> None:
    """Give the first ``depth`` chunks of each query their text (what a grader reads), read
    back from the corpus: only the documents they come from are chunked again, and the pass
    stops once every text is found."""
    wanted: dict[str, list[ChunkHit]] = {}
    for ranked in chunks.values():
        for hit in ranked[:depth]:
            wanted.setdefault(hit.chunk_id, []).append(hit)
    parents = {chunk_parent(c) for c in wanted}
    holding = (d for d in docs if d.id in parents)
    for unit in iter_chunks(holding, **chunking.model_dump()):
        for hit in wanted.pop(unit.id, ()):
            hit.text = unit.text
        if not wanted:
            break


class _Tally:
    """Counts the documents of each read of a stream (``total``: those of the last complete
    read), as a :meth:`DocumentStream.through` step."""

    def __init__(self) -> None:
        self.total: int | None = None

    def __call__(self, docs: Iterable[Document]) -> Iterator[Document]:
        n = 0
        for doc in docs:
            n += 1
            yield doc
        self.total = n


def _counts(source: DocumentStream, units: DocumentStream, tally: _Tally) -> tuple[int, int]:
    """How many documents and units (chunks) the configuration indexed: known from the scan,
    counted as the engine read them, or, for an engine that reads nothing (a run file),
    counted now."""
    num_documents = source.count if source.count is not None else sum(1 for _ in source)
    num_units = tally.total
    if num_units is None:
        num_units = units.count if units.count is not None else sum(1 for _ in units)
    return num_documents, num_units


def release_memory() -> None:
    """Collect what a finished configuration left (an engine in a reference cycle) and hand
    freed heap pages back to the operating system (glibc's ``malloc_trim``), so that the next
    configuration's peak does not stack on this one's."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _load_libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only: musl and macOS have no malloc_trim
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _load_libc()


def _ids(suite: Suite, qrels: Qrels) -> Iterator[str]:
    """Every query and judged-document id a run or judgment file will hold (the corpus ids are
    checked by the scan)."""
    yield from (q.id for q in suite.queries)
    for qid, doc, _ in qrels:
        yield qid
        yield doc


def _checkpoint_context(suite: Suite, corpus_fingerprint: str) -> tuple[object, ...]:
    s = suite.settings
    retrieval = {
        "max_k": s.max_k,
        "warmup": s.warmup,
        "repeats": s.repeats,
        "concurrency": s.concurrency,
        "chunk_fetch_factor": s.chunk_fetch_factor,
        "unsupported_queries": s.unsupported_queries,
    }
    return (corpus_fingerprint, suite.queries_fingerprint(), retrieval)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
