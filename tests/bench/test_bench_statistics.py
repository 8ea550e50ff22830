"""The benchmark's comparison statistics: the headline's interval per configuration, the
randomised Tukey HSD against the best, latency against the fastest, recommendations that say
what is within noise, all stored in results.json and reproducible from it."""

from __future__ import annotations

import importlib
import io
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_suites import make_suite, make_wide_suite
from rich.console import Console

from rankscope.bench import BenchmarkResult, Candidate, recommend, run_benchmark
from rankscope.bench.latency import LATENCY
from rankscope.bench.statistics import score_matrix
from rankscope.report import render_table, to_markdown
from rankscope.stats import StatsWarning, compare, randomized_tukey_hsd, t_interval
from rankscope.stats.comparison import normalised
from rankscope.suite import load_suite

rec = importlib.import_module("rankscope.bench.recommend")

ENGINES = """
- {name: even, engine: benchtest-even}
- {name: full, engine: benchtest-overlap}
- {name: full-again, engine: benchtest-overlap}
- {name: none, engine: benchtest-none}
"""


def table(result: BenchmarkResult, **options: object) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    render_table(result, console, **options)  # type: ignore[call-overload]
    return console.file.getvalue()  # type: ignore[attr-defined]


# ------------------------------------------------------------------------- lead_verdict
def test_lead_verdict_is_the_randomised_tukey_hsd_of_the_pair() -> None:
    rng = np.random.default_rng(1)
    runner_up = rng.uniform(0.2, 0.6, 40)
    clear = runner_up + 0.1 + rng.normal(0, 0.02, 40)
    verdict = rec.lead_verdict(clear, runner_up, higher_is_better=True)
    assert verdict.verdict == "beyond_noise" and verdict.p_value is not None
    assert verdict.p_value < 0.001 and verdict.difference == pytest.approx(
        runner_up.mean() - clear.mean()
    )
    # the same p as the library's randomised Tukey HSD over the two (same seed, same order)
    pair = randomized_tukey_hsd(np.stack([clear, runner_up]), seed=0).pair(1, 0)
    assert verdict.p_value == pair.p_value

    hair = runner_up + rng.normal(0.0025, 0.05, 40)
    noisy = rec.lead_verdict(hair, runner_up, higher_is_better=True)
    assert noisy.verdict == "within_noise" and noisy.p_value is not None and noisy.p_value > 0.05
    assert "within noise (p = " in noisy.detail and "Δ = " in noisy.detail

    same = rec.lead_verdict(runner_up, runner_up.copy(), higher_is_better=True)
    assert same.verdict == "within_noise" and same.p_value == 1.0 and same.difference == 0.0


def test_lead_verdict_for_latency_and_what_it_cannot_assess() -> None:
    rng = np.random.default_rng(2)
    slow = rng.uniform(1.0, 2.0, 30)
    fast = slow * 0.5
    verdict = rec.lead_verdict(fast, slow, higher_is_better=False)
    assert verdict.verdict == "beyond_noise" and " ms" in verdict.detail
    # a "leader" that is slower per query is never beyond noise
    assert rec.lead_verdict(slow, fast, higher_is_better=False).verdict == "within_noise"
    # a third configuration joins the family: p can only grow
    family = rec.lead_verdict(fast, slow, higher_is_better=False, others=[slow * 0.75])
    assert family.p_value is not None and verdict.p_value is not None
    assert family.p_value >= verdict.p_value
    assert rec.lead_verdict(fast[:1], slow[:1], higher_is_better=False).verdict == "not_assessed"
    assert rec.lead_verdict(fast, slow[:5], higher_is_better=False).verdict == "not_assessed"
    nan = fast.copy()
    nan[3] = math.nan
    assert rec.lead_verdict(nan, slow, higher_is_better=False).verdict == "not_assessed"


def test_the_seed_makes_the_verdict_deterministic() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 1, 200), rng.uniform(0, 1, 200)
    first = rec.lead_verdict(a, b, higher_is_better=True, seed=5)
    assert rec.lead_verdict(a, b, higher_is_better=True, seed=5) == first
    other = rec.lead_verdict(a, b, higher_is_better=True, seed=6)
    assert other.p_value != first.p_value  # a different draw, same verdict
    assert other.verdict == first.verdict == "within_noise"


