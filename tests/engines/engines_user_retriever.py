"""A user's retriever, as the python engine imports it: term-overlap scoring over indexed docs."""

from __future__ import annotations

import re
from collections import Counter

from rankscope.engines import Document, Query

_DOCS: list[Document] = []


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def index(docs: list[Document]) -> None:
    _DOCS[:] = docs


def _rank(terms: list[str], field: str | None, k: int) -> list[tuple[str, float]]:
    scored = []
    for d in _DOCS:
        text = d.get(field) if field else f"{d.title} {d.text}"
        counts = Counter(_tokens(text))
        score = sum(counts[t] for t in set(terms)) / (1 + len(counts))
        if score > 0:
            scored.append((d.id, score))
    scored.sort(key=lambda ds: -ds[1])
    return scored[:k]


def search(text: str, k: int) -> list[tuple[str, float]]:
    return _rank(_tokens(text), None, k)


def search_query(query: Query, k: int) -> list[dict[str, object]]:
    return [{"id": d, "score": s} for d, s in _rank(_tokens(query.text), query.field, k)]
