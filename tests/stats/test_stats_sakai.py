"""Golden values: Sakai's Table 5.1 (20 topics × 3 systems) and the figures in its README."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from rankscope.stats import (
    ScoreMatrix,
    anova_two_way,
    compare,
    paired_t,
    randomization_test,
    tukey_hsd,
)
from rankscope.stats._resample import exact_sign_flip_count


def test_paired_t_a_vs_b(sakai: NDArray[np.float64]) -> None:
    a, b = sakai[0], sakai[1]
    r = paired_t(a, b)
    assert r.delta == pytest.approx(0.0750, abs=5e-5)
    assert float(np.var(a - b, ddof=1)) == pytest.approx(0.0251, abs=5e-5)
    assert round(r.statistic, 3) == 2.116
    assert round(r.p_value, 4) == 0.0478
    assert round(r.effect_size, 3) == 0.473
    assert round(r.interval.half_width, 4) == 0.0742
    assert (r.wins, r.ties, r.losses) == (10, 5, 5)


def test_exact_randomization_a_vs_b(sakai: NDArray[np.float64]) -> None:
    r = randomization_test(sakai[0], sakai[1])
    assert r.exact and r.resamples is None
    assert round(r.p_value, 4) == 0.0659
    assert r.p_value * 2**20 == pytest.approx(round(r.p_value * 2**20))  # k / 2**20


def test_without_float_tolerance_the_exact_p_is_wrong(sakai: NDArray[np.float64]) -> None:
    # Sums tied with |T| in exact arithmetic differ from it in the last bits; compared without
    # a tolerance, some of the sign vectors as extreme as the observed one are lost (how many
    # depends on the order of the additions: scipy's mean loses enough to give 0.0517).
    d = sakai[0] - sakai[1]
    untolerant = exact_sign_flip_count(d, abs(float(d.sum()))) / 2**20
    assert untolerant < 0.0659 - 1e-4


def test_two_way_anova(sakai: NDArray[np.float64]) -> None:
    a = anova_two_way(sakai)
    assert round(a.ss_systems, 4) == 0.1083
    assert round(a.ss_queries, 4) == 1.0293
    assert round(a.ss_residual, 4) == 0.8317
    assert round(a.ms_residual, 4) == 0.0219
    assert round(a.f, 3) == 2.475
    assert round(a.p_value, 4) == 0.0976
    assert (a.df_systems, a.df_queries, a.df_residual) == (2, 19, 38)


def test_tukey_hsd_with_topic_blocking(sakai: NDArray[np.float64]) -> None:
    result = tukey_hsd(sakai)
    ab, ac, bc = (result.pair(0, 1), result.pair(0, 2), result.pair(1, 2))
    assert [round(r.p_value, 3) for r in (ab, ac, bc)] == [0.257, 0.096, 0.855]
    assert [round(r.effect_size, 3) for r in (ab, ac, bc)] == [0.507, 0.676, 0.169]
    # simultaneous intervals: all contain 0 since no pair is significant at 0.05
    assert all(r.interval.contains(0.0) for r in (ab, ac, bc))
    assert result.pair(1, 0).delta == pytest.approx(-ab.delta)


def test_compare_reproduces_the_table(sakai: NDArray[np.float64]) -> None:
    scores = ScoreMatrix.from_arrays(
        ["A", "B", "C"], [f"Q{i}" for i in range(1, 21)], {"score": sakai}
    )
    t = compare(scores, test="t", correction="none")
    row = t.row("score", "B")  # B - A
    assert round(row.p_value or 0, 4) == 0.0478
    assert round(-(row.effect_size or 0), 3) == 0.473
    assert round(t.measures[0].anova.f, 3) == 2.475
    tukey = compare(scores, test="tukey", baseline="A")
    assert round(tukey.row("score", "B").p_adjusted or 0, 3) == 0.257
    assert round(tukey.row("score", "C").p_adjusted or 0, 3) == 0.096
    assert tukey.correction == "tukey" and tukey.family_size == 3
    rand = compare(scores, test="randomization", correction="none")
    assert round(rand.row("score", "B").p_value or 0, 4) == 0.0659
    assert rand.exact and rand.resamples is None
    assert math.isclose(rand.row("score", "B").delta or 0, -0.075)
