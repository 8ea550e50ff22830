"""Summary of an interleaving experiment: wins, losses and ties over impressions, a sign test.

Each impression with at least one credited click is a win for the side with more credited
clicks, or a tie. The sign test (``rankscope.stats.sign_test``: exact binomial over wins and
losses, ties dropped) asks whether one side wins more often than chance. The preference
``Δ = (wins + ties / 2) / (wins + losses + ties) - 1/2`` (Chapelle et al. 2012) is positive
when side a is preferred. No winner is named below ``min_impressions`` clicked impressions or
when p > alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
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


__all__ = ["DEFAULT_MIN_IMPRESSIONS", "InterleavingSummary", "Verdict", "summarise"]
