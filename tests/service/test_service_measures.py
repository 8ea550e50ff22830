"""Per-query measures of collected records: trec_eval semantics through rankscope.evaluate,
and the stored values equal `rankscope eval` on the exported qrels and run."""

from __future__ import annotations

import contextlib
import io
import json
import random
import zipfile
from pathlib import Path
from typing import Any

import pytest

from rankscope.cli.app import main
from rankscope.service.ingest import measures
from serve_helpers import BATCH, COLLECT, Service, bearer, doc, record

pytestmark = pytest.mark.service


def collect(service: Service, body: dict[str, object]) -> dict[str, Any]:
    r = service.client.post(COLLECT, json=body, headers=bearer(service.keys.alice))
    assert r.status_code == 201, r.text
    data: dict[str, Any] = r.json()["data"]
    return data


def test_average_precision_divides_by_all_relevant_documents(service: Service) -> None:
    # one relevant document retrieved (at rank 1) of two relevant: AP 0.5 as in trec_eval (the
    # design this replaces said 1.0)
    data = collect(
        service,
        record(docs=[doc("a", 0.9), doc("b", 0.8)], relevantDocumentIds=["a", "c"]),
    )
    assert data["averagePrecision"] == 0.5
    assert data["precision"] == 0.5
    assert data["recall"] == 0.5
    assert data["f1Score"] == 0.5
    assert data["meanReciprocalRank"] == 1.0
    assert data["totalRetrieved"] == 2
    assert data["totalRelevant"] == 2
    assert data["relevantRetrieved"] == 1
    assert data["judgmentSource"] == "provided"
    assert data["threshold"] is None


def test_shown_order_counts_not_the_scores(service: Service) -> None:
    # a reranked list: the relevant document was shown second although its score is highest
    data = collect(service, record(docs=[doc("x", 0.2), doc("a", 0.9)], relevantDocumentIds=["a"]))
    assert data["meanReciprocalRank"] == 0.5
    assert data["averagePrecision"] == 0.5


def test_chunks_of_one_document_count_once_at_the_first(service: Service) -> None:
    docs = [doc("a", 0.9, chunkIndex=0), doc("b", 0.5), doc("a", 0.8, chunkIndex=3)]
    data = collect(service, record(docs=docs, relevantDocumentIds=["b"]))
    assert data["totalRetrieved"] == 2  # documents
    assert data["documentChunksRetrieved"] == 3
    assert data["meanReciprocalRank"] == 0.5
    assert data["precision"] == 0.5


def test_graded_judgments_and_cutoff(service: Service) -> None:
    docs = [doc("a", 0.9), doc("b", 0.8), doc("c", 0.7)]
    full = collect(service, record(docs=docs, judgments={"a": 1, "c": 3}))
    cut = collect(service, record(docs=docs, judgments={"a": 1, "c": 3}, options={"cutoff": 2}))
    assert full["totalRetrieved"] == 3 and cut["totalRetrieved"] == 2
    assert cut["cutoff"] == 2
    assert cut["recall"] == 0.5  # c (grade 3) is beyond the cut-off
    assert full["ndcg"] > cut["ndcg"]


def test_heuristic_rows_use_the_threshold(service: Service) -> None:
    data = collect(service, record(docs=[doc("a", 0.71), doc("b", 0.69), doc("c", 0.7)]))
    assert data["judgmentSource"] == "heuristic"
    assert data["threshold"] == 0.7
    assert data["relevantRetrieved"] == 2  # 0.71 and 0.7 reach 0.7
    assert data["meanReciprocalRank"] == 1.0


def test_nothing_retrieved(service: Service) -> None:
    empty = collect(service, record(docs=[], relevantDocumentIds=["a"]))
    assert empty["totalRelevant"] == 1 and empty["recall"] == 0.0 and empty["totalRetrieved"] == 0
    nothing = collect(service, record(docs=[]))
    assert nothing["totalRetrieved"] == 0 and nothing["judgmentSource"] == "heuristic"
    assert nothing["minScore"] is None


def test_score_batches_match_single_calls() -> None:
    items = [
        measures.Evaluable("q1", ("a", "b"), {"a": 1, "b": 0}),
        measures.Evaluable("q2", (), {"x": 2}),
        measures.Evaluable("q3", (), {}),
        measures.Evaluable("q4", ("c",), {"c": 0}),
    ]
    together = measures.score(items)
    assert together == [measures.score([it])[0] for it in items]
    assert together[2] == measures.NOTHING
    # every item scored and the keys in order: the values come back in the items' order too
    scored = [it for it in items if it.judgments]
    assert measures.score(scored) == [measures.score([it])[0] for it in scored]
    assert measures.score(scored[::-1]) == measures.score(scored)[::-1]


