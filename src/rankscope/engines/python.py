"""A user's own retriever, given as ``module:function``.

The search function is called as ``fn(query_text, k)`` (or ``fn(query, k)`` with the whole
:class:`~rankscope.engines.base.Query` when ``call="query"``) and returns a ranked list of
``(doc_id, score)`` pairs, of mappings with ``id``/``doc_id`` and ``score``, or of
:class:`~rankscope.engines.base.Hit`. An optional ``index`` hook ``module:function`` receives the
list of documents. Errors raised by user code are reported as :class:`EngineError` naming the
function; malformed results are refused with the offending value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from rankscope.callables import load_function
from rankscope.engines.base import (
    QUERY_KINDS,
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    coerce_score,
    register_engine,
)
from rankscope.errors import ConfigError, EngineError


def load_callable(ref: object, option: str) -> tuple[str, Callable[..., Any]]:
    """A callable as given, or ``module:function`` imported (see :mod:`rankscope.callables`)."""
    if callable(ref):
        return getattr(ref, "__qualname__", repr(ref)), ref
    return str(ref), load_function(ref, f"python engine option {option!r}")


def coerce_hits(result: object, where: str) -> list[Hit]:
    """Turn a user's result list into hits, refusing anything malformed.

    Scores go through :func:`~rankscope.engines.base.coerce_score`, as in every engine: numpy
    scalars and numeric strings are accepted, NaN and infinities refused.
    """
    if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
        raise EngineError(
            f"{where} returned {type(result).__name__}; expected a list of (doc_id, score) "
            "pairs, of {'id': ..., 'score': ...} mappings, or of Hit"
        )
    hits: list[Hit] = []
    for n, item in enumerate(result):
        doc: object
        score: object
        if isinstance(item, Hit):
            doc, score = item.doc_id, item.score
        elif isinstance(item, Mapping):
            doc = item.get("doc_id", item.get("id"))
            score = item.get("score")
        elif isinstance(item, Sequence) and not isinstance(item, (str, bytes)) and len(item) == 2:
            doc, score = item
        else:
            doc, score = None, None
        if doc is None or isinstance(doc, (bytes, float)):
            raise EngineError(
                f"{where} returned a malformed hit at position {n}: {item!r}; each hit needs "
                "a document id and a numeric score"
            )
        score = coerce_score(score, f"{where}, document {doc!r} (position {n})")
        hits.append(Hit(doc_id=str(doc), score=score))
    return hits


def best_first(hits: list[Hit], k: int) -> list[Hit]:
    """Hits sorted by score (descending, stable for ties), without repeated ids, at most k."""
    seen: set[str] = set()
    out: list[Hit] = []
    for h in sorted(hits, key=lambda h: -h.score):
        if h.doc_id not in seen:
            seen.add(h.doc_id)
            out.append(h)
    return out[:k]


@register_engine("python")
class PythonEngine(Engine):
    """A retriever written in Python.

    Options: ``search`` (``module:function``, or a callable), ``index`` (optional
    ``module:function`` receiving the documents), ``call`` (``"text"``: ``fn(query_text, k)``,
    the default, supports ``query_string`` queries only; ``"query"``: ``fn(query, k)`` with the
    Query object), ``kinds`` (with ``call="query"``, the query kinds the function handles;
    default all five).
    """

    name = "python"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})

    def __init__(
        self,
        search: str | Callable[..., Any],
        *,
        index: str | Callable[..., Any] | None = None,
        call: Literal["text", "query"] = "text",
        kinds: Sequence[str] | None = None,
    ) -> None:
        self.search_name, self._search_fn = load_callable(search, "search")
        self.index_name = ""
        self._index_fn: Callable[..., Any] | None = None
        if index is not None:
            self.index_name, self._index_fn = load_callable(index, "index")
        if call not in ("text", "query"):
            raise ConfigError("python engine option 'call' must be 'text' or 'query'", value=call)
        if call == "text" and kinds is not None and set(kinds) != {"query_string"}:
            raise ConfigError(
                "python engine: with call='text' the function only sees the query text, so "
                "only query_string queries are supported",
                value=list(kinds),
                hint="set call: query to receive the whole query and declare its kinds",
            )
        chosen: frozenset[QueryKind]
        if call == "text":
            chosen = frozenset({"query_string"})
        else:
            bad = [k for k in (kinds or QUERY_KINDS) if k not in QUERY_KINDS]
            if bad:
                raise ConfigError(
                    "python engine option 'kinds' has unknown kinds; known: "
                    + ", ".join(QUERY_KINDS),
                    value=bad,
                )
            chosen = frozenset(kinds or QUERY_KINDS)  # type: ignore[arg-type]
        self.call = call
        setattr(self, "supported_kinds", chosen)  # noqa: B010 - configured per instance

    def index(self, docs: Iterable[Document]) -> None:
        if self._index_fn is None:
            return
        try:
            self._index_fn(list(docs))
        except Exception as exc:
            raise EngineError(
                f"python engine index function {self.index_name!r} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _search(self, query: Query, k: int) -> list[Hit]:
        arg: object = query.text if self.call == "text" else query
        try:
            result = self._search_fn(arg, k)
        except Exception as exc:
            raise EngineError(
                f"python engine search function {self.search_name!r} failed on query "
                f"{query.id!r}: {type(exc).__name__}: {exc}"
            ) from exc
        where = f"python engine search function {self.search_name!r}, query {query.id!r}"
        return best_first(coerce_hits(result, where), k)
