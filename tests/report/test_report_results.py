"""rankscope eval's Results in CSV, Markdown and the terminal (rankscope.report.results)."""

from __future__ import annotations

import io

from rich.console import Console

from rankscope import Qrels, Run, evaluate
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
