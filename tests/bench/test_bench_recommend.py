"""Recommendations: never a failed or zero-scoring configuration, no winner in an all-zero
suite, the original design's balance by default (leads and noise: test_bench_statistics)."""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import pytest
from bench_suites import Overlap, make_suite
from rich.console import Console

from rankscope.bench import Candidate, recommend, run_benchmark
from rankscope.engines.base import Hit, Query, register_engine
from rankscope.report import render_table
from rankscope.suite import load_suite

# the package exports the function recommend(), which hides the module of the same name
rec = importlib.import_module("rankscope.bench.recommend")


def test_balance_follows_the_original_design_by_default() -> None:
    rows = [
        Candidate("slow-best", 0.60, 20.0),
        Candidate("fast-worse", 0.40, 0.5),
        Candidate("middle", 0.57, 1.0),
    ]
    recs = recommend(rows)
    assert recs.best_quality is not None and recs.best_quality.config == "slow-best"
    assert recs.fastest is not None and recs.fastest.config == "fast-worse"
    # quality = q / best, speed = 1 - (p50 - min) / (max - min), balance = (quality + speed) / 2
    speed = 1 - (1.0 - 0.5) / (20.0 - 0.5)
    assert recs.best_balance is not None and recs.best_balance.config == "middle"
    assert recs.best_balance.value == pytest.approx((0.57 / 0.60 + speed) / 2)
    assert "(quality + speed) / 2" in recs.best_balance.reason


def test_ratio_balance_is_an_option() -> None:
    rows = [Candidate("a", 0.60, 20.0), Candidate("b", 0.40, 0.5), Candidate("c", 0.57, 1.0)]
    recs = recommend(rows, balance="ratio")
    assert recs.best_balance is not None and recs.best_balance.config == "c"
    assert recs.best_balance.value == pytest.approx((2 * 0.57 / 0.60 + 0.5) / 3)
    # the two formulas can disagree: minmax puts the slowest at speed 0, ratio barely moves it
    close = [Candidate("slower-best", 0.60, 1.2), Candidate("fast", 0.50, 1.0)]
    assert recommend(close).best_balance.config == "fast"  # type: ignore[union-attr]
    assert recommend(close, balance="ratio").best_balance.config == "slower-best"  # type: ignore[union-attr]


def test_a_configuration_scoring_zero_is_never_recommended_not_even_as_fastest() -> None:
    rows = [Candidate("finds-nothing", 0.0, 0.1), Candidate("works", 0.3, 5.0)]
    recs = recommend(rows, "ndcg@10", "nDCG@10 lin", num_queries=8, query_set="8 judged queries")
    assert recs.fastest is not None and recs.fastest.config == "works"
    assert recs.best_balance is not None and recs.best_balance.config == "works"
    assert recs.left_out == {"finds-nothing": "nDCG@10 lin is 0 over 8 judged queries"}


def test_an_all_zero_suite_has_no_winner_and_says_why() -> None:
    recs = recommend([Candidate("a", 0.0, 1.0), Candidate("b", 0.0, 2.0)], "ndcg@10")
    assert recs.items() == []
    assert recs.note is not None and "no configuration scores above 0 on ndcg@10" in recs.note
    assert "document ids" in recs.note
    assert recommend([]).note == "no recommendation: no configuration ran successfully"


@register_engine("benchtest-nothing")
class Nothing(Overlap):
    """Instant, and finds nothing."""

    name = "benchtest-nothing"

    def _search(self, query: Query, k: int) -> list[Hit]:
        return []


def test_benchmark_never_recommends_an_engine_that_finds_nothing(tmp_path: Path) -> None:
    engines = """
    - {name: nothing, engine: benchtest-nothing}
    - {name: works, engine: benchtest-overlap}
    """
    result = run_benchmark(load_suite(make_suite(tmp_path, engines)), tmp_path / "out")
    picks = result.recommended()
    assert {rec.config for _, rec in picks.items()} == {"works"}
    assert "nothing" in picks.left_out and picks.num_queries == 4
    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "not recommended: nothing: nDCG@10 lin is 0 over 4 judged queries" in text
    assert "Fastest: works" in text


def test_all_zero_benchmark_has_no_winner(tmp_path: Path) -> None:
    engines = """
    - {name: nothing, engine: benchtest-nothing}
    - {name: also-nothing, engine: benchtest-nothing}
    """
    result = run_benchmark(load_suite(make_suite(tmp_path, engines)), tmp_path / "out")
    assert result.recommended().items() == []
    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "no recommendation: no configuration scores above 0 on nDCG@10 lin" in text
    assert "Best quality" not in text and "Fastest" not in text


def test_orders_break_ties_by_the_other_key_then_by_suite_order() -> None:
    rows = [
        Candidate("z-late", 0.5, 2.0),
        Candidate("a-early", 0.5, 2.0),
        Candidate("fast", 0.5, 1.0),
        Candidate("no-latency", 0.5, None),
        Candidate("best", 0.6, 3.0),
        Candidate("unscored", None, 0.5),
    ]
    assert rec.by_quality(rows) == ["best", "fast", "z-late", "a-early", "no-latency", "unscored"]
    assert rec.by_speed(rows) == ["unscored", "fast", "z-late", "a-early", "best", "no-latency"]
