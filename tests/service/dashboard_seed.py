"""Seeded data for the dashboard tests: two users, judged and heuristic rows, several topics,
search types and days, some queries that retrieved nothing, one feedback; two arms (the
reranker's judged rows better); for Alice a regressed last day, the search events of every
record (searches, impressions, clicks) and two interleaving experiments, then an alert check
that fires on her regression. Bob has arms but too few judged rows per arm for a winner, no
events and no alerts."""

from __future__ import annotations

import datetime as dt
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from rankscope.collect.interleave import interleaving_events, team_draft
from serve_helpers import BATCH, METRICS, bearer

TOPICS = ["billing", "ops", "search", None]
TYPES = [
    {"semantic": True},
    {"keyword": True},
    {"keyword": True, "semantic": True},
]
DAYS = 10
START = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
#: the alert check runs as of the end of the last day; its window is that day
CHECK_AT = START + dt.timedelta(days=DAYS)
ALERT_RULES = """
[[alert_rules]]
name = "ndcg-drop"
measure = "ndcg"
min_n = 10
[[alert_rules]]
name = "ap-drop"
measure = "average_precision"
min_n = 10
"""
#: interleaving experiments: name, pages, arms (users prefer the second arm's pages)
EXPERIMENTS = [("bm25-vs-dense", 60, ("bm25", "dense")), ("title-boost", 8, ("plain", "boosted"))]


