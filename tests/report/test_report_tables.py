"""The report's comparison table: a latency difference is marked only when it is significant
and at least the suite's practical threshold (``min_latency_ms``, or
``min_latency_ratio`` of the fastest p50)."""

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
    assert latency_min_effect(build(high)) == largest * 1.01
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


def test_the_ratio_of_the_fastest_p50_applies_when_larger(result: BenchmarkResult) -> None:
    content = build(_with(result, min_latency_ms=0.0, min_latency_ratio=0.5))
    assert content.latency is not None
    fastest = next(r for r in content.rows if r.name == content.latency.baseline)
    assert fastest.p50_ms is not None
    assert latency_min_effect(content) == 0.5 * fastest.p50_ms
    # the defaults: 0.05 ms, or 5% of the fastest p50
    assert latency_min_effect(build(result)) == max(0.05, 0.05 * fastest.p50_ms)


def test_the_suite_settings_default_and_refuse_a_negative_threshold() -> None:
    from pydantic import ValidationError

    from rankscope.suite.schema import SuiteSettings

    settings = SuiteSettings()
    assert (settings.min_latency_ms, settings.min_latency_ratio) == (0.05, 0.05)
    with pytest.raises(ValidationError):
        SuiteSettings(min_latency_ms=-1)