def test_shown_ranking_keeps_the_first_of_each_document_up_to_the_cutoff() -> None:
    shown = ["a", "b", "a", "c", "b", "d"]
    assert measures.shown_ranking(shown) == ("a", "b", "c", "d")
    assert measures.shown_ranking(shown, 3) == ("a", "b", "c")
    assert measures.shown_ranking(shown, 10) == ("a", "b", "c", "d")
    assert measures.shown_ranking(iter(shown), 2) == ("a", "b")
    assert measures.shown_ranking(shown, 0) == ("a",)  # as the loop it replaced: at least one
    assert measures.shown_ranking([], 2) == ()


def _random_record(rng: random.Random, i: int) -> dict[str, object]:
    n = rng.randint(0, 12)
    pool = [f"d{j}" for j in range(20)]
    docs = [
        doc(rng.choice(pool), round(rng.random(), 3), chunkIndex=rng.randint(0, 3))
        for _ in range(n)
    ]
    body: dict[str, object] = {"query": f"query {i}", "retrievedDocuments": docs}
    kind = rng.random()
    if kind < 0.4:
        body["relevantDocumentIds"] = rng.sample(pool, rng.randint(0, 4))
    elif kind < 0.7:
        body["judgments"] = {d: rng.randint(0, 3) for d in rng.sample(pool, rng.randint(1, 5))}
    if rng.random() < 0.3:
        body["options"] = {"cutoff": rng.randint(1, 10)}
    return body


def _eval_json(tmp: Path, qrels: str, run: str) -> dict[str, Any]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(
            [
                "eval",
                "-c",
                "-q",
                "--format",
                "json",
                *[a for m in measures.TREC_EVAL_MEASURES for a in ("-m", m)],
                str(tmp / qrels),
                str(tmp / run),
            ]
        )
    assert code == 0
    return json.loads(buffer.getvalue())  # type: ignore[no-any-return]


@pytest.mark.parametrize("judgments", ["judged", "heuristic"])
def test_stored_values_equal_rankscope_eval_on_the_export(
    service: Service, tmp_path: Path, judgments: str
) -> None:
    rng = random.Random(7 if judgments == "judged" else 8)
    records = [_random_record(rng, i) for i in range(3000)]
    h = bearer(service.keys.alice)
    for start in range(0, len(records), 1000):
        r = service.client.post(BATCH, json={"records": records[start : start + 1000]}, headers=h)
        assert r.status_code == 201, r.text
    stored: dict[str, dict[str, object]] = {}
    offset = 0
    while True:
        page = service.client.get(
            "/api/metrics/retrieval", params={"limit": 1000, "offset": offset}, headers=h
        ).json()["data"]["queries"]
        stored.update({q["id"]: q for q in page})
        if len(page) < 1000:
            break
        offset += 1000
    assert len(stored) == 3000
    r = service.client.get(
        "/api/metrics/retrieval/export",
        params={"format": "trec", "judgments": judgments},
        headers=h,
    )
    assert r.status_code == 200
    zipfile.ZipFile(io.BytesIO(r.content)).extractall(tmp_path)
    result = _eval_json(tmp_path, "qrels.txt", "run.trec")
    (run,) = result["runs"]
    got: dict[str, dict[str, float]] = run["per_query"]
    chosen = {
        k: v
        for k, v in stored.items()
        if (v["judgmentSource"] == "heuristic") == (judgments == "heuristic")
    }
    # records with neither judgments nor documents are not in the files (nothing to evaluate)
    assert set(got) <= set(chosen)
    left_out = [v for k, v in chosen.items() if k not in got]
    assert all(v["totalRetrieved"] == 0 and v["totalRelevant"] == 0 for v in left_out)
    expected = {k: v for k, v in chosen.items() if k in got}
    assert len(expected) > 500
    names = {
        "set_P": "precision",
        "set_recall": "recall",
        "set_F": "f1Score",
        "mrr": "meanReciprocalRank",
        "map": "averagePrecision",
        "ndcg": "ndcg",
    }
    for qid, values in expected.items():
        for measure, field in names.items():
            assert got[qid][measure] == pytest.approx(values[field], abs=1e-12), (qid, field)


