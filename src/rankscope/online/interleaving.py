"""Summary of an interleaving experiment: wins, losses and ties over impressions, a sign test.

The clicks of stored impressions are credited by :func:`impression_credits` (each clicked
document once, to the team of its slot: :func:`rankscope.collect.interleave.credit`'s rule, for
impressions read back as rows). Each impression with at least one credited click is a win for
the side with more credited clicks, or a tie. The sign test (``rankscope.stats.sign_test``:
exact binomial over wins and losses, ties dropped) asks whether one side wins more often than
chance. The preference
``Δ = (wins + ties / 2) / (wins + losses + ties) - 1/2`` (Chapelle et al. 2012) is positive
when side a is preferred. No winner is named below ``min_impressions`` clicked impressions or
when p > alpha.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rankscope.stats import sign_test

Verdict = Literal["a", "b", "no_difference", "insufficient_data"]
DEFAULT_MIN_IMPRESSIONS = 20


@dataclass(frozen=True)
class InterleavingSummary:
    names: tuple[str, str]
    impressions: int
    clicked: int
    wins: int  # side a
    losses: int
    ties: int
    preference: float
    p_value: float | None
    alpha: float
    min_impressions: int
    verdict: Verdict
    winner: str | None


def summarise(
    credits: Sequence[tuple[int, int]],
    *,
    names: tuple[str, str] = ("a", "b"),
    impressions: int | None = None,
    alpha: float = 0.05,
    min_impressions: int = DEFAULT_MIN_IMPRESSIONS,
) -> InterleavingSummary:
    """``credits``: clicks credited to (a, b) per impression (impressions without clicks may
    be included; they are counted but not tested)."""
    clicked = [(a, b) for a, b in credits if a + b > 0]
    wins = sum(1 for a, b in clicked if a > b)
    losses = sum(1 for a, b in clicked if a < b)
    ties = len(clicked) - wins - losses
    preference = (wins + ties / 2) / len(clicked) - 0.5 if clicked else 0.0
    p = None
    if len(clicked) >= 2:
        p = sign_test([a for a, _ in clicked], [b for _, b in clicked]).p_value
    verdict: Verdict
    if len(clicked) < min_impressions or p is None:
        verdict = "insufficient_data"
    elif p <= alpha and wins != losses:
        verdict = "a" if wins > losses else "b"
    else:
        verdict = "no_difference"
    winner = {"a": names[0], "b": names[1]}.get(verdict)
    return InterleavingSummary(
        names=names,
        impressions=impressions if impressions is not None else len(credits),
        clicked=len(clicked),
        wins=wins,
        losses=losses,
        ties=ties,
        preference=preference,
        p_value=p,
        alpha=alpha,
        min_impressions=min_impressions,
        verdict=verdict,
        winner=winner,
    )


def slot_teams(shown: Iterable[tuple[str, str, str | None]]) -> dict[str, dict[str, str]]:
    """Each impression's team per document from its ``(impression, document, team)`` slots in
    the order shown; the first slot of a document counts, slots without a team are left out."""
    teams: dict[str, dict[str, str]] = {}
    for impression, doc, team in shown:
        if team is not None:
            teams.setdefault(impression, {}).setdefault(doc, team)
    return teams


def impression_credits(
    teams: Mapping[str, Mapping[str, str]],
    clicks: Iterable[tuple[str, str]],
    names: tuple[str, str],
) -> list[tuple[int, int]]:
    """Clicks credited to ``names`` (a, b) per impression of ``teams``: each clicked
    ``(impression, document)`` once, to the team of its slot (a click on a document the
    impression did not show credits nobody). Impressions without clicks give ``(0, 0)``."""
    clicked: dict[str, set[str]] = {}
    for impression, doc in clicks:
        clicked.setdefault(impression, set()).add(doc)
    out = []
    for impression, slots in teams.items():
        won = [slots[d] for d in clicked.get(impression, ()) if d in slots]
        out.append((won.count(names[0]), won.count(names[1])))
    return out


__all__ = [
    "DEFAULT_MIN_IMPRESSIONS",
    "InterleavingSummary",
    "Verdict",
    "impression_credits",
    "slot_teams",
    "summarise",
]
