"""Simulations on synthetic traffic with a known truth, repeated on the library functions:
A/A tests call a winner at the stated false-positive rate, a true difference is found, by A/B
and by interleaving. (The same experiments run end to end through the API in
tests/service/test_service_online_e2e.py.)"""

from __future__ import annotations

import pytest

from rankscope.testing.online_sim import (
    ArmPool,
    arm_pool,
    repeated_ab,
    repeated_interleaving,
)
from rankscope.testing.traffic import Universe

ALPHA = 0.05


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


@pytest.mark.parametrize("paired", [False, True])
def test_aa_calls_a_winner_at_the_stated_rate(
    pools: tuple[ArmPool, ArmPool, ArmPool], paired: bool
) -> None:
    a, same, _ = pools
    rates = repeated_ab(a, same, records=200, repetitions=1000, seed=11, paired=paired)
    # 1,000 A/A tests at alpha 0.05: the share calling a winner is 0.05 up to binomial noise
    # (sd 0.0069; the bounds are about 3 sd)
    assert 0.03 <= rates.called <= 0.07, rates


def test_ab_finds_the_better_arm(pools: tuple[ArmPool, ArmPool, ArmPool]) -> None:
    better, _, worse = pools
    assert better.ndcg.mean() - worse.ndcg.mean() > 0.05  # the known true difference
    rates = repeated_ab(better, worse, records=200, repetitions=100, seed=12)
    assert rates.correct >= 0.95, rates
    paired = repeated_ab(better, worse, records=200, repetitions=100, seed=12, paired=True)
    assert paired.correct >= 0.8, paired


def test_interleaving_aa_and_detection(universe: Universe) -> None:
    aa = repeated_interleaving(universe, 1.0, 1.0, impressions=200, repetitions=200, seed=13)
    # the exact sign test is conservative: at most alpha up to binomial noise (sd 0.015)
    assert aa.called <= ALPHA + 0.035, aa
    found = repeated_interleaving(universe, 1.0, 1.6, impressions=300, repetitions=40, seed=14)
    assert found.correct >= 0.75, found
    assert found.called == found.correct  # never the worse arm
