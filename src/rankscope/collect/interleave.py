"""Team-draft interleaving in the application: merge two rankings, remember which side each
slot came from, credit clicks.

Team draft (Radlinski, Kurup and Joachims 2008): the two rankings take turns, like captains
picking teams; the side with fewer picks so far picks next (a coin flip when both have picked
as many), and it picks its highest-ranked document not yet in the merged list. Each slot
remembers its team. A click on a slot credits its team; the side with more credited clicks wins
the impression, equal non-zero credit is a tie, and an impression without clicks says nothing.
Interleaving compares two rankers on the same users and queries, so it needs far fewer
impressions than an A/B test (Chapelle et al. 2012).

Send the merged list as impressions (``interleaving_events``) and the clicks as ``click``
events; ``GET /api/events/interleaving?experiment=NAME`` credits them on the server.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Interleaving:
    """The merged ranking, each slot's team (one of ``names``), and the two names."""

    ranking: tuple[str, ...]
    teams: tuple[str, ...]
    names: tuple[str, str]

    def team_of(self, doc: str) -> str | None:
        for d, team in zip(self.ranking, self.teams, strict=True):
            if d == doc:
                return team
        return None


@dataclass(frozen=True)
class Credit:
    """Clicks credited to each side of one impression, and the winner (None: tie or no click)."""

    a: int
    b: int
    names: tuple[str, str]

    @property
    def clicked(self) -> bool:
        return self.a + self.b > 0

    @property
    def winner(self) -> str | None:
        if self.a == self.b:
            return None
        return self.names[0] if self.a > self.b else self.names[1]


def team_draft(
    a: Sequence[str],
    b: Sequence[str],
    *,
    length: int | None = None,
    names: tuple[str, str] = ("a", "b"),
    rng: random.Random | None = None,
) -> Interleaving:
    """Merge rankings ``a`` and ``b`` by team draft, up to ``length`` slots (default: until
    both are used up). ``rng`` decides the coin flips (seed it for repeatable merges)."""
    if names[0] == names[1]:
        raise ValueError("the two sides of an interleaving need different names")
    rng = rng or random.Random()
    limit = length if length is not None else len(set(a) | set(b))
    merged: list[str] = []
    teams: list[str] = []
    placed: set[str] = set()
    picks = [0, 0]
    cursors = [0, 0]
    lists = (a, b)

    def next_of(side: int) -> str | None:
        ranking = lists[side]
        while cursors[side] < len(ranking) and ranking[cursors[side]] in placed:
            cursors[side] += 1
        return ranking[cursors[side]] if cursors[side] < len(ranking) else None

    while len(merged) < limit:
        available = [next_of(0) is not None, next_of(1) is not None]
        if not any(available):
            break
        if not available[1]:
            side = 0
        elif not available[0]:
            side = 1
        elif picks[0] != picks[1]:
            side = 0 if picks[0] < picks[1] else 1
        else:
            side = 0 if rng.random() < 0.5 else 1
        doc = next_of(side)
        assert doc is not None
        merged.append(doc)
        teams.append(names[side])
        placed.add(doc)
        picks[side] += 1
    return Interleaving(tuple(merged), tuple(teams), names)


def credit(interleaving: Interleaving, clicked: Iterable[str]) -> Credit:
    """Credit each clicked document (once) to the team of its slot; others are ignored."""
    a = b = 0
    for doc in set(clicked):
        team = interleaving.team_of(doc)
        if team == interleaving.names[0]:
            a += 1
        elif team == interleaving.names[1]:
            b += 1
    return Credit(a, b, interleaving.names)


def interleaving_events(
    interleaving: Interleaving,
    query_id: str,
    *,
    experiment: str,
    query: str | None = None,
    timestamp: dt.datetime | None = None,
    **common: Any,
) -> list[dict[str, Any]]:
    """The impression events of a merged list for ``POST /api/events`` (one per slot, with its
    ``team`` and the ``experiment``); ``common`` adds fields such as ``topicId``."""
    when = (timestamp or dt.datetime.now(dt.UTC)).isoformat()
    events = []
    for position, (doc, team) in enumerate(
        zip(interleaving.ranking, interleaving.teams, strict=True), start=1
    ):
        event: dict[str, Any] = {
            "eventId": f"{query_id}:impression:{position}",
            "action": "impression",
            "queryId": query_id,
            "documentId": doc,
            "position": position,
            "experiment": experiment,
            "team": team,
            "timestamp": when,
            **common,
        }
        if query is not None:
            event["query"] = query
        events.append(event)
    return events


__all__ = ["Credit", "Interleaving", "credit", "interleaving_events", "team_draft"]