# ------------------------------------------------------------------------- recommend
def candidates(n: int = 30) -> list[Candidate]:
    rng = np.random.default_rng(4)
    base = rng.uniform(0.3, 0.7, n)
    lat = rng.uniform(1.0, 3.0, n)

    def make(name: str, values: np.ndarray, latency: np.ndarray) -> Candidate:
        return Candidate(
            name,
            float(values.mean()),
            float(np.median(latency)),
            values=values,
            latencies_ms=latency,
        )

    return [
        make("a", base + 0.0025 + rng.normal(0, 0.03, n), lat * 1.01),
        make("b", base, lat),
        make("c", base - 0.01 + rng.normal(0, 0.03, n), lat * 0.5),
        make("d", base * 0.3, lat * 0.999),
    ]


def test_recommendations_name_what_is_within_noise_of_the_best() -> None:
    rows = candidates()
    picks = recommend(rows, "ndcg@10", "nDCG@10", num_queries=30, query_set="30 judged queries")
    best = picks.best_quality
    assert best is not None and best.config == "a"
    stats = rec.view_statistics(rows, "ndcg@10", "nDCG@10")
    assert stats.quality is not None and stats.quality.baseline == "a"
    within = {c.config: c for c in best.within_noise}
    assert set(within) == {"b", "c"}  # d is far below: significantly worse
    for name, contender in within.items():
        row = stats.quality.row(name)
        assert contender.p_value == row.p_adjusted and contender.difference == row.delta
        assert not row.significant
    assert stats.quality.row("d").significant and stats.quality.row("d").direction == "worse"
    assert best.reason.startswith("highest nDCG@10 (")
    assert "over 30 judged queries; b and c are within noise (b: p = " in best.reason
    assert (
        "randomised Tukey HSD, family-wise over all 6 pairs of the 4 configurations, n = 30"
        in best.reason
    )
    lead = best.lead
    assert lead is not None and lead.over == "b" and lead.verdict == "within_noise"
    assert lead.p_value == stats.quality.row("b").p_adjusted

    fastest = picks.fastest
    assert fastest is not None and fastest.config == "c"
    assert fastest.lead is not None and fastest.lead.verdict == "beyond_noise"
    assert "every other configuration is significantly slower (next: " in fastest.reason
    assert "paired randomization test, Holm-corrected over the 3 comparisons with c" in (
        fastest.reason
    )
    assert stats.latency is not None and stats.latency.measure == LATENCY
    assert stats.latency.baseline == "c"


def test_a_clear_winner_is_said_to_be_beyond_noise() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0.3, 0.6, 25)
    rows = [
        Candidate("top", float((base + 0.2).mean()), 1.0, values=base + 0.2),
        Candidate("low", float(base.mean()), 1.0, values=base),
    ]
    best = recommend(rows).best_quality
    assert best is not None and best.lead is not None and best.lead.verdict == "beyond_noise"
    assert (
        "every other configuration is significantly worse (next: low, p = 0.0001, Δ = -0.2000)"
        in best.reason
    )
    assert best.within_noise == []


def test_without_per_query_values_nothing_is_claimed() -> None:
    picks = recommend([Candidate("a", 0.5025, 2.0), Candidate("b", 0.5, 1.0)])
    lead = picks.best_quality.lead  # type: ignore[union-attr]
    assert lead is not None and lead.verdict == "not_assessed" and lead.p_value is None
    assert lead.difference == pytest.approx(0.0025)
    assert "not tested for significance (nDCG@10" not in picks.best_quality.reason  # type: ignore[union-attr]
    assert "0.0025 ahead of b, not tested for significance" in picks.best_quality.reason  # type: ignore[union-attr]
    assert recommend([Candidate("only", 0.5, 1.0)]).best_quality.lead is None  # type: ignore[union-attr]


# ------------------------------------------------------------------------- the benchmark
@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchmarkResult, Path]:
    folder = tmp_path_factory.mktemp("wide")
    out = folder / "out"
    result = run_benchmark(load_suite(make_wide_suite(folder, ENGINES, queries=24)), out)
    return result, out


