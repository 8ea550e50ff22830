"""Latency from repeated passes: per-query medians, percentiles over them, spread across passes."""

from __future__ import annotations

import pytest

from rankscope.bench import latency_stats
from rankscope.bench.latency import query_latency_ms


def test_percentiles_are_over_per_query_medians() -> None:
    # four queries, three passes each; one pass of q4 was disturbed (50 ms)
    samples = [
        [0.001, 0.0011, 0.0009],
        [0.002, 0.0021, 0.0019],
        [0.003, 0.0031, 0.0029],
        [0.004, 0.050, 0.0041],
    ]
    stats = latency_stats(samples)
    assert stats.num_queries == 4 and stats.repeats == 3
    # medians 1, 2, 3, 4.1 ms: the disturbed pass does not move q4
    assert stats.max_ms == pytest.approx(4.1)
    assert stats.p50_ms == pytest.approx(2.5)
    assert stats.p95_ms == pytest.approx(3.0 + 0.85 * 1.1)
    assert stats.mean_ms == pytest.approx((1 + 2 + 3 + 4.1) / 4)
    assert query_latency_ms(samples[3]) == pytest.approx(4.1)


def test_spread_is_the_p50_of_each_pass_and_their_iqr() -> None:
    samples = [[0.001, 0.002, 0.004], [0.003, 0.004, 0.006]]
    stats = latency_stats(samples)
    assert stats.p50_by_pass_ms == pytest.approx([2.0, 3.0, 5.0])
    # quartiles of [2, 3, 5] with linear interpolation: 2.5 and 4.0
    assert stats.p50_iqr_ms == pytest.approx(1.5)


def test_one_pass_has_no_spread_and_nothing_measured_has_no_values() -> None:
    one = latency_stats([[0.002], [0.004]])
    assert one.p50_ms == pytest.approx(3.0) and one.p50_iqr_ms is None
    empty = latency_stats([])
    assert empty.num_queries == 0 and empty.p50_ms is None and empty.p50_by_pass_ms == []
