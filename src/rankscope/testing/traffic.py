"""Synthetic search traffic with known truth, for the simulations of the online loop.

A :class:`Universe` holds queries (Zipf-distributed frequencies) whose documents carry true
grades 0–3. An *engine* ranks a query's documents by true grade plus Gaussian noise (more noise,
worse engine: the true difference between two arms is known through their noise). A simulated
user browses a ranking as the dynamic Bayesian network click model describes: examines results
from the top, clicks a result with the attractiveness of its grade, is satisfied after a click
with the satisfaction of its grade (and stops), and otherwise goes on with probability
``persistence``. Every draw comes from a seeded ``numpy`` generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: probability of a click on an examined result, by true grade 0..3
ATTRACTIVENESS = (0.05, 0.25, 0.55, 0.85)
#: probability that a click satisfies the user (who then stops), by true grade 0..3
SATISFACTION = (0.05, 0.25, 0.55, 0.85)


@dataclass(frozen=True)
class SimQuery:
    id: str
    text: str
    docs: tuple[str, ...]
    grades: dict[str, int]


@dataclass(frozen=True)
class Click:
    doc: str
    position: int
    dwell: float
    satisfied: bool


@dataclass(frozen=True)
class Universe:
    queries: tuple[SimQuery, ...]
    weights: np.ndarray  # probability of each query being asked

    @classmethod
    def make(
        cls,
        n_queries: int = 50,
        docs_per_query: int = 20,
        *,
        zipf: float = 1.0,
        seed: int = 0,
        grade_probabilities: Sequence[float] = (0.6, 0.2, 0.12, 0.08),
    ) -> Universe:
        rng = np.random.default_rng(seed)
        queries = []
        for i in range(n_queries):
            docs = tuple(f"d{i}-{j}" for j in range(docs_per_query))
            grades = rng.choice(4, size=docs_per_query, p=np.asarray(grade_probabilities))
            queries.append(
                SimQuery(
                    f"q{i}",
                    f"query number {i}",
                    docs,
                    dict(zip(docs, grades.tolist(), strict=True)),
                )
            )
        weights = 1.0 / np.arange(1, n_queries + 1) ** zipf
        return cls(tuple(queries), weights / weights.sum())

    def draw(self, rng: np.random.Generator) -> SimQuery:
        return self.queries[int(rng.choice(len(self.queries), p=self.weights))]


def rank(query: SimQuery, noise: float, rng: np.random.Generator, depth: int = 10) -> list[str]:
    """An engine's ranking: true grade plus N(0, noise) per document, best first."""
    keys = np.asarray([query.grades[d] for d in query.docs], dtype=np.float64)
    keys += rng.normal(0.0, noise, keys.size)
    order = np.argsort(-keys, kind="stable")[:depth]
    return [query.docs[i] for i in order]


def browse(
    ranking: Sequence[str],
    grades: dict[str, int],
    rng: np.random.Generator,
    *,
    persistence: float = 0.9,
    attractiveness: Sequence[float] = ATTRACTIVENESS,
    satisfaction: Sequence[float] = SATISFACTION,
) -> list[Click]:
    """The clicks of one simulated user on ``ranking`` (positions from 1)."""
    clicks = []
    for position, doc in enumerate(ranking, start=1):
        grade = grades.get(doc, 0)
        if rng.random() < attractiveness[grade]:
            satisfied = bool(rng.random() < satisfaction[grade])
            dwell = float(rng.uniform(40, 120) if satisfied else rng.uniform(2, 20))
            clicks.append(Click(doc, position, dwell, satisfied))
            if satisfied:
                break
        if rng.random() >= persistence:
            break
    return clicks


__all__ = ["ATTRACTIVENESS", "SATISFACTION", "Click", "SimQuery", "Universe", "browse", "rank"]
