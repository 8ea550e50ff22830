"""The report's comparison table: a latency difference is marked only when it is significant
and at least the suite's practical threshold, the Pareto front's rule (``min_latency_ms``, or
``min_latency_ratio`` of the slower p50)."""

from __future__ import annotations

import pytest
from report_suites import run_report_bench

from rankscope.bench import BenchmarkResult
from rankscope.report.content import build
from rankscope.report.numbers import BETTER, WORSE
from rankscope.report.tables import comparison_table, latency_min_effect


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> BenchmarkResult:
    return run_report_bench(tmp_path_factory.mktemp("tables"))[0]


def _marked(result: BenchmarkResult) -> dict[str, str | None]:
    table = comparison_table(build(result))
    column = table.header.index("Δ latency ms") - 1
    return {name: cells[column].mark for name, cells in table.rows}


def _with(result: BenchmarkResult, **settings: float) -> BenchmarkResult:
    return result.model_copy(update={"settings": result.settings.model_copy(update=settings)})


def test_a_significant_latency_gap_below_the_threshold_is_not_marked(
    result: BenchmarkResult,
) -> None:
    content = build(result)
    assert content.latency is not None
    rows = {r.system: r for r in content.latency.rows}
    significant = {n for n, r in rows.items() if r.significant and n != content.latency.baseline}
    assert significant  # the sqlite configuration is significantly slower than the others
    # no threshold: every significant difference is marked, as the test alone says
    bare = _marked(_with(result, min_latency_ms=0.0, min_latency_ratio=0.0))
    assert {n for n, m in bare.items() if m in ("worse", "better")} == significant
    # a threshold above every gap: none is marked, whatever p says
    largest = max(abs(r.delta or 0.0) for r in rows.values())
    high = _with(result, min_latency_ms=largest * 1.01, min_latency_ratio=0.0)
    assert {latency_min_effect(build(high), n) for n in rows} == {largest * 1.01}
    assert all(m not in ("worse", "better") for m in _marked(high).values())
    # between: exactly the significant gaps at least that large
    cut = sorted(abs(rows[n].delta or 0.0) for n in significant)[-1]
    mid = _marked(_with(result, min_latency_ms=cut, min_latency_ratio=0.0))
    assert {n for n, m in mid.items() if m in ("worse", "better")} == {
        n for n in significant if abs(rows[n].delta or 0.0) >= cut
    }
    table = comparison_table(build(_with(result, min_latency_ms=largest * 2)))
    assert not any(
        WORSE in c.text or BETTER in c.text for _, cells in table.rows for c in cells[6:7]
    )


def test_the_ratio_of_the_slower_p50_applies_when_larger(result: BenchmarkResult) -> None:
    content = build(_with(result, min_latency_ms=0.0, min_latency_ratio=0.5))
    assert content.latency is not None
    p50 = {r.name: r.p50_ms or 0.0 for r in content.rows}
    fastest = content.latency.baseline
    for name in p50:
        slower = max(p50[name], p50[fastest])
        assert latency_min_effect(content, name) == 0.5 * slower
    # the defaults: 0.05 ms, or 5% of the slower p50
    assert latency_min_effect(build(result), fastest) == max(0.05, 0.05 * p50[fastest])


def test_the_table_marks_a_latency_gap_as_the_pareto_front_counts_it(
    result: BenchmarkResult,
) -> None:
    """A ratio between gap / slower p50 and gap / fastest p50: 5% of the fastest p50 (the
    table's earlier rule) let the gap count, 5% of the slower one (the front's) does not."""
    content = build(result)
    assert content.latency is not None
    fastest = content.latency.baseline
    p50 = {r.name: r.p50_ms or 0.0 for r in content.rows}
    row = next(r for r in content.latency.rows if r.significant and r.system != fastest)
    gap = abs(row.delta or 0.0)
    low, high = gap / p50[row.system], gap / p50[fastest]
    assert low < high
    ratio = (low + min(high, 1.0)) / 2
    settings = {"min_latency_ms": 0.0, "min_latency_ratio": ratio}
    assert _marked(_with(result, **settings))[row.system] is None
    # a ratio below both: both rules count it
    assert _marked(_with(result, min_latency_ms=0.0, min_latency_ratio=low / 2))[row.system] in (
        "worse",
        "better",
    )


def test_the_suite_settings_default_and_refuse_a_negative_threshold() -> None:
    from pydantic import ValidationError

    from rankscope.suite.schema import SuiteSettings

    settings = SuiteSettings()
    assert (settings.min_latency_ms, settings.min_latency_ratio) == (0.05, 0.05)
    with pytest.raises(ValidationError):
        SuiteSettings(min_latency_ms=-1)
