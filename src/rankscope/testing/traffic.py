"""Synthetic search traffic with known truth, for the simulations of the online loop.

A :class:`Universe` holds queries (Zipf-distributed frequencies) whose documents carry true
grades 0–3. An *engine* ranks a query's documents by true grade plus Gaussian noise (more noise,
worse engine: the true difference between two arms is known through their noise). A simulated
user browses a ranking as the dynamic Bayesian network click model describes: examines results
from the top, clicks a result with the attractiveness of its grade, is satisfied after a click
with the satisfaction of its grade (and stops), and otherwise goes on with probability
``persistence``. Every draw comes from a seeded ``numpy`` generator.

:func:`simulate_clicks` draws many sessions at once (numpy arrays, straight into a
:class:`rankscope.online.clicks.ClickLog`) under a :class:`UserModel`: the cascade/DBN user
above at any persistence, a position-based user who examines each position with a fixed
probability and never stops early, other attractiveness tables, and noisy clicks. The click
models' agreement with the true grades is measured on such logs
(:mod:`rankscope.testing.click_study`).

Internal (docs/testing.md#what-is-public): it follows the online loop and may change with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rankscope.online.clicks import ClickLog

#: probability of a click on an examined result, by true grade 0..3
ATTRACTIVENESS = (0.05, 0.25, 0.55, 0.85)
#: probability that a click satisfies the user (who then stops), by true grade 0..3
SATISFACTION = (0.05, 0.25, 0.55, 0.85)
#: probability that a position-based user examines positions 1, 2, ... (deeper: the last)
PBM_EXAMINATION = (1.0, 0.7, 0.55, 0.45, 0.38, 0.32, 0.27, 0.23, 0.2, 0.18)


@dataclass(frozen=True)
class SimQuery:
    """A simulated query: its documents and their true grades (0-3)."""

    id: str
    text: str
    docs: tuple[str, ...]
    grades: dict[str, int]


@dataclass(frozen=True)
class Click:
    """A simulated click: the document, its position, the dwell time, whether it satisfied."""

    doc: str
    position: int
    dwell: float
    satisfied: bool


@dataclass(frozen=True)
class Universe:
    """The simulated queries and how often each is asked (Zipf-distributed weights)."""

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


@dataclass(frozen=True)
class UserModel:
    """How simulated users examine and click a ranking.

    ``cascade`` (the DBN user of :func:`browse`): examine from the top; click an examined
    result with its grade's click probability; after a click, be satisfied with the grade's
    ``satisfaction`` and stop; otherwise go on with probability ``persistence``. Without
    ``cascade`` (the position-based model): examine position p with probability
    ``examination[p - 1]`` whatever happened above, click with the grade's click probability,
    never stop early (satisfaction then only sets the dwell time). ``click_noise`` e: each
    decision is a coin flip with probability e, so the click and satisfaction probabilities
    become ``(1 - e) * p + e / 2``. Dwell: 40-120 s after a satisfying click, 2-20 s otherwise.
    """

    name: str
    cascade: bool = True
    persistence: float = 0.9
    examination: tuple[float, ...] = PBM_EXAMINATION
    attractiveness: tuple[float, ...] = ATTRACTIVENESS
    satisfaction: tuple[float, ...] = SATISFACTION
    click_noise: float = 0.0

    def probabilities(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Click and satisfaction probability by grade 0..3, noise included."""
        e = self.click_noise
        click = (1 - e) * np.asarray(self.attractiveness, dtype=np.float64) + e / 2
        satisfied = (1 - e) * np.asarray(self.satisfaction, dtype=np.float64) + e / 2
        return click, satisfied


#: the user of :func:`browse` with its defaults
DBN_USER = UserModel("dbn-0.9")


@dataclass(frozen=True)
class SimulatedLog:
    """A click log drawn by :func:`simulate_clicks` and the true grade of every pair of its
    universe, keyed as the log's pairs are: (query text, document)."""

    log: ClickLog
    truth: dict[tuple[str, str], int]


def simulate_clicks(
    universe: Universe,
    sessions: int,
    user: UserModel = DBN_USER,
    *,
    noise: float = 1.5,
    depth: int = 10,
    seed: int = 0,
) -> SimulatedLog:
    """``sessions`` results pages: a query drawn by frequency, ranked by :func:`rank`'s engine
    (true grade plus N(0, ``noise``), top ``depth`` shown), browsed by ``user``; all sessions
    at once in numpy arrays (the same process as :func:`rank` and :func:`browse`, another
    order of draws)."""
    rng = np.random.default_rng(seed)
    n_docs = len(universe.queries[0].docs)
    depth = min(depth, n_docs)
    grades = np.asarray([[q.grades[d] for d in q.docs] for q in universe.queries], dtype=np.int64)
    query = rng.choice(len(universe.queries), size=sessions, p=universe.weights)
    keys = grades[query] + rng.normal(0.0, noise, (sessions, n_docs))
    order = np.argsort(-keys, axis=1, kind="stable")[:, :depth]
    shown = np.take_along_axis(grades[query], order, axis=1)
    click_p, satisfied_p = user.probabilities()
    draws = rng.random((sessions, depth, 4))
    clicked = np.zeros((sessions, depth), dtype=np.bool_)
    dwell = np.full((sessions, depth), np.nan)
    browsing = np.ones(sessions, dtype=np.bool_)
    for p in range(depth):
        g = shown[:, p]
        u = draws[:, p, :]
        if user.cascade:
            examined = browsing
        else:
            examined = u[:, 3] < user.examination[min(p, len(user.examination) - 1)]
        click = examined & (u[:, 0] < click_p[g])
        satisfied = click & (u[:, 1] < satisfied_p[g])
        clicked[:, p] = click
        dwell[click, p] = np.where(satisfied[click], 40 + 80 * u[click, 2], 2 + 18 * u[click, 2])
        if user.cascade:
            browsing = browsing & ~satisfied & (u[:, 3] < user.persistence)
    texts = tuple(q.text for q in universe.queries)
    docs = tuple(d for q in universe.queries for d in q.docs)
    log = ClickLog(
        session=np.repeat(np.arange(sessions, dtype=np.int64), depth),
        query=np.repeat(query.astype(np.int64), depth),
        doc=(query[:, None] * n_docs + order).astype(np.int64).ravel(),
        position=np.tile(np.arange(1, depth + 1, dtype=np.int64), sessions),
        clicked=clicked.ravel(),
        dwell=dwell.ravel(),
        sessions=tuple(f"s{i}" for i in range(sessions)),
        queries=texts,
        docs=docs,
    )
    truth = {(q.text, d): g for q in universe.queries for d, g in q.grades.items()}
    return SimulatedLog(log, truth)


__all__ = [
    "ATTRACTIVENESS",
    "DBN_USER",
    "PBM_EXAMINATION",
    "SATISFACTION",
    "Click",
    "SimQuery",
    "SimulatedLog",
    "Universe",
    "UserModel",
    "browse",
    "rank",
    "simulate_clicks",
]
