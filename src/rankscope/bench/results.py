"""The benchmark's outcome as typed values; ``results.json`` is :class:`BenchmarkResult` as JSON.

The shape is documented in docs/results-schema.md. Per-query values are arrays aligned on one
query order (:attr:`BenchmarkResult.query_ids`), so that comparison statistics can pair
configurations query by query (:meth:`BenchmarkResult.per_query_values`). Every model stored in
the file is here, the comparison statistics (:class:`ViewStatistics`, written by
:mod:`rankscope.bench.statistics`: each comparison is the statistics' own
:class:`rankscope.stats.Comparison`, stored as ``rankscope compare --format json`` prints it)
and the recommendations (:class:`Recommendations`, by
:mod:`rankscope.bench.recommend`) included, so this module imports neither; :func:`read_results`
reads a benchmark's output folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    model_validator,
)

from rankscope.bench.config_record import IndexCache, Stage, Status
from rankscope.bench.latency import LatencyStats
from rankscope.errors import InputError, RankscopeError
from rankscope.stats.comparison import (
    TEST_NAMES,
    Comparison,
    SystemRow,
    normalised,
    row_from_dict,
    row_to_dict,
)
from rankscope.suite.schema import (
    MIN_EFFECT,
    MIN_LATENCY_MS,
    MIN_LATENCY_RATIO,
    BenchConfig,
    SuiteSettings,
)

SCHEMA_VERSION = 4
NO_CATEGORY = "(none)"

#: which queries a comparison is made on (see :mod:`rankscope.bench.assemble`)
ViewName = Literal["answered", "all"]
VIEW_NAMES: tuple[ViewName, ...] = ("answered", "all")
DEFAULT_VIEW: ViewName = "answered"
#: what a configuration did with a query: ran it, ran its text as a plain query, skipped it,
#: or ran it and the engine could not answer it (a failed query)
QueryStatus = Literal["answered", "as_text", "skipped", "failed"]

#: the settings of the comparison statistics (and the defaults of results that lack them): the
#: test of each comparison, quality over all pairs, latency pairwise against the fastest
QUALITY_TEST: Final = "rtukey"
LATENCY_TEST: Final = "randomization"
BenchTest = Literal["rtukey", "randomization"]
ALPHA = 0.05
LEVEL = 0.95
RESAMPLES = 10_000
Verdict = Literal["not_assessed", "within_noise", "beyond_noise"]


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


class Duplicate(_Model):
    """An earlier configuration this one repeats: the same searches (engine, options and the
    parameters it really searched with), or the same engine's same rankings."""

    of: str
    reason: Literal["same_search", "same_rankings"]


class ConfigResult(_Model):
    """One configuration in results.json; the measured fields are ``None`` when it failed."""

    name: str
    status: Status
    config: BenchConfig
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
    #: the index and search parameters the engine really searched with (``fetch_k`` deep), where
    #: they can differ from its options; empty for engines that use their options as given
    effective_params: dict[str, int | float | str | bool] = Field(default_factory=dict)
    #: what the engine's library said while indexing, once each (faiss's k-means warnings)
    engine_notes: list[str] = Field(default_factory=list)
    #: vector searches: queries with a vector that got fewer than ``fetch_k`` hits
    short_queries: list[str] = Field(default_factory=list)
    #: set when this configuration repeats an earlier one
    duplicate_of: Duplicate | None = None
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


# ---------------------------------------------------------------------------- statistics
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _comparison(value: object) -> Comparison:
    """A :class:`~rankscope.stats.Comparison`, from itself or its JSON form, normalised to what
    reads back from the file."""
    try:
        if isinstance(value, Comparison):
            return normalised(value)
        if isinstance(value, Mapping):
            return Comparison.from_dict(value)
    except InputError as error:
        raise ValueError(error.problem) from None
    raise ValueError("expected a comparison (an object as rankscope compare writes it)")


