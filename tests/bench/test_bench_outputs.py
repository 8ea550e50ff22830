"""The files a benchmark writes reproduce its numbers: ``rankscope eval`` on every run file
gives exactly what results.json says."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from bench_suites import make_suite

from rankscope.bench import BenchmarkResult, run_benchmark
from rankscope.cli.app import main
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.suite import load_suite


@register_engine("benchtest-close")
class CloseScores(Engine):
    """Scores that differ only in the 7th decimal: a 6-decimal run file would tie them."""

    name = "benchtest-close"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})

    def __init__(self, **options: object) -> None:
        self.ids: list[str] = []

    def index(self, docs: Iterable[Document]) -> None:
        self.ids = [d.id for d in docs]

    def _search(self, query: Query, k: int) -> list[Hit]:
        # the judged document just ahead of the others (ties go to the larger id in trec_eval)
        ranked = [Hit("js" if query.id == "q1" else "pg", 0.1234564)]
        ranked += [Hit(d, 0.1234561 - 1e-12 * i) for i, d in enumerate(sorted(self.ids)[::-1])]
        return [h for i, h in enumerate(ranked) if h.doc_id not in {r.doc_id for r in ranked[:i]}][
            :k
        ]


def eval_json(args: list[str], cwd: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    import os

    here = Path.cwd()
    os.chdir(cwd)
    try:
        assert main(["eval", *args, "-q", "-f", "json"]) == 0
    finally:
        os.chdir(here)
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_eval_on_every_run_file_reproduces_results_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = load_suite(
        make_suite(
            tmp_path,
            """
            - {name: close, engine: benchtest-close}
            - {name: lexical, engine: sqlite}
            - {name: chunked, engine: sqlite, chunking: {size: 8, overlap: 2}}
            """,
        )
    )
    out = tmp_path / "out"
    run_benchmark(suite, out)
    result = BenchmarkResult.read(out / "results.json")
    close = result.config("close")
    assert close.per_query is not None
    # q1 judges js relevant: it is ranked first by a 3e-7 lead, so P@1 = 1
    assert close.per_query.values["P@1"][0] == 1.0
    evaluation = result.evaluation
    assert result.query_sets["all"].qrels_file == "qrels.txt"
    for config in result.configurations:
        assert config.run_file is not None and config.per_query is not None
        for view, query_set in result.query_sets.items():
            args = evaluation.eval_args(query_set.qrels_file, config.run_file, result.measures)
            data = eval_json(args, out, capsys)
            (run,) = data["runs"]
            assert run["mean"] == config.view(view).summary, (config.name, view)
            assert sorted(run["per_query"]) == sorted(query_set.query_ids)
        for i, qid in enumerate(result.query_ids):
            expected = {m: values[i] for m, values in config.per_query.values.items()}
            if result.judged[i]:
                assert run["per_query"][qid] == expected, (config.name, qid)
            else:
                assert qid not in run["per_query"]


def test_ids_with_whitespace_switch_run_and_qrels_files_to_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [{"_id": "my notes.md", "text": "apples and pears"}, {"_id": "b.md", "text": "bananas"}]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: spaced\n"
        "corpus: {type: jsonl, path: docs.jsonl}\n"
        "settings: {k: [1], max_k: 2, warmup: 0, repeats: 1}\n"
        "queries: [{id: q1, text: apples, judgments: {'my notes.md': 1}}]\n"
        "engines: [{name: lite, engine: sqlite}]\n"
    )
    out = tmp_path / "out"
    result = run_benchmark(load_suite(suite), out)
    config = result.config("lite")
    assert config.run_file == "runs/lite.jsonl"
    assert result.query_sets["all"].qrels_file == "qrels.jsonl"
    args = result.evaluation.eval_args("qrels.jsonl", config.run_file, ["P@1"])
    (run,) = eval_json(args, out, capsys)["runs"]  # type: ignore[misc]
    assert run["mean"]["P@1"] == config.view("all").summary["P@1"] == 1.0
