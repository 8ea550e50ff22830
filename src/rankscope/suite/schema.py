"""The suite file's shape as pydantic models: what a user may write, with defaults.

These models validate the YAML as written; :mod:`rankscope.suite.loader` turns a validated spec
into a resolved :class:`~rankscope.suite.model.Suite` (documents, queries, judgments,
configurations). Unknown keys are rejected so that a typo never silently changes a benchmark.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from rankscope.engines.base import (
    QueryKind,
    engine_class,
    spec_takes_embedding_model,
    spec_uses_embeddings,
    surrogate_problem,
)
from rankscope.errors import MeasureError
from rankscope.suite.original import from_original

ChunkUnit = Literal["tokens", "chars"]
PresetName = Literal["quick", "chunk_comparison", "embedding_comparison", "comprehensive"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _as_str(value: Any) -> Any:
    # YAML reads `id: 12` as an int; ids are strings everywhere else (TREC files, engines).
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


class BeirCorpus(_Strict):
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``."""

    type: Literal["beir"]
    path: str
    split: str = "test"


class JsonlCorpus(_Strict):
    """One JSON object per line; ``_id``/``id``, ``title`` and ``text`` (field names adjustable)."""

    type: Literal["jsonl"]
    path: str
    id_field: str | None = None
    title_field: str = "title"
    text_field: str = "text"


class FilesCorpus(_Strict):
    """A folder of files, each file a document whose id is its path relative to the folder."""

    type: Literal["files"]
    path: str
    glob: list[str] = Field(default_factory=lambda: ["**/*"])
    exclude: list[str] = Field(default_factory=list)
    max_bytes: Annotated[int, Field(gt=0)] = 1_000_000

    @field_validator("glob", "exclude", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class IrDatasetsCorpus(_Strict):
    """A dataset from the ``ir_datasets`` catalogue (downloaded by ir_datasets on first use)."""

    type: Literal["ir_datasets"]
    dataset: str


class DocstringsCorpus(_Strict):
    """Docstrings of installed Python modules (the offline demo corpus)."""

    type: Literal["python_docstrings"]
    modules: Annotated[list[str], Field(min_length=1)]


CorpusSpec = Annotated[
    BeirCorpus | JsonlCorpus | FilesCorpus | IrDatasetsCorpus | DocstringsCorpus,
    Field(discriminator="type"),
]


class QuerySpec(_Strict):
    """One query with its kind-specific parameters and judgments."""

    id: str
    text: str
    description: str | None = None  # the original suite's note on the query; not searched
    category: str | None = None
    kind: QueryKind = "query_string"
    field: str | None = None
    fields: list[str] = Field(default_factory=list)
    slop: Annotated[int, Field(ge=0)] = 0
    must: list[str] = Field(default_factory=list)
    should: list[str] = Field(default_factory=list)
    must_not: list[str] = Field(default_factory=list)
    judgments: dict[str, Annotated[int, Field(ge=0, le=3)]] = Field(default_factory=dict)
    expected_files: list[str] = Field(default_factory=list)
    expected_symbols: list[str] = Field(default_factory=list)
    needle_doc_id: str | None = None
    expected_answer: str | None = None

    _as_str_id = field_validator("id", "needle_doc_id", "category", mode="before")(_as_str)

    @model_validator(mode="before")
    @classmethod
    def _original_shape(cls, data: Any) -> Any:
        # The full-text benchmark's spec objects (match: {field, query}...) and judgment list.
        return from_original(data) if isinstance(data, dict) else data

    @field_validator("judgments", mode="before")
    @classmethod
    def _str_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(_as_str(k)): v for k, v in value.items()}
        return value

    @field_validator("id", "text", "must", "should", "must_not")
    @classmethod
    def _valid_unicode(cls, value: str | list[str]) -> str | list[str]:
        for text in [value] if isinstance(value, str) else value:
            refuse_surrogate(text)
        return value

    @field_validator("fields")
    @classmethod
    def _boosts(cls, value: list[str]) -> list[str]:
        for item in value:
            parse_boosted_field(item)
        return value

    @model_validator(mode="after")
    def _kind_parameters(self) -> QuerySpec:
        if self.kind == "multi_match" and not self.fields:
            raise ValueError('multi_match queries need `fields`, e.g. fields: ["title^3", "text"]')
        if self.kind == "match" and not self.field:
            raise ValueError("match queries need `field`, e.g. field: title")
        if self.kind == "boolean" and not (self.must or self.should):
            raise ValueError("boolean queries need at least one term in `must` or `should`")
        if self.fields and self.kind != "multi_match":
            raise ValueError(f"`fields` applies to multi_match queries only, not {self.kind}")
        if self.slop and self.kind != "phrase":
            raise ValueError(f"`slop` applies to phrase queries only, not {self.kind}")
        if (self.must or self.should or self.must_not) and self.kind != "boolean":
            raise ValueError(f"must/should/must_not apply to boolean queries only, not {self.kind}")
        return self