def test_results_json_holds_the_statistics_of_each_view(
    wide: tuple[BenchmarkResult, Path],
) -> None:
    result, out = wide
    assert result.schema_version == 4
    stats = result.statistics["answered"]
    assert stats.seed == 0 and stats.resamples == 10_000 and stats.alpha == 0.05
    quality = stats.quality
    assert quality is not None and quality.num_queries == 24 and quality.measure == "ndcg@10"
    assert quality.test == "rtukey" and quality.test_name == "randomised Tukey HSD"
    assert quality.family == "family-wise over all 6 pairs of the 4 configurations"
    assert [r.system for r in quality.rows] == ["even", "full", "full-again", "none"]
    # full and full-again tie on quality: the faster of the two is the best (timing decides)
    best = quality.baseline
    assert best in ("full", "full-again")
    assert best == result.recommended().best_quality.config  # type: ignore[union-attr]
    other = "full-again" if best == "full" else "full"
    _, values = result.per_query_values()
    for row in quality.rows:
        assert row.mean == float(values[row.system].mean())
        assert row.mean_interval == t_interval(values[row.system])
    assert quality.row(other).p_adjusted == 1.0 and not quality.row(other).significant
    for name in ("even", "none"):
        assert quality.row(name).significant and quality.row(name).direction == "worse"
    assert quality.command == f"--view answered -m ndcg@10 --test rtukey --baseline {best} --seed 0"
    latency = stats.latency
    assert latency is not None and latency.num_queries == 24 and latency.measure == "latency_ms"
    assert latency.comparison is not None and latency.comparison.exact  # n = 24: every flip
    assert latency.test == "randomization"
    assert latency.family == f"Holm-corrected over the 3 comparisons with {latency.baseline}"
    assert latency.command.startswith("--view answered -m latency_ms --test randomization")
    # read back typed, equal
    assert BenchmarkResult.read(out / "results.json").statistics == result.statistics
    data = json.loads((out / "results.json").read_text())
    assert data["statistics"]["all"]["quality"]["comparison"]["baseline"] in ("full", "full-again")


def test_every_statistic_is_reproduced_from_results_json(
    wide: tuple[BenchmarkResult, Path],
) -> None:
    _, out = wide
    saved = BenchmarkResult.read(out / "results.json")
    for view in ("answered", "all"):
        stats = saved.statistics[view]  # type: ignore[index]
        for found, measure in ((stats.quality, "ndcg@10"), (stats.latency, "latency")):
            assert found is not None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", StatsWarning)  # "none" is 0 on every query
                again = compare(
                    score_matrix(saved, [measure], view),  # type: ignore[arg-type]
                    baseline=found.baseline,
                    test=found.test,  # type: ignore[arg-type]
                    seed=stats.seed,
                )
            # the stored value is the statistics' own: row for row what compare() gives
            assert found.rows == normalised(again).measures[0].rows


def test_the_latency_matrix_knows_lower_is_better(wide: tuple[BenchmarkResult, Path]) -> None:
    """compare() of score_matrix's latency gives the directions results.json stores (a slower
    configuration is worse), and its wins are the queries where a configuration is faster."""
    result, _ = wide
    matrix = score_matrix(result, ["latency"], "all")
    assert matrix.quantities[0].name == LATENCY and not matrix.quantities[0].higher_is_better
    latency = result.statistics["all"].latency
    assert latency is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        again = compare(matrix, baseline=latency.baseline, test="randomization", seed=0)
    x = matrix.scores(LATENCY)
    base = matrix.system_index(latency.baseline)
    for row in latency.rows:
        other = again.row(LATENCY, row.system)
        assert other.direction == row.direction
        if not other.is_baseline:
            s = matrix.system_index(row.system)
            assert other.wins == row.wins == int((x[s] < x[base]).sum())


def test_the_table_shows_the_interval_and_marks_what_is_worse_than_the_best(
    wide: tuple[BenchmarkResult, Path],
) -> None:
    result, _ = wide
    text = table(result)
    quality = result.statistics["answered"].quality
    assert quality is not None
    assert "95% CI" in text and "Δ best" in text
    lines = {line.split()[1]: line for line in text.splitlines() if line.startswith("│")}
    best = quality.baseline
    other = "full-again" if best == "full" else "full"
    full, even = quality.row(best), quality.row("even")
    interval = full.mean_interval
    assert f"[{interval.low:.4f}, {interval.high:.4f}]" in lines[best]
    assert "best" in lines[best]
    assert "▼" in lines["even"] and "▼" in lines["none"] and "▼" not in lines[other]
    assert f"{even.delta:+.4f} ▼" in lines["even"]
    assert "randomised Tukey HSD (family-wise over all 6 pairs of the 4 configurations; " in text
    assert "B = 10,000, seed 0)" in text
    assert "rankscope compare <output folder> --view answered -m ndcg@10 --test rtukey" in text
    # where the folder is known, the command is complete
    shown = Console(width=400, record=True)
    render_table(result, shown, folder="out dir/b")
    assert (
        "rankscope compare 'out dir/b' --view answered -m ndcg@10 --test rtukey"
        in shown.export_text()
    )
    # the terminal says it in one line; the Markdown (and the report) give the reasons
    assert f"Best quality: {best} (nDCG@10 lin 1.0000, 1 other within noise)" in text
    assert "nan" not in text.lower()
    md = to_markdown(result)
    assert f"{other} is within noise ({other}: p = 1.0000, Δ = +0.0000)" in md
    assert "| 95% CI | Δ best | p |" in md and f"{even.delta:+.4f} ▼" in md


