"""The full-text benchmark's original suite shape, read into rankscope's own.

The original writes one spec object per query kind, named after the kind, with the Elasticsearch
query DSL's fields (``query_string: {query}``, ``match: {field, query}``, ``multi_match: {query,
fields}``, ``phrase: {field, query, slop}``, ``boolean: {query}``), and ``judgments`` as a list of
``{doc_id, grade}``. :func:`from_original` rewrites such a query mapping into rankscope's flat
form (``text``, ``field``, ``fields``, ``slop``, ``must``/``should``/``must_not``, ``judgments:
{doc: grade}``) before validation, so both spellings give the same query.
"""

from __future__ import annotations

import re
from typing import Any

#: the fields of each kind's spec object
SPEC_FIELDS: dict[str, frozenset[str]] = {
    "query_string": frozenset({"query"}),
    "match": frozenset({"field", "query"}),
    "multi_match": frozenset({"query", "fields"}),
    "phrase": frozenset({"field", "query", "slop"}),
    "boolean": frozenset({"query"}),
}
_TOKEN = re.compile(r'\(|\)|"[^"]*"|[^\s()"]+')
_MAX_QUERY = 10_000


def _items(tokens: list[str], query: str) -> list[str]:
    """The OR-separated terms of ``a OR "b c" OR d`` (parentheses already removed)."""
    items = [t.strip('"') for t in tokens if t != "OR"]
    if not items or any(t in ("AND", "NOT", "(", ")") for t in tokens) or tokens[0] == "OR":
        raise ValueError(
            f"boolean query {query!r}: a group holds terms joined by OR only, e.g. (a OR b)"
        )
    return items


def parse_boolean(query: str) -> tuple[list[str], list[str], list[str]]:
    """``(climate OR weather) AND NOT politics`` -> (must, should, must_not).

    The query is conjuncts joined by ``AND``: a term or ``"phrase"`` is required (``must``); an
    ``(a OR b)`` group is ``should`` (one of them required) when it is the only positive
    conjunct; ``NOT x`` or ``NOT (a OR b)`` excludes (``must_not``). A query of terms joined by
    ``OR`` alone is ``should``. Anything else (nested groups, an OR group beside required terms)
    is refused with the form it takes.
    """
    if len(query) > _MAX_QUERY:
        raise ValueError(f"boolean query is {len(query)} characters; at most {_MAX_QUERY}")
    tokens = _TOKEN.findall(query)
    if not tokens:
        raise ValueError("boolean query is empty")
    conjuncts: list[list[str]] = [[]]
    depth = 0
    for token in tokens:
        depth += token == "("
        depth -= token == ")"
        if depth < 0 or depth > 1:
            raise ValueError(f"boolean query {query!r}: unbalanced or nested parentheses")
        if token == "AND" and depth == 0:
            conjuncts.append([])
        else:
            conjuncts[-1].append(token)
    if depth:
        raise ValueError(f"boolean query {query!r}: unbalanced parentheses")
    must: list[str] = []
    should: list[str] = []
    must_not: list[str] = []
    for part in conjuncts:
        negated = bool(part) and part[0] == "NOT"
        body = part[1:] if negated else part
        if not body:
            raise ValueError(f"boolean query {query!r}: AND or NOT without a term")
        grouped = body[0] == "(" and body[-1] == ")"
        inner = body[1:-1] if grouped else body
        if negated:
            must_not.extend(_items(inner, query))
        elif grouped or "OR" in inner:
            if should or (
                len(conjuncts) > 1 and any(p and p[0] not in ("NOT", "(") for p in conjuncts)
            ):
                raise ValueError(
                    f"boolean query {query!r}: an OR group can stand beside NOT clauses only; "
                    "write required terms as must/should/must_not lists instead"
                )
            should.extend(_items(inner, query))
        else:
            must.extend(_items(inner, query) if len(inner) == 1 else [t.strip('"') for t in inner])
    if not (must or should):
        raise ValueError(f"boolean query {query!r} needs at least one term that is not NOT")
    return must, should, must_not


def from_original(data: dict[str, Any]) -> dict[str, Any]:
    """The query mapping in rankscope's form, whether written in it or in the original's."""
    out = dict(data)
    judged = out.get("judgments")
    if isinstance(judged, list):
        grades: dict[Any, Any] = {}
        for n, item in enumerate(judged):
            if not isinstance(item, dict) or set(item) != {"doc_id", "grade"}:
                raise ValueError(
                    f"judgments[{n}] is {item!r}; a judgments list holds {{doc_id, grade}} "
                    "mappings (or write judgments: {doc: grade})"
                )
            grades[item["doc_id"]] = item["grade"]
        out["judgments"] = grades
    kind = out.get("kind", "query_string")
    spec = out.get(kind) if isinstance(kind, str) and kind in SPEC_FIELDS else None
    if not isinstance(spec, dict):
        return out
    del out[kind]
    unknown = sorted(str(k) for k in spec if k not in SPEC_FIELDS[kind])
    if unknown:
        raise ValueError(
            f"{kind}: unknown field(s) {', '.join(unknown)}; "
            f"{kind} takes {', '.join(sorted(SPEC_FIELDS[kind]))}"
        )
    if "query" not in spec:
        raise ValueError(f'{kind} needs `query`, e.g. {kind}: {{query: "climate change"}}')
    if "text" in out:
        raise ValueError(f"give the query once: in `text` or in `{kind}.query`, not both")
    out["text"] = spec["query"]
    for key in ("field", "fields", "slop"):
        if key in spec:
            out[key] = spec[key]
    if kind == "boolean" and isinstance(spec["query"], str):
        out["must"], out["should"], out["must_not"] = parse_boolean(spec["query"])
    return out
