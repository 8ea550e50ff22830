"""Agreement statistics now live in rankscope.stats; judge re-exports the same functions."""

from __future__ import annotations

import pytest
from scipy import stats

from rankscope.judge import agreement as judge_agreement
from rankscope.stats import cohen_kappa, confusion_matrix, kendall_tau_b


def test_judge_uses_the_stats_implementations() -> None:
    assert judge_agreement.cohen_kappa is cohen_kappa
    assert judge_agreement.kendall_tau_b is kendall_tau_b
    assert judge_agreement.confusion_matrix is confusion_matrix


def test_kappa_and_tau() -> None:
    a = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1]
    b = [0, 1, 0, 0, 1, 0, 1, 1, 1, 1]
    # observed agreement 0.8; chance (4*4 + 6*6)/100 = 0.52
    assert cohen_kappa(a, b) == pytest.approx((0.8 - 0.52) / (1 - 0.52))
    x = [0.31, 0.25, 0.25, 0.40, 0.12]
    y = [0.29, 0.22, 0.30, 0.41, 0.10]
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