def test_the_seed_comes_from_the_suite_settings(tmp_path: Path) -> None:
    engines = """
    - {name: even, engine: benchtest-even}
    - {name: full, engine: benchtest-overlap}
    """
    suite = load_suite(make_wide_suite(tmp_path, engines, settings=", seed: 7"))
    result = run_benchmark(suite, tmp_path / "out")
    stats = result.statistics["answered"]
    assert stats.seed == 7 and stats.quality is not None
    assert stats.quality.command.endswith("--seed 7")
    again = compare(score_matrix(result, ["ndcg@10"]), baseline="full", test="rtukey", seed=7)
    assert stats.quality.row("even").p_adjusted == again.row("ndcg@10", "even").p_adjusted


def test_few_queries_and_constant_scores_warn_without_nan(tmp_path: Path) -> None:
    engines = """
    - {name: a, engine: benchtest-none}
    - {name: b, engine: benchtest-none}
    """
    result = run_benchmark(load_suite(make_suite(tmp_path, engines)), tmp_path / "out")
    stats = result.statistics["answered"]
    assert stats.quality is not None
    warnings = " ".join(stats.quality.warnings)
    assert "only 4 queries" in warnings and "every system scores 0 on every query" in warnings
    assert all(r.p_adjusted in (None, 1.0) for r in stats.quality.rows)
    text = table(result)
    assert "statistics: only 4 queries" in text and "nan" not in text.lower()
    assert "inf" not in text.replace("info", "")


def test_one_configuration_gets_its_interval_and_no_comparison(tmp_path: Path) -> None:
    engines = "- {name: only, engine: benchtest-overlap}"
    result = run_benchmark(load_suite(make_wide_suite(tmp_path, engines)), tmp_path / "out")
    quality = result.statistics["answered"].quality
    assert quality is not None and not quality.compared
    assert quality.warnings == ["one configuration: nothing to compare it with"]
    assert quality.alone is not None and quality.rows == (quality.alone.row,)
    assert quality.alone.queries == len(result.query_sets["answered"].query_ids)
    read = BenchmarkResult.read(tmp_path / "out" / "results.json")
    assert read.statistics == result.statistics
    text = table(result)
    assert "95% CI" in text and "Δ best" not in text


def test_results_written_before_the_statistics_still_read_and_render(
    wide: tuple[BenchmarkResult, Path], tmp_path: Path
) -> None:
    result, _ = wide
    data = result.to_data()
    data["schema_version"] = 2
    del data["statistics"]
    del data["settings"]["seed"]
    for picks in data["recommendations"].values():
        for key in ("best_quality", "fastest", "best_balance"):
            if picks[key] is not None:
                picks[key].pop("within_noise", None)
                if picks[key]["lead"] is not None:
                    picks[key]["lead"].pop("p_value", None)
    old = tmp_path / "results.json"
    old.write_text(json.dumps(data))
    read = BenchmarkResult.read(old)
    assert read.statistics == {} and read.schema_version == 2
    text = table(read)
    assert "nDCG@10 lin" in text and "Δ best" not in text


def test_a_damaged_comparison_in_results_json_is_a_clear_error(
    wide: tuple[BenchmarkResult, Path], tmp_path: Path
) -> None:
    from rankscope.errors import InputError

    result, _ = wide
    data = result.to_data()
    del data["statistics"]["answered"]["quality"]["comparison"]["measures"][0]["anova"]
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"statistics\.answered\.quality\.comparison: .*'anova'"):
        BenchmarkResult.read(bad)
    # warnings nested 10,000 deep: a clear error, no RecursionError
    data["statistics"]["answered"]["quality"]["comparison"]["warnings"] = "DEEP"
    bad.write_text(json.dumps(data).replace('"DEEP"', "[" * 10_000 + "]" * 10_000))
    with pytest.raises(InputError, match=r"not a rankscope benchmark's results\.json"):
        BenchmarkResult.read(bad)
    data["statistics"]["answered"]["quality"]["comparison"] = None  # and no alone either
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match="either a comparison or the lone configuration's row"):
        BenchmarkResult.read(bad)


def test_reading_something_that_is_not_results_json_is_a_clear_error(tmp_path: Path) -> None:
    from rankscope.errors import InputError

    bad = tmp_path / "results.json"
    bad.write_text('{"name": "x"}')
    with pytest.raises(InputError, match=r"results.json: not a rankscope benchmark's"):
        BenchmarkResult.read(bad)
    bad.write_text("not json")
    with pytest.raises(InputError, match=r"not a rankscope benchmark's results\.json"):
        BenchmarkResult.read(bad)
    with pytest.raises(InputError, match="file not found"):
        BenchmarkResult.read(tmp_path / "missing.json")


