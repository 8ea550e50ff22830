"""Simulations on synthetic traffic with a known truth, repeated on the library functions:
A/A tests call a winner at the stated false-positive rate, a true difference is found, by A/B,
by alerts and by interleaving. (The same experiments run end to end through the API in
tests/service/test_service_online_e2e.py.)

Each test runs one setting of bench/online_simulations.py exactly (same universe, pools,
records, repetitions and seeds), the rows docs/service.md quotes, and checks that its row of
bench/ONLINE_SIMULATIONS.md is what it computes: the published figures are these tests' values.
The rates are seeded, so they are pinned exactly; the bounds state the claim each row backs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.testing.online_sim import (
    ArmPool,
    arm_pool,
    repeated_ab,
    repeated_ab_clicks,
    repeated_alerts,
    repeated_interleaving,
)
from rankscope.testing.traffic import Universe

ALPHA = 0.05
TABLES = Path(__file__).parents[2] / "bench" / "ONLINE_SIMULATIONS.md"


def _published(row: str) -> None:
    assert row in TABLES.read_text().splitlines(), f"{row!r} is not in {TABLES}"


@pytest.fixture(scope="module")
def universe() -> Universe:
    return Universe.make(50, 20, seed=3)


@pytest.fixture(scope="module")
def pools(universe: Universe) -> tuple[ArmPool, ArmPool, ArmPool]:
    # two arms with the same engine (A/A) and a worse one (more ranking noise)
    return (
        arm_pool(universe, 1.0, 5000, 1),
        arm_pool(universe, 1.0, 5000, 2),
        arm_pool(universe, 1.3, 5000, 3),
    )


@pytest.mark.parametrize(
    ("paired", "name", "called"),
    [(False, "Welch (unpaired)", 94 / 2000), (True, "paired t (queries in both arms)", 88 / 2000)],
)
def test_aa_calls_a_winner_at_the_stated_rate(
    pools: tuple[ArmPool, ArmPool, ArmPool], paired: bool, name: str, called: float
) -> None:
    a, same, _ = pools
    rates = repeated_ab(a, same, records=200, repetitions=2000, seed=11, paired=paired)
    # 2,000 A/A tests at alpha 0.05: the share calling a winner is 0.05 up to binomial noise
    # (sd 0.0049; the bounds are about 3 sd)
    assert 0.035 <= rates.called <= 0.065, rates
    assert rates.called == called
    _published(f"| A/A, {name} | 200 | 2000 | {rates.called:.4f} | - |")


@pytest.mark.parametrize(
    ("paired", "records", "correct"),
    [(False, 50, 435 / 500), (False, 200, 1.0), (True, 200, 477 / 500)],
)
def test_ab_finds_the_better_arm(
    pools: tuple[ArmPool, ArmPool, ArmPool], paired: bool, records: int, correct: float
) -> None:
    better, _, worse = pools
    assert better.ndcg.mean() - worse.ndcg.mean() > 0.05  # the known true difference
    rates = repeated_ab(
        better,
        worse,
        records=records,
        repetitions=500,
        seed=12,
        paired=paired,
        min_sample=20 if paired else 30,
    )
    assert rates.called == rates.correct == correct  # never the worse arm
    name = "paired t" if paired else "Welch"
    _published(f"| A/B, {name} | {records} | 500 | {rates.called:.4f} | {rates.correct:.4f} |")


def test_alerts_fire_on_a_regression_not_on_noise(
    pools: tuple[ArmPool, ArmPool, ArmPool],
) -> None:
    a, same, worse = pools
    noise = repeated_alerts(a, same, n_baseline=280, n_current=60, repetitions=1000, seed=13)
    drop = repeated_alerts(a, worse, n_baseline=280, n_current=60, repetitions=1000, seed=14)
    assert (noise, drop) == (17 / 1000, 984 / 1000)
    _published(f"| same engine (noise) | 1000 | {noise:.4f} |")
    delta = a.ndcg.mean() - worse.ndcg.mean()
    _published(f"| regression ({delta:+.4f} nDCG@10) | 1000 | {drop:.4f} |")


def test_interleaving_aa_calls_a_winner_at_most_at_alpha(universe: Universe) -> None:
    aa = repeated_interleaving(universe, 1.0, 1.0, impressions=200, repetitions=500, seed=15)
    # the exact sign test is conservative: at most alpha up to binomial noise (sd 0.0097)
    assert aa.called <= ALPHA + 0.03, aa
    assert aa.called == 29 / 500
    _published(f"| interleaving, A/A | 200 | 500 | {aa.called:.4f} | - |")


def test_interleaving_finds_with_400_users_what_ab_on_clicks_finds_with_800(
    universe: Universe,
) -> None:
    found = repeated_interleaving(universe, 1.0, 1.3, impressions=400, repetitions=200, seed=16)
    ab = repeated_ab_clicks(universe, 1.0, 1.3, impressions=800, repetitions=200, seed=17)
    assert found.called == found.correct == 125 / 200  # never the worse arm
    assert ab.called == ab.correct == 135 / 200
    _published(f"| interleaving | 400 | 200 | {found.called:.4f} | {found.correct:.4f} |")
    _published(f"| A/B on clicks | 800 | 200 | {ab.called:.4f} | {ab.correct:.4f} |")
