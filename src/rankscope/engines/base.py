"""The engine contract: documents in, ranked hits out, for the five query kinds.

An engine indexes :class:`Document` values (whole documents or chunks: the runner chunks, engines
just index what they are given) and answers :class:`Query` values with ranked :class:`Hit` lists.
It declares the query kinds it supports and refuses the others with
:class:`~rankscope.errors.UnsupportedQueryError`; it never falls back silently.
"""

from __future__ import annotations

import importlib
import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Literal, Self, SupportsFloat, TypeVar

from rankscope.errors import ConfigError, EngineError, QueryError, UnsupportedQueryError

#: the five kinds of query a suite may hold (see :class:`Query`)
QueryKind = Literal["query_string", "match", "multi_match", "phrase", "boolean"]
#: the same kinds as a tuple, in that order
QUERY_KINDS: tuple[QueryKind, ...] = ("query_string", "match", "multi_match", "phrase", "boolean")


@dataclass(frozen=True, slots=True)
class Document:
    """A unit an engine indexes: a document or a chunk of one.

    ``title`` and ``text`` are the two standard fields; ``fields`` holds any others (``path``,
    ``symbols``...). ``parent_id`` is set on chunks: the id of the document the chunk came from.
    """

    id: str
    text: str
    title: str = ""
    fields: Mapping[str, str] = field(default_factory=dict)
    parent_id: str | None = None

    def get(self, name: str) -> str:
        """The text of a field by name (``title``, ``text`` or an extra field; '' when absent)."""
        if name == "text":
            return self.text
        if name == "title":
            return self.title
        return self.fields.get(name, "")


@dataclass(frozen=True, slots=True)
class Query:
    """One query of a suite, of one of the five kinds.

    - ``query_string``: free text in ``text`` over all fields (the default).
    - ``match``: ``text`` against one ``field``.
    - ``multi_match``: ``text`` against ``fields`` given as ``(field, boost)`` pairs.
    - ``phrase``: ``text`` as a phrase in ``field`` (all fields when None), within ``slop``.
    - ``boolean``: ``must`` / ``should`` / ``must_not`` term lists; ``text`` is for display.
    """

    id: str
    text: str
    kind: QueryKind = "query_string"
    field: str | None = None
    fields: tuple[tuple[str, float], ...] = ()
    slop: int = 0
    must: tuple[str, ...] = ()
    should: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result. ``doc_id`` is what the engine indexed (a chunk id when chunked)."""

    doc_id: str
    score: float
    text: str | None = None


def coerce_score(value: object, where: str) -> float:
    """A hit's score as a finite ``float``, or an :class:`EngineError` saying why not.

    Accepted: ints, floats, numpy scalars (``np.float32`` included) and anything else that
    converts with ``float()`` (a 0-d array, a ``Decimal``), and numeric strings such as
    ``"1.5"`` (some JSON APIs send scores as strings). Refused: booleans, other strings, NaN and
    infinities: a run file cannot rank them and ``rankscope eval`` refuses them. ``where`` names
    the engine, query and document for the message.
    """
    number: float | None = None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    elif not isinstance(value, (bool, bytes)) and isinstance(value, SupportsFloat):
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            number = None
    if number is None:
        raise EngineError(
            f"{where}: score {value!r} ({type(value).__name__}) is not a number; return a "
            "float (a numpy scalar or a numeric string also works)"
        )
    if not math.isfinite(number):
        raise EngineError(
            f"{where}: score {value!r} is not a finite number; NaN and infinite scores cannot "
            "be ranked or written to a run file (check the engine's scoring for a division by "
            "zero or an overflow)"
        )
    return number


def checked_hits(engine: str, query: Query, hits: list[Hit]) -> list[Hit]:
    """``hits`` with every score a finite float, or an :class:`EngineError` naming the engine,
    the query and the document whose score is not (see :func:`coerce_score`)."""
    out = hits
    for i, hit in enumerate(hits):
        score = hit.score
        if type(score) is float and math.isfinite(score):
            continue
        where = f"engine {engine!r}, query {query.id!r}, document {hit.doc_id!r} (rank {i + 1})"
        fixed = Hit(doc_id=hit.doc_id, score=coerce_score(score, where), text=hit.text)
        if out is hits:
            out = list(hits)
        out[i] = fixed
    return out


def unencodable(text: str) -> int | None:
    """The position of the first lone UTF-16 surrogate in ``text`` (None when there is none).

    JSON escapes such as ``"\\ud800"`` decode to one, but it is not valid Unicode: UTF-8 (and
    so every database, Java and tokenizer) refuses it.
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def surrogate_problem(text: str) -> str | None:
    """What is wrong with ``text`` when it holds a lone UTF-16 surrogate (:func:`unencodable`),
    else None, for messages that name the field first."""
    at = unencodable(text)
    if at is None:
        return None
    return (
        f"holds a lone UTF-16 surrogate ({text[at]!r} at character {at}), which is not valid "
        "Unicode and no engine can take; write the character's whole surrogate pair or remove "
        "the escape"
    )


