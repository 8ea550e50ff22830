"""Seeded records for the dashboard tests: two users, judged and heuristic rows, several topics,
search types and days, some queries that retrieved nothing, one feedback."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import httpx

from serve_helpers import BATCH, METRICS, bearer

TOPICS = ["billing", "ops", "search", None]
TYPES = [
    {"semantic": True},
    {"keyword": True},
    {"keyword": True, "semantic": True},
]
DAYS = 10
START = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def records(user: str, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        when = START + dt.timedelta(
            days=rng.randrange(DAYS), hours=rng.randrange(24), minutes=rng.randrange(60)
        )
        pool = [f"{user}-doc-{k}" for k in range(12)]
        depth = 0 if rng.random() < 0.06 else rng.randint(1, 8)
        docs = [
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
        body: dict[str, Any] = {
            "query": f"{user} question {i} about {rng.choice(['logs', 'invoices', 'keys'])}",
            "queryId": f"{user}-q{i}",
            "retrievedDocuments": docs,
            "timestamp": when.isoformat().replace("+00:00", "Z"),
            "collectId": f"{user}-{i}",
            "userId": user,
            "options": {
                "topicId": rng.choice(TOPICS),
                "searchTypes": rng.choice(TYPES),
                "arm": rng.choice(["control", "reranker"]),
            },
        }
        if rng.random() < 0.6:
            body["judgments"] = {d: rng.choice([1, 2, 3]) for d in rng.sample(pool, 3)}
        out.append(body)
    return out


def seed(url: str, service_key: str) -> None:
    """Alice's 160 records and Bob's 60, written by the service role; one feedback on Alice's."""
    with httpx.Client(base_url=url, headers=bearer(service_key), timeout=30) as client:
        for user, n, seed_ in (("alice", 160, 1), ("bob", 60, 2)):
            response = client.post(BATCH, json={"records": records(user, n, seed_)})
            response.raise_for_status()
        page = client.get(METRICS, params={"userId": "alice", "judgmentSource": "heuristic"})
        first = page.json()["data"]["queries"][0]
        client.post(
            f"{METRICS}/{first['id']}/feedback", json={"judgments": {"alice-doc-1": 2}}
        ).raise_for_status()