def test_a_fast_engine_is_not_drowned_by_slow_ones() -> None:
    """Latencies on scales 200x apart (the demo: tantivy 0.32 ms, SQLite 2.8 ms, dense 64 and
    96 ms): SQLite, slower on every query, is significantly slower than tantivy. Permuting the
    latencies across all configurations (randomised Tukey HSD) would call it noise."""
    rng = np.random.default_rng(6)
    n = 80
    scales = {"tantivy": 0.32, "sqlite": 2.8, "dense": 64.0, "hybrid": 96.0}
    quality = rng.uniform(0.2, 0.8, n)
    rows = []
    for name, scale in scales.items():
        latency = scale * rng.lognormal(0.0, 0.3 if scale < 10 else 0.6, n)
        rows.append(
            Candidate(name, 0.5, float(np.median(latency)), values=quality, latencies_ms=latency)
        )
    stats = rec.view_statistics(rows)
    latency = stats.latency
    assert latency is not None and latency.baseline == "tantivy"
    sqlite = latency.row("sqlite")
    assert sqlite.significant and sqlite.direction == "worse"
    assert sqlite.p_adjusted is not None and sqlite.p_adjusted < 0.001
    # what the randomised Tukey HSD says on the same data
    tukey = randomized_tukey_hsd(np.stack([r.latencies_ms for r in rows]), seed=0).pair(1, 0)
    assert tukey.p_value > 0.5


def test_the_table_fits_the_terminal_leaving_out_secondary_columns(
    wide: tuple[BenchmarkResult, Path],
) -> None:
    result, _ = wide
    full = table(result)
    header = next(line for line in full.splitlines() if "configuration" in line)
    everything = [h.strip() for h in header.split("┃")[2:-1]]
    assert everything[:5] == ["nDCG@10 lin", "95% CI", "Δ best", "p", "MAP"]
    assert everything[-5:] == ["p50 ms", "p50 IQR", "p95 ms", "index s", "Pareto"]
    for width in (100, 80):
        text = _table_at(result, width)
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width
        header = next(line for line in lines if "configuration" in line)
        # the headline, Δ best and p50 are never left out
        for kept in ("nDCG@10 lin", "Δ best", "p50 ms"):
            assert kept in header
        note = next(line for line in lines if line.startswith(f"left out at {width} columns: "))
        # the least important go first: the secondary measures from the last, then the
        # latency spread
        secondary = everything[4 : everything.index("p50 ms")][::-1]
        assert note.startswith(f"left out at {width} columns: {', '.join(secondary)}, p50 IQR")
    assert "left out at" not in full


def _table_at(result: BenchmarkResult, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    render_table(result, console)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_a_pipe_in_a_configuration_name_stays_in_its_markdown_cell(
    wide: tuple[BenchmarkResult, Path],
) -> None:
    """Every Markdown table is written by one function, which escapes ``|``."""
    result, _ = wide
    renamed = [
        c.model_copy(update={"name": "full|again"}) if c.name == "full-again" else c
        for c in result.configurations
    ]
    md = to_markdown(result.model_copy(update={"configurations": renamed}))
    row = next(line for line in md.splitlines() if "full\\|again" in line)
    header = next(line for line in md.splitlines() if line.startswith("| configuration |"))
    assert row.startswith("| full\\|again | ") and row.count(" | ") == header.count(" | ")


def test_a_lone_configuration_gets_the_clipped_interval_of_its_measure() -> None:
    from rankscope.bench.latency import LATENCY_QUANTITY
    from rankscope.bench.statistics import compare_configurations
    from rankscope.metrics.names import parse_measure
    from rankscope.stats import Quantity

    values = np.array([[0.6, 1.0]])  # two queries: the t interval is [-1.74, 3.34]
    common: dict[str, Any] = {
        "baseline": "a",
        "baseline_reason": "alone",
        "label": "x",
        "query_set": "two",
    }
    ndcg = compare_configurations(
        ["a"], values, quantity=Quantity.of(parse_measure("ndcg@10")), **common
    )
    assert ndcg.alone is not None
    interval = ndcg.alone.row.mean_interval
    assert (interval.low, interval.high, interval.clipped) == (0.0, 1.0, True)
    latency = compare_configurations(["a"], values, quantity=LATENCY_QUANTITY, **common)
    assert latency.alone is not None and latency.alone.row.mean_interval.low < 0
