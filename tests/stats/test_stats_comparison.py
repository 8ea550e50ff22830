"""Comparison: the one value every front end renders, and its JSON form read back."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from rankscope.errors import InputError
from rankscope.metrics.names import parse_measure
from rankscope.stats import Comparison, Quantity, ScoreMatrix, StatsWarning, compare
from rankscope.stats.comparison import normalised, row_from_dict, row_to_dict

TESTS = ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey")


def _matrix(n: int = 12) -> ScoreMatrix:
    rng = np.random.default_rng(3)
    x = rng.random((2, 3, n))
    return ScoreMatrix(
        ("a", "b", "c"),
        tuple(f"q{i}" for i in range(n)),
        (Quantity.of(parse_measure("ndcg@10")), Quantity("latency_ms", higher_is_better=False)),
        x,
        np.ones((3, n), dtype=np.bool_),
        (0, 2, 0),
        "twelve queries",
    )


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("extras", [False, True])
def test_the_json_form_reads_back_to_the_same_value(test: str, extras: bool) -> None:
    options = {"all_pairs": True, "power": 0.8, "delta": 0.05, "family": "all"} if extras else {}
    found = compare(_matrix(), baseline="b", test=test, seed=4, **options)  # type: ignore[arg-type]
    data = found.to_dict()
    text = json.dumps(data, allow_nan=False)  # strict JSON
    again = Comparison.from_dict(json.loads(text))
    assert again == found
    assert again.to_dict() == data
    # the direction of each quantity and its measure come back, not only the name
    assert again.measures[0].quantity.measure == parse_measure("ndcg@10")
    assert again.measures[1].quantity == Quantity("latency_ms", higher_is_better=False)
    assert (again.filled, again.scope, again.mean_method) == (found.filled, found.scope, "t")
    if extras:
        assert again.measures[0].pairs is not None and len(again.measures[0].pairs.pairs) == 3
        assert again.row("ndcg@10", "a").plan == found.row("ndcg@10", "a").plan


def test_non_finite_numbers_are_null_and_come_back_as_none_or_nan() -> None:
    # every query differs by the same amount: sd(d) = 0, t and the effect size are infinite
    base = np.linspace(0.1, 0.5, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        found = compare(
            ScoreMatrix.from_arrays(
                ["a", "b"], [f"q{i}" for i in range(6)], {"m": [base, base + 0.1]}
            ),
            test="t",
        )
    row = found.row("m", "b")
    assert row.effect_size is not None and math.isinf(row.effect_size)
    data = found.to_dict()
    json.dumps(data, allow_nan=False)
    written = data["measures"][0]["rows"][1]
    assert written["effect_size"] is None and written["statistic"] is None
    again = normalised(found)
    assert again.row("m", "b").effect_size is None  # optional: None
    assert again.row("m", "b").delta == row.delta and again.row("m", "b").p_value == row.p_value
    assert normalised(again) == again  # a fixed point: what is kept is what reads back
    interval = dict(written["mean_interval"], low=None)
    assert math.isnan(row_from_dict({**written, "mean_interval": interval}, "m").mean_interval.low)


def test_a_row_reads_back_on_its_own() -> None:
    row = compare(_matrix(), test="t").row("latency_ms", "c")
    assert row_from_dict(row_to_dict(row), "latency_ms") == row


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("scope"),
        lambda d: d["measures"][0].pop("anova"),
        lambda d: d["measures"][0]["rows"][0].update(direction="sideways"),
        lambda d: d["measures"][0]["rows"][0].update(mean="high"),
        lambda d: d.update(systems=None),
        lambda d: d.update(test="magic"),
        lambda d: d.update(scope=["measure"]),
        lambda d: d.update(measures="ndcg"),
        lambda d: d["measures"][0]["rows"].append({"system": "\ud800"}),
    ],
)
def test_a_damaged_comparison_is_a_clear_error(damage: object) -> None:
    data = compare(_matrix(), test="t").to_dict()
    damage(data)  # type: ignore[operator]
    with pytest.raises(InputError, match="not a comparison as rankscope writes it"):
        Comparison.from_dict(data)


def test_hostile_names_come_back_as_written() -> None:
    """NUL, a lone surrogate and 10,000 characters are text like any other in a comparison's
    names and warnings: strict JSON carries them (escaped) and they read back unchanged."""
    names = ("a\x00b", "\ud800", "x" * 10_000)
    x = np.random.default_rng(1).random((1, 3, 8))
    matrix = ScoreMatrix(
        names, tuple(f"q{i}" for i in range(8)), (Quantity("m\x00"),), x,
        np.ones((3, 8), dtype=np.bool_), (0, 0, 0), "\udfff" * 3,
    )  # fmt: skip
    found = compare(matrix, baseline=names[2], test="t")
    again = Comparison.from_dict(json.loads(json.dumps(found.to_dict(), allow_nan=False)))
    assert again == found and again.systems == names and again.query_set == "\udfff" * 3


def test_a_huge_or_deep_comparison_fails_at_its_first_fault() -> None:
    data = compare(_matrix(), test="t").to_dict()
    rows = data["measures"][0]["rows"]
    data["measures"][0]["rows"] = [{"system": "a"}] + rows * 100_000  # 300,001 rows
    with pytest.raises(InputError, match="KeyError: 'plan'"):
        Comparison.from_dict(data)
    deep: object = {}
    for _ in range(10_000):
        deep = {"measures": deep}
    with pytest.raises(InputError, match="not a comparison"):
        Comparison.from_dict(deep)  # type: ignore[arg-type]
