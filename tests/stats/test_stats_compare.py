"""compare(): the table every front end renders, its family, warnings and bad input."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from rankscope.errors import InputError
from rankscope.stats import (
    Quantity,
    ScoreMatrix,
    StatsWarning,
    adjust_pvalues,
    compare,
    paired_t,
    pairwise,
    randomization_test,
    tukey_hsd,
)


def _matrix(m: int = 4, n: int = 60, seed: int = 0, measures: int = 2) -> ScoreMatrix:
    rng = np.random.default_rng(seed)
    topic = rng.random(n)
    arrays = {}
    for k in range(measures):
        x = np.clip(topic + rng.normal(0, 0.1, (m, n)), 0, 1)
        x[1] = np.clip(x[1] + 0.08, 0, 1)  # system 1 better
        x[2] = np.clip(x[2] - 0.08, 0, 1)  # system 2 worse
        arrays[f"m{k}"] = x
    names = [f"s{i}" for i in range(m)]
    return ScoreMatrix.from_arrays(names, [f"q{i}" for i in range(n)], arrays)


def test_rows_against_the_baseline_with_holm_per_measure() -> None:
    scores = _matrix()
    result = compare(scores, baseline="s0")
    assert result.baseline == "s0" and result.queries == 60
    assert result.correction == "holm" and result.family_size == 3
    assert "3 comparisons with s0 per measure" in result.family
    x = scores.scores("m0")
    raw = [paired_t(x[s], x[0]).p_value for s in (1, 2, 3)]
    holm = adjust_pvalues(raw, "holm")
    rows = result.measure("m0").rows
    assert rows[0].is_baseline and rows[0].delta is None and rows[0].p_value is None
    for s, row in zip((1, 2, 3), rows[1:], strict=True):
        assert row.p_value == pytest.approx(raw[s - 1])
        assert row.p_adjusted == pytest.approx(holm[s - 1])
        assert row.delta == pytest.approx(x[s].mean() - x[0].mean())
        assert row.wins + row.ties + row.losses == 60  # type: ignore[operator]
        assert row.plan is not None and row.plan.queries == 60
        assert row.mean_interval.contains(row.mean)
    assert rows[1].significant and rows[1].direction == "better"
    assert rows[2].significant and rows[2].direction == "worse"
    assert not rows[3].significant and rows[3].direction is None


def test_family_over_all_measures() -> None:
    scores = _matrix()
    result = compare(scores, correction="bonferroni", family="all")
    assert result.family_size == 6 and "3 systems × 2 measures" in result.family
    row = result.row("m1", "s3")
    assert row.p_adjusted == pytest.approx(min(1.0, 6 * (row.p_value or 0)))


def test_randomization_rows_match_the_two_sample_function() -> None:
    scores = _matrix(n=80)
    result = compare(scores, test="randomization", seed=7, correction="none")
    assert result.resamples == 10_000 and not result.exact
    x = scores.scores("m0")
    assert result.row("m0", "s3").p_value == randomization_test(x[3], x[0], seed=7).p_value


def test_tukey_rows_come_from_all_pairs() -> None:
    scores = _matrix(m=3, measures=1)
    result = compare(scores, test="tukey", baseline="s1")
    pairs = tukey_hsd(scores.scores("m0"))
    assert result.measure("m0").pairs is not None
    row = result.row("m0", "s0")
    assert row.p_adjusted == pytest.approx(pairs.pair(0, 1).p_value)
    assert row.delta == pytest.approx(pairs.pair(0, 1).delta)
    assert row.delta_interval is not None and row.delta_interval.method == "tukey"
    assert "V_E" in result.effect_size
    rt = compare(scores, test="rtukey", seed=3, resamples=2000)
    assert rt.resamples == 2000 and rt.correction == "tukey"
    assert rt.row("m0", "s1").delta_interval.method == "randomized-tukey"  # type: ignore[union-attr]


def test_all_pairs_and_bootstrap_means() -> None:
    scores = _matrix(m=3, measures=1, n=40)
    result = compare(
        scores, test="bootstrap", all_pairs=True, mean_interval="bootstrap", resamples=2000
    )
    pairs = result.measure("m0").pairs
    assert pairs is not None and len(pairs.pairs) == 3 and pairs.correction == "holm"
    assert result.mean_interval == "bootstrap (BCa)"
    assert result.row("m0", "s1").delta_interval.method == "bca"  # type: ignore[union-attr]


def test_json_is_strict_and_complete() -> None:
    scores = _matrix(m=3, measures=2)
    data = compare(scores, test="wilcoxon").to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["measures"][0]["rows"][1]["system"] == "s1"
    assert data["family_size"] == 2 and data["queries"] == 60
    assert data["systems"][0] == {"name": "s0", "filled": 0, "dropped": 0}


def test_identical_systems_and_a_constant_measure() -> None:
    x = np.round(np.random.default_rng(1).random((1, 12)), 2)
    scores = ScoreMatrix.from_arrays(
        ["a", "b", "c"],
        [f"q{i}" for i in range(12)],
        {"same": np.tile(x, (3, 1)), "one": np.ones((3, 12))},
    )
    for test in ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = compare(scores, test=test, resamples=500)  # type: ignore[arg-type]
        assert any("one: every system scores 1" in str(w.message) for w in caught)
        json.dumps(result.to_dict(), allow_nan=False)
        for mc in result.measures:
            assert mc.anova.p_value == 1.0 and mc.anova.f == 0.0
            for row in mc.rows[1:]:
                assert row.p_value == 1.0 and row.p_adjusted == 1.0, (test, row)
                assert row.effect_size == 0.0 and row.delta == 0.0
                assert not row.significant
                values = [row.mean, row.delta_interval.low, row.delta_interval.high]  # type: ignore[union-attr]
                assert not any(math.isnan(v) for v in values)
    assert result.measure("one").constant and not result.measure("same").constant


def test_zero_variance_difference_is_flagged() -> None:
    base = np.linspace(0.1, 0.8, 8)
    scores = ScoreMatrix.from_arrays(
        ["a", "b"], list("abcdefgh"), {"m": np.vstack([base, base + 0.1])}
    )
    with pytest.warns(StatsWarning, match="zero variance"):
        result = compare(scores)
    row = result.row("m", "b")
    assert math.isinf(row.effect_size or 0) and row.p_value == 0.0
    dumped = result.to_dict()["measures"][0]["rows"][1]
    assert dumped["effect_size"] is None and dumped["statistic"] is None  # strict JSON


def test_few_queries_warn() -> None:
    scores = ScoreMatrix.from_arrays(
        ["a", "b"], ["1", "2", "3"], {"m": [[0.1, 0.5, 0.3], [0.2, 0.4, 0.9]]}
    )
    with pytest.warns(StatsWarning, match="only 3 queries"):
        result = compare(scores)
    assert any("only 3 queries" in w for w in result.warnings)


def test_bad_input() -> None:
    scores = _matrix(m=3, measures=1)
    with pytest.raises(InputError, match="baseline 'bm25' is not one of"):
        compare(scores, baseline="bm25")
    with pytest.raises(InputError, match="at least two systems"):
        compare(scores.select(systems=["s0"]))
    with pytest.raises(InputError, match="unknown test"):
        compare(scores, test="anova")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown correction"):
        compare(scores, correction="sidak")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="alpha"):
        compare(scores, alpha=1.5)
    one_query = ScoreMatrix.from_arrays(["a", "b"], ["q"], {"m": [[0.1], [0.2]]})
    with pytest.raises(InputError, match="at least 2 queries"):
        compare(one_query)
    disjoint = ScoreMatrix.from_per_query(
        {"m": {"a": {"1": 0.5, "2": 0.1}, "b": {"3": 0.2, "4": 0.3}}}, ["1", "2", "3", "4"]
    )
    with pytest.raises(InputError, match="disjoint query sets"):
        compare(disjoint)
    nothing = ScoreMatrix.from_per_query(
        {"m": {"a": {"1": 0.5, "2": 0.1}, "b": {"x": 0.2}}}, ["1", "2"]
    )
    with pytest.raises(InputError, match="b has no query in common"):
        compare(nothing)


def test_many_filled_queries_warn() -> None:
    scores = ScoreMatrix.from_per_query(
        {"m": {"a": {str(i): i / 10 for i in range(10)}, "b": {str(i): 0.5 for i in range(6)}}},
        [str(i) for i in range(10)],
    )
    with pytest.warns(StatsWarning, match="b lacks 4 of the 10 queries"):
        result = compare(scores)
    assert result.filled == (0, 4)


def test_systems_equal_in_exact_arithmetic_are_equal_in_every_test() -> None:
    # a and b are equal in exact arithmetic on every query, but a's sums differ from b's
    # floats in the last bit on every one of them
    a = np.array([0.1 + 0.2, 0.4 + 0.2, 0.7 + 0.1, 0.1 + 0.7, 0.3 + 0.6, 0.2 + 0.1] * 2)
    b = np.array([0.3, 0.6, 0.8, 0.8, 0.9, 0.3] * 2)
    assert (a != b).all()
    scores = ScoreMatrix.from_arrays(
        ["a", "b"], [f"q{i}" for i in range(12)], {"m": np.vstack([a, b])}
    )
    for test in ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = compare(scores, test=test, resamples=500)  # type: ignore[arg-type]
        assert not any("zero variance" in str(w.message) for w in caught), test
        assert result.measure("m").constant is False
        row = result.row("m", "b")
        assert (row.wins, row.ties, row.losses) == (0, 12, 0), test
        assert row.delta == 0.0 and row.p_value == 1.0 and not row.significant, (test, row)
        assert row.effect_size == 0.0
        assert row.plan is not None and row.plan.sd_difference == 0.0


def test_a_measure_constant_up_to_rounding_is_constant() -> None:
    x = np.vstack([[0.1 + 0.2] * 6, [0.3] * 6])
    scores = ScoreMatrix.from_arrays(["a", "b"], list("abcdef"), {"m": x})
    with pytest.warns(StatsWarning, match="every system scores 0.3 on every query"):
        result = compare(scores)
    assert result.measure("m").constant


def test_the_bootstrap_test_refuses_two_queries() -> None:
    scores = ScoreMatrix.from_arrays(["a", "b"], ["1", "2"], {"m": [[0.5, 0.3], [0.2, 0.4]]})
    # every bootstrap p was 1/(B + 1) = 0.0001 at n = 2, and marked ▲ (the t test gives 0.705)
    with pytest.raises(InputError, match="the bootstrap test needs at least 3 queries"):
        compare(scores, test="bootstrap")
    with pytest.raises(InputError, match="the bootstrap test needs at least 3 queries"):
        pairwise(scores.scores("m"), test="bootstrap")
    with pytest.warns(StatsWarning, match="only 2 queries"):
        assert compare(scores, test="t").row("m", "b").p_value == pytest.approx(0.7048, abs=1e-4)


def test_wilcoxon_in_compare_ranks_ties_up_to_rounding() -> None:
    a = [0.3, 0.1, 0.5, 0.7, 0.2, 0.4]
    b = [0.2, 0.0, 0.4, 0.6, 0.1, 0.5]
    scores = ScoreMatrix.from_arrays(["b", "a"], list("abcdef"), {"P@10": np.vstack([b, a])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        row = compare(scores, test="wilcoxon").row("P@10", "a")
    assert row.statistic == 3.5 and row.p_value == 0.21875  # six tied |d| of 0.1
    assert (row.wins, row.ties, row.losses) == (5, 0, 1)


def test_a_lower_is_better_quantity_turns_the_sense_round() -> None:
    """Latency: a significantly lower value is better, and a lower query a win."""
    rng = np.random.default_rng(4)
    base = rng.uniform(1.0, 3.0, 30)
    x = np.stack([base, base + 0.5 + rng.normal(0, 0.01, 30), base - 0.5])
    latency = Quantity("latency_ms", higher_is_better=False)
    for quantity, slower, faster in ((latency, "worse", "better"), ("score", "better", "worse")):
        ids = [str(i) for i in range(30)]
        with pytest.warns(StatsWarning, match="zero variance"):  # fast is base - 0.5
            # a Quantity or a measure's name: one key type per call, as from_arrays wants
            scores = {quantity: x}
            found = compare(ScoreMatrix.from_arrays(["b", "slow", "fast"], ids, scores))  # type: ignore[arg-type]
        slow, fast = found.row(str(quantity), "slow"), found.row(str(quantity), "fast")
        assert slow.direction == slower and fast.direction == faster
        assert (slow.wins, slow.losses) == ((0, 30) if quantity is latency else (30, 0))
        assert slow.delta is not None and slow.delta > 0  # system - baseline, whatever the sense
    assert found.measures[0].quantity == Quantity("score")
