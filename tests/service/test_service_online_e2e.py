"""The online loop end to end through the API, on synthetic traffic with a known truth: an A/B
comparison and an interleaving experiment find a true difference and nothing in an A/A test;
clicks become qrels that `rankscope eval` reads; sampled queries go to `rankscope judge` (a
scripted LLM server on 127.0.0.1) and its labels calibrate the score threshold.

One seeded draw each; the false-positive rates over repeated simulations are checked on the
library functions (tests/online/test_online_simulations.py)."""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from online_traffic import send, simulate

from rankscope.cli.app import main
from rankscope.collect.interleave import interleaving_events, team_draft
from rankscope.online.queries import query_key
from rankscope.stats import cohen_kappa
from rankscope.testing.llm_server import RecordedRequest, Reply, ScriptedLLMServer
from rankscope.testing.traffic import Universe, browse, rank
from serve_helpers import Service, bearer

pytestmark = pytest.mark.service
UNIVERSE = Universe.make(30, 15, seed=21)


def get(service: Service, path: str, **params: Any) -> Any:
    r = service.client.get(path, params=params, headers=bearer(service.keys.alice))
    assert r.status_code == 200, r.text
    return r.json()["data"]


def verdicts(data: dict[str, Any]) -> dict[str, str]:
    return {m["measure"]: m["verdict"] for m in data["measures"]}


def test_ab_finds_the_true_difference_and_aa_finds_none(service: Service) -> None:
    for arm, noise, seed in (("good", 1.0, 1), ("bad", 1.6, 2), ("same", 1.0, 3)):
        send(
            service.client,
            service.keys.alice,
            simulate(
                UNIVERSE,
                150,
                noise=noise,
                seed=seed,
                judged=True,
                events=False,
                arm=arm,
                prefix=arm,
            ),
        )
    ab = get(service, "/api/metrics/retrieval/compare", arms="good,bad")
    ndcg = next(m for m in ab["measures"] if m["measure"] == "ndcg")
    assert ab["judgmentSource"] == "judged" and ab["records"] == {"good": 150, "bad": 150}
    assert ndcg["winner"] == "good" and ndcg["ci"]["low"] > 0, ndcg
    paired = get(
        service, "/api/metrics/retrieval/compare", arms="good,bad", paired="true", minSample=20
    )
    assert next(m for m in paired["measures"] if m["measure"] == "ndcg")["winner"] == "good"
    aa = get(service, "/api/metrics/retrieval/compare", arms="good,same")
    assert set(verdicts(aa).values()) == {"no_difference"}, aa


def interleaved(noise_a: float, noise_b: float, n: int, seed: int, experiment: str) -> list[Any]:
    rng = np.random.default_rng(seed)
    coin = random.Random(seed)
    events: list[Any] = []
    for i in range(n):
        q = UNIVERSE.draw(rng)
        merged = team_draft(
            rank(q, noise_a, rng),
            rank(q, noise_b, rng),
            length=10,
            names=("good", "other"),
            rng=coin,
        )
        qid = f"{experiment}-{i}"
        events += interleaving_events(merged, qid, experiment=experiment, query=q.text)
        for c in browse(merged.ranking, q.grades, rng):
            events.append(
                {"action": "click", "queryId": qid, "documentId": c.doc, "position": c.position}
            )
    return events


def test_interleaving_finds_the_true_difference_and_aa_finds_none(service: Service) -> None:
    events = interleaved(1.0, 1.6, 400, 5, "ab") + interleaved(1.0, 1.0, 400, 7, "aa")
    for i in range(0, len(events), 5000):
        r = service.client.post(
            "/api/events", json=events[i : i + 5000], headers=bearer(service.keys.alice)
        )
        assert r.status_code == 201
    ab = get(service, "/api/events/interleaving", experiment="ab")
    assert ab["impressions"] == 400 and ab["winner"] == "good", ab
    assert ab["wins"] > ab["losses"] and ab["pValue"] <= 0.05
    aa = get(service, "/api/events/interleaving", experiment="aa")
    assert aa["verdict"] == "no_difference", aa


