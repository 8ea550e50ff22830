"""Latency from repeated passes: per-query medians, percentiles over them, spread across passes."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
from bench_suites import DOCS, Overlap

from rankscope.bench import latency_stats, run_benchmark
from rankscope.bench.latency import is_empty_query, query_latency_ms
from rankscope.engines.base import Hit, Query, register_engine
from rankscope.errors import QueryError
from rankscope.suite import load_suite


def test_percentiles_are_over_per_query_medians() -> None:
    # four queries, three passes each; one pass of q4 was disturbed (50 ms)
    samples = [
        [0.001, 0.0011, 0.0009],
        [0.002, 0.0021, 0.0019],
        [0.003, 0.0031, 0.0029],
        [0.004, 0.050, 0.0041],
    ]
    stats = latency_stats(samples)
    assert stats.num_queries == 4 and stats.repeats == 3
    # medians 1, 2, 3, 4.1 ms: the disturbed pass does not move q4
    assert stats.max_ms == pytest.approx(4.1)
    assert stats.p50_ms == pytest.approx(2.5)
    assert stats.p95_ms == pytest.approx(3.0 + 0.85 * 1.1)
    assert stats.mean_ms == pytest.approx((1 + 2 + 3 + 4.1) / 4)
    assert query_latency_ms(samples[3]) == pytest.approx(4.1)


def test_spread_is_the_p50_of_each_pass_and_their_iqr() -> None:
    samples = [[0.001, 0.002, 0.004], [0.003, 0.004, 0.006]]
    stats = latency_stats(samples)
    assert stats.p50_by_pass_ms == pytest.approx([2.0, 3.0, 5.0])
    # quartiles of [2, 3, 5] with linear interpolation: 2.5 and 4.0
    assert stats.p50_iqr_ms == pytest.approx(1.5)


def test_one_pass_has_no_spread_and_nothing_measured_has_no_values() -> None:
    one = latency_stats([[0.002], [0.004]])
    assert one.p50_ms == pytest.approx(3.0) and one.p50_iqr_ms is None
    empty = latency_stats([])
    assert empty.num_queries == 0 and empty.p50_ms is None and empty.p50_by_pass_ms == []


def test_queries_without_search_text_are_counted_apart() -> None:
    # answered without searching in microseconds: among the figures they pulled p50 down
    searched = [[0.010, 0.011], [0.012, 0.012], [0.014, 0.013]]
    stats = latency_stats(searched, empty=2)
    assert stats.num_queries == 3 and stats.empty_queries == 2
    assert stats.p50_ms == pytest.approx(12.0) and stats.min_ms == pytest.approx(10.5)
    assert is_empty_query(Query("e", "  \t"))
    assert not is_empty_query(Query("b", "", kind="boolean", must=("x",)))
    assert not is_empty_query(Query("q", "zebra"))


def test_a_benchmark_leaves_a_blank_query_out_of_its_latency(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    suite = textwrap.dedent(
        """
        name: blank-query
        corpus: {type: jsonl, path: docs.jsonl}
        settings: {k: [1, 3], max_k: 4, warmup: 0, repeats: 2}
        engines:
          - {name: sqlite, engine: sqlite}
        queries:
          - {id: q1, text: json language, judgments: {py: 3, js: 1}}
          - {id: blank, text: "   ", judgments: {py: 2}}
          - {id: q2, text: database engine, judgments: {sql: 2, pg: 2}}
        """
    )
    (tmp_path / "suite.yaml").write_text(suite)
    result = run_benchmark(load_suite(tmp_path / "suite.yaml"), tmp_path / "out")
    config = result.config("sqlite")
    assert config.status == "ok"
    for view in ("answered", "all"):
        latency = config.view(view).latency
        assert latency.num_queries == 2 and latency.empty_queries == 1, view
    assert config.per_query is not None
    assert config.per_query.latency_ms[result.query_ids.index("blank")] is not None


class FailsLater(Overlap):
    """Answers ``q2`` once, then refuses it (a query that fails in a later pass)."""

    name = "benchtest-fails-later"
    thread_safe = False

    def __init__(self, **options: object) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def _search(self, query: Query, k: int) -> list[Hit]:
        self.seen[query.id] = self.seen.get(query.id, 0) + 1
        if query.id == "q2" and self.seen[query.id] > 1:
            raise QueryError(f"query {query.id!r} refused on its second run")
        if query.id == "q2":
            time.sleep(0.05)  # far slower than the others: it would move every figure
        return super()._search(query, k)


register_engine("benchtest-fails-later")(FailsLater)


def test_a_query_that_fails_in_a_later_pass_leaves_no_latency(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    suite = textwrap.dedent(
        """
        name: fails-later
        corpus: {type: jsonl, path: docs.jsonl}
        settings: {k: [1, 3], max_k: 4, warmup: 0, repeats: 3}
        engines:
          - {name: flaky, engine: benchtest-fails-later}
        queries:
          - {id: q1, text: json language, judgments: {py: 3, js: 1}}
          - {id: q2, text: database engine, judgments: {sql: 2, pg: 2}}
          - {id: q3, text: zebra, judgments: {long: 3}}
        """
    )
    (tmp_path / "suite.yaml").write_text(suite)
    out = tmp_path / "out"
    result = run_benchmark(load_suite(tmp_path / "suite.yaml"), out)
    config = result.config("flaky")
    assert config.status == "ok" and list(config.failed_queries) == ["q2"]
    latency = config.view("all").latency
    assert latency.num_queries == 2 and latency.max_ms is not None and latency.max_ms < 40
    assert all(p < 40 for p in latency.p50_by_pass_ms)
    assert config.per_query is not None and config.per_query.latency_ms[1] is None
    # its one timed run is in the wall time, so it is counted in the queries per second
    record = json.loads(next((out / "configs").glob("*.json")).read_text())
    assert config.qps is not None
    assert config.qps * record["measured_wall_s"] == pytest.approx(2 * 3 + 1)
