"""The benchmark's outcome as typed values; ``results.json`` is :class:`BenchmarkResult` as JSON.

The shape is documented in docs/results-schema.md. Per-query values are arrays aligned on one
query order (:attr:`BenchmarkResult.query_ids`), so that comparison statistics can pair
configurations query by query (:meth:`BenchmarkResult.per_query_values`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from rankscope.bench.latency import LatencyStats
from rankscope.bench.recommend import Recommendations
from rankscope.bench.records import ConfigSpec, IndexCache, Stage, Status
from rankscope.bench.statistics import ViewStatistics
from rankscope.errors import InputError, RankscopeError
from rankscope.suite.schema import Settings

SCHEMA_VERSION = 3
NO_CATEGORY = "(none)"

#: which queries a comparison is made on (see :mod:`rankscope.bench.assemble`)
ViewName = Literal["answered", "all"]
VIEW_NAMES: tuple[ViewName, ...] = ("answered", "all")
DEFAULT_VIEW: ViewName = "answered"
#: what a configuration did with a query: ran it, ran its text as a plain query, skipped it,
#: or ran it and the engine could not answer it (a failed query)
QueryStatus = Literal["answered", "as_text", "skipped", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SuiteInfo(_Model):
    name: str
    description: str
    file: str | None
    num_documents: int
    num_queries: int
    num_judged_queries: int
    categories: list[str]


class CategoryScores(_Model):
    """Means over one category's judged queries."""

    num_queries: int
    means: dict[str, float | None]


class QuerySet(_Model):
    """The judged queries a view compares configurations on (suite order), and the file holding
    their judgments."""

    description: str
    query_ids: list[str]
    qrels_file: str


class ViewScores(_Model):
    """A configuration's scores over one query set: measure means, latency, per category."""

    num_queries: int
    summary: dict[str, float | None]
    latency: LatencyStats
    per_category: dict[str, CategoryScores] = Field(default_factory=dict)
    #: vector searches: the mean ``ann_recall@k`` over the view's queries that have a value
    #: (see :mod:`rankscope.bench.ann`); empty for other engines
    ann_recall: dict[str, float | None] = Field(default_factory=dict)


class QueryArrays(_Model):
    """Per-query values of one configuration, aligned on :attr:`BenchmarkResult.query_ids`.

    ``values[measure][i]`` is ``None`` for a query without judgments; a skipped or failed query
    scores 0 (what an empty ranking scores). ``latency_ms[i]`` is the median over the timed
    passes (``None`` when skipped or failed).
    """

    status: list[QueryStatus]
    num_results: list[int]
    latency_ms: list[float | None]
    values: dict[str, list[float | None]]
    #: vector searches: ``{"ann_recall@k": [value per query]}`` (None: not run, or no vector)
    ann_recall: dict[str, list[float | None]] = Field(default_factory=dict)


class ConfigResult(_Model):
    """One configuration in results.json; the measured fields are ``None`` when it failed."""

    name: str
    status: Status
    config: ConfigSpec
    key: str | None = None
    resumed: bool = False
    rerun_reason: str | None = None
    error: str | None = None
    stage: Stage | None = None
    started_at: str | None = None
    finished_at: str | None = None
    host: str | None = None
    index_time_s: float | None = None
    index_cache: IndexCache | None = None
    index_stats: dict[str, float] = Field(default_factory=dict)
    search_stats: dict[str, float] = Field(default_factory=dict)
    num_documents: int | None = None
    num_units: int | None = None
    fetch_k: int | None = None
    warmup: int | None = None
    repeats: int | None = None
    concurrency: int | None = None
    qps: float | None = None
    skipped_queries: dict[str, str] = Field(default_factory=dict)
    as_text_queries: dict[str, str] = Field(default_factory=dict)
    failed_queries: dict[str, str] = Field(default_factory=dict)
    views: dict[ViewName, ViewScores] = Field(default_factory=dict)
    per_query: QueryArrays | None = None
    run_file: str | None = None
    chunks_file: str | None = None
    #: vector searches: the exact neighbours and the engine's first units, per query (the two
    #: sides of ann_recall@k), and the tie tolerance on exact cosines
    exact_run_file: str | None = None
    ann_units_file: str | None = None
    ann_recall_tolerance: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def view(self, name: ViewName) -> ViewScores:
        try:
            return self.views[name]
        except KeyError:
            raise RankscopeError(
                f"configuration {self.name!r} has no scores ({self.status}: {self.error})"
            ) from None