def test_clicks_become_qrels_that_rankscope_eval_reads(
    service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = simulate(UNIVERSE, 600, noise=1.0, seed=7, arm="good", prefix="g")
    bad = simulate(UNIVERSE, 600, noise=1.8, seed=8, arm="bad", prefix="b")
    send(service.client, service.keys.alice, good)
    send(service.client, service.keys.alice, bad)
    # the click grades agree with the true grades
    page = get(service, "/api/judgments/clicks", gradedOnly="true", limit=1000)
    judged = page["judgments"]
    assert len(judged) == page["graded"] < 1000  # one page holds them all
    truth = {(query_key(q.text), d): g for q in UNIVERSE.queries for d, g in q.grades.items()}
    kappa = cohen_kappa(
        [truth[(j["queryKey"], j["documentId"])] for j in judged],
        [j["grade"] for j in judged],
        "linear",
    )
    assert len(judged) > 100 and kappa is not None and kappa > 0.5
    # export the good arm judged by clicks, and evaluate it with rankscope eval
    r = service.client.get(
        "/api/metrics/retrieval/export",
        params={"judgments": "clicks", "arm": "good"},
        headers=bearer(service.keys.alice),
    )
    assert r.status_code == 200 and r.headers["x-rankscope-judgments"] == "clicks:dbn"
    zipfile.ZipFile(io.BytesIO(r.content)).extractall(tmp_path)
    code = main(
        [
            "eval",
            str(tmp_path / "qrels.txt"),
            str(tmp_path / "run.trec"),
            "-m",
            "ndcg",
            "--format",
            "json",
        ]
    )
    assert code == 0
    evaluated = json.loads(capsys.readouterr().out)
    (run,) = evaluated["runs"]
    comparison = get(
        service,
        "/api/metrics/retrieval/compare",
        arms="good,bad",
        judgments="clicks",
        measures="ndcg",
    )
    (ndcg,) = comparison["measures"]
    assert comparison["judgmentSource"] == "clicks:dbn"
    assert ndcg["winner"] == "good"  # the better arm, found on click judgments alone
    # rankscope eval on the export gives the numbers the service compared
    assert run["num_queries"] == ndcg["nA"] == comparison["records"]["good"]
    assert run["mean"]["ndcg"] == pytest.approx(ndcg["meanA"], abs=1e-12)


def test_sample_judge_and_calibrate(
    service: Service,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    traffic = simulate(UNIVERSE, 300, noise=1.0, seed=9)
    send(service.client, service.keys.alice, traffic)
    nothing = [{"query": "no such thing", "retrievedDocuments": [], "queryId": "z1"}]
    r = service.client.post(
        "/api/metrics/retrieval/collect/batch",
        json={"records": nothing},
        headers=bearer(service.keys.alice),
    )
    assert r.status_code == 201
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as f:
        for q in UNIVERSE.queries:
            for d in q.docs:
                f.write(json.dumps({"_id": d, "title": d, "text": f"{d} text"}) + "\n")
    url = service.settings.database_url
    pool = tmp_path / "pool.jsonl"
    assert (
        main(
            [
                "serve",
                "sample",
                "--budget",
                "60",
                "--depth",
                "5",
                "--out",
                str(pool),
                "--corpus",
                str(corpus),
                "--database-url",
                url,
                "--user",
                "alice",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "60 pairs" in out and "zero_result" in out
    listing = [json.loads(x) for x in (tmp_path / "pool.queries.jsonl").read_text().splitlines()]
    strata = {x["stratum"] for x in listing}
    assert {"head", "torso", "tail", "zero_result"} <= strata
    assert any(x["query"] == "no such thing" and x["pairs"] == 0 for x in listing)
    truth = {d: g for q in UNIVERSE.queries for d, g in q.grades.items()}

    def answer(req: RecordedRequest) -> Reply:
        doc = req.prompt.split("Passage: ")[1].split()[0]
        return Reply(f"##final score: {truth[doc]}")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("RANKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    judged = tmp_path / "judged"
    with ScriptedLLMServer(answer, api_key="test-key") as llm:
        assert (
            main(
                [
                    "judge",
                    str(pool),
                    "--provider",
                    "anthropic",
                    "--model",
                    "claude-haiku",
                    "--base-url",
                    llm.base_url,
                    "--out",
                    str(judged),
                ]
            )
            == 0
        )
        assert llm.answered_count == 60
    capsys.readouterr()
    assert (
        main(
            [
                "serve",
                "calibrate",
                "--labels",
                str(judged / "qrels.txt"),
                "--database-url",
                url,
                "--user",
                "alice",
                "--apply",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("none\t"))
    pairs, relevant = (int(x) for x in row.split("\t")[1:3])
    assert pairs >= 55 and 0 < relevant < pairs
    kappa_now, best, kappa_best = (float(x) for x in np.array(row.split("\t"))[[4, 6, 7]])
    assert kappa_best >= kappa_now and kappa_best > 0.5
    assert f"set alice's threshold for none to {best:.4f}" in printed
    own = get(service, "/api/metrics/retrieval/thresholds")["own"]
    assert own == {"none": pytest.approx(best, abs=1e-4)}  # printed with 4 decimals
