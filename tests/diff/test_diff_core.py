"""``rankscope.diff.diff_runs``: per-query Δ exactly as ``rankscope eval -q`` computes it, both
rankings in trec_eval's order, moves, unjudged counts, missed relevant documents, filters."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from diff_data import EXAMPLES

from rankscope import evaluate
from rankscope.cli.app import main
from rankscope.data import read_qrels, read_run
from rankscope.diff import diff_runs
from rankscope.diff.core import count, moved, sort_queries
from rankscope.errors import InputError, MeasureError

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "bm25.run")
DENSE = str(EXAMPLES / "dense.run")


def eval_per_query(
    capsys: pytest.CaptureFixture[str], qrels: str, runs: list[str], measure: str
) -> dict[str, dict[str, float]]:
    """``rankscope eval -q -f json`` per run: ``{run: {query: value}}``."""
    assert main(["eval", qrels, *runs, "-q", "-m", measure, "-f", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (name,) = data["measures"]  # the canonical spelling
    return {r["name"]: {q: v[name] for q, v in r["per_query"].items()} for r in data["runs"]}


@pytest.mark.parametrize("measure", ["ndcg@10", "map", "P@5", "recall@100", "mrr", "ndcg_cut_3"])
def test_delta_is_eval_q_difference_exactly(
    capsys: pytest.CaptureFixture[str], measure: str
) -> None:
    values = eval_per_query(capsys, QRELS, [BM25, DENSE], measure)
    diff = diff_runs(QRELS, BM25, DENSE, measure)
    assert {q.query_id for q in diff.queries} == set(values["bm25"]) == set(values["dense"])
    for q in diff.queries:
        a, b = values["bm25"][q.query_id], values["dense"][q.query_id]
        assert (q.a.value, q.b.value) == (a, b)
        assert q.delta == b - a  # exact: the same floats, one subtraction
        assert q.outcome == ("tie" if a == b else "win" if b > a else "loss")
    counts = diff.counts
    assert (counts.wins, counts.losses, counts.ties) == (
        sum(values["dense"][q] > values["bm25"][q] for q in values["bm25"]),
        sum(values["dense"][q] < values["bm25"][q] for q in values["bm25"]),
        sum(values["dense"][q] == values["bm25"][q] for q in values["bm25"]),
    )


def test_examples_summary_and_order() -> None:
    diff = diff_runs(QRELS, BM25, DENSE)
    assert diff.measure == "ndcg@10" and diff.depth == 10 and diff.eval_depth is None
    assert (diff.a.name, diff.b.name) == ("bm25", "dense")
    assert (diff.a.mean, diff.b.mean) == (0.6556274016016557, 0.7427178706470593)
    assert diff.counts.to_dict() == {
        "queries": 10,
        "wins": 7,
        "losses": 3,
        "ties": 0,
        "identical": 0,
    }
    # biggest changes first, whichever their sign
    assert [q.query_id for q in diff.queries] == [
        "102", "104", "108", "107", "110", "105", "103", "106", "101", "109",
    ]  # fmt: skip
    deltas = [abs(q.delta) for q in diff.queries]
    assert deltas == sorted(deltas, reverse=True)
    by_delta = sort_queries(diff.queries, "delta")
    assert [q.query_id for q in by_delta][:3] == ["108", "106", "109"]  # the losses, worst first
    assert [q.query_id for q in sort_queries(diff.queries, "query")][:2] == ["101", "102"]


def test_rows_are_the_runs_rankings_with_moves_and_grades() -> None:
    diff = diff_runs(QRELS, BM25, DENSE, "ndcg@10")
    q = diff.query("102")
    run_a, run_b = read_run(BM25), read_run(DENSE)
    grades = read_qrels(QRELS).to_dict()["102"]
    ranked_a = [d for d, _ in run_a.ranking("102")]
    ranked_b = [d for d, _ in run_b.ranking("102")]
    assert [r.doc_id for r in q.a.rows] == ranked_a[:10]
    assert [r.doc_id for r in q.b.rows] == ranked_b[:10]
    for row in q.a.rows:
        assert row.grade == grades.get(row.doc_id)
        other = ranked_b.index(row.doc_id) + 1 if row.doc_id in ranked_b else None
        assert row.other_rank == other
        assert row.moved == moved(row.rank, other, "a")
    # pinned: bm25's first document is not in dense's 20; dense's first was bm25's fourth
    assert (q.a.rows[0].doc_id, q.a.rows[0].moved) == ("wiki-35035", "gone")
    assert (q.b.rows[0].doc_id, q.b.rows[0].moved, q.b.rows[0].other_rank) == (
        "wiki-87765",
        "↑3",
        4,
    )
    assert (q.b.rows[1].doc_id, q.b.rows[1].moved) == ("wiki-90177", "new")
    assert (q.a.rows[2].moved, q.b.rows[2].moved) == ("=", "=")


def test_moves_read_from_a_to_b_on_both_sides() -> None:
    assert moved(5, 2, "a") == "↑3" and moved(2, 5, "b") == "↑3"
    assert moved(2, 7, "a") == "↓5" and moved(7, 2, "b") == "↓5"
    assert moved(4, 4, "a") == moved(4, 4, "b") == "="
    assert moved(1, None, "a") == "gone" and moved(1, None, "b") == "new"


def test_ties_of_score_follow_trec_eval_not_the_file() -> None:
    qrels = {"q": {"d1": 1}}
    # equal scores: trec_eval ranks by doc id descending, byte order ("d9" > "d10")
    run_a = {"q": {"d10": 1.0, "d9": 1.0, "d1": 0.5}}
    run_b = {"q": {"d1": 2.0, "d10": 1.0, "d9": 1.0}}
    q = diff_runs(qrels, run_a, run_b, "ndcg@10").queries[0]
    assert [r.doc_id for r in q.a.rows] == ["d9", "d10", "d1"]
    assert [r.doc_id for r in q.b.rows] == ["d1", "d9", "d10"]
    assert [r.moved for r in q.b.rows] == ["↑2", "↓1", "↓1"]


def test_unjudged_counts_equal_judged_at_k() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    run_a = {"q1": {"a": 3, "x": 2, "b": 1}, "q2": {"y": 1, "z": 0.5}}
    run_b = {"q1": {"x": 3, "y": 2, "a": 1}, "q2": {"c": 1}}
    diff = diff_runs(qrels, run_a, run_b, "P@3")
    assert diff.depth == 3
    q1, q2 = diff.query("q1"), diff.query("q2")
    assert (q1.a.judged, q1.a.unjudged, q1.b.judged, q1.b.unjudged) == (2, 1, 1, 2)
    assert (q2.a.judged, q2.a.unjudged, q2.b.judged, q2.b.unjudged) == (0, 2, 1, 0)
    assert [r.grade for r in q1.a.rows] == [1, None, 0]
    for q in (q1, q2):
        for side in (q.a, q.b):
            assert side.judged_at_k == side.judged / len(side.rows)  # judged@3 = judged/shown
    assert (diff.a.unjudged, diff.b.unjudged) == (3, 2)
    assert diff.a.judged_at_k == (2 / 3 + 0) / 2


def test_missed_relevant_documents_with_their_ranks() -> None:
    qrels = {"q": {"r1": 2, "r2": 1, "r3": 3, "n": 0}}
    run_a = {"q": {"x": 5, "r1": 4, "y": 3, "r2": 2}}
    run_b = {"q": {"y": 5, "x": 4, "z": 3, "r3": 1}}
    q = diff_runs(qrels, run_a, run_b, "P@2").queries[0]
    assert [r.doc_id for r in q.a.rows] == ["x", "r1"] and [r.doc_id for r in q.b.rows] == [
        "y",
        "x",
    ]
    # relevant and in neither top 2, the most relevant first; where each run has it
    assert [(m.doc_id, m.grade, m.rank_a, m.rank_b) for m in q.missed] == [
        ("r3", 3, None, 4),
        ("r2", 1, 4, None),
    ]
    assert q.num_relevant == 3


def test_depth_defaults_and_overrides() -> None:
    assert diff_runs(QRELS, BM25, DENSE, "P@5").depth == 5
    assert diff_runs(QRELS, BM25, DENSE, "map").depth == 10  # no cutoff: 10 rows
    diff = diff_runs(QRELS, BM25, DENSE, "ndcg@10", depth=3)
    assert diff.depth == 3 and all(len(q.a.rows) == 3 for q in diff.queries)
    assert (
        diff.queries[0].delta == diff_runs(QRELS, BM25, DENSE).query(diff.queries[0].query_id).delta
    )  # rows shown do not change the measure
    cut = diff_runs(QRELS, BM25, DENSE, "ndcg@10", eval_depth=4)
    assert cut.depth == 4 and cut.eval_depth == 4
    q = cut.query("102")
    assert q.a.retrieved == 4 and q.a.rows[1].moved == "gone"  # dense's rank 13 is cut at -M 4


def test_a_query_a_run_lacks_scores_as_trec_eval_c(capsys: pytest.CaptureFixture[str]) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run_a = {"q1": {"a": 1}, "q2": {"b": 1}, "q9": {"a": 1}}
    run_b = {"q1": {"x": 1}}
    diff = diff_runs(qrels, run_a, run_b, "ndcg@10", names=("A", "B"))
    q2 = diff.query("q2")
    assert not q2.b.in_run and q2.b.rows == () and q2.b.value == 0.0 and q2.outcome == "loss"
    assert diff.unjudged_queries == ("q9",)
    assert diff.b.missing_queries == 1
    assert any("B lacks 1 of the 2 judged queries" in n for n in diff.notes)
    assert any("1 run queries have no judgments" in n for n in diff.notes)


def test_runs_with_one_name_are_told_apart() -> None:
    diff = diff_runs(QRELS, BM25, BM25)
    assert diff.a.name != diff.b.name
    assert diff.counts.ties == 10 and diff.counts.identical == 10


def test_select_filters() -> None:
    diff = diff_runs(QRELS, BM25, DENSE)
    losses = diff.select(only="loss")
    assert [q.query_id for q in losses.shown] == ["108", "106", "109"]
    assert losses.counts == diff.counts  # the summary stays over every query
    assert [q.query_id for q in diff.select(min_delta=0.2).shown] == ["102", "104", "108"]
    assert [q.query_id for q in diff.select(query_ids=["105", "101"]).shown] == ["105", "101"]
    limited = diff.select(only="win", limit=2)
    assert [q.query_id for q in limited.shown] == ["102", "104"]
    assert limited.filters == ("wins", "first 2 of 7")
    with pytest.raises(InputError, match="no query '999'"):
        diff.select(query_ids=["999"])
    with pytest.raises(InputError, match="no categories"):
        diff.select(categories=["x"])
    with pytest.raises(InputError, match="min-delta"):
        diff.select(min_delta=-1)


def test_categories_and_texts_from_values() -> None:
    from rankscope.engines.base import Document

    diff = diff_runs(
        QRELS,
        BM25,
        DENSE,
        queries={"102": "a <b> query"},
        categories={"102": "c1", "103": "c2"},
        corpus={"wiki-35035": Document("wiki-35035", "first words " * 40, "A title")},
    )
    q = diff.query("102")
    assert (q.query, q.category) == ("a <b> query", "c1")
    assert (q.a.rows[0].title, q.a.rows[0].snippet[:12]) == ("A title", "first words ")
    assert len(q.a.rows[0].snippet) <= 301
    assert diff.categories == ("c1", "c2")
    assert [x.query_id for x in diff.select(categories=["c2"]).shown] == ["103"]
    with pytest.raises(InputError, match="no category 'c3'"):
        diff.select(categories=["c3"])


def test_bad_input() -> None:
    with pytest.raises(MeasureError, match="geometric mean"):
        diff_runs(QRELS, BM25, DENSE, "gm_map")
    with pytest.raises(MeasureError):
        diff_runs(QRELS, BM25, DENSE, "ndcg@x")
    with pytest.raises(InputError, match="shares no query"):
        diff_runs(QRELS, BM25, {"nope": {"d": 1.0}})
    with pytest.raises(InputError, match="at least 1"):
        diff_runs(QRELS, BM25, DENSE, depth=0)


def test_counts_sum_as_trec_eval_sums_them() -> None:
    diff = diff_runs(QRELS, BM25, DENSE, "num_rel_ret")
    assert diff.aggregate == "sum" and (diff.a.mean, diff.b.mean) == (85.0, 89.0)
    assert diff.a.mean == sum(q.a.value for q in diff.queries)
    assert diff_runs(QRELS, BM25, DENSE).aggregate == "mean"


def test_values_equal_up_to_rounding_are_a_tie() -> None:
    """AP of relevant documents at ranks 1, 2, 4, 12 and at 1, 3, 4, 6 is 37/48 both times;
    trec_eval's running sums round to 0.7708333333333334 and 0.7708333333333333: a tie, as
    the statistics count ties (an exact ``==`` would call it a win)."""
    qrels = {"q": {f"r{i}": 1 for i in range(4)}, "p": {"r0": 1}}

    def ranking(relevant_at: tuple[int, ...]) -> dict[str, float]:
        names = iter(f"r{i}" for i in range(4))
        return {next(names) if k in relevant_at else f"n{k}": float(100 - k) for k in range(1, 13)}

    a = {"q": ranking((1, 2, 4, 12)), "p": {"r0": 1.0}}
    b = {"q": ranking((1, 3, 4, 6)), "p": {"x": 1.0}}
    diff = diff_runs(qrels, a, b, "map", names=("a", "b"))
    tied = diff.query("q")
    assert (tied.a.value, tied.b.value) == (0.7708333333333334, 0.7708333333333333)
    assert tied.delta == -1.1102230246251565e-16  # 2**-53
    assert tied.outcome == "tie"
    assert diff.query("p").outcome == "loss"
    assert diff.counts.to_dict() == {
        "queries": 2,
        "wins": 0,
        "losses": 1,
        "ties": 1,
        "identical": 0,
    }


def _many_queries(tmp_path: Path, n: int) -> tuple[Path, Path, Path]:
    """Qrels and two runs of ``n`` queries x 10 documents; B reorders A and swaps documents."""
    rng = np.random.default_rng(5)
    qrels, run_a, run_b = [], [], []
    for q in range(n):
        docs = [f"d{q}x{j}" for j in range(12)]
        for j in rng.choice(12, size=5, replace=False).tolist():
            qrels.append(f"{q} 0 {docs[j]} {int(rng.integers(0, 3))}\n")
        a = docs[:10]
        b = a[::-1] if q % 3 == 0 else a if q % 3 == 1 else [*a[:9], docs[11]]
        run_a += [f"{q} Q0 {d} {r} {10 - r} a\n" for r, d in enumerate(a, 1)]
        run_b += [f"{q} Q0 {d} {r} {10 - r} b\n" for r, d in enumerate(b, 1)]
    paths = tmp_path / "qrels.txt", tmp_path / "a.run", tmp_path / "b.run"
    for path, lines in zip(paths, (qrels, run_a, run_b), strict=True):
        path.write_text("".join(lines))
    return paths


def test_a_diff_of_many_queries_builds_only_those_shown(tmp_path: Path) -> None:
    """20,000 queries x 2 runs: the diff costs about what evaluating both runs costs (it
    built 400,000 rows of objects, 30 s for 100,000 queries); only the queries shown are
    built, and the counts read from the columns are the queries' own."""
    qrels_path, a_path, b_path = _many_queries(tmp_path, 20_000)
    qrels, run_a, run_b = read_qrels(qrels_path), read_run(a_path), read_run(b_path)
    diff_runs(qrels, run_a, run_b, "ndcg@10")  # imports and first-use caches
    tracemalloc.start()
    try:
        evaluate(qrels, [run_a, run_b], ["ndcg@10", "judged@10"], average_over_qrels=True)
        _, evaluated = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        diff = diff_runs(qrels, run_a, run_b, "ndcg@10").select(limit=10)
        shown = diff.to_dict()
        _, diffed = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert diffed < 1.5 * evaluated, (diffed, evaluated)
    assert len(shown["queries"]) == 10 and shown["counts"]["queries"] == 20_000
    c = diff.counts
    # q % 3 == 1: the same list (a tie); == 0: reversed; == 2: the last document swapped
    assert (c.identical, c.total) == (6667, 20_000)
    built = list(diff.queries[:3000])  # the queries themselves agree with the columns
    assert count(built) == count(diff.queries[:3000])
    assert all(
        q.same_top == ([r.doc_id for r in q.a.rows] == [r.doc_id for r in q.b.rows]) for q in built
    )
    assert all(q.a.unjudged == sum(r.grade is None for r in q.a.rows) for q in built)
    assert diff.a.unjudged == 20_000 * 10 - sum(
        round(j * 10) for j in evaluate(qrels, run_a, ["judged@10"]).values("judged@10").tolist()
    )
