"""A/B comparison of arms, regression checks, threshold calibration, sampling for judging."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from rankscope.errors import InputError
from rankscope.online.ab import compare_arms, compare_arms_paired
from rankscope.online.alerts import ewma_chart, window_change
from rankscope.online.calibration import calibrate_threshold, fit_grade_thresholds
from rankscope.online.clicks import GradeThresholds
from rankscope.online.sampling import (
    CollectedQuery,
    ShownDocument,
    sample_for_judging,
    stratify,
)
from rankscope.stats import cohen_kappa


def test_unpaired_comparison_and_minimum_sample() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.6, 0.2, 80).tolist(), rng.normal(0.5, 0.2, 70).tolist()
    result = compare_arms({"ndcg": (a, b), "recall": (a, a[:70])}, names=("new", "old"))
    ndcg = result.measure("ndcg")
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert ndcg.p_value == pytest.approx(float(ref.pvalue))
    # Holm over the two measures
    recall_p = float(stats.ttest_ind(a, a[:70], equal_var=False).pvalue)
    recall_adjusted = result.measure("recall").p_adjusted
    assert ndcg.p_value is not None and ndcg.p_adjusted is not None and recall_adjusted is not None
    smaller = min(ndcg.p_value, recall_p)
    assert min(ndcg.p_adjusted, recall_adjusted) == pytest.approx(2 * smaller)
    assert ndcg.verdict == "a" and ndcg.winner == "new" and ndcg.bootstrap is not None
    assert ndcg.interval is not None and ndcg.interval.low > 0
    small = compare_arms({"ndcg": (a[:10], b[:10])}, min_sample=30)
    assert small.measures[0].verdict == "insufficient_data" and small.measures[0].p_value
    one = compare_arms({"ndcg": ([0.5], [0.1, 0.2])})
    assert one.measures[0].verdict == "insufficient_data" and one.measures[0].delta is None


def test_paired_comparison_over_common_queries() -> None:
    a = {f"q{i}": [0.5 + 0.01 * i, 0.5 + 0.01 * i] for i in range(40)}
    b = {f"q{i}": [0.45 + 0.01 * i + (0.02 if i % 2 else -0.02)] for i in range(5, 45)}
    result = compare_arms_paired({"ndcg": (a, b)})
    m = result.measures[0]
    assert (m.test, m.n_a) == ("paired_t", 35)
    assert m.delta == pytest.approx(0.05 - 0.02 / 35)  # 18 queries +0.02, 17 -0.02
    assert m.verdict == "a"


def test_a_p_value_equal_to_alpha_names_a_winner() -> None:
    # the verdict's rule is p <= alpha: at alpha = p exactly the difference counts, and one
    # step of a float below p it does not (p < alpha would call both no difference)
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.6, 0.2, 40).tolist(), rng.normal(0.52, 0.2, 40).tolist()
    p = compare_arms({"ndcg": (a, b)}, bootstrap=0).measure("ndcg").p_adjusted
    assert p is not None and 0 < p < 1
    at = compare_arms({"ndcg": (a, b)}, alpha=p, bootstrap=0, min_sample=2).measure("ndcg")
    below = compare_arms(
        {"ndcg": (a, b)}, alpha=float(np.nextafter(p, 0)), bootstrap=0, min_sample=2
    ).measure("ndcg")
    assert at.p_adjusted == p and at.verdict == "a"
    assert below.verdict == "no_difference"
    paired_a = {f"q{i}": [float(v)] for i, v in enumerate(a)}
    paired_b = {f"q{i}": [float(v)] for i, v in enumerate(b)}
    q = compare_arms_paired({"ndcg": (paired_a, paired_b)}).measure("ndcg").p_adjusted
    assert q is not None
    paired = compare_arms_paired({"ndcg": (paired_a, paired_b)}, alpha=q, min_sample=2)
    assert paired.measure("ndcg").verdict == "a"


def test_window_change_paired_unpaired_and_insufficient() -> None:
    rng = np.random.default_rng(1)
    base = {f"q{i}": [0.7 + 0.005 * i] for i in range(40)}
    worse = {q: [v[0] - 0.1 + rng.normal(0, 0.02)] for q, v in base.items()}
    flat = [v for vs in base.values() for v in vs]
    change = window_change(
        [v for vs in worse.values() for v in vs],
        flat,
        current_by_query=worse,
        baseline_by_query=base,
        min_n=30,
        min_delta=0.05,
    )
    assert change.method == "paired_t" and change.regression
    assert change.delta == pytest.approx(-0.1, abs=0.01)
    # a real but tiny drop: beyond noise, below the practical minimum
    tiny = {q: [v[0] - 0.01] for q, v in base.items()}
    small = window_change(
        [v[0] for v in tiny.values()],
        flat,
        current_by_query=tiny,
        baseline_by_query=base,
        min_n=30,
        min_delta=0.05,
    )
    assert small.interval is not None and small.interval.high < 0 and not small.regression
    unpaired = window_change(
        rng.normal(0.5, 0.1, 50).tolist(), rng.normal(0.7, 0.1, 50).tolist(), min_n=30
    )
    assert unpaired.method == "welch" and unpaired.regression
    few = window_change([0.1] * 5, [0.9] * 50, min_n=30)
    assert few.method == "insufficient" and not few.regression
    # lower is better (e.g. a zero-result rate): a rise is the regression
    up = window_change(
        rng.normal(0.3, 0.05, 60).tolist(),
        rng.normal(0.1, 0.05, 60).tolist(),
        min_n=30,
        higher_is_better=False,
    )
    assert up.regression


def test_ewma_signals_a_shift_not_noise() -> None:
    rng = np.random.default_rng(2)
    baseline = (0.7 + rng.normal(0, 0.01, 14)).tolist()
    assert ewma_chart([*baseline, 0.62, 0.61, 0.6], 14).signal  # type: ignore[union-attr]
    noisy = ewma_chart(baseline + (0.7 + rng.normal(0, 0.01, 3)).tolist(), 14)
    assert noisy is not None and not noisy.signal
    assert ewma_chart([0.5], 1) is None


def test_calibration_finds_the_threshold_the_labels_follow() -> None:
    rng = np.random.default_rng(3)
    scores = rng.uniform(0, 20, 600)  # BM25-like: unbounded
    labels = [bool(s >= 12 or rng.random() < 0.03) for s in scores]
    result = calibrate_threshold(scores.tolist(), labels, current=0.7, group="keyword")
    assert result.kappa_current is not None and result.kappa_current < 0.1
    assert result.best_threshold == pytest.approx(12, abs=0.5)
    assert result.kappa_best is not None and result.kappa_best > 0.85
    assert result.n == 600 and result.positives == sum(labels)
    with pytest.raises(InputError, match="length"):
        calibrate_threshold([0.1], [True, False])


def test_grade_thresholds_fitted_to_labels() -> None:
    values = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    # separable: each grade's values above the last grade's; the fit reaches kappa 1 with
    # thresholds between the groups (quantiles of the values: 100 levels, so off the data)
    perfect = fit_grade_thresholds(values, [0, 0, 1, 1, 2, 2, 3, 3])
    assert perfect.kappa == 1.0 and (perfect.n, perfect.candidates) == (8, 100)
    t = perfect.thresholds
    assert 0.2 < t.one <= 0.3 and 0.4 < t.two <= 0.5 and 0.6 < t.three <= 0.7
    assert (t.one, t.two, t.three) == pytest.approx((0.2316831683, 0.4396039604, 0.6059405941))
    # not separable: the search finds the best of every non-decreasing triple of cut points
    labels = [0, 1, 0, 1, 2, 3, 2, 3]
    fitted = fit_grade_thresholds(values, labels)
    cuts = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85]
    brute = max(
        cohen_kappa(labels, GradeThresholds(a, b, c).grades(np.asarray(values)).tolist(), "linear")
        or -1.0
        for i, a in enumerate(cuts)
        for j, b in enumerate(cuts[i:], start=i)
        for c in cuts[j:]
    )
    assert fitted.kappa == pytest.approx(brute) == pytest.approx(9 / 11)
    assert GradeThresholds(0.1, 0.2, 0.3).grades(np.asarray([0.05, 0.1, 0.25, 0.3])).tolist() == [
        0,
        1,
        2,
        3,
    ]
    with pytest.raises(InputError, match="length"):
        fit_grade_thresholds([0.1], [0, 1])
    with pytest.raises(InputError, match="needs labelled values"):
        fit_grade_thresholds([], [])
    with pytest.raises(InputError, match="at least two grades"):
        fit_grade_thresholds([0.1, 0.2], [2, 2])


def _q(key: str, freq: int, **extra: object) -> CollectedQuery:
    docs = tuple(ShownDocument(f"{key}-d{i}", i + 1) for i in range(5))
    fields: dict[str, Any] = {"documents": docs, "impressions": 1, "clicks": 1, **extra}
    return CollectedQuery(key, key, freq, **fields)


def test_strata_and_budgeted_sampling() -> None:
    queries = [
        _q("h1", 100),
        _q("h2", 60),
        _q("t1", 30),
        _q("t2", 30),
        _q("x1", 10),
        _q("x2", 5),
        _q("x3", 5),
        _q("zc", 20, clicks=0),
        _q("zr", 3, zero_result=True, documents=()),
    ]
    strata = stratify(queries)
    # 230 searches outside the special strata: h1 starts at 0 (head), h2 at 100/230 (torso),
    # t1 at 160/230 (tail)
    assert strata["h1"] == "head" and strata["h2"] == "torso" and strata["t1"] == "tail"
    assert strata["zc"] == "zero_click" and strata["zr"] == "zero_result"
    sample = sample_for_judging(queries, budget=12, depth=3, seed=1)
    assert sample.pairs == 12
    picked = {s.stratum for s in sample.queries}
    assert {"head", "torso", "tail", "zero_click", "zero_result"} <= picked
    zr = next(s for s in sample.queries if s.stratum == "zero_result")
    assert zr.documents == ()
    assert all(len(s.documents) <= 3 for s in sample.queries)
    assert sample == sample_for_judging(queries, budget=12, depth=3, seed=1)
    with pytest.raises(InputError, match="budget"):
        sample_for_judging(queries, budget=0)