@pytest.mark.parametrize("in_order", [False, True])
def test_qrels_and_run_built_for_evaluate_equal_the_from_dict_values(in_order: bool) -> None:
    """In any key order (the write path's keys come sorted, and are then not sorted again)."""
    from rankscope import Qrels, Run

    items = [
        measures.Evaluable("é-2", ("z", "ä", "b"), {"b": 1, "Z": 0, "ä": 2, "z": 0}),
        measures.Evaluable("a-1", ("x",), {"x": 0}),
        measures.Evaluable("b-0", (), {"q": 3}),
        measures.Evaluable("c-9", ("k",), {}),
        measures.Evaluable("d-1", ("k", "l", "m", "n"), {"n": 1, "k": 2}),
    ]
    if in_order:
        items.sort(key=lambda it: it.key)
    qrels = measures.qrels_of(items)
    run = measures.run_of(items)
    expected_qrels = Qrels.from_dict({it.key: dict(it.judgments) for it in items if it.judgments})
    expected_run = Run.from_dict(
        {it.key: measures.run_scores(it.ranking) for it in items if it.ranking}, name="collected"
    )
    assert qrels.query_ids == expected_qrels.query_ids
    assert qrels.doc_ids.to_pylist() == expected_qrels.doc_ids.to_pylist()
    assert qrels.grades.tolist() == expected_qrels.grades.tolist()
    assert qrels.offsets.tolist() == expected_qrels.offsets.tolist()
    assert run.query_ids == expected_run.query_ids
    assert run.doc_ids.to_pylist() == expected_run.doc_ids.to_pylist()
    assert run.scores.tolist() == expected_run.scores.tolist()
    assert run.offsets.tolist() == expected_run.offsets.tolist()


def test_rows_of_one_call_take_each_users_threshold_and_search_type() -> None:
    """build_rows looks each (user, search type) threshold and search-type label up once per
    call: records of several users and types in one batch must still get their own."""
    from rankscope.collect.wire import MetricCreate
    from rankscope.service.ingest.rows import NewRecord, build_rows, with_user_thresholds

    def lookup(user: str, search_type: str) -> float:
        return {"semantic": 0.5, "keyword+web": 0.2}.get(search_type, 0.9)

    own = with_user_thresholds({"bob": {"semantic": 0.95}, "carol": {"*": 0.1}}, lookup)
    docs = [doc("a", 0.92), doc("b", 0.6), doc("c", 0.3)]
    kinds = [{"semantic": True}, {"keyword": True, "web": True}, None, {}]
    records = []
    for i in range(24):
        options = {} if kinds[i % 4] is None else {"searchTypes": kinds[i % 4]}
        body = record(f"q{i}", docs=docs, options=options)
        records.append(
            NewRecord(MetricCreate.model_validate(body), ["alice", "bob", "carol"][i % 3])
        )
    rows = build_rows(records, own)
    for i, row in enumerate(rows):
        user, label = (
            ["alice", "bob", "carol"][i % 3],
            ["semantic", "keyword+web", "none", "none"][i % 4],
        )
        expected = own(user, label)
        assert (row["user_id"], row["search_type"], row["threshold"]) == (user, label, expected)
        assert row["judgments"] == {d["documentId"]: int(d["score"] >= expected) for d in docs}
        assert row["relevant_retrieved"] == sum(row["judgments"].values())
        flags = (
            None
            if kinds[i % 4] is None
            else {n: n in (kinds[i % 4] or {}) for n in ("semantic", "keyword", "hybrid", "web")}
        )
        assert row["search_types"] == flags
    # each row owns its flags: changing one row's dict leaves the others alone
    rows[0]["search_types"]["web"] = True
    assert rows[4]["search_types"] == {
        "semantic": True,
        "keyword": False,
        "hybrid": False,
        "web": False,
    }


def test_heuristic_judgments_grade_each_document_at_its_best_score_in_shown_order() -> None:
    scored = [("b", 0.4), ("a", 0.9), ("c", 0.5)]
    assert list(measures.heuristic_judgments(scored, 0.5).items()) == [
        ("b", 0),
        ("a", 1),
        ("c", 1),
    ]
    # a document shown twice: graded by its best score, placed where first shown
    repeated = [("b", 0.4), ("a", 0.2), ("b", 0.7), ("a", 0.3)]
    assert list(measures.heuristic_judgments(iter(repeated), 0.5).items()) == [("b", 1), ("a", 0)]
    assert measures.heuristic_judgments([("x", 0.6), ("x", 0.1)], 0.5) == {"x": 1}
    assert measures.heuristic_judgments([], 0.5) == {}
