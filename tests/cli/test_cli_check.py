"""``rankscope check`` through the real entry point: exit 0 pass, 1 regression, 2 usage or
input error (a message, no traceback), the log, --markdown and $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rankscope.cli.app import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "check"))
from check_data import write_qrels, write_run


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return {
        "qrels": str(write_qrels(tmp_path / "qrels.txt")),
        "base": str(write_run(tmp_path / "base.run", "base")),
        "same": str(write_run(tmp_path / "same.run", "same")),
        "worse": str(write_run(tmp_path / "worse.run", "worse", demoted=set(range(1, 61, 5)))),
    }


def test_an_equal_run_passes_with_exit_0(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "summary.md"
    code, out, err = run_cli(
        capsys, files["qrels"], files["base"], files["same"], "--markdown", str(md)
    )
    assert code == 0, err
    assert out.splitlines()[0] == (
        "rankscope check: candidate same against baseline base, over the 60 queries of the "
        "qrels (n = 60)"
    )
    assert "  pass  ndcg@10  baseline 1.0000  candidate 1.0000  Δ +0.0000" in out
    assert out.rstrip().endswith("PASS: same is no worse than base beyond the margin")
    text = md.read_text(encoding="utf-8")
    assert text.startswith("### ✅ rankscope check: PASS")
    assert "| ndcg@10 | 1.0000 | 1.0000 | +0.0000 | +0.0000 | < 0.0001 |  | pass |" in text
    assert f"wrote {md}" in err


def test_a_regression_beyond_the_margin_exits_1(
    files: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, err = run_cli(
        capsys,
        files["qrels"],
        files["base"],
        files["worse"],
        "-m",
        "ndcg@10",
        "-m",
        "P@5",
        "--margin",
        "0.02",
        "--min",
        "ndcg@10=0.95",
    )
    assert code == 1, err
    lines = out.splitlines()
    assert lines[3].startswith("  FAIL  ndcg@10  baseline 1.0000  candidate 0.8846  Δ -0.1154")
    assert "< -0.02: may be worse by more than the margin; candidate 0.8846 < floor 0.95" in out
    assert lines[4].startswith("  FAIL  P@5      baseline 0.4000  candidate 0.3200  Δ -0.0800")
    assert "queries the candidate lost most on (ndcg@10):" in out
    assert "  q1   1.0000 -> 0.4228  Δ -0.5772" in out
    assert out.rstrip().endswith("FAIL: worse regresses from base on ndcg@10, P@5")
    # appended to the step summary, the earlier step's text kept
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### ❌ rankscope check: FAIL")
    assert "| ndcg@10 | 1.0000 | 0.8846 | -0.1154 |" in text
    assert "| 0.95 | regression, below floor |" in text
    assert "| q1 | 1.0000 | 0.4228 | -0.5772 |" in text
    assert len(text.splitlines()) < 30  # a comment's size


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{qrels}", "{base}"], "name both a baseline and a candidate"),
        (["{qrels}", "{base}", "{same}", "--margin", "-1"], "the margin must be"),
        (["{qrels}", "{base}", "{same}", "--alpha", "0.9"], "alpha must lie"),
        (["{qrels}", "{base}", "{same}", "--min", "ndcg@10"], "a floor is MEASURE=VALUE"),
        (["{qrels}", "{base}", "{same}", "-m", "nosuch"], "nosuch"),
        (["{qrels}", "{base}", "{missing}"], "file not found"),
        (["{qrels}", "{base}", "{same}", "--view", "all"], "--view applies to a benchmark"),
        (["{qrels}"], "a suite file must be a YAML mapping"),
    ],
)
def test_usage_and_input_errors_exit_2(
    files: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    values = {**files, "missing": str(tmp_path / "missing.run")}
    code, out, err = run_cli(capsys, *(a.format(**values) for a in args))
    assert code == 2
    assert message in err and "Traceback" not in err and out == ""


def test_an_unwritable_markdown_file_is_an_input_error(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "dir" / "x.md"
    code, _, err = run_cli(
        capsys, files["qrels"], files["base"], files["same"], "--markdown", str(target)
    )
    assert code == 2 and "cannot write the Markdown summary" in err and str(target) in err


def test_a_benchmark_folder_and_a_suite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
    from diff_data import HAVE_CRANFIELD
    from test_check_core import _suite

    if not HAVE_CRANFIELD:
        pytest.skip("no Cranfield in the shared data")
    from rankscope.bench import run_benchmark
    from rankscope.suite import load_suite

    suite = _suite(tmp_path)
    out = tmp_path / "out"
    run_benchmark(load_suite(suite), out)
    code, text, err = run_cli(capsys, str(out), "bm25", "classic", "--margin", "0.02")
    assert code == 0, err
    assert "over the judged queries every configuration answered (view answered) (n = 225)" in text
    code, text, err = run_cli(capsys, str(suite), "--out", str(out))
    assert code == 1, err
    assert "  FAIL  ndcg@10  baseline 0.3427  candidate 0.3428  Δ +0.0001" in text
    code, _, err = run_cli(capsys, str(out))
    assert code == 2 and "need a baseline and a candidate" in err
    code, _, err = run_cli(capsys, str(out), "bm25")
    assert code == 2 and "name both a baseline and a candidate" in err
    code, _, err = run_cli(capsys, str(out), "bm25", "nope")
    assert code == 2 and "'nope' is not a configuration" in err
