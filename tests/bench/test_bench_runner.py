"""The benchmark runner on small corpora: outputs, chunk mapping, failures, checkpoints."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from bench_suites import Interrupting, Overlap, make_suite
from rich.console import Console

from rankscope.bench import (
    BenchmarkResult,
    ChunkHit,
    ConfigRecord,
    run_benchmark,
)
from rankscope.bench.runner import _rankings, add_chunk_texts
from rankscope.engines.base import Document, Hit
from rankscope.errors import ConfigError
from rankscope.report import render_table, to_json, to_markdown
from rankscope.suite import ChunkingSpec, load_suite


def test_chunk_hits_map_to_documents_at_their_best_chunk() -> None:
    hits = [
        Hit("d2#1", 9.0),
        Hit("d1#0", 8.0),
        Hit("d2#0", 7.0),
        Hit("d3#4", 6.0),
        Hit("d1#2", 5.0),
    ]
    docs, chunks = _rankings({"q": hits}, True, 2)
    assert docs == {"q": [("d2", 9.0), ("d1", 8.0)]}
    # chunks are kept down to the one that brought in the last kept document
    assert chunks == {
        "q": [
            ChunkHit(chunk_id="d2#1", doc_id="d2", score=9.0),
            ChunkHit(chunk_id="d1#0", doc_id="d1", score=8.0),
        ]
    }
    docs, chunks = _rankings({"q": hits}, True, 10)
    assert docs == {"q": [("d2", 9.0), ("d1", 8.0), ("d3", 6.0)]}
    assert chunks is not None
    assert [c.chunk_id for c in chunks["q"]] == ["d2#1", "d1#0", "d2#0", "d3#4"]
    whole, none = _rankings({"q": [Hit("a", 2.0), Hit("b", 1.0)]}, False, 1)
    assert whole == {"q": [("a", 2.0)]} and none is None


def test_top_chunks_get_their_text_back_from_the_corpus() -> None:
    corpus = [Document("d#1", "a b c d e f"), Document("x", "g h i j k l"), Document("y", "m")]
    chunking = ChunkingSpec(size=4, overlap=1)
    # chunk ids of a document id holding '#' still name their document
    ranked = [
        ChunkHit(chunk_id="d#1#1", doc_id="d#1", score=3.0),
        ChunkHit(chunk_id="x#0", doc_id="x", score=2.0),
        ChunkHit(chunk_id="y#0", doc_id="y", score=1.0),
    ]
    add_chunk_texts({"q": ranked}, corpus, chunking, depth=2)
    assert [c.text for c in ranked] == ["d e f", "g h i j", None]
    assert _rankings({"q": [Hit("d#1#1", 1.0)]}, True, 5)[0] == {"q": [("d#1", 1.0)]}


def test_sqlite_benchmark_writes_runs_results_and_table(tmp_path: Path) -> None:
    suite = load_suite(
        make_suite(
            tmp_path,
            """
            - {name: whole, engine: sqlite}
            - {name: chunked, engine: sqlite, chunking: {size: 8, overlap: 2}}
            """,
        )
    )
    out = tmp_path / "out"
    result = run_benchmark(suite, out)

    assert (out / "suite.resolved.yaml").is_file()
    assert load_suite(out / "suite.resolved.yaml").configs == suite.configs
    # results.json and the checkpoints are the typed values, read back as such
    assert BenchmarkResult.read(out / "results.json") == result
    record = ConfigRecord.model_validate_json((out / "configs" / "whole.json").read_text())
    assert (
        record.name == "whole"
        and record.ok
        and set(record.rankings) == {f"q{i}" for i in range(1, 6)}
    )
    data = json.loads((out / "results.json").read_text())
    assert data["schema_version"] == 4
    assert result.suite.num_queries == 5 and result.suite.num_judged_queries == 4
    assert result.measures[:3] == ["ndcg@10", "map", "mrr"]
    assert {"P@1", "recall@3", "hit@1", "recall@4"} <= set(result.measures)
    assert result.failures == []
    assert result.query_ids == ["q1", "q2", "q3", "q4", "q5"]
    assert result.judged == [True, True, True, True, False]
    for entry in result.configurations:
        assert entry.status == "ok" and entry.error is None
        scores = entry.view("answered")
        # judged queries x measured runs: the unjudged q5 is timed but not compared
        assert scores.latency.num_queries == 4 and scores.latency.repeats == 2
        assert entry.view("all").latency.num_queries == 5
        assert len(scores.latency.p50_by_pass_ms) == 2 and scores.latency.p50_iqr_ms is not None
        latency = scores.latency
        assert latency.p50_ms is not None and latency.p95_ms is not None
        assert latency.p99_ms is not None
        assert latency.p50_ms <= latency.p95_ms <= latency.p99_ms
        assert entry.index_time_s is not None and entry.index_time_s >= 0
        assert entry.per_query is not None
        assert entry.per_query.status == ["answered"] * 5
        assert len(entry.per_query.values["map"]) == 5
        assert entry.per_query.values["map"][4] is None  # q5 has no judgments
        assert set(scores.per_category) == {"lang", "db", "(none)"}
        assert scores.per_category["db"].num_queries == 2
        assert entry.run_file is not None
        run_lines = (out / entry.run_file).read_text().splitlines()
        assert run_lines, entry.name
        for line in run_lines:
            _, q0, doc, rank, _, _ = line.split()
            assert q0 == "Q0" and "#" not in doc and int(rank) >= 1
        # q1 finds python first on whole documents and on chunks alike
        assert run_lines[0].split()[:3] == ["q1", "Q0", "py"]
    whole, chunked = result.configurations
    assert whole.num_units == 5 and chunked.num_units is not None and chunked.num_units > 5
    assert (whole.view("answered").summary["mrr"] or 0) > 0.5
    # chunked: the long document is found through its last chunk, at document level
    assert chunked.per_query is not None and chunked.per_query.values["mrr"][2] == 1.0
    assert chunked.chunks_file is not None
    chunk_rows = [json.loads(x) for x in (out / chunked.chunks_file).read_text().splitlines()]
    zebra = [r for r in chunk_rows if r["query_id"] == "q3"]
    assert zebra[0]["doc_id"] == "long" and zebra[0]["chunk_id"].startswith("long#")
    assert zebra[0]["chunk_id"] != "long#0" and "zebra" in zebra[0]["text"]
    assert whole.chunks_file is None
    assert [key for key, _ in result.recommended().items()] == [
        "best_quality",
        "fastest",
        "best_balance",
    ]

    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_table(result, console, by_category=True)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "whole" in text and "chunked" in text and "nDCG@10" in text and "p50 ms" in text
    assert "category db" in text and "Best quality" in text
    markdown = to_markdown(result, by_category=True)
    assert markdown.count("| whole |") == 4 and "**" in markdown  # main + 3 categories
    assert json.loads(to_json(result))["suite"]["name"] == "tiny-bench"
    # per-query arrays for paired comparisons: judged queries, one array per configuration
    ids, values = result.per_query_values("mrr")
    assert ids == ["q1", "q2", "q3", "q4"]
    assert set(values) == {"whole", "chunked"} and values["chunked"][2] == 1.0


def test_failing_configuration_is_reported_and_the_others_complete(tmp_path: Path) -> None:
    suite = load_suite(
        make_suite(
            tmp_path,
            """
            - {name: broken, engine: benchtest-broken}
            - {name: fine, engine: benchtest-overlap}
            - {name: bad-option, engine: sqlite, options: {tokenizer: ""}}
            """,
        )
    )
    result = run_benchmark(suite, tmp_path / "out")
    broken = result.config("broken")
    assert broken.status == "failed" and broken.stage == "search" and broken.error is not None
    assert "connection reset by peer" in broken.error and "RuntimeError" in broken.error
    assert "query 'q2'" in broken.error
    assert result.config("bad-option").stage == "build"
    assert result.config("fine").status == "ok"
    assert [f.name for f in result.failures] == ["broken", "bad-option"]
    best = result.recommended().best_quality
    assert best is not None and best.config == "fine"
    assert not (tmp_path / "out" / "runs" / "broken.trec").exists()
    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_table(result, console)
    assert "FAILED broken" in console.file.getvalue()  # type: ignore[attr-defined]


def test_unsupported_query_kind_fails_or_is_skipped(tmp_path: Path) -> None:
    phrase = "\n  - {id: p1, text: json support, kind: phrase, judgments: {py: 3}}"
    path = make_suite(tmp_path, "- {name: overlap, engine: benchtest-overlap}")
    path.write_text(path.read_text().replace("judgments: {pg: 1}}", "judgments: {pg: 1}}" + phrase))
    result = run_benchmark(load_suite(path), tmp_path / "out1")
    entry = result.config("overlap")
    assert entry.status == "failed" and "does not support 'phrase'" in (entry.error or "")

    skip = make_suite(
        tmp_path,
        "- {name: overlap, engine: benchtest-overlap}",
        settings=", unsupported_queries: skip",
    )
    skip.write_text(skip.read_text().replace("judgments: {pg: 1}}", "judgments: {pg: 1}}" + phrase))
    skipped = run_benchmark(load_suite(skip), tmp_path / "out2")
    entry = skipped.config("overlap")
    assert entry.status == "ok"
    assert entry.skipped_queries == {"p1": "phrase queries are not supported by benchtest-overlap"}
    assert entry.per_query is not None
    at = skipped.query_ids.index("p1")
    assert entry.per_query.status[at] == "skipped"
    assert entry.per_query.values["ndcg@10"][at] == 0.0  # counted as a miss in the "all" view
    assert entry.view("all").latency.num_queries == 5  # every query it ran


def test_interrupted_benchmark_resumes_without_redoing_finished_configs(tmp_path: Path) -> None:
    path = make_suite(
        tmp_path,
        """
        - {name: first, engine: benchtest-overlap}
        - {name: second, engine: benchtest-interrupt}
        """,
    )
    out = tmp_path / "out"
    Overlap.index_calls = 0
    Interrupting.index_calls = 0  # its own counter (otherwise it reads Overlap's)
    Interrupting.armed = True
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(load_suite(path), out)
    assert Overlap.index_calls == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["configs"]) == ["first"]
    assert (out / "runs" / "first.trec").is_file()
    assert not (out / "results.json").exists()

    Interrupting.armed = False
    result = run_benchmark(load_suite(path), out)
    # only the interrupted configuration indexed again
    assert Overlap.index_calls == 1
    assert Interrupting.index_calls == 1
    assert result.config("first").resumed is True
    assert result.config("second").resumed is False
    assert result.config("second").status == "ok"
    assert (
        result.config("first").view("answered").summary
        == result.config("second").view("answered").summary
    )

    (out / "runs" / "first.trec").unlink()  # a resumed configuration rewrites a lost run file
    run_benchmark(load_suite(path), out)
    assert Overlap.index_calls == 1 and (out / "runs" / "first.trec").is_file()

    run_benchmark(load_suite(path), out, resume=False)  # --fresh redoes everything
    assert Overlap.index_calls == 2


def test_changed_settings_invalidate_the_checkpoint(tmp_path: Path) -> None:
    engines = "- {name: first, engine: benchtest-overlap}"
    out = tmp_path / "out"
    Overlap.index_calls = 0
    run_benchmark(load_suite(make_suite(tmp_path, engines)), out)
    run_benchmark(load_suite(make_suite(tmp_path, engines)), out)
    assert Overlap.index_calls == 1
    run_benchmark(load_suite(make_suite(tmp_path, engines, settings=", repeats: 3")), out)
    assert Overlap.index_calls == 2


def test_thread_pool_gives_the_same_rankings(tmp_path: Path) -> None:
    engines = "- {name: first, engine: benchtest-overlap}"
    serial = run_benchmark(load_suite(make_suite(tmp_path, engines)), tmp_path / "a")
    pooled = run_benchmark(
        load_suite(make_suite(tmp_path, engines, settings=", concurrency: 4")), tmp_path / "b"
    )
    assert pooled.config("first").concurrency == 4
    assert serial.config("first").concurrency == 1
    assert (tmp_path / "a" / "runs" / "first.trec").read_text() == (
        tmp_path / "b" / "runs" / "first.trec"
    ).read_text()
    assert (
        pooled.config("first").view("answered").summary
        == serial.config("first").view("answered").summary
    )


def test_reranker_wraps_the_engine(tmp_path: Path) -> None:
    # "embedding:hashing" reranks by feature-hashing cosine: no model download, no extra needed
    suite = load_suite(
        make_suite(
            tmp_path,
            """
            - {name: plain, engine: sqlite}
            - {name: reranked, engine: sqlite, reranker: "embedding:hashing"}
            """,
        )
    )
    result = run_benchmark(suite, tmp_path / "out")
    entry = result.config("reranked")
    assert entry.status == "ok", entry.error
    assert entry.config.reranker == "embedding:hashing"
    assert entry.per_query is not None and entry.per_query.num_results[0] > 0


def test_engine_options_for_embedding_and_hybrid_configs() -> None:
    from rankscope.bench.build import engine_options, reranker_options
    from rankscope.suite import BenchConfig

    assert engine_options(BenchConfig(name="v", engine="vector", embedding_model="m")) == {
        "model": "m"
    }
    hybrid = engine_options(BenchConfig(name="h", engine="hybrid", embedding_model="m"))
    assert hybrid == {"engines": [{"engine": "sqlite"}, {"engine": "vector", "model": "m"}]}
    given = BenchConfig(
        name="h2",
        engine="hybrid",
        options={"engines": [{"engine": "tantivy"}, {"engine": "vector"}], "fusion": "rrf"},
        embedding_model="m",
    )
    assert engine_options(given)["engines"][1] == {"engine": "vector", "model": "m"}
    assert reranker_options("embedding") == {"mode": "embedding"}
    assert reranker_options("cross-encoder/x") == {
        "mode": "cross-encoder",
        "model": "cross-encoder/x",
    }


def test_progress_bar_reports_every_configuration(tmp_path: Path) -> None:
    from rankscope.bench.progress import RichReporter

    suite = load_suite(
        make_suite(
            tmp_path,
            """
            - {name: first, engine: benchtest-overlap}
            - {name: broken, engine: benchtest-broken}
            """,
        )
    )
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with RichReporter(console) as reporter:
        run_benchmark(suite, tmp_path / "out", reporter=reporter)
    tasks = {t.description: t for t in reporter.progress.tasks}
    assert tasks["first"].completed == tasks["first"].total == 1 + 3 * 5
    assert tasks["first"].fields["stage"] == "done"
    assert any("broken (failed)" in d for d in tasks)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "16/16 steps" in shown
    with RichReporter(console) as reporter:
        run_benchmark(suite, tmp_path / "out", reporter=reporter)
    assert "first (checkpoint)" in {t.description for t in reporter.progress.tasks}


def test_configuration_names_that_share_files_are_refused(tmp_path: Path) -> None:
    engines = """
    - {name: "a b", engine: benchtest-overlap}
    - {name: "a/b", engine: benchtest-overlap}
    """
    suite = load_suite(make_suite(tmp_path, engines))
    with pytest.raises(ConfigError, match=r"configurations 'a b' and 'a/b' would write the same"):
        run_benchmark(suite, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything was written
    cased = load_suite(
        make_suite(tmp_path, "- {name: Lex, engine: sqlite}\n- {name: lex, engine: sqlite}")
    )
    with pytest.raises(ConfigError, match="case is ignored"):
        run_benchmark(cased, tmp_path / "out")