def _alone(value: object) -> SystemRow:
    """A lone configuration's row, from itself or its JSON form (the row plus ``measure``),
    normalised as :func:`_comparison` does."""
    if isinstance(value, SystemRow):
        return row_from_dict(row_to_dict(value), value.measure)
    if isinstance(value, Mapping):
        try:
            return row_from_dict(value, str(value["measure"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a row: {type(error).__name__}: {error}") from None
    raise ValueError("expected a row of a comparison")


if TYPE_CHECKING:
    StoredComparison = Comparison
    StoredRow = SystemRow
else:  # pydantic validates and writes them with the functions above, never field by field
    StoredComparison = Annotated[
        Any,
        PlainValidator(_comparison, json_schema_input_type=dict[str, Any]),
        PlainSerializer(lambda c: c.to_dict(), return_type=dict[str, Any]),
    ]
    StoredRow = Annotated[
        Any,
        PlainValidator(_alone, json_schema_input_type=dict[str, Any]),
        PlainSerializer(
            lambda r: {"measure": r.measure, **row_to_dict(r)}, return_type=dict[str, Any]
        ),
    ]


class Alone(_Frozen):
    """A view's only configuration: its mean with its interval (``row``) over ``queries``
    queries, with nothing to compare it with."""

    row: StoredRow
    queries: int


class ConfigurationComparison(_Frozen):
    """One quantity (the headline, or ``latency_ms``) compared across a view's configurations.

    ``comparison`` is the statistics' own value, :class:`rankscope.stats.Comparison` (one
    measure; the configurations, in suite order, are its systems), stored as
    ``rankscope compare --format json`` prints it. The benchmark adds only what is its own: the
    ``label`` shown, why the baseline was chosen, and the ``rankscope compare`` arguments (after
    the output folder) that print the same numbers. With one configuration there is nothing to
    compare: ``alone`` holds its mean and interval, and ``comparison`` is None.
    """

    label: str
    baseline_reason: str
    command: str
    comparison: StoredComparison | None = None
    alone: Alone | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ConfigurationComparison:
        if (self.comparison is None) == (self.alone is None):
            raise ValueError("give either a comparison or the lone configuration's row")
        return self

    @property
    def compared(self) -> bool:
        """Whether there was anything to compare (two or more configurations)."""
        return self.comparison is not None

    @property
    def rows(self) -> tuple[SystemRow, ...]:
        """The configurations' rows, in suite order."""
        if self.comparison is None:
            assert self.alone is not None
            return (self.alone.row,)
        return self.comparison.measures[0].rows

    def row(self, config: str) -> SystemRow:
        for r in self.rows:
            if r.system == config:
                return r
        raise KeyError(config)

    @property
    def measure(self) -> str:
        return self.rows[0].measure

    @property
    def higher_is_better(self) -> bool:
        c = self.comparison
        return True if c is None else c.measures[0].quantity.higher_is_better

    @property
    def baseline(self) -> str:
        return self.rows[0].system if self.comparison is None else self.comparison.baseline

    @property
    def test(self) -> str:
        return QUALITY_TEST if self.comparison is None else self.comparison.test

    @property
    def test_name(self) -> str:
        return TEST_NAMES[self.test]

    @property
    def num_queries(self) -> int:
        if self.comparison is None:
            assert self.alone is not None
            return self.alone.queries
        return self.comparison.queries

    @property
    def family(self) -> str:
        """Over what the error rate is controlled, in the benchmark's words."""
        if self.comparison is None:
            return ""
        configurations = len(self.comparison.systems)
        if self.test == "rtukey":
            pairs = configurations * (configurations - 1) // 2
            return (
                f"family-wise over all {pairs} pair{'s' if pairs != 1 else ''} of the "
                f"{configurations} configurations"
            )
        others = configurations - 1
        return (
            f"Holm-corrected over the {others} comparison{'s' if others != 1 else ''} with "
            f"{self.baseline}"
        )

    @property
    def warnings(self) -> list[str]:
        """The comparison's warnings without the ``measure:`` prefix (one quantity here). The
        randomised Tukey HSD uses neither t nor sd(d), so the warning that a constant difference
        makes t infinite is left out for it."""
        if self.comparison is None:
            return ["one configuration: nothing to compare it with"]
        prefix = f"{self.measure}: "
        return [
            w[len(prefix) :] if w.startswith(prefix) else w
            for w in self.comparison.warnings
            if self.test != "rtukey" or "(zero variance)" not in w
        ]


class Practical(_Frozen):
    """The smallest differences that count (:mod:`rankscope.bench.pareto`): a smaller one is a
    tie, however significant. ``min_effect``: of the headline (its units, e.g. 0.01 nDCG@10);
    latency: a gap counts only when it is at least ``min_latency_ratio`` of the slower p50
    *and* at least ``min_latency_ms`` (a suite's ``settings`` set all three)."""

    min_effect: float = MIN_EFFECT
    min_latency_ratio: float = MIN_LATENCY_RATIO
    min_latency_ms: float = MIN_LATENCY_MS

    @classmethod
    def of(cls, settings: SuiteSettings) -> Practical:
        """The practical thresholds a suite's ``settings`` set."""
        return cls(
            min_effect=settings.min_effect,
            min_latency_ratio=settings.min_latency_ratio,
            min_latency_ms=settings.min_latency_ms,
        )

    def quality_gap_counts(self, better: float, worse: float) -> bool:
        """Whether ``better`` is ahead of ``worse`` by at least ``min_effect`` (and at all)."""
        gap = better - worse
        return gap > 0 and gap >= self.min_effect

    def latency_threshold_ms(self, slower_ms: float) -> float:
        """The smallest latency gap (ms) that matters beside a p50 of ``slower_ms``, the slower
        of the two: ``min_latency_ms``, or ``min_latency_ratio`` of ``slower_ms`` when larger.
        The slower side is the reference, so that the rule is the same whichever side of the
        pair is named first (the front and the report's table both use it)."""
        return max(self.min_latency_ms, self.min_latency_ratio * slower_ms)

    def latency_gap_counts(self, faster_ms: float, slower_ms: float) -> bool:
        """Whether ``faster_ms`` is below ``slower_ms`` by a gap that matters in practice."""
        gap = slower_ms - faster_ms
        return gap > 0 and gap >= self.latency_threshold_ms(slower_ms)

    def describe(self, label: str) -> str:
        return (
            f"{label} ahead by at least {self.min_effect:g}; p50 lower by at least "
            f"{self.min_latency_ratio:.0%} and {self.min_latency_ms:g} ms"
        )


class ParetoFront(_Frozen):
    """The configurations no other beats on both the headline and latency, within noise
    (:func:`rankscope.bench.pareto.pareto_front`).

    ``configs``: those on the front, in suite order; ``beaten_by``: for each other
    configuration, the configurations that beat it; ``rule``: what "beats" means and how it was
    tested; ``notes``: what could not be tested."""

    configs: list[str]
    beaten_by: dict[str, list[str]] = {}
    rule: str = ""
    notes: list[str] = []
    #: which definition made it: 1 (absent in the file) significance alone, corrected over
    #: all pairs; 2 weak dominance by the point estimates, each pair's own test and the
    #: practical thresholds (a front of an earlier definition is recomputed on reading)
    definition: int = 1


class ViewStatistics(_Frozen):
    """The comparison statistics of one view: the settings they share, and the quality and
    latency comparisons (None, with the reason in ``notes``, when they cannot be made), and the
    Pareto front on both (None in results written before it existed)."""

    alpha: float = ALPHA
    level: float = LEVEL
    seed: int = 0
    resamples: int = RESAMPLES
    mean_interval: str = "t"
    quality: ConfigurationComparison | None = None
    latency: ConfigurationComparison | None = None
    notes: list[str] = []
    pareto: ParetoFront | None = None
    #: the practical thresholds: smaller differences are ties (the front and the table)
    practical: Practical = Practical()


# ---------------------------------------------------------------------------- recommendations
class Lead(_Frozen):
    """How far a pick is ahead of the runner-up, and whether that is beyond noise
    (``p_value``: the runner-up against the pick, when tested)."""

    over: str
    difference: float
    verdict: Verdict
    detail: str
    p_value: float | None = None


class Contender(_Frozen):
    """A configuration within noise of a pick: its difference from the pick (its mean minus
    the pick's: headline, or per-query latency in ms) and the p-value."""

    config: str
    difference: float
    p_value: float | None


class Recommendation(_Frozen):
    """One pick of a view (best quality, fastest, best balance): the configuration, why (in
    words), its value of the measure it was picked by, and the lead over the runner-up."""

    config: str
    reason: str
    value: float
    measure: str
    lead: Lead | None = None
    #: configurations not significantly worse than the pick (best quality and fastest)
    within_noise: list[Contender] = []


class Recommendations(_Frozen):
    """The three picks (each ``None`` when no configuration qualifies), over ``num_queries``
    queries; ``note`` says why there is none, ``left_out`` which configurations were not
    eligible and why."""

    best_quality: Recommendation | None = None
    fastest: Recommendation | None = None
    best_balance: Recommendation | None = None
    num_queries: int = 0
    note: str | None = None
    left_out: dict[str, str] = {}

    def items(self) -> list[tuple[str, Recommendation]]:
        picks = [
            ("best_quality", self.best_quality),
            ("fastest", self.fastest),
            ("best_balance", self.best_balance),
        ]
        return [(key, rec) for key, rec in picks if rec is not None]


# ---------------------------------------------------------------------------- the whole result
class BenchmarkResult(_Model):
    """Everything a benchmark found; exactly what ``results.json`` holds."""

    schema_version: int = SCHEMA_VERSION
    rankscope_version: str
    timestamp: str
    suite: SuiteInfo
    settings: SuiteSettings
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

    @model_validator(mode="before")
    @classmethod
    def _before_schema_4(cls, data: Any) -> Any:
        """Results written before schema version 4 kept the comparison statistics in a shape of
        their own: they are left out, and a report computes them again (seeded: the same
        numbers)."""
        version = data.get("schema_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version < 4 and "statistics" in data:
            return {k: v for k, v in data.items() if k != "statistics"}
        return data

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


def read_results(path: str | Path) -> BenchmarkResult:
    """A benchmark's results from its output folder or its ``results.json``."""
    from rankscope.bench.results import BenchmarkResult

    target = Path(path)
    if target.is_dir():
        found = target / "results.json"
        if not found.is_file():
            raise InputError(
                "no results.json in this folder",
                path=target,
                hint="give a folder rankscope bench or rankscope demo finished writing (an "
                "interrupted benchmark writes it when run again)",
            )
        target = found
    return BenchmarkResult.read(target)
