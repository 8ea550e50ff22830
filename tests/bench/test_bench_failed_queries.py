"""A query an engine cannot run fails alone: it is counted and reported, left out of the
comparison as a skipped query is (scored 0 in the all-queries view), and the configuration's
other queries are measured. Real engines: sqlite refuses a query of more distinct terms than it
takes (:data:`~rankscope.engines._text.MAX_QUERY_TERMS`), the vector engine answers it."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

from bench_suites import DOCS
from rich.console import Console

from rankscope.bench import run_benchmark
from rankscope.bench.results import BenchmarkResult
from rankscope.engines._text import MAX_QUERY_TERMS
from rankscope.report import render_table
from rankscope.suite import load_suite

#: more distinct words than a lexical engine takes; "python" makes the vector engine find py
WIDE = "python " + " ".join(f"w{i}x" for i in range(MAX_QUERY_TERMS))
WIDE_ERROR = (
    f"query 'wide' has {MAX_QUERY_TERMS + 1} distinct terms for the sqlite engine; a query may "
    f"hold at most {MAX_QUERY_TERMS}. Shorten it"
)


def write_suite(tmp_path: Path, queries: str) -> Path:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    suite = textwrap.dedent(
        """
        name: failing-queries
        corpus: {type: jsonl, path: docs.jsonl}
        settings: {k: [1, 3], max_k: 4, warmup: 1, repeats: 2}
        engines:
          - {name: sqlite, engine: sqlite}
          - {name: vector, engine: vector, options: {model: "hashing:64"}}
        queries:
        """
    ) + textwrap.indent(textwrap.dedent(queries).strip(), "  ")
    path = tmp_path / "suite.yaml"
    path.write_text(suite + "\n")
    return path


def test_a_query_the_engine_cannot_run_fails_alone(tmp_path: Path) -> None:
    path = write_suite(
        tmp_path,
        f"""
        - {{id: q1, text: json language, judgments: {{py: 3, js: 1}}}}
        - {{id: wide, text: "{WIDE}", judgments: {{py: 2}}}}
        - {{id: q2, text: database engine, judgments: {{sql: 2, pg: 2}}}}
        - {{id: q3, text: zebra, judgments: {{long: 3}}}}
        """,
    )
    out = tmp_path / "out"
    result = run_benchmark(load_suite(path), out)
    sqlite, vector = result.config("sqlite"), result.config("vector")
    assert sqlite.status == "ok" and vector.status == "ok"
    assert sqlite.failed_queries == {"wide": WIDE_ERROR}
    assert vector.failed_queries == {}
    # the comparison is made without it, as with a skipped query; the all view scores it 0
    assert result.query_sets["answered"].query_ids == ["q1", "q2", "q3"]
    assert result.query_sets["all"].query_ids == ["q1", "wide", "q2", "q3"]
    at = result.query_ids.index("wide")
    assert sqlite.per_query is not None and vector.per_query is not None
    assert sqlite.per_query.status == ["answered", "failed", "answered", "answered"]
    assert vector.per_query.status == ["answered"] * 4
    assert sqlite.per_query.num_results[at] == 0 and sqlite.per_query.latency_ms[at] is None
    assert sqlite.per_query.values["ndcg@10"][at] == 0.0
    assert (vector.per_query.values["ndcg@10"][at] or 0.0) > 0
    for config in (sqlite, vector):
        assert config.view("answered").num_queries == 3
        assert config.view("answered").latency.num_queries == 3
    assert sqlite.view("all").num_queries == 4 and sqlite.view("all").latency.num_queries == 3
    answered = sqlite.view("answered").summary["ndcg@10"]
    everything = sqlite.view("all").summary["ndcg@10"]
    assert answered is not None and everything is not None
    assert everything == answered * 3 / 4  # the failed query adds a zero

    # no line for it in the run file; results.json keeps the failure
    def run_ids(name: str) -> set[str]:
        return {line.split()[0] for line in (out / "runs" / name).read_text().splitlines()}

    assert "wide" not in run_ids("sqlite.trec")
    assert "wide" in run_ids("vector.trec")
    stored = BenchmarkResult.read(out / "results.json").config("sqlite")
    assert stored.failed_queries == {"wide": WIDE_ERROR}
    assert stored.per_query is not None and stored.per_query.status[at] == "failed"

    console = Console(file=io.StringIO(), width=400, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "the 3 judged queries every configuration answered" in text
    assert "(1 of 4 skipped or failed by some configuration are left out)" in text
    assert (
        f"sqlite: 1 query failed and left out of the comparison (first: wide: {WIDE_ERROR})" in text
    )
    console = Console(file=io.StringIO(), width=400, color_system=None)
    render_table(result, console, view="all")
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "all 4 judged queries; a failed query scores 0" in text
    assert "sqlite: 1 query failed and scored 0" in text


def test_a_configuration_whose_every_query_fails_is_failed(tmp_path: Path) -> None:
    other = WIDE.replace("python", "database")
    path = write_suite(
        tmp_path,
        f"""
        - {{id: wide, text: "{WIDE}", judgments: {{py: 2}}}}
        - {{id: wide2, text: "{other}", judgments: {{sql: 2}}}}
        """,
    )
    result = run_benchmark(load_suite(path), tmp_path / "out")
    sqlite = result.config("sqlite")
    assert sqlite.status == "failed" and sqlite.stage == "search"
    assert sqlite.error == (
        f"search failed: every query failed (2), the first, query 'wide': {WIDE_ERROR}"
    )
    assert result.config("vector").status == "ok"
    assert [f.name for f in result.failures] == ["sqlite"]