def stamp(when: dt.datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def records(user: str, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        when = START + dt.timedelta(
            days=rng.randrange(DAYS), hours=rng.randrange(24), minutes=rng.randrange(60)
        )
        pool = [f"{user}-doc-{k}" for k in range(12)]
        depth = 0 if rng.random() < 0.06 else rng.randint(1, 8)
        docs: list[dict[str, Any]] = [
            {
                "documentId": d,
                "documentName": f"Page {d.rsplit('-', 1)[1]}",
                "chunkIndex": 0,
                "score": round(rng.uniform(0.3, 0.99), 4),
            }
            for d in rng.sample(pool, depth)
        ]
        if docs and rng.random() < 0.3:  # a second chunk of the first document
            docs.append({**docs[0], "chunkIndex": 1, "score": round(docs[0]["score"] - 0.05, 4)})
        arm = rng.choice(["control", "reranker"])
        body: dict[str, Any] = {
            "query": f"{user} question {i} about {rng.choice(['logs', 'invoices', 'keys'])}",
            "queryId": f"{user}-q{i}",
            "retrievedDocuments": docs,
            "timestamp": stamp(when),
            "collectId": f"{user}-{i}",
            "userId": user,
            "options": {
                "topicId": rng.choice(TOPICS),
                "searchTypes": rng.choice(TYPES),
                "arm": arm,
            },
        }
        if rng.random() < 0.6:
            judgments = {d: rng.choice([1, 2, 3]) for d in rng.sample(pool, 3)}
            if arm == "reranker" and docs:  # the reranker puts a very relevant page first
                judgments[docs[0]["documentId"]] = 3
            body["judgments"] = judgments
        out.append(body)
    return out


def regressed_day(user: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` judged records on the last day whose relevant pages were all missed (nDCG 0)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        when = CHECK_AT - dt.timedelta(hours=1 + rng.randrange(22), minutes=rng.randrange(60))
        pool = [f"{user}-doc-{k}" for k in range(12)]
        shown = rng.sample(pool, rng.randint(3, 6))
        missed = [d for d in pool if d not in shown]
        out.append(
            {
                "query": f"{user} late question {i} about logs",
                "queryId": f"{user}-late-q{i}",
                "retrievedDocuments": [
                    {"documentId": d, "chunkIndex": 0, "score": round(0.9 - 0.1 * k, 4)}
                    for k, d in enumerate(shown)
                ],
                "timestamp": stamp(when),
                "collectId": f"{user}-late-{i}",
                "userId": user,
                "judgments": {d: 2 for d in rng.sample(missed, 2)},
                "options": {
                    "topicId": rng.choice(TOPICS),
                    "searchTypes": rng.choice(TYPES),
                    "arm": rng.choice(["control", "reranker"]),
                },
            }
        )
    return out


def search_type(types: dict[str, bool]) -> str:
    """The records' label of a combination of search types (sorted, joined by '+')."""
    return "+".join(sorted(k for k, on in types.items() if on))


def page_events(record: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """What the user did on the record's results page: the search, an impression per document
    (in the order shown), and clicks (likelier near the top and on judged-relevant pages)."""
    qid = record["queryId"]
    options = record["options"]
    common: dict[str, Any] = {
        "queryId": qid,
        "timestamp": record["timestamp"],
        "topicId": options["topicId"],
        "searchType": search_type(options["searchTypes"]),
        "arm": options["arm"],
        "userId": record["userId"],
    }
    shown = list(dict.fromkeys(d["documentId"] for d in record["retrievedDocuments"]))
    events: list[dict[str, Any]] = [
        {
            "eventId": f"{qid}:search",
            "action": "search",
            "query": record["query"],
            "resultCount": len(shown),
            **common,
        }
    ]
    good = {d for d, g in record.get("judgments", {}).items() if g >= 2}
    for position, doc in enumerate(shown, start=1):
        events.append(
            {
                "eventId": f"{qid}:i{position}",
                "action": "impression",
                "documentId": doc,
                "position": position,
                **common,
            }
        )
        if rng.random() < (0.6 if doc in good else 0.25) / position:
            events.append(
                {
                    "eventId": f"{qid}:c{position}",
                    "action": "click",
                    "documentId": doc,
                    "position": position,
                    "dwellTimeSeconds": round(rng.uniform(2, 120), 1),
                    **common,
                }
            )
    if shown and rng.random() < 0.05:
        events.append(
            {"eventId": f"{qid}:up", "action": "thumbs_up", "documentId": shown[0], **common}
        )
    return events


def experiment_events(user: str, seed: int) -> list[dict[str, Any]]:
    """Team-draft interleavings whose users click the second arm's pages more often."""
    rng = random.Random(seed)
    pool = [f"{user}-doc-{k}" for k in range(12)]
    events: list[dict[str, Any]] = []
    for name, pages, names in EXPERIMENTS:
        for i in range(pages):
            qid = f"{user}-{name}-{i}"
            when = START + dt.timedelta(days=rng.randrange(DAYS), hours=rng.randrange(24))
            merged = team_draft(
                rng.sample(pool, 6), rng.sample(pool, 6), length=6, names=names, rng=rng
            )
            events.extend(
                interleaving_events(
                    merged,
                    qid,
                    experiment=name,
                    query=f"{user} {name} query {i % 7}",
                    timestamp=when,
                    topicId="search",
                    userId=user,
                )
            )
            for position, (doc, team) in enumerate(
                zip(merged.ranking, merged.teams, strict=True), start=1
            ):
                if rng.random() < (0.55 if team == names[1] else 0.2) / position**0.5:
                    events.append(
                        {
                            "eventId": f"{qid}:click:{position}",
                            "action": "click",
                            "queryId": qid,
                            "documentId": doc,
                            "position": position,
                            "timestamp": stamp(when + dt.timedelta(seconds=20)),
                            "topicId": "search",
                            "userId": user,
                        }
                    )
    return events


def seed(url: str, service_key: str) -> None:
    """Alice's records (160 over ten days, 14 more on a regressed last day) and events, Bob's 60
    records, written by the service role; one feedback on Alice's."""
    alice = records("alice", 160, 1) + regressed_day("alice", 14, 3)
    with httpx.Client(base_url=url, headers=bearer(service_key), timeout=60) as client:
        for batch in (alice, records("bob", 60, 2)):
            response = client.post(BATCH, json={"records": batch})
            response.raise_for_status()
        page = client.get(METRICS, params={"userId": "alice", "judgmentSource": "heuristic"})
        first = page.json()["data"]["queries"][0]
        client.post(
            f"{METRICS}/{first['id']}/feedback", json={"judgments": {"alice-doc-1": 2}}
        ).raise_for_status()
        rng = random.Random(4)
        events = [e for r in alice for e in page_events(r, rng)] + experiment_events("alice", 5)
        client.post("/api/events", json={"events": events}).raise_for_status()


def fire_alerts(database_url: str, folder: Path) -> str:
    """``rankscope serve check-alerts`` as of the end of the seeded days (no webhook); its
    output. It exits 1 when an alert fired, which the seed is made to do."""
    config = folder / "alerts.toml"
    config.write_text(ALERT_RULES)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "check-alerts",
            "--database-url",
            database_url,
            "--config",
            str(config),
            "--now",
            stamp(CHECK_AT),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 1:
        raise AssertionError(f"the alert check fired nothing:\n{done.stdout}\n{done.stderr}")
    return done.stdout
