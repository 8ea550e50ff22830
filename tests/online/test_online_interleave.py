"""Team-draft interleaving (the client side) and the experiment summary."""

from __future__ import annotations

import random

import pytest

from rankscope.collect.interleave import credit, interleaving_events, team_draft
from rankscope.online.interleaving import impression_credits, slot_teams, summarise


def test_team_draft_takes_turns_and_remembers_teams() -> None:
    a = ["d1", "d2", "d3", "d4"]
    b = ["d2", "d5", "d1", "d6"]
    merged = team_draft(a, b, rng=random.Random(0), names=("bm25", "dense"))
    assert sorted(merged.ranking) == ["d1", "d2", "d3", "d4", "d5", "d6"]
    assert len(set(merged.ranking)) == len(merged.ranking)
    # every slot's document was the best of its team's list not yet placed
    placed: set[str] = set()
    counts = {"bm25": 0, "dense": 0}
    for doc, team in zip(merged.ranking, merged.teams, strict=True):
        source = a if team == "bm25" else b
        assert doc == next(d for d in source if d not in placed)
        # the team with fewer picks picks next (equal picks: a coin flip)
        other = "dense" if team == "bm25" else "bm25"
        remaining_other = [d for d in (b if team == "bm25" else a) if d not in placed]
        if remaining_other:
            assert counts[team] <= counts[other]
        placed.add(doc)
        counts[team] += 1


def test_team_draft_is_fair_over_coin_flips() -> None:
    rng = random.Random(1)
    first = [team_draft(["x", "y"], ["y", "x"], rng=rng).teams[0] for _ in range(2000)]
    assert 0.45 < first.count("a") / 2000 < 0.55


def test_length_limit_and_exhausted_list() -> None:
    merged = team_draft(["a1"], ["b1", "b2", "b3"], length=3, rng=random.Random(0))
    assert len(merged.ranking) == 3 and "a1" in merged.ranking
    assert merged.teams.count("b") == 2
    with pytest.raises(ValueError, match="different names"):
        team_draft(["a"], ["b"], names=("x", "x"))


def test_credit_counts_each_clicked_document_once() -> None:
    merged = team_draft(["a1", "a2"], ["b1", "b2"], rng=random.Random(3))
    c = credit(merged, ["a1", "a1", "b1", "b2", "unknown"])
    assert (c.a, c.b, c.winner, c.clicked) == (1, 2, "b", True)
    none = credit(merged, [])
    assert (none.winner, none.clicked) == (None, False)


def test_stored_impressions_are_credited_as_the_client_credits_them() -> None:
    # the service reads impressions and clicks back as rows: the same credit per impression
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(12)]
    merged = {}
    shown: list[tuple[str, str, str | None]] = []
    clicks: list[tuple[str, str]] = []
    for i in range(200):
        qid = f"q{i}"
        m = team_draft(rng.sample(docs, 6), rng.sample(docs, 6), rng=rng, names=("x", "y"))
        merged[qid] = m
        shown += [(qid, d, t) for d, t in zip(m.ranking, m.teams, strict=True)]
        shown.append((qid, m.ranking[0], "y" if m.teams[0] == "x" else "x"))  # a later slot
        shown.append((qid, "untracked", None))
        clicks += [(qid, d) for d in rng.sample(docs, rng.randint(0, 3))]
    clicks.append(("q0", "untracked"))
    teams = slot_teams(shown)
    assert list(teams) == list(merged)
    got = impression_credits(teams, clicks, ("x", "y"))
    clicked: dict[str, list[str]] = {}
    for qid, d in clicks:
        clicked.setdefault(qid, []).append(d)
    want = [credit(m, clicked.get(qid, [])) for qid, m in merged.items()]
    assert got == [(c.a, c.b) for c in want]
    assert sum(a + b > 0 for a, b in got) == sum(c.clicked for c in want) > 50


def test_interleaving_events_are_impressions_with_teams() -> None:
    merged = team_draft(["a1", "a2"], ["b1"], rng=random.Random(0), names=("x", "y"))
    events = interleaving_events(merged, "q1", experiment="exp", query="text", topicId="t")
    assert [e["position"] for e in events] == [1, 2, 3]
    assert {e["action"] for e in events} == {"impression"}
    assert [e["team"] for e in events] == list(merged.teams)
    assert events[0]["eventId"] == "q1:impression:1" and events[0]["topicId"] == "t"


def test_summary_counts_and_sign_test() -> None:
    credits = [(2, 0)] * 20 + [(0, 1)] * 5 + [(1, 1)] * 3 + [(0, 0)] * 10
    s = summarise(credits, names=("new", "old"))
    assert (s.impressions, s.clicked, s.wins, s.losses, s.ties) == (38, 28, 20, 5, 3)
    assert s.preference == pytest.approx((20 + 1.5) / 28 - 0.5)
    # exact binomial: 20 wins of 25 decided impressions
    assert s.p_value == pytest.approx(0.004087, abs=1e-5)
    assert (s.verdict, s.winner) == ("a", "new")
    few = summarise([(1, 0)] * 10, min_impressions=20)
    assert few.verdict == "insufficient_data" and few.winner is None
    even = summarise([(1, 0), (0, 1)] * 20)
    assert even.verdict == "no_difference"