def refuse_surrogate(text: str) -> None:
    """A ValueError (a validation error naming the field) for :func:`surrogate_problem`."""
    problem = surrogate_problem(text)
    if problem is not None:
        raise ValueError(problem)


def parse_boosted_field(item: str) -> tuple[str, float]:
    """``"title^3"`` -> ``("title", 3.0)``; ``"text"`` -> ``("text", 1.0)``."""
    name, sep, boost = item.partition("^")
    if not name.strip():
        raise ValueError(f"field {item!r} has no name; write it as name or name^boost")
    if not sep:
        return name.strip(), 1.0
    try:
        value = float(boost)
    except ValueError:
        raise ValueError(
            f"field {item!r} has a boost that is not a number; write it as name^boost, e.g. title^3"
        ) from None
    if value <= 0:
        raise ValueError(f"field {item!r} needs a positive boost")
    return name.strip(), value


def canonical_measure(name: str) -> str:
    """The canonical spelling of one measure name (any accepted spelling)."""
    from rankscope.metrics.names import parse_measures  # numpy, pyarrow: the measures package

    try:
        found = parse_measures(name)
    except MeasureError as error:
        raise ValueError(str(error)) from None
    if len(found) != 1:
        listed = ", ".join(str(m) for m in found[:5])
        raise ValueError(f"{name!r} names {len(found)} measures ({listed}); list each one")
    return str(found[0])


MeasureName = Annotated[str, AfterValidator(canonical_measure)]


class QueriesFile(_Strict):
    """Queries read from a file: JSONL (``_id``/``id``, ``text`` and any query field) or BEIR."""

    path: str


#: the practical thresholds' defaults: a smaller difference is a tie on the Pareto front
#: (rankscope.bench.pareto): of the headline, and of p50 latency (relative and absolute)
MIN_EFFECT = 0.01
MIN_LATENCY_RATIO = 0.05
MIN_LATENCY_MS = 0.05