def check_query_text(query: Query) -> None:
    """A :class:`QueryError` naming the query and the field when its text or a term holds a
    lone surrogate (:func:`unencodable`), which no engine can take."""
    parts = [("text", query.text)]
    for name, terms in (
        ("must", query.must),
        ("should", query.should),
        ("must_not", query.must_not),
    ):
        parts += [(name, t) for t in terms]
    for name, value in parts:
        problem = surrogate_problem(value)
        if problem is not None:
            raise QueryError(f"query {query.id!r}: its {name} {problem}")


class Engine(ABC):
    """Base class of every engine. Use as a context manager so resources are released."""

    #: registry name, e.g. ``"sqlite"``
    name: ClassVar[str]
    #: the query kinds this engine translates natively
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(QUERY_KINDS)
    #: whether ``search`` may be called from several threads at once
    thread_safe: ClassVar[bool] = False
    #: the engine embeds text with an embedding model named by its ``model`` option, so a
    #: configuration's ``embedding_model`` is given to it (vector, pgvector)
    embeds_text: ClassVar[bool] = False
    #: the engine is built from other engines, given as nested specs in its options (hybrid,
    #: rerank); :meth:`member_specs` returns them
    composite: ClassVar[bool] = False
    #: the values a string option accepts where its annotation is a plain ``str`` (a
    #: ``Literal`` annotation declares them itself); the suite loader refuses any other value
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: the options an engine whose constructor takes ``**kwargs`` passes on (the vector
    #: stores' embedding options); an engine with ``**kwargs`` and none declared takes any
    extra_options: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def member_specs(cls, options: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The nested engine specs (``{"engine": name, **options}``) that a composite engine
        built with ``options`` wraps; none for other engines."""
        return []

    @classmethod
    def takes_embedding_model(cls, options: Mapping[str, Any]) -> bool:
        """Whether a configuration's ``embedding_model`` applies to an engine built with
        ``options``: it embeds text itself, or one of its members does."""
        return cls.embeds_text or any(
            spec_takes_embedding_model(m.get("engine"), m) for m in cls.member_specs(options)
        )

    @classmethod
    def uses_embeddings(cls, options: Mapping[str, Any]) -> bool:
        """Whether an engine built with ``options`` loads an embedding model (itself or
        through a member), so that it needs an embedding backend installed. The model-free
        ``hashing`` embedder needs none."""
        if cls.embeds_text and not str(options.get("model") or "").startswith("hashing"):
            return True
        return any(spec_uses_embeddings(m.get("engine"), m) for m in cls.member_specs(options))

    @classmethod
    def with_embedding_model(cls, options: Mapping[str, Any], model: str) -> dict[str, Any]:
        """``options`` with ``model`` given to whatever embeds text: this engine's ``model``
        option, or (composite engines) that of every member that embeds. A model the options
        already name is kept."""
        out = dict(options)
        if cls.embeds_text:
            out.setdefault("model", model)
        return out

    @classmethod
    def preflight(
        cls, options: Mapping[str, Any], *, base_dir: Path, query: Query
    ) -> list[tuple[str, str, str]]:
        """Checks that need more than the options' declaration, run by the suite loader before
        any configuration starts (``rankscope bench`` unless ``--no-probe``): the python
        engine imports its function, the http engine sends ``query``. Each problem is
        ``(option, problem, hint)``; none by default."""
        return []

    def index_stats(self) -> Mapping[str, int | float]:
        """Counts about the last :meth:`index` (and any document embedding done since), for
        the benchmark's table: e.g. ``{"embedding_cache_hits": 950, "embedding_cache_misses":
        50}``. Empty for engines with nothing to report."""
        return {}

    def effective_params(self, k: int) -> Mapping[str, int | float | str | bool]:
        """The index and search parameters a search for ``k`` hits really runs with, where they
        can differ from the options given: hnswlib searches with ``ef = max(ef_search, k)``,
        faiss scans ``min(nprobe, nlist)`` cells, Qdrant local mode and Milvus Lite search
        exactly whatever their index options. The benchmark stores them in results.json and
        flags two configurations of one engine that searched with the same ones as duplicates.
        Empty (the default): the options as given are what the engine searched with."""
        return {}

    def notes(self) -> list[str]:
        """What the engine's library said about the last :meth:`index` (e.g. faiss's k-means
        asking for more training points), once each, for the benchmark's notes instead of the
        terminal."""
        return []

    def search_stats(self) -> Mapping[str, int | float]:
        """Counts about the searches since the last :meth:`index`, for results.json: e.g.
        pgvector's ``{"approximate_searches": 300, "exact_searches": 0}`` (whether rankings
        came through an approximate index). Empty for engines with nothing to report."""
        return {}

    @abstractmethod
    def index(self, docs: Iterable[Document]) -> None:
        """Index the documents (replacing what the engine held before)."""

    @abstractmethod
    def _search(self, query: Query, k: int) -> list[Hit]:
        """Engine-specific search; ``query.kind`` is already known to be supported."""

    def search(self, query: Query, k: int) -> list[Hit]:
        """Return at most ``k`` hits, best first, each with a finite float score.

        Every engine's hits pass :func:`checked_hits`: a NaN or infinite score is refused with
        an :class:`EngineError` naming the query and the document, never written to a run. A
        query whose text is not valid Unicode is refused with a :class:`QueryError`.
        """
        self.check_kind(query)
        check_query_text(query)
        if k <= 0:
            return []
        return checked_hits(self.name, query, self._search(query, k))

    def check_kind(self, query: Query) -> None:
        if query.kind not in self.supported_kinds:
            supported = ", ".join(sorted(self.supported_kinds))
            raise UnsupportedQueryError(
                f"engine {self.name!r} does not support {query.kind!r} queries "
                f"(query {query.id!r}); it supports: {supported}. Use another engine for this "
                f"query or change its kind"
            )

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, temporary files)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


E = TypeVar("E", bound=type[Engine])
_REGISTRY: dict[str, type[Engine]] = {}

#: every engine rankscope ships: its name and the module whose ``@register_engine`` registers it.
#: A module is imported when its engine is first looked up (each imports its client library only
#: when an engine is made, so a lookup costs nothing when the extra is not installed); the other
#: modules of this package are helpers the engines share.
BUILTIN_ENGINES: Mapping[str, str] = {
    "anserini": "rankscope.engines.anserini",
    "bm25s": "rankscope.engines.bm25s_engine",
    "chroma": "rankscope.engines.chroma",
    "duckdb": "rankscope.engines.duckdb_fts",
    "elasticsearch": "rankscope.engines.elastic",
    "faiss": "rankscope.engines.faiss_index",
    "hnswlib": "rankscope.engines.hnswlib_index",
    "http": "rankscope.engines.http",
    "hybrid": "rankscope.engines.hybrid",
    "lancedb": "rankscope.engines.lancedb_store",
    "milvus": "rankscope.engines.milvus",
    "opensearch": "rankscope.engines.elastic",
    "pgvector": "rankscope.engines.pgvector",
    "postgres": "rankscope.engines.postgres",
    "python": "rankscope.engines.python",
    "qdrant": "rankscope.engines.qdrant",
    "rerank": "rankscope.engines.rerank",
    "run_file": "rankscope.engines.run_file",
    "sqlite": "rankscope.engines.sqlite",
    "tantivy": "rankscope.engines.tantivy",
    "typesense": "rankscope.engines.typesense_search",
    "usearch": "rankscope.engines.usearch_index",
    "vector": "rankscope.engines.vector",
}
_loaded: set[str] = set()


def register_engine(name: str) -> Callable[[E], E]:
    """Class decorator: make an engine available to suites under ``name``."""

    def deco(cls: E) -> E:
        _REGISTRY[name] = cls
        return cls

    return deco


def engine_class(name: str) -> type[Engine]:
    """The engine class registered under ``name`` (its capabilities are class attributes):
    a built-in engine, one registered since, or a plugin's (:mod:`rankscope.plugins`)."""
    module = BUILTIN_ENGINES.get(name)
    if module is not None:
        _load(module)
    elif name not in _REGISTRY:
        _load_plugin(name)
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(engine_names())
        raise EngineError(f"unknown engine {name!r}; known engines: {known}") from None