class EvaluationInfo(_Model):
    """How the runs were evaluated: ``rankscope eval QRELS_FILE RUN_FILE -c -M DEPTH -l LEVEL
    -m MEASURE ...`` (with a view's ``qrels_file``) reproduces every value of that view."""

    depth: int
    rel_level: int
    average_over_qrels: bool

    def eval_args(self, qrels_file: str, run_file: str, measures: list[str]) -> list[str]:
        """``rankscope eval`` arguments that recompute ``measures`` for one run file."""
        args = [qrels_file, run_file, "-M", str(self.depth), "-l", str(self.rel_level)]
        if self.average_over_qrels:
            args.append("-c")
        for measure in measures:
            args += ["-m", measure]
        return args


class Failure(_Model):
    name: str
    stage: Stage | None
    error: str | None


class BenchmarkResult(_Model):
    """Everything a benchmark found; exactly what ``results.json`` holds."""

    schema_version: int = SCHEMA_VERSION
    rankscope_version: str
    timestamp: str
    suite: SuiteInfo
    settings: Settings
    measures: list[str]
    headline: str
    #: every query of the suite, in suite order: the order of all per-query arrays
    query_ids: list[str]
    judged: list[bool]
    query_categories: list[str | None]
    query_sets: dict[ViewName, QuerySet]
    default_view: ViewName = DEFAULT_VIEW
    averaging: str
    evaluation: EvaluationInfo
    configurations: list[ConfigResult]
    failures: list[Failure]
    recommendations: dict[ViewName, Recommendations]
    #: per view: the headline and per-query latency compared across configurations (randomised
    #: Tukey HSD, seeded); empty in results written before schema version 3
    statistics: dict[ViewName, ViewStatistics] = Field(default_factory=dict)
    balance_formula: str
    #: problems found in the judgments or the rankings (judged documents missing from the
    #: corpus, nothing relevant retrieved...), with counts
    warnings: list[str] = Field(default_factory=list)

    def config(self, name: str) -> ConfigResult:
        for entry in self.configurations:
            if entry.name == name:
                return entry
        raise KeyError(name)

    @property
    def successful(self) -> list[ConfigResult]:
        return [c for c in self.configurations if c.ok]

    def recommended(self, view: ViewName | None = None) -> Recommendations:
        return self.recommendations[view or self.default_view]

    def per_query_values(
        self, measure: str | None = None, view: ViewName | None = None
    ) -> tuple[list[str], dict[str, NDArray[np.float64]]]:
        """The query ids of a view (default: the queries every configuration answered) and,
        per successful configuration, the values of ``measure`` (default: the headline) on
        them, aligned: the input of paired comparisons."""
        wanted = measure or self.headline
        if wanted not in self.measures:
            raise RankscopeError(
                f"{wanted!r} was not measured; measured: {', '.join(self.measures)}"
            )
        ids = list(self.query_sets[view or self.default_view].query_ids)
        position = {q: i for i, q in enumerate(self.query_ids)}
        rows = [position[q] for q in ids]
        out: dict[str, NDArray[np.float64]] = {}
        for config in self.successful:
            assert config.per_query is not None
            column = config.per_query.values[wanted]
            out[config.name] = np.asarray(
                [np.nan if column[i] is None else column[i] for i in rows], dtype=np.float64
            )
        return ids, out

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> BenchmarkResult:
        """Read a results.json written by rankscope (schema version 2 or later); a file that
        is missing, not JSON or not a benchmark's results raises
        :class:`~rankscope.errors.InputError` naming it."""
        from pydantic import ValidationError

        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(
                "file not found",
                path=file,
                hint="give a benchmark's output folder or its results.json",
            ) from None
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read it: {error}", path=file) from None
        try:
            return cls.model_validate_json(text)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise InputError(
                f"not a rankscope benchmark's results.json: {where}: {first['msg']}",
                path=file,
                hint="give the results.json that rankscope bench or rankscope demo wrote "
                "(rerun the benchmark if it was written by a rankscope older than schema 2)",
            ) from None

    def to_data(self) -> dict[str, Any]:
        """The JSON-ready dictionary (what ``json.loads(results.json)`` gives)."""
        return self.model_dump(mode="json")
