"""``rankscope eval``: formats, options and errors, through the real entry point."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from rankscope import evaluate
from rankscope.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "bm25.run")
DENSE = str(EXAMPLES / "dense.run")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_default_table_has_runs_as_rows_and_default_measures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, QRELS, BM25, DENSE, "-m", "hit@5", "-m", "mrr@10")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.strip()]
    header = lines[0].replace("┃", " ").split()
    assert header == ["run", "hit@5", "mrr@10"]
    expected = evaluate(QRELS, [BM25, DENSE], ["hit@5", "mrr@10"])
    bm25_row = next(line for line in lines if line.lstrip().startswith("bm25"))
    assert f"{expected.mean('bm25')['mrr@10']:.4f}" in bm25_row
    assert any(line.lstrip().startswith("dense") for line in lines)
    assert "10 queries" in out


def test_default_measures_without_m(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, QRELS, BM25, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["measures"] == ["map", "ndcg@10", "P@10", "recall@100", "mrr"]


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, QRELS, BM25, DENSE, "-m", "ndcg_exp@10", "-f", "json")
    assert code == 0
    data = json.loads(out)
    assert data["measures"] == ["ndcg_exp@10"]
    assert data["settings"] == {
        "depth": None,
        "rel_level": 1,
        "judged_only": False,
        "average_over_qrels": False,
    }
    assert [r["name"] for r in data["runs"]] == ["bm25", "dense"]
    assert "per_query" not in data["runs"][0]
    expected = evaluate(QRELS, DENSE, ["ndcg_exp@10"]).mean()
    assert data["runs"][1]["mean"]["ndcg_exp@10"] == pytest.approx(expected["ndcg_exp@10"])

    code, out, _ = run_cli(capsys, QRELS, BM25, "-m", "hit@1", "-q", "-f", "json")
    per_query = json.loads(out)["runs"][0]["per_query"]
    assert len(per_query) == 10 and all(set(v) == {"hit@1"} for v in per_query.values())


def test_markdown_table_and_per_query_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, QRELS, BM25, DENSE, "-m", "P@5", "-m", "num_rel_ret", "-f", "markdown"
    )
    assert code == 0, err
    expected = evaluate(QRELS, [BM25, DENSE], ["P@5", "num_rel_ret"])
    p5 = {run: f"{expected.mean(run)['P@5']:.4f}" for run in ("bm25", "dense")}
    rel = {run: str(round(expected.mean(run)["num_rel_ret"])) for run in ("bm25", "dense")}
    assert out == (
        "| run | P@5 | num_rel_ret |\n"
        "|---|---:|---:|\n"
        f"| bm25 | {p5['bm25']} | {rel['bm25']} |\n"
        f"| dense | {p5['dense']} | {rel['dense']} |\n"
        "\n10 queries\n"
    )
    code, out, _ = run_cli(capsys, QRELS, BM25, "-m", "P@5", "-q", "-f", "markdown")
    lines = out.splitlines()
    assert lines[:2] == ["| run | query | P@5 |", "|---|---|---:|"]
    value = expected.per_query("bm25")["101"]["P@5"]
    assert lines[2] == f"| bm25 | 101 | {value:.4f} |"
    assert lines[12:15] == ["", "| run | P@5 |", "|---|---:|"]


def test_csv_with_per_query_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, QRELS, BM25, DENSE, "-m", "hit@5", "-m", "judged@20", "-q", "--format", "csv"
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["run", "query_id", "measure", "value"]
    assert len(rows) == 2 * (10 + 1) * 2
    alls = {(r["run"], r["measure"]): float(r["value"]) for r in rows if r["query_id"] == ""}
    expected = evaluate(QRELS, [BM25, DENSE], ["hit@5", "judged@20"])
    assert alls[("dense", "judged@20")] == expected.mean("dense")["judged@20"]
    code, out, _ = run_cli(capsys, QRELS, BM25, "-m", "hit@5", "-f", "csv")
    assert out.splitlines()[1:] == [f"bm25,,hit@5,{expected.mean('bm25')['hit@5']!r}"]


def test_csv_query_named_all_is_not_the_summary_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("all 0 a 1\nq2 0 b 1\n")
    run.write_text("all Q0 a 1 2 r\nall Q0 x 2 1 r\nq2 Q0 x 1 1 r\n")
    code, out, _ = run_cli(capsys, str(qrels), str(run), "-m", "P@1", "-q", "-f", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))[1:]
    assert rows == [
        ["r", "all", "P@1", "1.0"],
        ["r", "q2", "P@1", "0.0"],
        ["r", "", "P@1", "0.5"],
    ]


def test_one_query_is_counted_in_the_singular(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\n")
    run.write_text("q1 Q0 a 1 2 r\n")
    code, out, _ = run_cli(capsys, str(qrels), str(run), "-m", "P@1")
    assert code == 0
    assert "1 query" in out and "1 queries" not in out


def test_run_names_are_shown_as_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A run name is text, not rich markup or an emoji code."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\n")
    run.write_text("q1 Q0 a 1 2 [bold]a:thumbs_up:b\n")
    code, out, _ = run_cli(capsys, str(qrels), str(run), "-m", "P@1")
    assert code == 0
    assert "[bold]a:thumbs_up:b" in out


def test_per_query_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, QRELS, BM25, DENSE, "-m", "mrr@10", "-m", "P@5", "-q")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "query", "mrr@10", "P@5"]
    rows = [line.split() for line in lines[2:22]]
    expected = evaluate(QRELS, [BM25, DENSE], ["mrr@10", "P@5"])
    for run, query, mrr, p5 in rows:
        assert mrr == f"{expected.per_query(run)[query]['mrr@10']:.4f}"
        assert p5 == f"{expected.per_query(run)[query]['P@5']:.4f}"
    assert [r[0] for r in rows] == ["bm25"] * 10 + ["dense"] * 10
    assert "10 queries" in out  # the summary table follows


def test_measures_command_lists_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    for name in ("ndcg", "hit@10", "judged@10", "ndcg_exp@10", "iprec@0.5"):
        assert name in out


def test_options_reach_evaluate(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["-m", "mrr@10", "-m", "judged@10", "-f", "json"]
    cases: list[tuple[list[str], dict[str, Any]]] = [
        (["-M", "3"], {"depth": 3}),
        (["-l", "2"], {"rel_level": 2}),
        (["-J"], {"judged_only": True}),
        (["-c"], {"average_over_qrels": True}),
    ]
    for extra, kwargs in cases:
        code, out, _ = run_cli(capsys, QRELS, DENSE, *args, *extra)
        assert code == 0
        data = json.loads(out)
        expected = evaluate(QRELS, DENSE, ["mrr@10", "judged@10"], **kwargs)  # type: ignore[arg-type]
        assert data["runs"][0]["mean"] == expected.mean(), extra
        assert data["settings"][next(iter(kwargs))] == next(iter(kwargs.values()))


def test_unknown_measure_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, QRELS, BM25, "-m", "ndgc@10")
    assert code == 2
    assert "rankscope: error: unknown measure 'ndgc@10'; did you mean ndcg@10" in err
    assert "Traceback" not in err and out == ""


def test_missing_and_malformed_files_are_clean_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli(capsys, QRELS, str(tmp_path / "nope.run"), "-m", "hit@1")
    assert code == 2
    assert "nope.run: file not found" in err and "Traceback" not in err
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 notanumber run\n")
    code, _, err = run_cli(capsys, QRELS, str(bad), "-m", "hit@1")
    assert code == 2
    assert "bad.run" in err and "Traceback" not in err


def test_bad_format_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, QRELS, BM25, "--format", "xml")
    assert code == 2
    assert "xml" in err


def test_swapped_qrels_and_run_are_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, BM25, QRELS)
    assert code == 2 and "Traceback" not in err
    assert f"{BM25}:1: malformed line: expected 4 fields, found 6" in err
    assert "looks like a run" in err and "The qrels come first" in err
    # a qrels file where the run belongs
    code, _, err = run_cli(capsys, QRELS, QRELS)
    assert code == 2 and f"{QRELS}:1:" in err and "looks like qrels" in err
    # a line that is neither gets no guess
    code, _, err = run_cli(capsys, QRELS, str(Path(__file__)))
    assert code == 2 and "looks like" not in err


def _eval_in_a_fresh_interpreter(env_extra: dict[str, str]) -> dict[str, object]:
    """``rankscope eval`` in a new interpreter: what OpenBLAS was told, and its threads."""
    import os
    import subprocess
    import sys

    probe = (
        "import contextlib, io, json, os\n"
        "from rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['eval', {QRELS!r}, {BM25!r}, '-f', 'json']) == 0\n"
        "from threadpoolctl import threadpool_info\n"
        "blas = [p['num_threads'] for p in threadpool_info() if p['internal_api'] == 'openblas']\n"
        "import numpy\n"
        "core = getattr(numpy, '_core', None) or numpy.core\n"
        "huge = core.multiarray._get_madvise_hugepage()\n"
        "print(json.dumps({'env': os.environ.get('OPENBLAS_NUM_THREADS'), 'threads': blas,"
        " 'hugepages': huge}))"
    )
    unset = ("OPENBLAS_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, **env_extra},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_eval_starts_one_blas_thread_and_no_huge_pages_unless_told_otherwise() -> None:
    # threadpoolctl: a test dependency (scikit-learn's, and listed in the test extra)
    # eval does no linear algebra: OpenBLAS's thread per core would only spin at start-up; and
    # its arrays are made once, where the kernel's zeroing of fresh huge pages cost more
    fresh = _eval_in_a_fresh_interpreter({})
    assert fresh["env"] == "1" and fresh["hugepages"] is False
    assert fresh["threads"] in ([1], [])  # [] where numpy uses another BLAS
    told = _eval_in_a_fresh_interpreter(
        {"OPENBLAS_NUM_THREADS": "2", "NUMPY_MADVISE_HUGEPAGE": "1"}
    )
    assert told["env"] == "2" and told["hugepages"] is True


def test_csv_cells_never_run_as_formulas(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A run name or query id that a spreadsheet would run gets a leading apostrophe; numbers
    (the values, an id such as -1) are written as they are."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("@SUM(1) 0 a 1\n-1 0 b 1\n")
    run.write_text("@SUM(1) Q0 a 1 2 =cmd|x!A0\n-1 Q0 x 1 1 =cmd|x!A0\n")
    code, out, _ = run_cli(capsys, str(qrels), str(run), "-m", "P@1", "-q", "-f", "csv")
    assert code == 0
    assert out.splitlines() == [
        "run,query_id,measure,value",
        "'=cmd|x!A0,-1,P@1,0.0",
        "'=cmd|x!A0,'@SUM(1),P@1,1.0",
        "'=cmd|x!A0,,P@1,0.5",
    ]
