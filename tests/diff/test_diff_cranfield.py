"""``rankscope diff`` on Cranfield's two public Lucene runs (top 50 of 225 queries each).

The traps (see the data's README): both runs carry the runid ``STANDARD`` (told apart by file);
their qrels are the repository's ``qrel`` (codes remapped, -1 -> 5: every pair relevant), not
the BEIR copy's; query ids are positions 1..225 (BEIR's queries.jsonl uses them too); scores
have 4 decimals, so equal scores are common and trec_eval's tie order (document id descending,
as bytes: "123" before "1202") decides ranks, whatever the file's rank column says.
"""

from __future__ import annotations

import json

import pytest
from diff_data import BM25, CLASSIC, CRANFIELD, HAVE_CRANFIELD, LUCENE_QRELS

from rankscope.cli.app import main
from rankscope.diff import diff_runs

pytestmark = pytest.mark.skipif(not HAVE_CRANFIELD, reason=f"no Cranfield data in {CRANFIELD}")


def eval_q(capsys: pytest.CaptureFixture[str], measure: str) -> dict[str, dict[str, float]]:
    args = [str(LUCENE_QRELS), str(BM25), str(CLASSIC), "-q", "-m", measure, "-f", "json"]
    assert main(["eval", *args]) == 0
    data = json.loads(capsys.readouterr().out)
    (name,) = data["measures"]
    return {r["name"]: {q: v[name] for q, v in r["per_query"].items()} for r in data["runs"]}


@pytest.mark.parametrize("measure", ["ndcg@10", "map", "P@5", "recall@50", "bpref"])
def test_delta_is_eval_q_difference_exactly(
    capsys: pytest.CaptureFixture[str], measure: str
) -> None:
    values = eval_q(capsys, measure)
    bm25, classic = values["results_standard_bm25"], values["results_standard_classic"]
    diff = diff_runs(LUCENE_QRELS, BM25, CLASSIC, measure)
    assert (diff.a.name, diff.b.name) == ("results_standard_bm25", "results_standard_classic")
    assert len(diff.queries) == len(bm25) == len(classic) == 225
    for q in diff.queries:
        assert (q.a.value, q.b.value) == (bm25[q.query_id], classic[q.query_id])
        assert q.delta == classic[q.query_id] - bm25[q.query_id]
    c = diff.counts
    assert c.wins == sum(classic[q] > bm25[q] for q in bm25)
    assert c.losses == sum(classic[q] < bm25[q] for q in bm25)
    assert c.ties == sum(classic[q] == bm25[q] for q in bm25)


def test_pinned_summary_of_the_lucene_runs() -> None:
    diff = diff_runs(LUCENE_QRELS, BM25, CLASSIC, "map")
    # trec_eval 9.0.7's own outputs in the data: map 0.3802 (bm25), 0.3773 (classic)
    assert (round(diff.a.mean, 4), round(diff.b.mean, 4)) == (0.3802, 0.3773)
    assert diff.counts.to_dict() == {
        "queries": 225,
        "wins": 94,
        "losses": 112,
        "ties": 19,
        "identical": 0,
    }
    assert (diff.a.unjudged, diff.b.unjudged) == (1590, 1603)
    assert diff.unjudged_queries == () and diff.notes == ()


def test_equal_scores_ranked_as_trec_eval_ranks_them() -> None:
    diff = diff_runs(LUCENE_QRELS, BM25, CLASSIC, "ndcg@10", depth=20)
    # bm25, query 116: 123 and 1202 tie at 7.4610 on ranks 10/11; as bytes "123" > "1202"
    q116 = diff.query("116").a.rows
    assert [(r.rank, r.doc_id, r.score) for r in q116[9:11]] == [
        (10, "123", 7.461),
        (11, "1202", 7.461),
    ]
    # bm25, query 192: the file ranks 215 (15) before 642 (16), both 2.9887; trec_eval 642 first
    q192 = diff.query("192").a.rows
    assert [(r.rank, r.doc_id) for r in q192[14:16]] == [(15, "642"), (16, "215")]
    # classic, query 158: 236 before 1011 (a numeric order would swap them)
    q158 = diff.query("158").b.rows
    assert [(r.rank, r.doc_id) for r in q158[6:8]] == [(7, "236"), (8, "1011")]


def test_texts_from_the_beir_copy() -> None:
    beir = CRANFIELD / "beir"
    from rankscope.judge.io import read_queries

    diff = diff_runs(
        LUCENE_QRELS,
        BM25,
        CLASSIC,
        queries=read_queries(beir / "queries.jsonl"),
        corpus=beir / "corpus.jsonl",
    )
    q1 = diff.query("1")
    assert q1.query.startswith("what similarity laws must be obeyed when constructing")
    first = q1.a.rows[0]
    assert (first.doc_id, first.title) == (
        "184",
        "scale models for thermo-aeroelastic research .",
    )
    assert first.snippet.startswith("scale models for thermo-aeroelastic research .")
    assert len(diff.documents) == len(
        {r.doc_id for q in diff.queries for r in (*q.a.rows, *q.b.rows)}
    )


def test_judged_counts_against_trec_eval_p5() -> None:
    # in the runs' own qrels every judged pair is relevant, so judged@5 is P@5: trec_eval
    # 9.0.7's P_5 in the data's metrics files is 0.4338 (bm25) and 0.4284 (classic)
    diff = diff_runs(LUCENE_QRELS, BM25, CLASSIC, "P@5")
    assert (round(diff.a.judged_at_k, 4), round(diff.b.judged_at_k, 4)) == (0.4338, 0.4284)
    assert diff.a.judged_at_k == diff.a.mean and diff.b.judged_at_k == diff.b.mean
    assert (diff.a.unjudged, diff.b.unjudged) == (637, 643)  # of 225 x 5 rows
    assert 225 * 5 - diff.a.unjudged == sum(q.a.judged for q in diff.queries)
