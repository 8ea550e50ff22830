"""What an engine reports about its searches reaches results.json: whether pgvector's rankings
came through its HNSW index (approximate) or an exact scan, read from the query plans."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from bench_suites import DOCS

from rankscope.bench import run_benchmark
from rankscope.bench.results import BenchmarkResult
from rankscope.suite import load_suite

pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres


def test_results_say_whether_pgvector_searched_approximately(
    tmp_path: Path, pgvector_dsn: str
) -> None:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    options = f'{{dsn: "{pgvector_dsn}", model: "hashing:64", drop_on_close: true'
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""
            name: pgvector-search
            corpus: {{type: jsonl, path: docs.jsonl}}
            settings: {{k: [1, 3], max_k: 4, warmup: 1, repeats: 2}}
            queries:
              - {{id: q1, text: json language, judgments: {{py: 3}}}}
              - {{id: q2, text: database engine, judgments: {{sql: 2}}}}
              - {{id: q3, text: zebra, judgments: {{long: 3}}}}
            engines:
              - {{name: hnsw, engine: pgvector, options: {options}}}}}
              - {{name: exact, engine: pgvector, options: {options}, exact: true}}}}
              - {{name: lite, engine: sqlite}}
            """
        )
    )
    out = tmp_path / "out"
    result = run_benchmark(load_suite(suite), out)
    assert [c.status for c in result.configurations] == ["ok", "ok", "ok"]
    stored = BenchmarkResult.read(out / "results.json")
    # 3 queries x (1 warm-up + 2 timed passes)
    assert stored.config("hnsw").search_stats == {"approximate_searches": 9, "exact_searches": 0}
    assert stored.config("exact").search_stats == {"approximate_searches": 0, "exact_searches": 9}
    assert stored.config("lite").search_stats == {}