class SuiteSettings(_Strict):
    """A suite's ``settings:``: how the benchmark measures (cut-offs, depth, relevance
    threshold, repetitions). Not :class:`rankscope.config.Environment` (``RANKSCOPE_*``
    variables), :class:`rankscope.judge.config.JudgeSettings` (the judge's file) or
    ``rankscope.service.settings.ServiceSettings`` (the service's file)."""

    k: Annotated[list[Annotated[int, Field(gt=0)]], Field(min_length=1)] = Field(
        default_factory=lambda: [5, 10, 20]
    )
    max_k: Annotated[int, Field(gt=0)] = 100
    relevance_threshold: Annotated[int, Field(ge=1)] = 1
    warmup: Annotated[int, Field(ge=0)] = 1
    repeats: Annotated[int, Field(ge=1)] = 3
    concurrency: Annotated[int, Field(ge=1)] = 1
    #: chunks fetched per wanted document when an engine indexes chunks (see runner)
    chunk_fetch_factor: Annotated[int, Field(ge=1)] = 5
    #: a query kind an engine does not support: ``fail`` the configuration; ``skip`` the query
    #: for that configuration (the default comparison then leaves it out for every
    #: configuration; the all-queries view scores it 0); or ``as_text``: send the query's text
    #: as a plain ``query_string`` query (dense engines embed it), reported as such
    unsupported_queries: Literal["fail", "skip", "as_text"] = "fail"
    #: how expected_files / expected_symbols judge a code-search query: ``document``, every
    #: document a pattern matches is relevant; ``pattern``, each expected pattern counts once,
    #: for the first retrieved document that matches it (the original code-search benchmark's
    #: recall and nDCG; see rankscope.suite.relevance.PatternCredit)
    relevance: Literal["document", "pattern"] = "document"
    #: the measures reported (any name rankscope knows, e.g. ndcg_exp@10); default: nDCG@10,
    #: MAP, MRR, and nDCG/P/recall/hit at each k, recall at max_k
    measures: Annotated[list[MeasureName], Field(min_length=1)] | None = None
    #: the measure the table leads with and the recommendations use; default: the first of
    #: ``measures`` when given, else ndcg@10
    headline: MeasureName | None = None
    #: how "best balance" weighs quality against speed: ``minmax`` (quality + speed) / 2 with
    #: speed scaled between the fastest and the slowest configuration, or ``ratio``
    #: (2·quality + best p50 / p50) / 3 (see rankscope.bench.recommend)
    balance: Literal["minmax", "ratio"] = "minmax"
    #: seed of the comparison statistics' random draws (randomised Tukey HSD), so the p-values
    #: in the table and results.json are the same on every run
    seed: Annotated[int, Field(ge=0)] = 0
    #: practical thresholds: a headline difference below ``min_effect``, or a p50 gap below
    #: ``min_latency_ratio`` of the slower p50 or below ``min_latency_ms``, is a tie (the Pareto
    #: front never counts it as better or faster)
    min_effect: Annotated[float, Field(ge=0, allow_inf_nan=False)] = MIN_EFFECT
    min_latency_ratio: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = MIN_LATENCY_RATIO
    min_latency_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)] = MIN_LATENCY_MS

    @field_validator("k", mode="before")
    @classmethod
    def _one_k(cls, value: Any) -> Any:
        return [value] if isinstance(value, int) else value

    @model_validator(mode="after")
    def _depth_covers_k(self) -> SuiteSettings:
        if max(self.k) > self.max_k:
            raise ValueError(
                f"max_k ({self.max_k}) is smaller than the largest cut-off k ({max(self.k)}); "
                f"raise max_k or drop that k"
            )
        return self


class ChunkingSpec(_Strict):
    """Split documents into overlapping chunks before indexing: ``size`` and ``overlap`` in
    ``unit`` (a configuration's chunking, as written, swept and stored)."""

    size: Annotated[int, Field(gt=0)]
    overlap: Annotated[int, Field(ge=0)] = 0
    unit: ChunkUnit = "tokens"

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSpec:
        if self.overlap >= self.size:
            raise ValueError(
                f"chunk overlap ({self.overlap}) must be smaller than chunk size ({self.size})"
            )
        return self


