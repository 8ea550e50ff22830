"""One query set per comparison: configurations that skip queries are compared with the others
on the queries all of them answered; the all-queries view (skips scored 0) sits beside it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import ClassVar

import pytest
from bench_suites import Overlap, make_suite
from rich.console import Console

from rankscope import evaluate
from rankscope.bench import run_benchmark
from rankscope.cli.app import main
from rankscope.engines.base import QUERY_KINDS, Hit, Query, QueryKind, register_engine
from rankscope.report import render_table, to_markdown
from rankscope.suite import load_suite

PHRASE = "\n  - {id: p1, text: json support, kind: phrase, judgments: {py: 3}}"


@register_engine("benchtest-allkinds")
class AllKinds(Overlap):
    """Answers every kind (by word overlap): a lexical engine next to a dense one."""

    name = "benchtest-allkinds"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(QUERY_KINDS)


@register_engine("benchtest-textonly")
class TextOnly(Overlap):
    """Answers query_string queries only, like a dense engine; records the kinds it got."""

    name = "benchtest-textonly"
    seen: ClassVar[list[tuple[str, str]]] = []

    def _search(self, query: Query, k: int) -> list[Hit]:
        type(self).seen.append((query.id, query.kind))
        return super()._search(query, k)


def phrase_suite(tmp_path: Path, policy: str) -> Path:
    path = make_suite(
        tmp_path,
        """
        - {name: lexical, engine: benchtest-allkinds}
        - {name: dense, engine: benchtest-textonly}
        """,
        settings=f", unsupported_queries: {policy}",
    )
    text = path.read_text().replace("judgments: {pg: 1}}", "judgments: {pg: 1}}" + PHRASE)
    path.write_text(text)
    return path


def test_default_comparison_is_over_the_queries_every_configuration_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_path = phrase_suite(tmp_path, "skip")
    out = tmp_path / "out"
    result = run_benchmark(load_suite(suite_path), out)
    answered = result.query_sets["answered"].query_ids
    assert answered == ["q1", "q2", "q3", "q4"]  # p1 skipped by dense, q5 unjudged
    assert result.query_sets["all"].query_ids == ["q1", "q2", "q3", "q4", "p1"]
    assert result.default_view == "answered"

    qrels = load_suite(suite_path).qrels()
    lexical, dense = result.config("lexical"), result.config("dense")
    for config in (lexical, dense):
        ranking = {q: dict(r) for q, r in _rankings(out, config.name).items()}
        wanted = {q: j for q, j in qrels.to_dict().items() if q in answered}
        expected = evaluate(wanted, ranking, ["ndcg@10"], depth=4, average_over_qrels=True)
        assert config.view("answered").summary["ndcg@10"] == expected.mean()["ndcg@10"]
        assert config.view("answered").num_queries == 4
        # latency percentiles from the same queries for both: 4 queries x 2 timed passes
        assert config.view("answered").latency.num_queries == 4
    # the all-queries view scores dense 0 on p1 and lexical on its own answer
    assert dense.view("all").num_queries == 5
    dense_all = dense.view("all").summary["ndcg@10"]
    dense_answered = dense.view("answered").summary["ndcg@10"]
    assert dense_all is not None and dense_answered is not None
    assert dense_all == pytest.approx(dense_answered * 4 / 5)
    assert result.recommended().best_quality is not None
    assert result.recommendations["all"].best_quality is not None

    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "the 4 judged queries every configuration answered" in text
    assert "1 of 5 skipped by some configuration are left out" in text
    assert "dense: 1 query skipped, left out of the comparison" in text
    assert "all 5 judged queries" in to_markdown(result, view="all")

    code = main(["bench", str(suite_path), "-o", str(out), "--quiet", "--view", "all"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "all 5 judged queries; a skipped query scores 0" in printed
    assert "dense: 1 query skipped and scored 0" in printed


def test_as_text_sends_unsupported_queries_as_plain_text(tmp_path: Path) -> None:
    TextOnly.seen.clear()
    result = run_benchmark(load_suite(phrase_suite(tmp_path, "as_text")), tmp_path / "out")
    dense = result.config("dense")
    assert dense.status == "ok"
    assert list(dense.as_text_queries) == ["p1"] and dense.skipped_queries == {}
    assert ("p1", "query_string") in TextOnly.seen and ("p1", "phrase") not in TextOnly.seen
    assert dense.per_query is not None
    assert dense.per_query.status[result.query_ids.index("p1")] == "as_text"
    # nothing skipped: both views are over the same five judged queries
    assert result.query_sets["answered"].query_ids == result.query_sets["all"].query_ids
    assert (dense.per_query.values["ndcg@10"][result.query_ids.index("p1")] or 0.0) > 0
    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "dense: 1 phrase query sent as plain text" in text
    assert "5 judged queries" in text


def _rankings(out: Path, name: str) -> dict[str, list[tuple[str, float]]]:
    from rankscope.data import read_run

    run = read_run(out / "runs" / f"{name}.trec")
    return {q: run.ranking(q) for q in run.query_ids}
