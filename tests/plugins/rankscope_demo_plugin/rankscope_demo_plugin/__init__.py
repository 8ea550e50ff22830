"""A rankscope plugin: the ``demo_overlap`` engine (documents ranked by the query terms they
share) and the ``demo_top1`` measure (1 when the first document is relevant)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

from rankscope.engines import Document, Engine, Hit, Query, QueryKind
from rankscope.measures import RankedQuery, register


def _terms(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class OverlapEngine(Engine):
    """Ranks documents by how many distinct query terms they contain (times ``boost``)."""

    name = "demo_overlap"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})

    def __init__(self, boost: float = 1.0) -> None:
        self.boost = boost
        self.docs: list[tuple[str, set[str]]] = []

    def index(self, docs: Iterable[Document]) -> None:
        self.docs = [(d.id, _terms(f"{d.title} {d.text}")) for d in docs]

    def _search(self, query: Query, k: int) -> list[Hit]:
        terms = _terms(query.text)
        scored = [(doc, len(terms & words) * self.boost) for doc, words in self.docs]
        scored = [(doc, s) for doc, s in scored if s > 0]
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return [Hit(doc, float(s)) for doc, s in scored[:k]]


def top1(q: RankedQuery) -> float:
    return 1.0 if q.relevant[:1] == (True,) else 0.0


def register_measures() -> None:
    register("demo_top1", top1, description="1 when the first document is relevant", cutoff=False)