class BenchConfig(_Strict):
    """One configuration to benchmark: an engine, its options, chunking, embedding model and
    reranker. The same value is an entry of a suite's ``engines:``, a point of a sweep and
    what each record of a run stores (:meth:`json_safe`)."""

    name: str
    engine: str
    # this field order is the order of the keys in the records already written
    options: Mapping[str, Any] = Field(default_factory=dict)
    chunking: ChunkingSpec | None = None
    embedding_model: str | None = None
    reranker: str | None = None

    _as_str_name = field_validator("name", mode="before")(_as_str)

    @property
    def needs_embeddings(self) -> bool:
        """Whether this configuration loads an embedding model (the engine's declared
        capabilities say so, or a reranker does), so that it needs the ``embed`` extra."""
        if self.reranker is not None:
            return True
        options = self.options
        if self.embedding_model is not None and spec_takes_embedding_model(self.engine, options):
            options = engine_class(self.engine).with_embedding_model(options, self.embedding_model)
        return spec_uses_embeddings(self.engine, options)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict, the option values as given (what :meth:`key` hashes)."""
        return {
            "name": self.name,
            "engine": self.engine,
            "options": dict(self.options),
            "chunking": None if self.chunking is None else self.chunking.model_dump(),
            "embedding_model": self.embedding_model,
            "reranker": self.reranker,
        }

    def key(self, *context: object) -> str:
        """A stable hash of everything that decides this configuration's results (it names
        the configuration's checkpoint: the same inputs must keep the same key)."""
        blob = json.dumps([self.to_dict(), *context], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def json_safe(self) -> BenchConfig:
        """This configuration with options JSON can hold, as records and resolved suites
        store it: options given from Python may hold objects (a search function), kept as
        their repr."""
        return BenchConfig.model_validate(json.loads(json.dumps(self.to_dict(), default=repr)))


class SweepSpec(_Strict):
    """A matrix of configurations; a preset fills the axes that are not given."""

    preset: PresetName | None = None
    engine: list[str] | None = None
    chunk_size: list[Annotated[int, Field(gt=0)] | None] | None = None
    overlap: list[Annotated[int, Field(ge=0)]] | None = None
    unit: ChunkUnit = "tokens"
    embedding_model: list[str | None] | None = None
    reranker: list[str | None] | None = None
    #: per-engine options, e.g. {tantivy: {...}}
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: per-engine option grids: every combination of the listed values is a configuration,
    #: e.g. {faiss: {m: [16, 32], ef_search: [16, 64]}} (index parameters); a list of grids
    #: sweeps each in turn ({faiss: [{index: hnsw, ef_search: [..]}, {index: ivf_pq, ...}]})
    params: dict[str, list[dict[str, list[Any]]]] = Field(default_factory=dict)

    @field_validator("params", mode="before")
    @classmethod
    def _grid_lists(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value

        def lists(grid: Any) -> Any:
            if not isinstance(grid, dict):
                return grid
            return {k: v if isinstance(v, list) else [v] for k, v in grid.items()}

        return {
            engine: [lists(g) for g in grids] if isinstance(grids, list) else [lists(grids)]
            for engine, grids in value.items()
        }

    @field_validator(
        "engine", "chunk_size", "overlap", "embedding_model", "reranker", mode="before"
    )
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return value if value is None or isinstance(value, list) else [value]

    @model_validator(mode="after")
    def _something_to_expand(self) -> SweepSpec:
        if self.preset is None and not self.engine:
            raise ValueError("a sweep needs `engine: [...]` or a `preset`")
        return self


class CheckSpec(_Strict):
    """A suite's ``check:``: the regression gate ``rankscope check SUITE_FILE`` applies to the
    benchmark's results (rankscope.check): configuration ``candidate`` must be non-inferior to
    ``baseline`` within ``margin`` at confidence ``1 - alpha`` on each measure, and at least
    each floor of ``min``."""

    baseline: str
    candidate: str
    #: default: the suite's headline
    measures: list[MeasureName] | None = None
    margin: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.01
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    #: absolute floors of the candidate's mean, e.g. {ndcg@10: 0.6}
    min: dict[MeasureName, Annotated[float, Field(allow_inf_nan=False)]] = Field(
        default_factory=dict
    )
    #: the queries compared: answered (every configuration answered them) or all
    view: Literal["answered", "all"] | None = None

    @model_validator(mode="after")
    def _two_configurations(self) -> CheckSpec:
        if self.baseline == self.candidate:
            raise ValueError("check: the baseline and the candidate are the same configuration")
        return self


class SuiteSpec(_Strict):
    """The whole suite file."""

    name: str
    description: str = ""
    corpus: CorpusSpec
    queries: list[QuerySpec] | QueriesFile | None = None
    qrels: str | list[str] | None = None
    settings: SuiteSettings = Field(default_factory=SuiteSettings)
    engines: list[BenchConfig] = Field(default_factory=list)
    sweep: SweepSpec | None = None
    check: CheckSpec | None = None

    _as_str_name = field_validator("name", mode="before")(_as_str)

    @field_validator("queries", mode="before")
    @classmethod
    def _plain_text(cls, value: Any) -> Any:
        # A bare string in the list is a query_string query numbered by position.
        if isinstance(value, list):
            return [
                {"id": f"q{i + 1}", "text": item} if isinstance(item, str) else item
                for i, item in enumerate(value)
            ]
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> SuiteSpec:
        seen: set[str] = set()
        for spec in self.engines:
            if spec.name in seen:
                raise ValueError(f"two engine configurations are named {spec.name!r}")
            seen.add(spec.name)
        if isinstance(self.queries, list):
            ids: set[str] = set()
            for query in self.queries:
                if query.id in ids:
                    raise ValueError(f"two queries have the id {query.id!r}")
                ids.add(query.id)
        if not self.engines and self.sweep is None:
            raise ValueError("the suite has no `engines` and no `sweep`: nothing to benchmark")
        if self.queries is None and self.corpus.type not in ("beir", "ir_datasets"):
            raise ValueError(
                f"a {self.corpus.type} corpus brings no queries: add `queries:` (a list or "
                f"{{path: queries.jsonl}})"
            )
        return self
