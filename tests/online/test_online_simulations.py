"""Simulations on synthetic traffic with a known truth, repeated on the library functions.

The figures of bench/ONLINE_SIMULATIONS.md ("A/B power and regression alerts over effect
sizes", "Interleaving against A/B on clicks") and of docs/service.md ("Simulations") are
recomputed here in the same setting (universe, pools, seeds, repetitions) and pinned exactly:
a change to the simulator, the tests or the statistics that moves a published figure fails
here. (The same experiments run end to end through the API in
tests/service/test_service_online_e2e.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from rankscope.testing.online_sim import (
    ArmPool,
    FixedLabels,
    Rate,
    Rates,
    ScoreLabels,
    arm_pool,
    click_labels,
    repeated_ab,
    repeated_ab_clicks,
    repeated_alerts,
    repeated_interleaving,
)
from rankscope.testing.traffic import Universe

#: the bench's setting: arm b's ranking noise -> its pool's seed; 500 repetitions per rate
EFFECT_SEEDS = {1.0: 2, 1.05: 3, 1.1: 4, 1.15: 5, 1.2: 6, 1.25: 7, 1.3: 8}
REPETITIONS = 500


@pytest.fixture(scope="module")
def universe() -> Universe:
    return Universe.make(50, 20, seed=3)


@pytest.fixture(scope="module")
def pools(universe: Universe) -> dict[float, ArmPool]:
    """Arm a (key 0.0: noise 1.0, seed 1) and arm b at the noises the docs quote."""
    out = {0.0: arm_pool(universe, 1.0, 5000, 1)}
    for noise in (1.0, 1.05, 1.1, 1.15, 1.3):
        out[noise] = arm_pool(universe, noise, 5000, EFFECT_SEEDS[noise])
    return out


def test_rates_carry_wilson_intervals() -> None:
    half = Rate(100, 200)
    ci = binomtest(100, 200).proportion_ci(0.95, method="wilson")
    assert (half.value, half.interval().low, half.interval().high) == (0.5, ci.low, ci.high)
    assert half.interval().method == "wilson"
    assert half.text() == "0.50 [0.43, 0.57]"
    assert Rate(0, 200).text() == "0.00 [0.00, 0.02]"
    assert Rate(200, 200).text() == "1.00 [0.98, 1.00]"
    rates = Rates.of(["a", "b", "no_difference", "insufficient_data"])
    assert (rates.called.hits, rates.correct.hits, rates.repetitions) == (2, 1, 4)


def test_labels_a_record_is_scored_against() -> None:
    universe = Universe.make(3, 6, seed=0)
    q = universe.queries[1]
    assert q.grades == {"d1-0": 1, "d1-1": 1, "d1-2": 0, "d1-3": 3, "d1-4": 2, "d1-5": 0}
    # scores 0.35 + 0.15 grade + N(0, 0.1) against 0.5, with this generator's normals
    noise = np.random.default_rng(0).normal(0.0, 0.1, 6)
    assert np.round(noise, 4).tolist() == [0.0126, -0.0132, 0.064, 0.0105, -0.0536, 0.0362]
    labels = ScoreLabels(0.1, 0.5)(q, list(q.docs), np.random.default_rng(0))
    assert labels == {"d1-0": 1, "d1-1": 0, "d1-2": 0, "d1-3": 1, "d1-4": 1, "d1-5": 0}
    # fixed grades by query text; a shown document without one is 0
    fixed = FixedLabels({q.text: {"d1-3": 3}})
    assert fixed(q, ["d1-3", "d1-0"], np.random.default_rng(0)) == {"d1-3": 3, "d1-0": 0}
    assert fixed(universe.queries[0], ["d0-1"], np.random.default_rng(0)) == {"d0-1": 0}
    # click grades of 60 sessions: the pairs examined ten times, by the default DBN grades
    assert click_labels(universe, 60, seed=1).grades == {
        "query number 0": {"d0-0": 2, "d0-1": 1, "d0-2": 0, "d0-3": 0, "d0-4": 2, "d0-5": 2},
        "query number 2": {"d2-4": 2},
    }


def test_labels_change_the_scores_not_the_rankings() -> None:
    universe = Universe.make(10, 20, seed=3)
    truth = arm_pool(universe, 1.0, 300, 1)
    grades = FixedLabels({q.text: q.grades for q in universe.queries})
    same = arm_pool(universe, 1.0, 300, 1, labels=grades)
    assert same.queries == truth.queries and same.ndcg.tolist() == truth.ndcg.tolist()
    heuristic = arm_pool(universe, 1.0, 300, 1, labels=ScoreLabels())
    assert heuristic.queries == truth.queries
    assert heuristic.ndcg.tolist() != truth.ndcg.tolist()


def test_aa_calls_a_winner_at_the_stated_rate(pools: dict[float, ArmPool]) -> None:
    """The A/A row (arm b noise 1.00, true grades): Welch 200 per arm 0.04 [0.02, 0.06],
    paired t 0.04 [0.03, 0.06], alert 0.02 [0.01, 0.04] of 500 repetitions; each Wilson
    interval holds alpha 0.05 (the alert, which needs an effect of 0.02 too, stays below)."""
    a, same = pools[0.0], pools[1.0]
    welch = repeated_ab(a, same, records=200, repetitions=REPETITIONS, seed=12)
    paired = repeated_ab(
        a, same, records=200, repetitions=REPETITIONS, seed=12, paired=True, min_sample=20
    )
    alert = repeated_alerts(a, same, n_baseline=280, n_current=60, repetitions=REPETITIONS, seed=13)
    assert (welch.called.hits, paired.called.hits, alert.hits) == (19, 20, 10)
    assert (welch.called.text(), paired.called.text(), alert.text()) == (
        "0.04 [0.02, 0.06]",
        "0.04 [0.03, 0.06]",
        "0.02 [0.01, 0.04]",
    )
    assert welch.called.interval().contains(0.05) and paired.called.interval().contains(0.05)
    assert alert.interval().high < 0.05


@pytest.mark.parametrize(
    ("noise", "delta", "welch_200", "alert"),
    [
        (1.05, "+0.0135", 116, 58),
        (1.1, "+0.0223", 278, 141),
        (1.15, "+0.0340", 445, 288),
        (1.3, "+0.0701", 500, 497),
    ],
)
def test_power_and_alert_rate_over_effect_sizes(
    pools: dict[float, ArmPool], noise: float, delta: str, welch_200: int, alert: int
) -> None:
    """Rows of the true-grades table: Δ, Welch power at 200 records per arm (0.23, 0.56,
    0.89, 1.00) and the alert rate (0.12, 0.28, 0.58, 0.99), of 500 repetitions."""
    a, b = pools[0.0], pools[noise]
    assert f"{a.ndcg.mean() - b.ndcg.mean():+.4f}" == delta
    rates = repeated_ab(a, b, records=200, repetitions=REPETITIONS, seed=12)
    assert rates.correct.hits == rates.called.hits == welch_200  # never the worse arm
    fired = repeated_alerts(a, b, n_baseline=280, n_current=60, repetitions=REPETITIONS, seed=13)
    assert fired.hits == alert


def test_small_samples_and_noisy_labels_lose_power(
    universe: Universe, pools: dict[float, ArmPool]
) -> None:
    """Arm b noise 1.30 (Δ +0.0701): Welch with 50 records per arm names arm a in 0.89 of
    the repetitions on the true grades and 0.87 on DBN click grades (Δ +0.0717 there); the
    score-threshold heuristic halves Δ (+0.0382) and Welch with 200 records per arm names
    arm a in 0.90, where the true grades give 1.00."""
    a, b = pools[0.0], pools[1.3]
    assert repeated_ab(a, b, records=50, repetitions=REPETITIONS, seed=12).correct.hits == 446
    clicks = click_labels(universe, 30_000, seed=5)
    ca = arm_pool(universe, 1.0, 5000, 1, labels=clicks)
    cb = arm_pool(universe, 1.3, 5000, 8, labels=clicks)
    assert f"{ca.ndcg.mean() - cb.ndcg.mean():+.4f}" == "+0.0717"
    assert repeated_ab(ca, cb, records=50, repetitions=REPETITIONS, seed=12).correct.hits == 434
    heuristic = ScoreLabels(0.1, 0.5)
    ha = arm_pool(universe, 1.0, 5000, 1, labels=heuristic)
    hb = arm_pool(universe, 1.3, 5000, 8, labels=heuristic)
    assert f"{ha.ndcg.mean() - hb.ndcg.mean():+.4f}" == "+0.0382"
    assert repeated_ab(ha, hb, records=200, repetitions=REPETITIONS, seed=12).correct.hits == 449


def test_interleaving_aa_and_detection(universe: Universe) -> None:
    """The interleaving table: A/A with 200 users called a winner in 0.06 [0.04, 0.08] of 500
    repetitions; with arms 1.0 and 1.3 interleaving named the better arm with 400 users in
    0.62 [0.56, 0.69] of 200, about as often as an A/B test on the clicks of 800 users, 0.68
    [0.61, 0.74]; neither ever named the worse arm."""
    aa = repeated_interleaving(universe, 1.0, 1.0, impressions=200, repetitions=500, seed=15)
    assert aa.called.hits == 29 and aa.called.text() == "0.06 [0.04, 0.08]"
    found = repeated_interleaving(universe, 1.0, 1.3, impressions=400, repetitions=200, seed=16)
    assert found.correct.hits == found.called.hits == 125
    ab = repeated_ab_clicks(universe, 1.0, 1.3, impressions=800, repetitions=200, seed=17)
    assert ab.correct.hits == ab.called.hits == 135
