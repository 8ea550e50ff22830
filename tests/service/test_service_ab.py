"""GET /api/metrics/retrieval/compare and GET /api/events/interleaving: numbers against the
statistics module, the minimum sample, judged and heuristic rows apart, errors."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from scipy import stats

from rankscope.collect.interleave import credit, interleaving_events, team_draft
from serve_helpers import BATCH, Service, bearer

pytestmark = pytest.mark.service
COMPARE = "/api/metrics/retrieval/compare"


def records(arm: str, hits: list[int], *, judged: bool = True, prefix: str = "") -> list[Any]:
    """One record per value: relevant document at rank ``hit`` (0: none retrieved)."""
    out = []
    for i, hit in enumerate(hits):
        docs = [{"documentId": f"d{j}", "score": 0.9 - 0.1 * j} for j in range(1, 4)]
        body: dict[str, Any] = {
            "query": f"{prefix}query {i}",
            "retrievedDocuments": docs,
            "options": {"arm": arm},
        }
        if judged:
            body["relevantDocumentIds"] = [f"d{hit}"] if hit else ["elsewhere"]
        out.append(body)
    return out


def post_records(service: Service, items: list[Any]) -> None:
    r = service.client.post(BATCH, json={"records": items}, headers=bearer(service.keys.alice))
    assert r.status_code == 201, r.text


def compare(service: Service, **params: Any) -> Any:
    return service.client.get(COMPARE, params=params, headers=bearer(service.keys.alice))


def test_unpaired_compare_matches_welch_and_names_a_winner(service: Service) -> None:
    rng = random.Random(1)
    a = [1 if rng.random() < 0.8 else rng.choice([2, 3, 0]) for _ in range(60)]
    b = [rng.choice([1, 2, 3, 0]) for _ in range(50)]
    post_records(service, records("new", a) + records("old", b, prefix="b "))
    post_records(service, records("new", [3] * 40, judged=False, prefix="h "))
    r = compare(service, arms="new,old", measures="meanReciprocalRank,ndcg")
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["judgmentSource"] == "judged" and data["records"] == {"new": 60, "old": 50}
    mrr = data["measures"][0]
    assert mrr["measure"] == "meanReciprocalRank" and mrr["test"] == "welch"
    rr = {0: 0.0, 1: 1.0, 2: 0.5, 3: 1 / 3}
    xa, xb = [rr[h] for h in a], [rr[h] for h in b]
    ref = stats.ttest_ind(xa, xb, equal_var=False)
    assert mrr["delta"] == pytest.approx(np.mean(xa) - np.mean(xb))
    assert mrr["pValue"] == pytest.approx(float(ref.pvalue))
    ci = ref.confidence_interval(0.95)
    assert (mrr["ci"]["low"], mrr["ci"]["high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert mrr["bootstrapCi"]["method"] == "percentile"
    assert mrr["verdict"] == "a" and mrr["winner"] == "new"
    assert mrr["pAdjusted"] >= mrr["pValue"]
    # the heuristic rows are compared apart, never mixed with the judged ones
    heur = compare(service, arms="new,old", judgments="heuristic").json()["data"]
    assert heur["records"] == {"new": 40, "old": 0}
    assert all(m["verdict"] == "insufficient_data" for m in heur["measures"])


def test_no_winner_below_the_minimum_sample(service: Service) -> None:
    post_records(service, records("a", [1] * 20) + records("b", [0, 3] * 10, prefix="b "))
    data = compare(service, arms="a,b", measures="ndcg").json()["data"]
    (ndcg,) = data["measures"]
    assert ndcg["pValue"] < 0.001 and data["minSample"] == 30
    assert ndcg["verdict"] == "insufficient_data" and ndcg["winner"] is None
    lower = compare(service, arms="a,b", measures="ndcg", minSample=20).json()["data"]
    assert lower["measures"][0]["winner"] == "a"


def test_paired_over_queries_in_both_arms(service: Service) -> None:
    a = [1, 2, 1, 3, 1, 1, 2, 1, 1, 1] * 4
    b = [2, 3, 1, 0, 2, 3, 3, 2, 1, 3] * 4
    post_records(service, records("x", a) + records("y", b))
    post_records(service, records("y", [1] * 10, prefix="only y "))
    data = compare(
        service, arms="x,y", paired="true", measures="meanReciprocalRank", minSample=5
    ).json()["data"]
    m = data["measures"][0]
    # 40 query texts seen in both arms; the "only y" queries are left out
    assert data["paired"] is True and m["test"] == "paired_t" and m["nA"] == 40
    rr = {0: 0.0, 1: 1.0, 2: 0.5, 3: 1 / 3}
    ref = stats.ttest_rel([rr[h] for h in a], [rr[h] for h in b])
    assert m["pValue"] == pytest.approx(float(ref.pvalue)) and m["winner"] == "x"


def test_compare_errors(service: Service) -> None:
    for params in ({"arms": "a"}, {"arms": "a,a"}, {"arms": "a,b", "arm": "a"}):
        r = compare(service, **params)
        assert r.status_code == 422, (params, r.text)
    assert compare(service, arms="a,b", measures="bogus").status_code == 400
    assert compare(service, arms="a,b", alpha=2).status_code == 422


def test_interleaving_experiment_from_events(service: Service) -> None:
    coin = random.Random(4)
    events: list[Any] = []
    expected = []
    for i in range(40):
        merged = team_draft(
            [f"n{i}-{j}" for j in range(5)],
            [f"o{i}-{j}" for j in range(5)],
            names=("new", "old"),
            rng=coin,
        )
        qid = f"il{i}"
        events += interleaving_events(merged, qid, experiment="exp1", query=f"q {i}")
        # users click the first "new" document 3 times in 4, an "old" one otherwise
        side = "new" if i % 4 else "old"
        doc = next(d for d, t in zip(merged.ranking, merged.teams, strict=True) if t == side)
        clicked = [doc] if i % 10 else []  # every tenth impression gets no click
        events += [{"action": "click", "queryId": qid, "documentId": d} for d in clicked]
        c = credit(merged, clicked)
        expected.append((c.a, c.b))
    r = service.client.post("/api/events", json=events, headers=bearer(service.keys.alice))
    assert r.status_code == 201
    data = service.client.get(
        "/api/events/interleaving",
        params={"experiment": "exp1"},
        headers=bearer(service.keys.alice),
    ).json()["data"]
    wins = sum(1 for a, b in expected if a > b)
    losses = sum(1 for a, b in expected if a < b)
    assert data["arms"] == ["new", "old"] and data["impressions"] == 40
    assert (data["wins"], data["losses"], data["ties"], data["clicked"]) == (wins, losses, 0, 36)
    assert data["pValue"] == pytest.approx(stats.binomtest(wins, wins + losses).pvalue)
    assert data["verdict"] == "a" and data["winner"] == "new"
    flipped = service.client.get(
        "/api/events/interleaving",
        params={"experiment": "exp1", "arms": "old,new"},
        headers=bearer(service.keys.alice),
    ).json()["data"]
    assert (flipped["wins"], flipped["winner"]) == (losses, "new")
    none = service.client.get(
        "/api/events/interleaving",
        params={"experiment": "nothing"},
        headers=bearer(service.keys.alice),
    ).json()["data"]
    assert none["impressions"] == 0 and none["verdict"] == "insufficient_data"
    other = service.client.get(
        "/api/events/interleaving", params={"experiment": "exp1"}, headers=bearer(service.keys.bob)
    ).json()["data"]
    assert other["impressions"] == 0  # bob sees none of alice's events
