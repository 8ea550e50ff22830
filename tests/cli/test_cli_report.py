"""``rankscope report`` through the real entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rankscope.cli.app import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_suites import run_report_bench


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_report_bench(tmp_path_factory.mktemp("cli-report"))[1]


def test_report_writes_html_markdown_and_latex(
    out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(out)]) == 0
    assert f"wrote {out / 'report.html'}" in capsys.readouterr().err
    html, md, tex = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.tex"
    code = main(
        [
            "report",
            str(out / "results.json"),
            "--html",
            str(html),
            "--md",
            str(md),
            "--latex",
            str(tex),
        ]
    )
    assert code == 0
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert md.read_text().startswith("# report-bench: benchmark report")
    assert r"\begin{table}" in tex.read_text()
    assert main(["report", str(out), "--md", "-", "--view", "all"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# report-bench") and "view `all`" in printed


def test_report_errors_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, message in (
        ([str(tmp_path)], "no results.json in this folder"),
        ([str(tmp_path / "gone")], "file not found"),
    ):
        assert main(["report", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    (tmp_path / "results.json").write_text(json.dumps({"x": 1}))
    assert main(["report", str(tmp_path)]) == 2
    assert "not a rankscope benchmark's results.json" in capsys.readouterr().err
