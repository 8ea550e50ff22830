"""``rankscope compare OUT_DIR``: a benchmark's configurations compared from its results.json,
with the options of the run-file form, the same numbers as the benchmark's own statistics, and
clear errors for what cannot be compared."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from rankscope.bench import BenchmarkResult
from rankscope.bench.statistics import compare_benchmark, score_matrix
from rankscope.cli.app import main
from rankscope.report.numbers import fmt_p, fmt_value
from rankscope.stats import compare

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_suites import run_report_bench


def bench(folder: Path, engines: list[tuple[str, str]], queries: int = 24) -> Path:
    return run_report_bench(folder, queries, engines)[1]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("compare-bench")
    engines = [("half", "reporttest-half"), ("perfect", "reporttest-all"), ("sqlite", "sqlite")]
    return bench(folder, engines)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    found, err = capsys.readouterr()
    return code, found, err


def line_of(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.lstrip().startswith(name + " "))


def test_the_benchmarks_own_statistics_are_printed_again(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = BenchmarkResult.read(out / "results.json")
    stats = result.statistics["answered"].quality
    # perfect and sqlite tie on quality: the faster of the two is the best
    assert stats is not None and stats.baseline in ("perfect", "sqlite")
    code, text, err = run_cli(capsys, str(out), *stats.command.split())
    assert code == 0, err
    assert "24 queries: the judged queries every configuration answered (view answered)" in text
    assert "randomised Tukey HSD, B = 10,000, seed 0" in text
    for row in stats.rows:
        if row.system == stats.baseline:
            continue
        shown = line_of(text, row.system)
        assert fmt_value(row.mean) in shown and fmt_value(row.delta, signed=True) in shown
        assert fmt_p(row.p_adjusted) in shown
    assert "▼" in line_of(text, "half")
    # JSON: results.json stores what rankscope compare prints, the very same rows
    code, text, _ = run_cli(capsys, str(out / "results.json"), *stats.command.split(), "-f", "json")
    printed = json.loads(text)["measures"][0]
    stored = json.loads((out / "results.json").read_text())["statistics"]["answered"]["quality"]
    assert printed["rows"] == stored["comparison"]["measures"][0]["rows"]
    assert printed["anova"] == stored["comparison"]["measures"][0]["anova"]


def test_same_options_as_the_run_file_form(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = BenchmarkResult.read(out / "results.json")
    code, text, err = run_cli(capsys, str(out))
    assert code == 0, err
    # default: the headline and MAP, baseline the first configuration, paired t with Holm
    assert "paired t-test; Holm correction over 2 comparisons with half per measure" in text
    assert "\nndcg@10" in text and "\nmap" in text and "half (baseline)" in text
    expected = compare(score_matrix(result, ["ndcg@10", "map"]), baseline="half")
    row = expected.row("map", "perfect")
    assert f"{row.delta:+.4f} ▲" in line_of(text.split("\nmap")[1], "perfect")

    code, text, _ = run_cli(
        capsys, str(out), "-m", "P@1", "--test", "bootstrap", "-b", "sqlite", "--seed", "3"
    )
    assert code == 0 and "paired bootstrap test (studentized), B = 10,000, seed 3" in text
    code, text, _ = run_cli(capsys, str(out), "--test", "randomization")
    assert code == 0 and "exact (all 2^24 sign flips)" in text
    for fmt, marker in (("csv", "measure,system,baseline"), ("markdown", "| system |")):
        code, text, _ = run_cli(capsys, str(out), "-f", fmt)
        assert code == 0 and marker in text
    code, text, _ = run_cli(capsys, str(out), "-f", "latex", "--queries-needed")
    assert code == 0 and r"\begin{tabular}" in text
    code, text, _ = run_cli(capsys, str(out), "--view", "all", "--all-pairs", "--test", "tukey")
    assert code == 0 and "(view all)" in text and "all pairs" in text


def test_latency_is_compared_per_query_and_lower_is_better(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = BenchmarkResult.read(out / "results.json")
    latency = result.statistics["answered"].latency
    assert latency is not None
    code, text, err = run_cli(capsys, str(out), *latency.command.split())
    assert code == 0, err
    assert "latency_ms: lower is better (▲ marks a lower value; W/T/L: queries" in text
    found = compare_benchmark(result, ["latency"], baseline=latency.baseline, test=latency.test)
    for row in latency.rows:
        other = found.row("latency_ms", row.system)
        assert other.p_adjusted == row.p_adjusted and other.mean == row.mean
        if row.significant:
            assert other.direction == row.direction
            mark = "▼" if row.direction == "worse" else "▲"
            assert mark in line_of(text, row.system)


def test_latency_wins_are_the_queries_where_a_configuration_is_faster(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = BenchmarkResult.read(out / "results.json")
    x = score_matrix(result, ["latency"], "all").scores("latency_ms")
    names = [c.name for c in result.successful]
    slowest = names[int(x.mean(axis=1).argmax())]
    b = names.index(slowest)
    args = (str(out), "--view", "all", "-m", "latency", "-b", slowest)
    code, text, err = run_cli(capsys, *args, "-f", "csv")
    assert code == 0, err
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["is_baseline"] == "false"]
    assert rows
    code, table, _ = run_cli(capsys, *args)
    for row in rows:
        s = names.index(row["system"])
        faster, slower = int((x[s] < x[b]).sum()), int((x[s] > x[b]).sum())
        ties = x.shape[1] - faster - slower
        assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == (faster, ties, slower)
        assert f"{faster}/{ties}/{slower}" in line_of(table, row["system"])
    # the slowest on average is slower than some configuration on most queries
    assert any(int(r["wins"]) > int(r["losses"]) for r in rows)
    assert "W/T/L: queries where it is lower/equal/higher" in table


def test_fewer_than_two_configurations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = bench(tmp_path, [("ok", "reporttest-all"), ("broken", "reporttest-broken")])
    code, _, err = run_cli(capsys, str(out))
    assert code == 2 and "Traceback" not in err
    assert (
        "a comparison needs at least two configurations that ran; this benchmark has 1 (ok), "
        "and 1 failed (broken)" in err
    )


def test_bad_baselines_views_and_options(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (("-b", "nope"), "the baseline 'nope' is not a configuration of this benchmark"),
        (("-b", "nope"), "name one of half, perfect, sqlite"),
        (("-m", "P@7"), "'P@7' was not measured"),
        (("-m", "nonsense"), "unknown measure 'nonsense'"),
        (("-M", "5"), "--depth, --rel-level and --judged-only apply to run files"),
        (("x.run",), "folder is compared on its own: rankscope compare OUT_DIR"),
    ]
    for args, message in cases:
        code, _, err = run_cli(capsys, str(out), *args)
        assert code == 2 and message in err and "Traceback" not in err, (args, err)
    code, _, err = run_cli(capsys, "examples/qrels.txt", "--view", "all")
    assert code == 2 and "--view applies to a benchmark's results" in err


def test_missing_or_foreign_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and "no results.json in this folder" in err
    other = tmp_path / "results.json"
    other.write_text(json.dumps({"runs": []}))
    code, _, err = run_cli(capsys, str(other))
    assert code == 2 and "not a rankscope benchmark's results.json" in err
    code, _, err = run_cli(capsys, str(tmp_path / "gone.json"))
    assert code == 2 and "file not found" in err


def test_no_query_in_common_points_at_the_all_view(
    out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((out / "results.json").read_text())
    data["query_sets"]["answered"]["query_ids"] = []
    empty = tmp_path / "results.json"
    empty.write_text(json.dumps(data))
    code, _, err = run_cli(capsys, str(empty))
    assert code == 2 and "no judged query in the answered view" in err
    assert "use --view all" in err


def test_few_queries_constant_measure_and_zero_variance_warn_without_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = bench(
        tmp_path, [("none", "reporttest-none"), ("also-none", "reporttest-none")], queries=3
    )
    code, text, err = run_cli(capsys, str(out), "-m", "ndcg@10")
    assert code == 0, err
    assert "rankscope: warning: only 3 queries" in err
    assert "every system scores 0 on every query" in err
    assert "nan" not in text.lower() and "Traceback" not in err

    shifted = bench(tmp_path / "b", [("none", "reporttest-none"), ("perfect", "reporttest-all")])
    code, text, err = run_cli(capsys, str(shifted), "-m", "ndcg@10")
    assert code == 0
    assert "zero variance" in err and "+inf" in text and "nan" not in text.lower()


def test_latency_over_the_queries_every_configuration_timed_says_so(out: Path) -> None:
    result = BenchmarkResult.read(out / "results.json")
    timing = result.configurations[0].per_query
    assert timing is not None
    first = result.query_ids.index(result.query_sets["all"].query_ids[0])
    timing.latency_ms[first] = None  # as for a query this configuration skipped
    matrix = score_matrix(result, ["latency"], "all")
    n = len(result.query_sets["all"].query_ids) - 1
    assert (
        matrix.query_set
        == f"the {n} queries of the all view whose latency every configuration measured"
    )


@pytest.mark.parametrize("columns", [80, 100])
def test_compare_fits_the_terminal_and_says_what_it_left_out(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
) -> None:
    # long names, as a sweep gives them
    engines = [
        ("lancedb-ivf_hnsw_sq-nlist1-ef_search10", "reporttest-all"),
        ("faiss-ivf_pq-nlist32-pq_m48-nprobe16", "reporttest-most"),
        ("hnswlib-m16-ef_search40", "reporttest-half"),
    ]
    found = bench(tmp_path, engines)
    monkeypatch.setenv("COLUMNS", str(columns))
    code, text, err = run_cli(capsys, str(found))
    assert code == 0, err
    rows = [line for line in text.splitlines() if line.startswith("faiss-ivf_pq")]
    assert rows and all(len(line) <= columns for line in text.splitlines())
    # every row on one line: the Δ, p and W/T/L (or what was left out) beside the name
    assert all("0." in line for line in rows)
    kept = text.split("left out at", 1)
    assert len(kept) == 2 and f" {columns} columns: " in kept[1]
    # a pipe without COLUMNS gets every column
    monkeypatch.delenv("COLUMNS")
    code, wide, _ = run_cli(capsys, str(found))
    assert "left out at" not in wide and "ES" in wide and "W/T/L" in wide
