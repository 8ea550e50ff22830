"""The engine contract: documents in, ranked hits out, for the five query kinds.

An engine indexes :class:`Document` values (whole documents or chunks: the runner chunks, engines
just index what they are given) and answers :class:`Query` values with ranked :class:`Hit` lists.
It declares the query kinds it supports and refuses the others with
:class:`~rankscope.errors.UnsupportedQueryError`; it never falls back silently.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Literal, Self, TypeVar

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
        """Return at most ``k`` hits, best first."""
        self.check_kind(query)
        if k <= 0:
            return []
        return self._search(query, k)

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
