"""What the engines really searched with: parameters other than given (results.json and the
table's notes), queries that got fewer hits than asked for, configurations that repeat another,
and what a store's library said while indexing."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from rankscope.bench import run_benchmark
from rankscope.bench.results import BenchmarkResult, Duplicate, read_results
from rankscope.report.bench import notes
from rankscope.suite import load_suite

MODEL = "hashing:32"


def _suite(tmp_path: Path) -> Path:
    words = [f"w{i}" for i in range(200)]
    rng = random.Random(3)
    docs = [{"_id": f"d{i:03d}", "text": " ".join(rng.sample(words, 10))} for i in range(400)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = "\n".join(
        f"  - {{id: q{i}, text: w{i} w{i + 50} w{i + 100}, judgments: {{d{i:03d}: 1}}}}"
        for i in range(30)
    )
    text = textwrap.dedent(
        f"""
        name: effective
        corpus: {{type: jsonl, path: docs.jsonl}}
        settings: {{k: [10], max_k: 20, warmup: 0, repeats: 1}}
        engines:
          - {{name: hnswlib-ef2, engine: hnswlib, options: {{model: "{MODEL}", ef_search: 2}}}}
          - {{name: hnswlib-ef10, engine: hnswlib, options: {{model: "{MODEL}", ef_search: 10}}}}
          - name: faiss-hnsw-ef2
            engine: faiss
            options: {{model: "{MODEL}", index: hnsw, ef_search: 2}}
          - name: faiss-ivf
            engine: faiss
            options: {{model: "{MODEL}", index: ivf_pq, nlist: 40, nprobe: 1, pq_m: 4}}
          - {{name: lite, engine: sqlite}}
          - {{name: lite-again, engine: sqlite}}
        queries:
        """
    )
    path = tmp_path / "suite.yaml"
    path.write_text(text + queries + "\n")
    return path


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchmarkResult, Path]:
    pytest.importorskip("faiss")
    pytest.importorskip("hnswlib")
    tmp_path = tmp_path_factory.mktemp("effective")
    out = tmp_path / "out"
    found = run_benchmark(load_suite(_suite(tmp_path)), out)
    assert not found.failures
    return found, out


def test_results_record_the_parameters_searched_with(
    result: tuple[BenchmarkResult, Path],
) -> None:
    found, out = result
    # hnswlib searched max(ef_search, k) = 20 deep, faiss with ef_search as given
    assert found.config("hnswlib-ef2").effective_params["ef_search"] == 20
    assert found.config("hnswlib-ef10").effective_params["ef_search"] == 20
    assert found.config("faiss-hnsw-ef2").effective_params == {
        "index": "hnsw",
        "m": 32,
        "ef_construction": 40,
        "ef_search": 2,
    }
    assert found.config("faiss-ivf").effective_params == {
        "index": "ivf_pq",
        "nlist": 40,
        "nprobe": 1,
        "pq_m": 4,
        "pq_bits": 8,
    }
    assert found.config("lite").effective_params == {}
    # and read back from results.json as written
    again = read_results(out)
    assert again.config("hnswlib-ef2").effective_params == {
        "m": 16,
        "ef_construction": 200,
        "ef_search": 20,
        "seed": 100,
        "threads": 1,
    }


def test_configurations_that_ran_identical_searches_are_duplicates(
    result: tuple[BenchmarkResult, Path],
) -> None:
    found, _ = result
    duplicates = {c.name: c.duplicate_of for c in found.configurations}
    assert duplicates == {
        "hnswlib-ef2": None,
        "hnswlib-ef10": Duplicate(of="hnswlib-ef2", reason="same_search"),
        "faiss-hnsw-ef2": None,
        "faiss-ivf": None,
        "lite": None,
        "lite-again": Duplicate(of="lite", reason="same_search"),
    }


def test_queries_with_fewer_hits_than_asked_for_are_counted(
    result: tuple[BenchmarkResult, Path],
) -> None:
    found, _ = result
    for config in found.successful:
        assert config.per_query is not None
        fewer = [
            q
            for q, n, status in zip(
                found.query_ids, config.per_query.num_results, config.per_query.status, strict=True
            )
            if n < 20 and status == "answered"
        ]
        if config.config.engine == "sqlite":  # a lexical engine may find fewer: not counted
            assert config.short_queries == []
        else:
            assert config.short_queries == fewer
    # one cell of 40 holds about 10 of the 400 vectors: most queries get fewer than 20
    assert len(found.config("faiss-ivf").short_queries) == 30
    assert found.config("hnswlib-ef2").short_queries == []


def test_the_notes_say_it_once(result: tuple[BenchmarkResult, Path]) -> None:
    found, _ = result
    texts = [n.text for n in notes(found)]
    assert (
        "searched 20 deep with other values than given: hnswlib-ef2 ef_search 20 (given 2); "
        "hnswlib-ef10 ef_search 20 (given 10)"
    ) in texts
    assert (
        "fewer hits than asked for (the index reached fewer vectors): faiss-ivf on 30 of 30 queries"
    ) in texts
    assert (
        "duplicates, identical searches: hnswlib-ef10 = hnswlib-ef2; lite-again = lite"
    ) in texts
    assert (
        "faiss-ivf: faiss PQ codebooks: 256 centroids trained on 400 vectors; faiss asks for "
        "at least 9,984 training points"
    ) in texts
    assert found.config("faiss-ivf").engine_notes == [
        "faiss IVF k-means: 40 centroids trained on 400 vectors; faiss asks for at least 1,560 "
        "training points",
        "faiss PQ codebooks: 256 centroids trained on 400 vectors; faiss asks for at least "
        "9,984 training points",
    ]
