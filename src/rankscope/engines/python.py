"""A user's own retriever, given as ``module:function`` or ``module:Class``.

The contract (docs/own-retriever.md):

- ``search`` names a function called as ``fn(query_text, k)`` (or ``fn(query, k)`` with the
  whole :class:`~rankscope.engines.base.Query` when ``call="query"``), or a class: it is
  instantiated once with no arguments and its ``search(query_text, k)`` method is called, its
  ``index(documents)`` method (if it has one) receiving the documents.
- It returns, best first or in any order, at most ``k`` hits as one of: a list of
  ``(doc_id, score)`` pairs; a pair of lists ``(ids, scores)`` of equal length; a list of
  mappings with ``id`` (or ``doc_id``) and ``score``; a list of
  :class:`~rankscope.engines.base.Hit`. rankscope sorts by score, drops repeated ids, keeps k.
- An optional ``index`` option ``module:function`` receives the list of documents.
- An exception in user code fails the configuration with an :class:`EngineError` naming the
  function and the query; a malformed result is refused with the contract in one line.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
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

#: what a search function must return, in one line, for every message that refuses a result
CONTRACT = (
    "return a list of (doc_id, score) pairs, a pair of lists (ids, scores), or a list of "
    "{'id': ..., 'score': ...} mappings (docs/own-retriever.md)"
)


def load_callable(
    ref: object, option: str, base_dir: Path | None = None
) -> tuple[str, Callable[..., Any]]:
    """A callable as given, or ``module:function`` imported (see :mod:`rankscope.callables`);
    ``base_dir`` (the suite's folder) is searched first for the module."""
    if callable(ref):
        return getattr(ref, "__qualname__", repr(ref)), ref
    return str(ref), load_function(ref, f"python engine option {option!r}", base_dir=base_dir)


def _search_and_index(
    name: str, found: Callable[..., Any]
) -> tuple[Callable[..., Any], Callable[..., Any] | None]:
    """A function is the search function; a class is instantiated once (no arguments) and its
    ``search`` and ``index`` methods are used."""
    if not isinstance(found, type):
        return found, None
    try:
        instance = found()
    except Exception as exc:
        raise EngineError(
            f"python engine: creating {name!r} with no arguments failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    search = getattr(instance, "search", None)
    if not callable(search):
        raise ConfigError(
            f"python engine option 'search': class {name!r} has no search(query, k) method",
            value=name,
            hint="give the class a search(self, query, k) method, or name a function",
        )
    index = getattr(instance, "index", None)
    return search, index if callable(index) else None


def signature_problem(fn: Callable[..., Any], args: int, what: str) -> str | None:
    """Why ``fn`` cannot be called with ``args`` positional arguments (None when it can, or
    when it has no signature to read)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*range(args))
    except TypeError as exc:
        return f"{what} cannot be called as the engine calls it ({exc}); its signature is {sig}"
    return None


def _is_column(value: object) -> bool:
    return not isinstance(value, (str, bytes, Mapping)) and (
        isinstance(value, Sequence) or hasattr(value, "__array__")
    )


def _is_number(value: object) -> bool:
    return not isinstance(value, (bool, str, bytes)) and hasattr(value, "__float__")


def _as_pairs(result: object) -> object:
    """``(ids, scores)``, two lists of equal length (ids all text, scores all numbers), as a
    list of ``(id, score)`` pairs; anything else as it is. The shapes cannot be confused: read
    as two pairs, a list of ids would give a text score."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        return result
    ids, scores = result
    if not (_is_column(ids) and _is_column(scores)):
        return result
    id_list, score_list = list(ids), list(scores)
    if not (all(isinstance(i, str) for i in id_list) and all(map(_is_number, score_list))):
        return result
    if len(id_list) != len(score_list):
        raise EngineError(f"returned {len(id_list)} ids but {len(score_list)} scores; {CONTRACT}")
    return list(zip(id_list, score_list, strict=True))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def coerce_hits(result: object, where: str) -> list[Hit]:
    """Turn a user's result into hits, refusing anything malformed with the contract.

    Scores go through :func:`~rankscope.engines.base.coerce_score`, as in every engine: numpy
    scalars and numeric strings are accepted, NaN and infinities refused.
    """
    try:
        result = _as_pairs(result)
    except EngineError as error:
        raise EngineError(f"{where} {error}") from None
    if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
        raise EngineError(f"{where} returned {type(result).__name__}; {CONTRACT}")
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
                f"{where} returned a malformed hit at position {n}: {_shown(item)}; {CONTRACT}"
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

    Options: ``search`` (``module:function``, ``module:Class`` with ``search``/``index``
    methods, or a callable), ``index`` (optional ``module:function`` receiving the documents),
    ``call`` (``"text"``: ``fn(query_text, k)``, the default, supports ``query_string`` queries
    only; ``"query"``: ``fn(query, k)`` with the Query object), ``kinds`` (with
    ``call="query"``, the query kinds the function handles; default all five).
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
        self.search_name, found = load_callable(search, "search")
        self._search_fn, self._index_fn = _search_and_index(self.search_name, found)
        self.index_name = f"{self.search_name}.index" if self._index_fn is not None else ""
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

    @classmethod
    def preflight(
        cls, options: Mapping[str, Any], *, base_dir: Path, query: Query
    ) -> list[tuple[str, str, str]]:
        return preflight_python(options, base_dir)

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


def preflight_python(options: Mapping[str, Any], base_dir: Path) -> list[tuple[str, str, str]]:
    """Import a python engine's ``search`` (and ``index``) as a benchmark would, and check
    that they can be called as the engine calls them: ``(option, problem, hint)`` for each
    problem, before any configuration runs. A class is checked, not instantiated."""
    problems: list[tuple[str, str, str]] = []
    for option, args in (("search", 2), ("index", 1)):
        ref = options.get(option)
        if ref is None or callable(ref):
            continue
        try:
            name, fn = load_callable(ref, option, base_dir)
        except ConfigError as error:
            problems.append((option, error.problem, error.hint or ""))
            continue
        if option == "search" and isinstance(fn, type):
            method = getattr(fn, "search", None)
            if not callable(method):
                problems.append((option, f"class {name!r} has no search(query, k) method", ""))
                continue
            bad = signature_problem(method, 3, f"{name}.search")  # self, query, k
        else:
            bad = signature_problem(fn, args, name)
        if bad is not None:
            shape = "fn(query, k)" if option == "search" else "fn(documents)"
            problems.append((option, bad, f"the engine calls {shape}"))
    return problems
