"""The engine contract: documents in, ranked hits out, for the five query kinds.

An engine indexes :class:`Document` values (whole documents or chunks: the runner chunks, engines
just index what they are given) and answers :class:`Query` values with ranked :class:`Hit` lists.
It declares the query kinds it supports and refuses the others with
:class:`~rankscope.errors.UnsupportedQueryError`; it never falls back silently.
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Literal, Self, SupportsFloat, TypeVar

from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError

QueryKind = Literal["query_string", "match", "multi_match", "phrase", "boolean"]
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


class Engine(ABC):
    """Base class of every engine. Use as a context manager so resources are released."""

    #: registry name, e.g. ``"sqlite"``
    name: ClassVar[str]
    #: the query kinds this engine translates natively
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(QUERY_KINDS)
    #: whether ``search`` may be called from several threads at once
    thread_safe: ClassVar[bool] = False

    @abstractmethod
    def index(self, docs: Iterable[Document]) -> None:
        """Index the documents (replacing what the engine held before)."""

    @abstractmethod
    def _search(self, query: Query, k: int) -> list[Hit]:
        """Engine-specific search; ``query.kind`` is already known to be supported."""

    def search(self, query: Query, k: int) -> list[Hit]:
        """Return at most ``k`` hits, best first, each with a finite float score.

        Every engine's hits pass :func:`checked_hits`: a NaN or infinite score is refused with
        an :class:`EngineError` naming the query and the document, never written to a run.
        """
        self.check_kind(query)
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
_REGISTRY: dict[str, Callable[..., Engine]] = {}


def register_engine(name: str) -> Callable[[E], E]:
    """Class decorator: make an engine available to suites under ``name``."""

    def deco(cls: E) -> E:
        _REGISTRY[name] = cls
        return cls

    return deco


def create_engine(name: str, **options: Any) -> Engine:
    """Instantiate a registered engine by name with its options."""
    from rankscope.engines import load_builtin_engines

    load_builtin_engines()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise EngineError(f"unknown engine {name!r}; known engines: {known}") from None
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
    from rankscope.engines import load_builtin_engines

    load_builtin_engines()
    return sorted(_REGISTRY)