def _load_plugin(name: str) -> None:
    """Register the engine a ``rankscope.engines`` entry point named ``name`` provides."""
    from rankscope.plugins import ENGINE_GROUP, load_entry_point, plugin_entry_points

    point = plugin_entry_points(ENGINE_GROUP).get(name)
    if point is None:
        return
    loaded = load_entry_point(point, ENGINE_GROUP)
    if isinstance(loaded, type) and issubclass(loaded, Engine):
        _REGISTRY.setdefault(name, loaded)
    elif name not in _REGISTRY:  # a module: its @register_engine classes registered themselves
        raise ConfigError(
            f"plugin engine {name!r} ({point.value!r}) is neither an Engine subclass nor a "
            f"module that registers an engine named {name!r}",
            hint="point the entry point at the engine class, e.g. my_package.engine:MyEngine",
        )


def plugin_engine_names() -> list[str]:
    """The engines installed packages provide through ``rankscope.engines`` entry points."""
    from rankscope.plugins import ENGINE_GROUP, plugin_entry_points

    return sorted(set(plugin_entry_points(ENGINE_GROUP)) - set(BUILTIN_ENGINES))


def load_builtin_engines() -> None:
    """Import every module of :data:`BUILTIN_ENGINES` (a lookup by name imports only its own)."""
    for module in sorted(set(BUILTIN_ENGINES.values())):
        _load(module)


