"""Repeated simulations of online experiments on synthetic traffic with a known truth
(:mod:`rankscope.testing.traffic`): A/B comparisons and interleaving experiments, run on the
library functions (``rankscope.online``), seeded. The tests assert on them; ``bench/online_
simulations.py`` prints them.

An arm is an engine with a ranking noise (:func:`rankscope.testing.traffic.rank`): equal noise
is an A/A test (no true difference), lower noise a truly better arm. Per-record nDCG@10 comes
from ``rankscope.evaluate`` against the true grades, or against noisier labels
(:class:`Labels`): click grades (:func:`click_labels`, the service's ``judgments=clicks``) or
the score-threshold heuristic of records without judgments (:class:`ScoreLabels`).

A rate over repetitions (:class:`Rate`) carries its count and a 95% Wilson interval
(``scipy.stats.binomtest(...).proportion_ci``, as the service's rates): 200 repetitions leave
a standard error of up to 0.035.

Internal (docs/testing.md#what-is-public): it follows the online loop and may change with it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from rankscope.collect.interleave import credit, team_draft
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.metrics.evaluate import evaluate
from rankscope.online.ab import compare_arms, compare_arms_paired
from rankscope.online.clicks import Model, click_judgments
from rankscope.online.interleaving import InterleavingSummary, summarise
from rankscope.stats import Interval
from rankscope.testing.traffic import (
    DBN_USER,
    SimQuery,
    Universe,
    UserModel,
    browse,
    rank,
    simulate_clicks,
)


@dataclass(frozen=True)
class ArmPool:
    """Many simulated records of one arm: the query of each and its nDCG@10."""

    queries: tuple[str, ...]
    ndcg: NDArray[np.float64]

    def by_query(self, records: NDArray[np.int64]) -> dict[str, list[float]]:
        """The values of the drawn ``records`` grouped by their query."""
        out: dict[str, list[float]] = {}
        for i in records.tolist():
            out.setdefault(self.queries[i], []).append(float(self.ndcg[i]))
        return out


class Labels(Protocol):
    """The judgments a record is scored against: ``{doc: grade}`` for one shown ranking."""

    def __call__(
        self, query: SimQuery, ranking: Sequence[str], rng: np.random.Generator
    ) -> dict[str, int]: ...


@dataclass(frozen=True)
class FixedLabels:
    """The same grades for every record of a query (by query text), e.g. click grades; a
    shown document without one counts as not relevant (grade 0)."""

    grades: Mapping[str, Mapping[str, int]]

    def __call__(
        self, query: SimQuery, ranking: Sequence[str], rng: np.random.Generator
    ) -> dict[str, int]:
        return {d: 0 for d in ranking} | dict(self.grades.get(query.text, {}))


@dataclass(frozen=True)
class ScoreLabels:
    """The heuristic of records without judgments: a shown document is relevant (grade 1)
    when its score reaches ``threshold``; the score follows the true grade loosely, drawn
    afresh for every record: ``0.35 + 0.15 * grade + N(0, sd)``. Documents not shown are
    unknown (the ideal ranking has only the shown ones)."""

    sd: float = 0.1
    threshold: float = 0.5

    def __call__(
        self, query: SimQuery, ranking: Sequence[str], rng: np.random.Generator
    ) -> dict[str, int]:
        grades = np.asarray([query.grades[d] for d in ranking], dtype=np.float64)
        scores = 0.35 + 0.15 * grades + rng.normal(0.0, self.sd, grades.size)
        return {d: int(s >= self.threshold) for d, s in zip(ranking, scores, strict=True)}


def click_labels(
    universe: Universe,
    sessions: int,
    *,
    model: Model = "dbn",
    user: UserModel = DBN_USER,
    noise: float = 1.5,
    seed: int = 0,
) -> FixedLabels:
    """The click grades (default thresholds, ``model``) of a log of ``sessions`` simulated
    sessions on ``universe`` (an engine with ranking ``noise``, browsed by ``user``)."""
    sim = simulate_clicks(universe, sessions, user, noise=noise, seed=seed)
    return FixedLabels(click_judgments(sim.log, model).qrels_dict())


def arm_pool(
    universe: Universe,
    noise: float,
    n: int,
    seed: int,
    depth: int = 10,
    labels: Labels | None = None,
) -> ArmPool:
    """``n`` records of an arm with ranking ``noise``, scored in one ``evaluate()`` call
    against the true grades, or against ``labels`` (drawn from their own generator, so the
    same ``seed`` gives the same rankings whatever the labels)."""
    rng = np.random.default_rng(seed)
    label_rng = np.random.default_rng((seed, 1))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    queries = []
    for i in range(n):
        q = universe.draw(rng)
        key = f"r{i}"
        queries.append(q.id)
        ranking = rank(q, noise, rng, depth)
        qrels[key] = dict(q.grades) if labels is None else labels(q, ranking, label_rng)
        run[key] = {d: float(depth - j) for j, d in enumerate(ranking)}
    result = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="arm"), ["ndcg@10"])
    per = result.per_query()
    return ArmPool(tuple(queries), np.asarray([per[f"r{i}"]["ndcg@10"] for i in range(n)]))


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``trials`` repetitions, with the 95% Wilson interval."""

    hits: int
    trials: int

    @property
    def value(self) -> float:
        return self.hits / self.trials

    def interval(self, level: float = 0.95) -> Interval:
        from scipy.stats import binomtest

        ci = binomtest(self.hits, self.trials).proportion_ci(level, method="wilson")
        return Interval(float(ci.low), float(ci.high), level, "wilson")

    def text(self) -> str:
        """``0.87 [0.84, 0.90]``: two decimals, as many as the repetitions support."""
        ci = self.interval()
        return f"{self.value:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


