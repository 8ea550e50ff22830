"""The HTML report rendered in headless Chromium (Debian's ``chromium``, driven by Playwright with
the system executable; no browser download): the figures drew, nothing is fetched from the
network, and every number in the tables equals results.json."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_suites import run_report_bench

from rankscope.bench import BenchmarkResult
from rankscope.bench.latency import fmt_ms
from rankscope.report.content import build
from rankscope.report.numbers import fmt_p, fmt_value
from rankscope.report.write import write_report

FIGURES = ("forest", "differences", "scatter")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchmarkResult, Path]:
    folder = tmp_path_factory.mktemp("report")
    _, out = run_report_bench(folder)
    written = write_report(out, html=folder / "report.html")
    assert written.html == folder / "report.html"
    # the numbers to check against: results.json as written, read back
    return BenchmarkResult.read(out / "results.json"), folder / "report.html"


@pytest.fixture(scope="module")
def page(report: tuple[BenchmarkResult, Path], browser: Any) -> Iterator[Any]:
    _, html = report
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    tab.on("request", lambda request: requests.append(request.url))
    tab.goto(html.as_uri())
    tab.wait_for_load_state("load")
    tab.requests = requests  # what the page asked for
    yield tab
    tab.close()


def test_nothing_is_fetched(page: Any, report: tuple[BenchmarkResult, Path]) -> None:
    _, html = report
    assert page.requests == [html.as_uri()]
    text = html.read_text(encoding="utf-8")
    for banned in ("<script", "<link", "<img", "<iframe", "@import", 'src="', 'href="http'):
        assert banned not in text
    # url() only to a fragment of the page itself (SVG clip paths)
    assert not re.search(r"url\((?!#)", text)


def _marks(page: Any, prefix: str) -> list[dict[str, float]]:
    """Size on screen of each data mark whose id starts with ``prefix``."""
    found: list[dict[str, float]] = page.eval_on_selector_all(
        f'[id^="{prefix}"]',
        """marks => marks.map(m => { const b = m.getBoundingClientRect();
            return {width: b.width, height: b.height}; })""",
    )
    return found


def test_the_figures_drew(page: Any, report: tuple[BenchmarkResult, Path], tmp_path: Path) -> None:
    import numpy as np
    from PIL import Image

    result, _ = report
    quality = result.statistics["answered"].quality
    assert quality is not None
    others = len(result.successful) - 1
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    with Image.open(shot) as image:
        assert image.size[1] > 1500  # the whole report, not a blank first screen
    for name in FIGURES:
        figure = page.locator(f'svg[data-figure="{name}"]')
        assert figure.count() == 1, name
        box = figure.bounding_box()
        assert box is not None and box["width"] > 600 and box["height"] > 150, (name, box)
        # and pixels: a blank plot is (almost) all white
        pixels = np.asarray(Image.open(io.BytesIO(figure.screenshot())).convert("L"))
        assert (pixels < 200).mean() > 0.01, name
    # the data marks themselves, each with a real extent on screen
    points = _marks(page, "forest-point-")
    intervals = _marks(page, "forest-interval-")
    assert len(points) == len(intervals) == others
    assert all(p["width"] > 3 and p["height"] > 3 for p in points)
    assert all(i["width"] > 3 for i in intervals)
    bars = _marks(page, "differences-bar-")
    assert len(bars) == others * quality.num_queries
    nonzero = sum(int((d != 0).sum()) for d in _differences(result))
    assert sum(1 for b in bars if b["height"] > 0.5) == nonzero > 0
    scatter = _marks(page, "scatter-point-")
    assert len(scatter) == len(result.successful)
    assert all(p["width"] > 3 and p["height"] > 3 for p in scatter)
    # the front is a line when two or more configurations are on it (it depends on timings)
    on_front = sum(r.on_front for r in build(result).rows)
    front = _marks(page, "pareto-front")
    assert len(front) == (1 if on_front > 1 else 0)
    assert all(f["width"] > 10 or f["height"] > 10 for f in front)


def _differences(result: BenchmarkResult) -> list[Any]:
    quality = result.statistics["answered"].quality
    assert quality is not None
    _, values = result.per_query_values()
    base = values[quality.baseline]
    return [v - base for name, v in values.items() if name != quality.baseline]


def _cells(page: Any, table: str) -> dict[str, list[dict[str, str]]]:
    rows = page.eval_on_selector_all(
        f"#{table} tr[data-config]",
        """rows => rows.map(r => [r.dataset.config, [...r.querySelectorAll('td[data-key]')]
            .map(td => ({key: td.dataset.key, value: td.dataset.value ?? null,
                         text: td.textContent, cls: td.className}))])""",
    )
    return dict(rows)


def test_comparison_numbers_equal_results_json(
    page: Any, report: tuple[BenchmarkResult, Path]
) -> None:
    result, _ = report
    stats = result.statistics["answered"]
    quality, latency = stats.quality, stats.latency
    assert quality is not None and latency is not None
    shown = _cells(page, "comparison-table")
    assert list(shown) == [c.name for c in result.successful]
    checked = 0
    for name, cells in shown.items():
        q, t = quality.row(name), latency.row(name)
        config = result.config(name)
        expected: dict[str, tuple[float | None, str]] = {
            "mean": (q.mean, fmt_value(q.mean)),
            "p50_ms": (config.view("answered").latency.p50_ms, ""),
            "index_s": (config.index_time_s, ""),
        }
        if name != quality.baseline:
            expected["delta"] = (q.delta, fmt_value(q.delta, signed=True))
            expected["p_value"] = (q.p_adjusted, fmt_p(q.p_adjusted))
        if name != latency.baseline:
            expected["latency.delta"] = (t.delta, fmt_ms(t.delta, signed=True))
            expected["latency.p_value"] = (t.p_adjusted, fmt_p(t.p_adjusted))
        by_key = {c["key"]: c for c in cells}
        for key, (value, text) in expected.items():
            cell = by_key[key]
            assert cell["value"] is not None and float(cell["value"]) == value, (name, key)
            if text:
                assert cell["text"].startswith(text), (name, key, cell["text"])
            checked += 1
        interval = by_key["mean_ci"]["text"]
        assert interval == f"[{fmt_value(q.mean_interval.low)}, {fmt_value(q.mean_interval.high)}]"
        if q.significant and q.direction == "worse":
            assert "▼" in by_key["delta"]["text"] and "worse" in by_key["delta"]["cls"]
        elif name != quality.baseline:
            assert "▼" not in by_key["delta"]["text"]
    assert checked >= 4 * 5
    assert any(r.significant for r in quality.rows)  # the marks were exercised
    test_text = page.locator("#comparison").inner_text()
    assert f"B = {stats.resamples:,} draws, seed {stats.seed}" in test_text
    assert f"n = {quality.num_queries} queries" in test_text
    assert quality.command in test_text


def test_category_and_measure_numbers_equal_results_json(
    page: Any, report: tuple[BenchmarkResult, Path]
) -> None:
    result, _ = report
    categories = page.eval_on_selector_all(
        "#category-table tr[data-category] td[data-key]",
        "tds => tds.map(td => [td.dataset.key, td.dataset.value, td.textContent, td.className])",
    )
    seen = set()
    for key, value, text, classes in categories:
        _, category, name = key.split(".", 2)
        scores = result.config(name).view("answered").per_category[category]
        expected = scores.means[result.headline]
        assert float(value) == expected and text == fmt_value(expected)
        best = max(
            c.view("answered").per_category[category].means[result.headline] or 0.0
            for c in result.successful
        )
        assert ("top" in classes) == (expected == best)
        seen.add((category, name))
    assert seen == {(c, r.name) for c in ("large", "small") for r in result.successful}
    measures = _cells(page, "measures-table")
    for config in result.successful:
        view = config.view("answered")
        for cell in measures[config.name]:
            value = view.summary[cell["key"].removeprefix("summary.")]
            assert float(cell["value"]) == value and cell["text"] == fmt_value(value)
        assert len(measures[config.name]) == len(result.measures)


def test_headings_and_recommendations_are_there(
    page: Any, report: tuple[BenchmarkResult, Path]
) -> None:
    result, _ = report
    headings = page.eval_on_selector_all("h2", "hs => hs.map(h => h.textContent)")
    assert headings[:6] == [
        "Recommendations",
        "Comparison",
        "Difference from the best",
        "Per-query differences",
        "Queries that moved",
        "Quality and latency",
    ]
    picks = page.locator("#recommendations").inner_text()
    best = result.recommended().best_quality
    assert best is not None and f"Best quality: {best.config}" in picks
    assert best.reason in picks
