"""How well each click model's grades agree with the true grades when its assumptions hold and
when they fail, measured out of sample.

Grade thresholds are fitted (:func:`rankscope.online.calibration.fit_grade_thresholds`) on the
logs of one simulated population at some seeds (``TUNING_SEED`` on), then every model is
scored on *other* logs: other seeds of the same population and of populations whose users
behave otherwise or whose engine ranks better (:data:`POPULATIONS`). Thresholds are chosen
among candidates on one set of seeds (``VALIDATION_SEED`` on) and the chosen ones reported on
another (``REPORT_SEED`` on), so the choice does not flatter the reported figures. Each
repetition draws a fresh universe (queries, true grades) and fresh sessions
(:func:`rankscope.testing.traffic.simulate_clicks`); the agreement of one log is the
linear-weighted Cohen's kappa (``rankscope.stats.cohen_kappa``) of the model's grades with the
true grades over the pairs it grades. A cell reports the mean over repetitions with a
percentile bootstrap interval of that mean (``rankscope.stats.bootstrap_interval``) and the
spread of single logs. ``bench/online_simulations.py`` prints the tables; the tests pin them.

Internal (docs/testing.md#what-is-public): it follows the online loop and may change with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rankscope.online.calibration import GradeFit, fit_grade_thresholds
from rankscope.online.clicks import (
    DEFAULT_MIN_IMPRESSIONS,
    MODELS,
    ClickJudgment,
    GradeThresholds,
    Model,
    click_judgments,
)
from rankscope.stats import Interval, bootstrap_interval, cohen_kappa
from rankscope.testing.traffic import SimulatedLog, Universe, UserModel, simulate_clicks


@dataclass(frozen=True)
class Population:
    """Simulated traffic: users of one kind on an engine with ranking ``noise``."""

    name: str
    user: UserModel
    noise: float = 1.5


#: the simulated populations; the first is the traffic of rankscope.testing.traffic.browse
POPULATIONS: tuple[Population, ...] = (
    Population("dbn-0.9", UserModel("dbn-0.9")),
    Population("dbn-0.75", UserModel("dbn-0.75", persistence=0.75)),
    Population("dbn-0.6", UserModel("dbn-0.6", persistence=0.6)),
    Population("pbm", UserModel("pbm", cascade=False)),
    Population("flat", UserModel("flat", attractiveness=(0.1, 0.2, 0.3, 0.4))),
    Population("noisy", UserModel("noisy", click_noise=0.3)),
    Population("good-engine", UserModel("dbn-0.9"), noise=0.75),
)
#: first seed of the repetitions thresholds are fitted on, of those the thresholds are chosen
#: on, and of those the chosen ones are reported on
TUNING_SEED = 0
VALIDATION_SEED = 1000
REPORT_SEED = 2000


@dataclass(frozen=True)
class Setting:
    """One simulated log: ``queries`` Zipf-distributed queries of ``docs`` documents,
    ``sessions`` results pages of the engine's top 10; pairs need ``min_impressions``
    impressions (the DBN: examinations) to be graded."""

    queries: int = 60
    docs: int = 20
    sessions: int = 30_000
    min_impressions: int = DEFAULT_MIN_IMPRESSIONS


def draw(population: Population, setting: Setting, seed: int) -> SimulatedLog:
    """Repetition ``seed``: its own universe and sessions (the same universe for every
    population)."""
    universe = Universe.make(setting.queries, setting.docs, seed=seed)
    return simulate_clicks(
        universe,
        setting.sessions,
        population.user,
        noise=population.noise,
        seed=1_000_000 + seed,
    )


def model_value(judgment: ClickJudgment, model: Model) -> float:
    """The value ``model`` grades a pair by."""
    value = {"ctr": judgment.ctr, "coec": judgment.coec, "dbn": judgment.dbn}[model]
    assert value is not None  # a graded COEC pair had expected clicks
    return value


def labelled_values(
    sim: SimulatedLog, model: Model, setting: Setting
) -> tuple[list[float], list[int]]:
    """The model's values of the pairs it grades, and their true grades."""
    graded = click_judgments(sim.log, model, min_impressions=setting.min_impressions).graded()
    return [model_value(j, model) for j in graded], [sim.truth[(j.query, j.doc)] for j in graded]


def fit(population: Population, model: Model, setting: Setting, seeds: Iterable[int]) -> GradeFit:
    """Thresholds fitted on the pooled graded pairs of the population's logs at ``seeds``."""
    values: list[float] = []
    truth: list[int] = []
    for seed in seeds:
        v, t = labelled_values(draw(population, setting, seed), model, setting)
        values += v
        truth += t
    return fit_grade_thresholds(values, truth)


def rounded(thresholds: GradeThresholds) -> GradeThresholds:
    """Fitted thresholds to two significant digits, as a default ships them."""
    t = thresholds
    return GradeThresholds(*(float(f"{x:.2g}") for x in (t.one, t.two, t.three)))


@dataclass(frozen=True)
class Agreement:
    """One model with one set of thresholds on the repetitions of one population."""

    population: str
    model: Model
    kappas: tuple[float, ...]
    pairs: tuple[int, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.kappas))

    @property
    def sd(self) -> float:
        return float(np.std(self.kappas, ddof=1)) if len(self.kappas) > 1 else 0.0

    def interval(self, resamples: int = 10_000) -> Interval:
        """95% percentile bootstrap interval of the mean over repetitions (seed 0)."""
        return bootstrap_interval(
            self.kappas, 0.95, method="percentile", resamples=resamples, seed=0
        )

    @property
    def mean_pairs(self) -> float:
        return float(np.mean(self.pairs))


def agreements(
    populations: Sequence[Population],
    thresholds: Mapping[str, Mapping[Model, GradeThresholds]],
    setting: Setting,
    seeds: Sequence[int],
) -> dict[tuple[str, str, Model], Agreement]:
    """``{(thresholds name, population, model): Agreement}``: every named set of thresholds,
    every model it has, on the logs of every population at ``seeds`` (each drawn once)."""
    kappas: dict[tuple[str, str, Model], list[float]] = {}
    pairs: dict[tuple[str, str, Model], list[int]] = {}
    for population in populations:
        for seed in seeds:
            sim = draw(population, setting, seed)
            for name, by_model in thresholds.items():
                for model in MODELS:
                    if model not in by_model:
                        continue
                    graded = click_judgments(
                        sim.log,
                        model,
                        thresholds=by_model[model],
                        min_impressions=setting.min_impressions,
                    ).graded()
                    kappa = cohen_kappa(
                        [sim.truth[(j.query, j.doc)] for j in graded],
                        [j.grade or 0 for j in graded],  # graded: never None
                        "linear",
                    )
                    key = (name, population.name, model)
                    kappas.setdefault(key, []).append(float("nan") if kappa is None else kappa)
                    pairs.setdefault(key, []).append(len(graded))
    return {
        key: Agreement(key[1], key[2], tuple(values), tuple(pairs[key]))
        for key, values in kappas.items()
    }


__all__ = [
    "POPULATIONS",
    "REPORT_SEED",
    "TUNING_SEED",
    "VALIDATION_SEED",
    "Agreement",
    "Population",
    "Setting",
    "agreements",
    "draw",
    "fit",
    "labelled_values",
    "model_value",
    "rounded",
]
