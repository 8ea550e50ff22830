"""Stratified sampling of collected queries for LLM (or human) judging, within a budget.

Each collected query (normalised text) falls in exactly one stratum, checked in this order:

- ``zero_result``: every search of it returned nothing;
- ``zero_click``: its results were shown (impressions) and never clicked;
- ``head``, ``torso``, ``tail``: the others by frequency: sorted from most to least frequent,
  a query is *head* while the searches of the queries before it make up less than a third of
  the traffic, *torso* below two thirds, *tail* after that (the classic thirds of traffic).

The budget counts (query, document) pairs, what a judge is paid for. Strata take turns
(zero-result, zero-click, head, torso, tail): in each round every stratum that still has
queries draws one at random (seeded) and adds its first
``depth`` documents (best shown position first) while the budget lasts, so each stratum gets a
like share whatever its size. A zero-result query that never retrieved anything has no pair to
judge: it is listed (so a person can look at it) and costs nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rankscope.errors import InputError

Stratum = Literal["zero_result", "zero_click", "head", "torso", "tail"]
#: the order in which strata take turns (the failure strata first)
STRATA: tuple[Stratum, ...] = ("zero_result", "zero_click", "head", "torso", "tail")


@dataclass(frozen=True)
class ShownDocument:
    doc: str
    position: int  # best position it was shown at
    name: str | None = None
    source: str = "collected"  # the arm (or "collected") that showed it


@dataclass(frozen=True)
class CollectedQuery:
    key: str
    text: str
    frequency: int
    impressions: int = 0
    clicks: int = 0
    zero_result: bool = False
    documents: tuple[ShownDocument, ...] = ()


@dataclass(frozen=True)
class SampledQuery:
    query: CollectedQuery
    stratum: Stratum
    documents: tuple[ShownDocument, ...]


@dataclass(frozen=True)
class StratumCount:
    population: int
    sampled: int
    pairs: int


@dataclass(frozen=True)
class Sample:
    queries: tuple[SampledQuery, ...]
    budget: int
    depth: int
    seed: int
    strata: dict[Stratum, StratumCount] = field(default_factory=dict)

    @property
    def pairs(self) -> int:
        return sum(len(q.documents) for q in self.queries)


def stratify(queries: Sequence[CollectedQuery]) -> dict[str, Stratum]:
    """The stratum of each query key."""
    out: dict[str, Stratum] = {}
    rest = []
    for q in queries:
        if q.zero_result:
            out[q.key] = "zero_result"
        elif q.impressions > 0 and q.clicks == 0:
            out[q.key] = "zero_click"
        else:
            rest.append(q)
    total = sum(q.frequency for q in rest)
    before = 0
    for q in sorted(rest, key=lambda q: (-q.frequency, q.key)):
        share = before / total if total else 0.0
        out[q.key] = "head" if share < 1 / 3 else "torso" if share < 2 / 3 else "tail"
        before += q.frequency
    return out


def sample_for_judging(
    queries: Sequence[CollectedQuery], budget: int, *, depth: int = 10, seed: int = 0
) -> Sample:
    """Up to ``budget`` (query, document) pairs, strata taking turns (see the module)."""
    if budget < 1:
        raise InputError("the judging budget must be at least 1 pair", value=budget)
    if depth < 1:
        raise InputError("the depth must be at least 1 document per query", value=depth)
    strata = stratify(queries)
    rng = random.Random(seed)
    queues: dict[Stratum, list[CollectedQuery]] = {s: [] for s in STRATA}
    for q in sorted(queries, key=lambda q: q.key):
        queues[strata[q.key]].append(q)
    for s in STRATA:
        rng.shuffle(queues[s])
    population = {s: len(queues[s]) for s in STRATA}
    chosen: list[SampledQuery] = []
    left = budget
    while left > 0 and any(queues.values()):
        for s in STRATA:
            if not queues[s]:
                continue
            q = queues[s].pop()
            docs = tuple(sorted(q.documents, key=lambda d: (d.position, d.doc)))[:depth]
            if len(docs) > left:
                docs = docs[:left]
            if not docs and q.documents:
                break  # nothing left of the budget
            chosen.append(SampledQuery(q, s, docs))
            left -= len(docs)
            if left <= 0:
                break
    counts = {
        s: StratumCount(
            population[s],
            sum(1 for c in chosen if c.stratum == s),
            sum(len(c.documents) for c in chosen if c.stratum == s),
        )
        for s in STRATA
    }
    return Sample(tuple(chosen), budget, depth, seed, counts)


__all__ = [
    "STRATA",
    "CollectedQuery",
    "Sample",
    "SampledQuery",
    "ShownDocument",
    "Stratum",
    "StratumCount",
    "sample_for_judging",
    "stratify",
]
