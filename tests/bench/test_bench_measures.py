"""A suite chooses its measures and its headline: the table, recommendations and results.json
follow them, and the table names nDCG's gain."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from bench_suites import make_suite
from rich.console import Console

from rankscope import evaluate
from rankscope.bench import run_benchmark
from rankscope.errors import ConfigError
from rankscope.report import render_table
from rankscope.suite import load_suite

ENGINES = """
- {name: whole, engine: sqlite}
- {name: overlap, engine: benchtest-overlap}
"""


def test_suite_measures_and_headline_drive_table_recommendations_and_json(
    tmp_path: Path,
) -> None:
    settings = ", measures: [ndcg_exp@10, P@1, nDCG@3], headline: ndcg_exp@10"
    suite = load_suite(make_suite(tmp_path, ENGINES, settings=settings))
    result = run_benchmark(suite, tmp_path / "out")
    assert result.measures == ["ndcg_exp@10", "P@1", "ndcg@3"]  # canonical names
    assert result.headline == "ndcg_exp@10"
    best = result.recommended().best_quality
    assert best is not None and best.measure == "ndcg_exp@10"
    leader = result.config(best.config).view("answered").summary
    assert best.value == leader["ndcg_exp@10"]
    run_file = tmp_path / "out" / (result.config(best.config).run_file or "")
    direct = evaluate(suite.qrels(), run_file, ["ndcg_exp@10"], depth=4, average_over_qrels=True)
    assert direct.mean()["ndcg_exp@10"] == best.value
    assert "nDCG@10 exp" in best.reason
    whole = result.config("whole")
    assert whole.per_query is not None and set(whole.per_query.values) == set(result.measures)

    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    header = next(line for line in text.splitlines() if "configuration" in line)
    assert header.index("nDCG@10 exp") < header.index("P@1") < header.index("nDCG@3 lin")
    assert "MAP" not in header  # only the measures the suite asked for
    assert "nDCG exp: gain = 2^grade - 1" in text


def test_headline_alone_leads_the_default_measures(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, ENGINES, settings=", headline: ndcg_exp@10"))
    result = run_benchmark(suite, tmp_path / "out")
    assert result.measures[0] == "ndcg_exp@10" and "ndcg@10" in result.measures
    best = result.recommended().best_quality
    assert best is not None and best.measure == "ndcg_exp@10"


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (", measures: [ndcg@10, ndgc@5]", "settings.measures[1]: unknown measure"),
        (", headline: 'P@5,10'", "settings.headline: 'P@5,10' names 2 measures"),
    ],
)
def test_unknown_or_ambiguous_measure_names_are_refused_at_their_line(
    tmp_path: Path, settings: str, expected: str
) -> None:
    path = make_suite(tmp_path, ENGINES, settings=settings)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert expected in message
    settings_line = next(
        n for n, line in enumerate(path.read_text().splitlines(), 1) if "settings:" in line
    )
    assert f"{path}:{settings_line}:" in message
