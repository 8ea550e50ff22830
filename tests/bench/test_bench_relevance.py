"""The benchmark with ``settings.relevance: pattern``: code-search queries scored as the
original code-search benchmark scored them, and the files that reproduce the values."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bench_suites import Overlap

from rankscope.bench.evaluation import evaluate_runs
from rankscope.bench.runner import run_benchmark
from rankscope.data import read_qrels, read_run
from rankscope.suite.loader import load_suite

assert Overlap.name == "benchtest-overlap"  # registered by importing bench_suites


def _code_suite(tmp_path: Path, relevance: str) -> Path:
    docs = [
        {"_id": "src/parser.py", "title": "parser", "text": "parser reads lines"},
        {"_id": "tests/parser_test.py", "title": "tests", "text": "unit checks"},
        {"_id": "src/render_a.py", "title": "render", "text": "render draws widgets"},
        {"_id": "src/render_b.py", "title": "render", "text": "render draws widgets"},
        {"_id": "src/util.py", "title": "util", "text": "helpers for widgets"},
        {"_id": "README.md", "title": "readme", "text": "about the project"},
    ]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            name: code
            corpus: {{type: jsonl, path: docs.jsonl}}
            settings: {{k: [5], max_k: 10, warmup: 0, repeats: 1, relevance: {relevance}}}
            queries:
              - {{id: one, text: parser, expected_files: [parser]}}
              - {{id: two, text: render widgets, expected_files: [render, util]}}
              - {{id: judged, text: project, judgments: {{README.md: 1}}}}
            engines: [{{name: overlap, engine: benchtest-overlap}}]
            """
        )
    )
    return path


def test_benchmark_by_pattern_and_by_document(tmp_path: Path) -> None:
    results = {}
    for relevance in ("document", "pattern"):
        folder = tmp_path / relevance
        folder.mkdir()
        suite = load_suite(_code_suite(folder, relevance))
        assert suite.settings.relevance == relevance
        results[relevance] = run_benchmark(suite, folder / "out")
    # the overlap engine ranks parser: [src/parser.py]; render widgets: render_b, render_a
    # (a tie, doc id descending) and util; project: README.md
    ids, by_doc = results["document"].per_query_values("ndcg@5", "all")
    assert ids == ["one", "two", "judged"]
    assert by_doc["overlap"].tolist() == pytest.approx([1 / (1 + 1 / math.log2(3)), 1.0, 1.0])
    _, by_pattern = results["pattern"].per_query_values("ndcg@5", "all")
    two = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert by_pattern["overlap"].tolist() == pytest.approx([1.0, two, 1.0], abs=1e-12)
    _, recall = results["document"].per_query_values("recall@5", "all")
    assert recall["overlap"].tolist() == [0.5, 1.0, 1.0]
    _, recall = results["pattern"].per_query_values("recall@5", "all")
    assert recall["overlap"].tolist() == [1.0, 1.0, 1.0]

    # the files written reproduce the values: the view's qrels and the credited run
    out = tmp_path / "pattern" / "out"
    result = results["pattern"]
    qrels = read_qrels(out / result.query_sets["all"].qrels_file)
    assert qrels.to_dict()["two"] == {"pattern:0": 1, "pattern:1": 1}
    again = evaluate_runs(
        qrels, {"overlap": read_run(out / "patterns" / "overlap.trec")}, ["ndcg@5"], depth=10
    ).per_query("overlap")
    assert [again[q]["ndcg@5"] for q in ids] == pytest.approx([1.0, two, 1.0], abs=1e-12)
    # the run file keeps the documents; by document, no pattern files are left behind
    assert read_run(out / "runs" / "overlap.trec").ranking("one")[0][0] == "src/parser.py"
    assert not list((tmp_path / "document" / "out").glob("patterns/*"))


def test_the_cli_prints_a_bad_relevance_value_without_a_traceback(tmp_path: Path) -> None:
    path = _code_suite(tmp_path, "by-file")
    done = subprocess.run(
        [sys.executable, "-m", "rankscope", "bench", str(path), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "relevance" in done.stderr, done.stderr