def _load(module: str) -> None:
    if module not in _loaded:
        importlib.import_module(module)  # its @register_engine classes register themselves
        _loaded.add(module)


def _spec_class(spec: Mapping[str, Any]) -> type[Engine] | None:
    name = spec.get("engine")
    if not isinstance(name, str):
        return None
    try:
        return engine_class(name)
    except EngineError:  # building it fails later with its own clear error
        return None


def spec_uses_embeddings(name: object, options: Mapping[str, Any]) -> bool:
    """Whether engine ``name`` built with ``options`` loads an embedding model (False for an
    unknown name: building it fails later with its own clear error)."""
    cls = _spec_class({"engine": name})
    return cls is not None and cls.uses_embeddings(options)


def spec_takes_embedding_model(name: object, options: Mapping[str, Any]) -> bool:
    """Whether a configuration's ``embedding_model`` applies to engine ``name`` with
    ``options`` (False for an unknown name)."""
    cls = _spec_class({"engine": name})
    return cls is not None and cls.takes_embedding_model(options)


def spec_with_embedding_model(spec: Mapping[str, Any], model: str) -> Mapping[str, Any]:
    """A nested engine spec with ``model`` given to whatever in it embeds text."""
    cls = _spec_class(spec)
    if cls is None:
        return spec
    options = {k: v for k, v in spec.items() if k != "engine"}
    return {"engine": spec["engine"], **cls.with_embedding_model(options, model)}


def create_engine(name: str, **options: Any) -> Engine:
    """Instantiate a registered engine by name with its options."""
    factory = engine_class(name)
    _check_options(name, factory, options)
    return factory(**options)


def _check_options(name: str, factory: Callable[..., Engine], options: Mapping[str, Any]) -> None:
    """Refuse unknown or missing options with a ConfigError naming the accepted ones."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # no introspectable signature: let the factory check
        return
    try:
        sig.bind(**options)
    except TypeError as exc:
        accepted = ", ".join(
            p.name
            for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )
        raise ConfigError(
            f"bad options for engine {name!r}: {exc}",
            value=sorted(options),
            hint=f"engine {name!r} accepts: {accepted or '(no options)'}",
        ) from None


def engine_names() -> list[str]:
    """The names of the built-in engines, of the plugins' (entry points) and of those
    registered since (no engine is imported)."""
    return sorted({*BUILTIN_ENGINES, *_REGISTRY, *plugin_engine_names()})


def embedding_engine_names() -> list[str]:
    """Registered engines that can take an embedding model: those that embed text, and the
    composite ones (through their members), for messages."""
    classes = {name: engine_class(name) for name in engine_names()}
    return [n for n, cls in classes.items() if cls.embeds_text or cls.composite]
