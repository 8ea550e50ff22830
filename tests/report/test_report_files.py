"""The report's Markdown and LaTeX tables and its HTML file, without a browser: the numbers
are results.json's, the figures are SVG, results written before the statistics still report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from report_suites import run_report_bench

from rankscope.bench import BenchmarkResult
from rankscope.errors import InputError
from rankscope.report.content import Differences, build, pareto_front
from rankscope.report.figures import differences_svg, forest_svg, scatter_svg
from rankscope.report.numbers import fmt_p, fmt_value
from rankscope.report.write import write_report


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchmarkResult, Path]:
    return run_report_bench(tmp_path_factory.mktemp("files"))


def test_markdown_tables_hold_the_statistics(bench: tuple[BenchmarkResult, Path]) -> None:
    result, out = bench
    text = write_report(out, markdown="-").text["markdown"]
    quality = result.statistics["answered"].quality
    assert quality is not None
    assert "| configuration | nDCG@10 lin | 95% CI | Δ vs best | 95% CI of Δ | p |" in text
    for row in quality.rows:
        line = next(x for x in text.splitlines() if x.startswith(f"| {row.system} |"))
        assert fmt_value(row.mean) in line
        assert f"[{fmt_value(row.mean_interval.low)}, {fmt_value(row.mean_interval.high)}]" in line
        if row.system != quality.baseline:
            assert fmt_p(row.p_adjusted) in line
            delta = [c.strip() for c in line.split("|")[1:-1]][3]
            assert ("▼" in delta) == (row.significant and row.direction == "worse")
    assert "## Per category: nDCG@10 lin" in text
    assert "| category (queries) | half | all | most | sqlite |" in text
    assert "| large (20) | 0.5000 | **1.0000** | 0.8000 | **1.0000** |" in text
    assert f"Recompute: `rankscope compare {out} {quality.command}`" in text
    assert "## Recommendations" in text and "nan" not in text.lower()


def test_latex_tables_for_papers(bench: tuple[BenchmarkResult, Path], tmp_path: Path) -> None:
    _, out = bench
    target = tmp_path / "tables" / "report.tex"
    written = write_report(out / "results.json", latex=target)
    assert written.latex == target and written.html is None
    text = target.read_text()
    assert text.count(r"\begin{tabular}") == 2 and r"\toprule" in text
    assert r"$^{\blacktriangledown}$" in text and r"$\Delta$ vs best" in text
    assert r"randomised Tukey HSD, B = 10,000, seed 0" in text
    assert r"\label{tab:rankscope-comparison}" in text and r"95\% CI" in text
    assert text.isascii()  # marks, Δ, ≤ and dashes written as LaTeX


def test_default_is_report_html_beside_results(bench: tuple[BenchmarkResult, Path]) -> None:
    _, out = bench
    written = write_report(out)
    assert written.html == out / "report.html" and written.html.is_file()
    page = written.html.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<svg data-figure="') == 3


def test_figures_are_svg_with_their_data_marks(bench: tuple[BenchmarkResult, Path]) -> None:
    result, _ = bench
    content = build(result)
    for svg, mark in (
        (forest_svg(content), "forest-point-"),
        (differences_svg(content), "differences-bar-"),
        (scatter_svg(content), "scatter-point-"),
    ):
        assert svg is not None
        root = ET.fromstring(svg)
        ids = [e.get("id") or "" for e in root.iter()]
        assert any(i.startswith(mark) for i in ids)
        assert "<?xml" not in svg and "DOCTYPE" not in svg


def test_differences_count_wins_in_the_quantitys_own_sense() -> None:
    from rankscope.stats.paired import differences

    better = np.array([0.1 + 0.2, 0.5, 0.7, 0.2])  # 0.1 + 0.2 is 0.3 up to rounding: a tie
    base = np.array([0.3, 0.4, 0.6, 0.4])
    d = differences(better, base)[0]
    assert Differences("x", ["1", "2", "3", "4"], d).wins_ties_losses == (2, 1, 1)
    lower = Differences("x", ["1", "2", "3", "4"], d, higher_is_better=False)
    assert lower.wins_ties_losses == (1, 1, 2)  # lower is better: a lower value wins


def test_the_reports_differences_are_free_of_rounding(bench: tuple[BenchmarkResult, Path]) -> None:
    result, _ = bench
    content = build(result)
    quality = content.quality
    assert quality is not None and content.differences
    _, values = result.per_query_values(quality.measure)
    for diff in content.differences:
        raw = values[diff.name] - values[quality.baseline]
        tolerance = (
            100
            * np.finfo(np.float64).eps
            * (np.abs(values[diff.name]) + np.abs(values[quality.baseline]))
        )
        assert np.array_equal(diff.values == 0, np.abs(raw) <= tolerance)
        assert diff.values == pytest.approx(raw, abs=1e-12)


def test_pareto_front() -> None:
    points = [("a", 0.5, 1.0), ("b", 0.6, 2.0), ("c", 0.55, 3.0), ("d", 0.6, 2.0), ("e", 0.4, 0.5)]
    assert pareto_front(points) == ["a", "b", "d", "e"]  # c: b is better and faster


@pytest.mark.parametrize("version", [2, 3])
def test_results_without_statistics_are_reported(
    bench: tuple[BenchmarkResult, Path], tmp_path: Path, version: int
) -> None:
    """Schema 2 had no statistics; schema 3 kept them in a shape of its own, which is left
    out on reading: both are computed again for the report."""
    result, _ = bench
    data = result.to_data()
    data["schema_version"] = version
    if version == 2:
        del data["statistics"]
    else:
        quality = data["statistics"]["answered"]["quality"]
        rows = quality.pop("comparison")["measures"][0]["rows"]
        quality["configurations"] = [{"config": r["system"]} for r in rows]
    old = tmp_path / "results.json"
    old.write_text(json.dumps(data))
    assert BenchmarkResult.read(old).statistics == {}
    written = write_report(old, markdown="-", html=tmp_path / "r.html")
    again = result.statistics["answered"].quality
    assert again is not None
    # computed again from the same per-query values and seed: the same p-values
    shown = [r for r in again.rows if not r.is_baseline]
    assert shown and all(fmt_p(r.p_adjusted) in written.text["markdown"] for r in shown)
    assert (tmp_path / "r.html").read_text().count("<svg") == 3


def test_bad_sources_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no results\.json in this folder"):
        write_report(tmp_path)
    with pytest.raises(InputError, match="file not found"):
        write_report(tmp_path / "nope.json")
