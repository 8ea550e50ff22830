"""Lucene BM25 through Anserini: the Cranfield reproduction of a published Lucene run, Lucene's
sloppy phrases as the reference for ``_phrase.py``, and the errors when parts are missing."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from prerequisites import shared_data
from rankscope import Run, evaluate
from rankscope.engines import Document, Query, create_engine
from rankscope.engines.phrase import phrase_matches
from rankscope.errors import ConfigError, EngineError

pytest.importorskip("jnius_config")  # not jnius: importing it starts the JVM

LUCENE_RUN = ("cranfield", "runs", "stevinjs_CS7IS3-CA1", "results_standard_bm25.txt")


@pytest.fixture(autouse=True)
def _needs_anserini(anserini_available: bool) -> None:
    """Every test here needs the jar and Java (the fixture skips otherwise)."""


def test_cranfield_reproduces_the_published_lucene_bm25_run() -> None:
    """The run in ``runs/stevinjs_CS7IS3-CA1`` came from Lucene 8.11 with StandardAnalyzer and
    BM25Similarity() (k1 1.2, b 0.75) over every field of a record (title, authors,
    bibliography, abstract: the BEIR copy's title, text and metadata), top 50 per query, scores
    printed with 4 decimals. The same configuration here must give the same 50 documents for
    every query, the same scores to that precision, and its nDCG@10 0.343 / MAP 0.262."""
    from rankscope.suite.corpus import read_jsonl_documents, read_jsonl_queries

    beir = shared_data("cranfield", "beir", "corpus.jsonl").parent
    lucene_run = shared_data(*LUCENE_RUN)
    reference: dict[str, dict[str, float]] = {}
    for line in lucene_run.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        reference.setdefault(qid, {})[doc] = float(score)
    queries = read_jsonl_queries(beir / "queries.jsonl")
    assert len(queries) == 225
    ours: dict[str, dict[str, float]] = {}
    with create_engine("anserini", analyzer="standard", k1=1.2, b=0.75) as engine:
        engine.index(read_jsonl_documents(beir / "corpus.jsonl"))  # a generator: read once
        for q in queries:
            ours[q.id] = {h.doc_id: h.score for h in engine.search(q, 50)}
    assert ours.keys() == reference.keys()
    for qid, theirs in reference.items():
        assert ours[qid].keys() == theirs.keys(), qid
        worst = max(abs(ours[qid][d] - s) for d, s in theirs.items())
        assert worst <= 0.00005 + 1e-9, (qid, worst)  # the reference printed 4 decimals
    qrels = beir / "qrels" / "test.tsv"
    mine = evaluate(qrels, Run.from_dict(ours, name="anserini"), ["ndcg@10", "map"]).mean()
    published = evaluate(qrels, lucene_run, ["ndcg@10", "map"]).mean()
    assert round(mine["ndcg@10"], 3) == round(published["ndcg@10"], 3) == 0.343
    assert round(mine["map"], 3) == round(published["map"], 3) == 0.262


def _lucene_phrase_ids(docs: list[Document], phrase: str, slop: int) -> set[str]:
    with create_engine("anserini", analyzer="whitespace") as e:
        e.index(docs)
        q = Query("p", phrase, kind="phrase", field="text", slop=slop)
        return {h.doc_id for h in e.search(q, 1000)}


def test_lucene_sloppy_phrases_agree_with_the_shared_phrase_rule() -> None:
    """Lucene's PhraseQuery is the reference for ``_phrase.py`` (used by duckdb, the loopback
    cluster and the postgres engine's slop): random documents and phrases over a small
    vocabulary, every slop 0..4, the same matches."""
    rng = random.Random(7)
    vocab = ["a", "b", "c", "d"]
    docs = [
        Document(f"d{i}", " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 7))))
        for i in range(150)
    ]
    with create_engine("anserini", analyzer="whitespace") as e:
        e.index(docs)
        for _ in range(25):
            phrase = [rng.choice(vocab) for _ in range(rng.randint(2, 3))]
            for slop in range(5):
                q = Query("p", " ".join(phrase), kind="phrase", field="text", slop=slop)
                lucene = {h.doc_id for h in e.search(q, 1000)}
                ours = {d.id for d in docs if phrase_matches(d.text.split(), phrase, slop)}
                assert lucene == ours, (phrase, slop, sorted(lucene ^ ours)[:5])


def test_a_transposition_costs_two() -> None:
    docs = [Document("fwd", "x blunt body y"), Document("rev", "x body blunt y")]
    assert _lucene_phrase_ids(docs, "blunt body", 1) == {"fwd"}
    assert _lucene_phrase_ids(docs, "blunt body", 2) == {"fwd", "rev"}


def _once(docs: list[Document]) -> Iterator[Document]:
    yield from docs


def test_fields_boosts_and_bm25_options() -> None:
    docs = [
        Document("t", "nothing here", title="tomato"),
        Document("x", "tomato tomato tomato", title="other", fields={"tags": "red fruit"}),
    ]
    with create_engine("anserini") as e:
        e.index(_once(docs))
        title = Query("m", "tomato", kind="multi_match", fields=(("title", 10.0), ("text", 1.0)))
        text = Query("m", "tomato", kind="multi_match", fields=(("title", 0.1), ("text", 1.0)))
        assert e.search(title, 2)[0].doc_id == "t"
        assert e.search(text, 2)[0].doc_id == "x"
        assert [h.doc_id for h in e.search(Query("t", "fruit", kind="match", field="tags"), 5)] == [
            "x"
        ]
        with pytest.raises(EngineError, match="nope"):
            e.search(Query("t", "fruit", kind="match", field="nope"), 5)
    scores = []
    for k1 in (0.5, 2.0):
        with create_engine("anserini", k1=k1) as e:
            e.index(docs)
            scores.append(e.search(Query("q", "tomato"), 2)[0].score)
    assert scores[0] != scores[1]


def test_missing_parts_are_named(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="fat jar"):
        create_engine("anserini", jar=str(tmp_path / "missing.jar"))
    with pytest.raises(ConfigError, match="analyzer"):
        create_engine("anserini", analyzer="klingon")
