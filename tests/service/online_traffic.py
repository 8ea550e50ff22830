"""Simulated traffic sent through the API: records (collect) and events (impressions, clicks)
of simulated users (rankscope.testing.traffic), with a known truth."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.testing.traffic import SimQuery, Universe, browse, rank

BASE_TIME = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def score_of(grade: int, rng: np.random.Generator) -> float:
    """A retriever score that follows the grade loosely (for threshold calibration)."""
    return float(np.clip(0.35 + 0.15 * grade + rng.normal(0, 0.05), 0.0, 1.0))


@dataclass
class Traffic:
    records: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[tuple[SimQuery, list[str], list[str]]] = field(default_factory=list)


def simulate(
    universe: Universe,
    n: int,
    *,
    noise: float,
    seed: int,
    prefix: str = "s",
    arm: str | None = None,
    judged: bool = False,
    start: dt.datetime = BASE_TIME,
    spacing: dt.timedelta = dt.timedelta(seconds=30),
    events: bool = True,
    topic: str | None = None,
) -> Traffic:
    """``n`` searches: a record each (judged by the true grades when ``judged``) and, with
    ``events``, its search, impressions and clicks."""
    rng = np.random.default_rng(seed)
    out = Traffic()
    for i in range(n):
        q = universe.draw(rng)
        ranking = rank(q, noise, rng)
        qid = f"{prefix}{i}"
        when = (start + i * spacing).isoformat()
        options: dict[str, Any] = {}
        if arm is not None:
            options["arm"] = arm
        if topic is not None:
            options["topicId"] = topic
        record: dict[str, Any] = {
            "query": q.text,
            "queryId": qid,
            "collectId": qid,
            "timestamp": when,
            "retrievedDocuments": [
                {"documentId": d, "score": score_of(q.grades[d], rng)} for d in ranking
            ],
            "options": options,
        }
        if judged:
            record["judgments"] = {d: g for d, g in q.grades.items() if g > 0}
        out.records.append(record)
        clicks = browse(ranking, q.grades, rng)
        out.sessions.append((q, ranking, [c.doc for c in clicks]))
        if not events:
            continue
        common = {"queryId": qid, "timestamp": when, **({"arm": arm} if arm else {})}
        out.events.append(
            {
                "eventId": f"{qid}:search",
                "action": "search",
                "query": q.text,
                "resultCount": len(ranking),
                **common,
            }
        )
        for position, doc in enumerate(ranking, start=1):
            out.events.append(
                {
                    "eventId": f"{qid}:i{position}",
                    "action": "impression",
                    "documentId": doc,
                    "position": position,
                    **common,
                }
            )
        for c in clicks:
            out.events.append(
                {
                    "eventId": f"{qid}:c{c.position}",
                    "action": "click",
                    "documentId": c.doc,
                    "position": c.position,
                    "dwellTimeSeconds": c.dwell,
                    **common,
                }
            )
    return out


def send(client: Any, key: str, traffic: Traffic) -> None:
    """Post the traffic's records (batches of 1,000) and events (batches of 5,000)."""
    headers = {"Authorization": f"Bearer {key}"}
    for i in range(0, len(traffic.records), 1000):
        r = client.post(
            "/api/metrics/retrieval/collect/batch",
            json={"records": traffic.records[i : i + 1000]},
            headers=headers,
        )
        assert r.status_code == 201, r.text
    for i in range(0, len(traffic.events), 5000):
        r = client.post(
            "/api/events", json={"events": traffic.events[i : i + 5000]}, headers=headers
        )
        assert r.status_code == 201, r.text
