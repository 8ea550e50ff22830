"""``rankscope compare``: formats, options, planning and errors, through the real entry point."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rankscope.cli.app import main
from rankscope.compare_io import compare_runs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "bm25.run")
DENSE = str(EXAMPLES / "dense.run")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_states_queries_test_and_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, QRELS, BM25, DENSE, "-m", "ndcg@10")
    assert code == 0, err
    assert "10 queries: every judged query" in out
    assert "paired t-test; Holm correction over 1 comparison with bm25 per measure" in out
    expected = compare_runs(QRELS, [BM25, DENSE], ["ndcg@10"])
    row = expected.row("ndcg@10", "dense")
    dense = next(line for line in out.splitlines() if line.lstrip().startswith("dense"))
    assert f"{row.mean:.4f}" in dense and f"{row.delta:+.4f}" in dense
    assert f"{row.p_adjusted:.4f}" in dense and f"{row.wins}/{row.ties}/{row.losses}" in dense
    assert "bm25 (baseline)" in out
    assert "only 10 queries" not in err  # 10 >= 5: no warning


def test_default_measures_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, QRELS, BM25, DENSE, "--format", "json", "--test", "randomization"
    )
    assert code == 0, err
    data = json.loads(out)
    assert [m["measure"] for m in data["measures"]] == ["ndcg@10", "map"]
    assert data["test"] == "randomization" and data["exact"] is True  # n = 10: all 2^10 signs
    assert data["resamples"] is None and data["queries"] == 10
    dense = data["measures"][0]["rows"][1]
    assert dense["p_value"] * 1024 == pytest.approx(round(dense["p_value"] * 1024))


def test_baseline_by_file_and_seeded_bootstrap(capsys: pytest.CaptureFixture[str]) -> None:
    args = (QRELS, BM25, DENSE, "-m", "map", "--baseline", "dense.run", "--test", "bootstrap")
    code, out, err = run_cli(capsys, *args, "--seed", "3", "-f", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["system"] for r in rows] == ["bm25", "dense"]
    assert rows[1]["is_baseline"] == "true" and rows[0]["baseline"] == "dense"
    again = run_cli(capsys, *args, "--seed", "3", "-f", "csv")[1]
    assert again == out  # same seed, same numbers
    other = run_cli(capsys, *args, "--seed", "4", "-f", "csv")[1]
    assert other != out


def test_markdown_latex_and_planning(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, QRELS, BM25, DENSE, "-m", "P@10", "-f", "markdown", "--queries-needed"
    )
    assert code == 0
    assert "| system | mean | 95% CI | Δ vs bm25 |" in out
    assert "P@10, planning (paired t):" in out and "queries needed (power 0.8)" in out
    code, out, _ = run_cli(capsys, QRELS, BM25, DENSE, "-m", "P@10", "-f", "latex")
    assert code == 0 and r"\begin{tabular}" in out and r"$\Delta$ vs bm25" in out
    code, out, _ = run_cli(capsys, QRELS, BM25, DENSE, "--queries-needed", "--delta", "0.05")
    assert code == 0 and "planning (paired t)" in out and "Δ " in out


def test_tukey_shows_all_pairs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    third = tmp_path / "third.run"
    lines = Path(BM25).read_text().splitlines()
    third.write_text("\n".join(line.rsplit(" ", 1)[0] + " third" for line in lines[::2]) + "\n")
    code, out, err = run_cli(capsys, QRELS, BM25, DENSE, str(third), "-m", "ndcg@10", "-t", "tukey")
    assert code == 0, err
    assert "ndcg@10: all pairs" in out and "simultaneous CI" in out
    assert "Two-way ANOVA (systems × queries): F(2, 18)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((QRELS, BM25), "compare needs at least two runs"),
        ((QRELS, BM25, DENSE, "--baseline", "nope"), "baseline 'nope' is not one of"),
        ((QRELS, BM25, "missing.run"), "missing.run: file not found"),
        ((str(EXAMPLES), BM25, DENSE), "expected a file, got a directory"),
        ((QRELS, BM25, DENSE, "-m", "ndgc@10"), "unknown measure"),
        ((QRELS, BM25, DENSE, "--alpha", "2"), "alpha must lie strictly between 0 and 1"),
        ((QRELS, BM25, DENSE, "-m", "gm_map"), "gm_map"),
    ],
)
def test_errors_exit_2_without_traceback(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_disjoint_runs_and_few_queries(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    first = tmp_path / "first.run"
    second = tmp_path / "second.run"
    lines = Path(BM25).read_text().splitlines()
    first.write_text("\n".join(line for line in lines if line.split()[0] in {"101", "102"}) + "\n")
    second.write_text("\n".join(line for line in lines if line.split()[0] in {"103", "104"}) + "\n")
    code, _, err = run_cli(capsys, QRELS, str(first), str(second))
    assert code == 2 and "disjoint query sets" in err
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "\n".join(
            line
            for line in Path(QRELS).read_text().splitlines()
            if line.split()[0] in {"101", "102", "103"}
        )
        + "\n"
    )
    code, out, err = run_cli(capsys, str(qrels), BM25, DENSE, "-m", "ndcg@10")
    assert code == 0
    assert "rankscope: warning: only 3 queries" in err
    assert "unjudged, dropped: bm25 7, dense 7" in out
    assert "nan" not in out.lower()


def test_readme_example_is_the_real_output(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    command = "$ rankscope compare examples/qrels.txt examples/bm25.run examples/dense.run\n"
    block = readme.split(command, 1)[1].split("```", 1)[0]
    code, out, _ = run_cli(capsys, QRELS, BM25, DENSE)
    assert code == 0
    shown = [line.rstrip() for line in block.splitlines()]
    assert shown == [line.rstrip() for line in out.splitlines()]


# P@10 counts (a, b) per query: |d| = 0.1 ten times, once negative (0.1 - 0, 0.4 - 0.3,
# 0.9 - 0.8, ... are four different floats), 0.2 four times, 0.4 once, one tie
P10_COUNTS = [(1, 0), (4, 3), (8, 7), (3, 2), (2, 1), (6, 5), (9, 8), (5, 4), (7, 6)]
P10_COUNTS += [(5, 3), (7, 5), (3, 1), (9, 7), (4, 5), (6, 2), (1, 1)]


def _p10_runs(folder: Path) -> tuple[str, str, str]:
    qrels, run_a, run_b = folder / "qrels.txt", folder / "a.run", folder / "b.run"
    judged: list[str] = []
    ranked_a: list[str] = []
    ranked_b: list[str] = []
    for q, (hits_a, hits_b) in enumerate(P10_COUNTS, start=1):
        judged += [f"{q} 0 rel{q}-{i} 1" for i in range(10)]
        for ranked, hits, tag in ((ranked_a, hits_a, "a"), (ranked_b, hits_b, "b")):
            docs = [f"rel{q}-{i}" for i in range(hits)] + [f"non{q}-{i}" for i in range(10 - hits)]
            ranked += [f"{q} Q0 {doc} {r} {10 - r} {tag}" for r, doc in enumerate(docs, start=1)]
    qrels.write_text("\n".join(judged) + "\n")
    run_a.write_text("\n".join(ranked_a) + "\n")
    run_b.write_text("\n".join(ranked_b) + "\n")
    return str(qrels), str(run_a), str(run_b)


def test_wilcoxon_on_p_at_10_ranks_tied_differences_together(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from scipy import stats

    qrels, run_a, run_b = _p10_runs(tmp_path)
    code, out, err = run_cli(
        capsys, qrels, run_b, run_a, "-m", "P@10", "--test", "wilcoxon", "-f", "json"
    )
    assert code == 0, err
    row = json.loads(out)["measures"][0]["rows"][1]
    exact = [(a - b) / 10 for a, b in P10_COUNTS]  # each difference rounded once: ties kept
    reference = stats.wilcoxon(exact, correction=True)  # R: wilcox.test(..., correct = TRUE)
    assert row["statistic"] == float(reference.statistic) == 5.5  # the mid-rank of ten 0.1s
    assert row["p_value"] == pytest.approx(float(reference.pvalue), rel=1e-12)
    assert round(row["p_value"], 5) == 0.00147  # differences as floats gave W 3.5, p 0.00123
    assert (row["wins"], row["ties"], row["losses"]) == (14, 1, 1)
