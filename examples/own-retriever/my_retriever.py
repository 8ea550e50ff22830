"""Two retrievers written the way rankscope calls them (docs/own-retriever.md).

``search`` is a function: rankscope calls ``index(documents)`` once, then ``search(query, k)``
for every query. ``TfIdf`` is the same retriever as a class: rankscope creates it with no
arguments, calls its ``index`` method once and its ``search`` method for every query. Both
return a list of ``(doc_id, score)`` pairs; rankscope sorts them by score and keeps ``k``.
"""

from __future__ import annotations

import math
import re
from collections import Counter


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class TfIdf:
    """TF-IDF over title and text: enough to have something to compare with BM25."""

    def __init__(self) -> None:
        self.docs: dict[str, Counter[str]] = {}
        self.idf: dict[str, float] = {}

    def index(self, documents: list) -> None:  # rankscope Document: .id, .title, .text
        self.docs = {d.id: Counter(tokens(f"{d.title} {d.text}")) for d in documents}
        df = Counter(term for counts in self.docs.values() for term in counts)
        n = len(self.docs)
        self.idf = {term: math.log((n + 1) / (f + 0.5)) for term, f in df.items()}

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        terms = set(tokens(query))
        scores = []
        for doc_id, counts in self.docs.items():
            score = sum((1 + math.log(counts[t])) * self.idf[t] for t in terms if counts[t])
            if score > 0:
                scores.append((doc_id, score))
        scores.sort(key=lambda pair: -pair[1])
        return scores[:k]


_RETRIEVER = TfIdf()


def index(documents: list) -> None:
    """Called once with every document before the first query."""
    _RETRIEVER.index(documents)


def search(query: str, k: int) -> list[tuple[str, float]]:
    """Called for every query: the query's text and how many hits to return."""
    return _RETRIEVER.search(query, k)