@dataclass(frozen=True)
class Rates:
    """Over repeated experiments: how often one named a winner, and how often the right one."""

    repetitions: int
    called: Rate  # repetitions naming any winner
    correct: Rate  # repetitions naming the truly better arm ("a")

    @classmethod
    def of(cls, verdicts: Sequence[str]) -> Rates:
        """The rates of one verdict per repetition ("a" is the truly better arm)."""
        n = len(verdicts)
        called = sum(v in ("a", "b") for v in verdicts)
        return cls(n, Rate(called, n), Rate(sum(v == "a" for v in verdicts), n))


def repeated_ab(
    a: ArmPool,
    b: ArmPool,
    *,
    records: int,
    repetitions: int,
    seed: int,
    alpha: float = 0.05,
    paired: bool = False,
    min_sample: int = 30,
) -> Rates:
    """Draw ``records`` records per arm from the pools, ``repetitions`` times; how often a
    winner is called (unpaired Welch, or paired over the queries in both arms)."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for _ in range(repetitions):
        ia = rng.integers(0, a.ndcg.size, records)
        ib = rng.integers(0, b.ndcg.size, records)
        if paired:
            by_a, by_b = a.by_query(ia), b.by_query(ib)
            result = compare_arms_paired({"ndcg": (by_a, by_b)}, alpha=alpha, min_sample=min_sample)
        else:
            result = compare_arms(
                {"ndcg": (a.ndcg[ia].tolist(), b.ndcg[ib].tolist())},
                alpha=alpha,
                min_sample=min_sample,
                bootstrap=0,
            )
        verdicts.append(result.measures[0].verdict)
    return Rates.of(verdicts)


def repeated_ab_clicks(
    universe: Universe,
    noise_a: float,
    noise_b: float,
    *,
    impressions: int,
    repetitions: int,
    seed: int,
    alpha: float = 0.05,
) -> Rates:
    """A/B on clicks alone, for comparison with interleaving on the same number of users:
    ``impressions`` split evenly between the arms, each scored by the reciprocal rank of its
    first click (0 without a click), Welch's test."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for _ in range(repetitions):
        values: list[list[float]] = [[], []]
        for i in range(impressions):
            side = i % 2
            q = universe.draw(rng)
            clicks = browse(rank(q, (noise_a, noise_b)[side], rng), q.grades, rng)
            values[side].append(1.0 / clicks[0].position if clicks else 0.0)
        result = compare_arms({"click_rr": (values[0], values[1])}, alpha=alpha, bootstrap=0)
        verdicts.append(result.measures[0].verdict)
    return Rates.of(verdicts)


def repeated_alerts(
    baseline: ArmPool,
    current: ArmPool,
    *,
    n_baseline: int,
    n_current: int,
    repetitions: int,
    seed: int,
    min_n: int = 30,
    min_delta: float = 0.02,
) -> Rate:
    """Repetitions in which :func:`rankscope.online.alerts.window_change` flags a regression
    of ``current`` against ``baseline`` (paired over queries when it can)."""
    from rankscope.online.alerts import window_change

    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(repetitions):
        ib = rng.integers(0, baseline.ndcg.size, n_baseline)
        ic = rng.integers(0, current.ndcg.size, n_current)
        change = window_change(
            current.ndcg[ic].tolist(),
            baseline.ndcg[ib].tolist(),
            current_by_query=current.by_query(ic),
            baseline_by_query=baseline.by_query(ib),
            min_n=min_n,
            min_delta=min_delta,
        )
        fired += change.regression
    return Rate(fired, repetitions)


def interleaving_run(
    universe: Universe,
    noise_a: float,
    noise_b: float,
    impressions: int,
    rng: np.random.Generator,
) -> InterleavingSummary:
    """One interleaving experiment: each impression merges the two arms' rankings by team
    draft, a simulated user clicks, the clicks are credited."""
    coin = random.Random(int(rng.integers(0, 2**31)))
    credits = []
    for _ in range(impressions):
        q = universe.draw(rng)
        merged = team_draft(rank(q, noise_a, rng), rank(q, noise_b, rng), length=10, rng=coin)
        clicks = browse(merged.ranking, q.grades, rng)
        c = credit(merged, [k.doc for k in clicks])
        credits.append((c.a, c.b))
    return summarise(credits, names=("a", "b"))


def repeated_interleaving(
    universe: Universe,
    noise_a: float,
    noise_b: float,
    *,
    impressions: int,
    repetitions: int,
    seed: int,
) -> Rates:
    """How often ``repetitions`` interleaving experiments of ``impressions`` each name a winner
    between arms of ranking noise ``noise_a`` and ``noise_b``, and how often arm a."""
    rng = np.random.default_rng(seed)
    return Rates.of(
        [
            interleaving_run(universe, noise_a, noise_b, impressions, rng).verdict
            for _ in range(repetitions)
        ]
    )


__all__ = [
    "ArmPool",
    "FixedLabels",
    "Labels",
    "Rate",
    "Rates",
    "ScoreLabels",
    "arm_pool",
    "click_labels",
    "interleaving_run",
    "repeated_ab",
    "repeated_ab_clicks",
    "repeated_alerts",
    "repeated_interleaving",
]
