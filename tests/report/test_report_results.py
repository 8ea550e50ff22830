"""rankscope eval's Results in CSV, Markdown and the terminal (rankscope.report.results)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from rankscope import Qrels, Run, evaluate
from rankscope.report import results as report_results
from rankscope.report.results import per_query_text, print_results, results_csv, results_markdown


def _results() -> object:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q|2": {"b": 1}})
    run = Run.from_dict({"q1": {"a": 2.0, "x": 1.0}, "q|2": {"x": 2.0, "b": 1.0}}, name="[b]m|25")
    return evaluate(qrels, [run], ["P@1", "num_rel_ret"])


def test_the_formats() -> None:
    results = _results()
    assert results_csv(results, per_query=True) == (  # type: ignore[arg-type]
        "run,query_id,measure,value\n"
        "[b]m|25,q1,P@1,1.0\n[b]m|25,q1,num_rel_ret,1.0\n"
        "[b]m|25,q|2,P@1,0.0\n[b]m|25,q|2,num_rel_ret,1.0\n"
        "[b]m|25,,P@1,0.5\n[b]m|25,,num_rel_ret,2.0\n"
    )
    assert results_markdown(results, per_query=True) == (  # type: ignore[arg-type]
        "| run | query | P@1 | num_rel_ret |\n|---|---|---:|---:|\n"
        "| [b]m\\|25 | q1 | 1.0000 | 1 |\n| [b]m\\|25 | q\\|2 | 0.0000 | 1 |\n\n"
        "| run | P@1 | num_rel_ret |\n|---|---:|---:|\n| [b]m\\|25 | 0.5000 | 2 |\n\n2 queries\n"
    )
    assert per_query_text(results) == (  # type: ignore[arg-type]
        "run      query     P@1  num_rel_ret\n"
        "-------  -----  ------  -----------\n"
        "[b]m|25  q1     1.0000            1\n"
        "[b]m|25  q|2    0.0000            1\n\n"
    )


def test_the_terminal_shows_names_as_written() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=60, color_system=None, highlight=False)
    print_results(_results(), per_query=True, console=console)  # type: ignore[arg-type]
    text = buffer.getvalue()
    assert text.startswith("run      query     P@1  num_rel_ret\n")
    assert " [b]m|25 │ 0.5000 │           2 " in text and text.endswith("2 queries\n")


def _two_runs(name: str) -> object:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}})
    first = Run.from_dict({"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 1.0}}, name=name)
    second = Run.from_dict({"q1": {"x": 2.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}, name="b")
    measures = ["P@1", "num_rel_ret", "ndcg@10", "recall@100", "map", "mrr", "bpref", "Rprec"]
    return evaluate(qrels, [first, second], measures)


def test_the_plain_table_is_the_one_rich_lays_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # standard output no terminal: the table is written without rich, in rich's own bytes
    monkeypatch.setenv("COLUMNS", "80")
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)
    cases = [(_results(), False), (_results(), True), (_two_runs("a"), False)]
    cases += [(_two_runs("r" * 70), True), (_two_runs("run one"), False)]
    for results, per_query in cases:
        print_results(results, per_query=per_query)  # type: ignore[arg-type]
        plain = capsys.readouterr().out
        with monkeypatch.context() as patch:
            patch.setattr(report_results, "_plain_stdout", lambda: False)
            print_results(results, per_query=per_query)  # type: ignore[arg-type]
        assert plain == capsys.readouterr().out
    print_results(_results())  # type: ignore[arg-type]
    assert capsys.readouterr().out == (
        " run     ┃    P@1 ┃ num_rel_ret \n"
        "━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━\n"
        " [b]m|25 │ 0.5000 │           2 \n"
        "2 queries\n"
    )


def test_cells_rich_must_measure_are_left_to_rich() -> None:
    assert report_results.summary_text(["run", "P@1"], [["a", "1"]]) is not None
    for odd in ("bm25–é", "漢字", " lead", "two  spaces", "tab\there"):
        assert report_results.summary_text(["run", "P@1"], [[odd, "1"]]) is None, odd


def test_rich_is_not_imported_for_a_plain_table() -> None:
    code = (
        "import sys\nfrom rankscope import Qrels, Run, evaluate\n"
        "from rankscope.report.results import print_results\n"
        "print_results(evaluate(Qrels.from_dict({'q': {'a': 1}}), Run.from_dict({'q': {'a': 1.0}}),"
        " ['P@1']))\nassert 'rich' not in sys.modules, 'rich imported'"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONPATH"] = str(Path(report_results.__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("1 query\n")
