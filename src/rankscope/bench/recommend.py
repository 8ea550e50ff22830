"""Three recommendations from a comparison: best quality, fastest, best balance.

Quality is the suite's headline measure (nDCG@10 unless the suite sets ``headline``), speed the
p50 latency, both over the comparison's one query set. Only configurations that ran and score
above 0 on the headline are eligible: a failed configuration, or one that found nothing
relevant, is never recommended, not even as the fastest. When none is eligible there is no
recommendation, and :attr:`Recommendations.note` says why.

- best quality: the highest headline value;
- fastest: the lowest p50 latency;
- best balance, by the suite's ``balance`` setting:

  - ``minmax`` (default, the original design): ``quality = headline / best headline``,
    ``speed = 1 - (p50 - min p50) / (max p50 - min p50)`` (1 for all when the p50s are equal),
    ``balance = (quality + speed) / 2``. Speed is relative to the spread of the compared
    configurations, so the slowest one gets 0 however close it is;
  - ``ratio``: ``q`` as above, ``s = best p50 / p50``, ``balance = (2q + s) / 3``: quality
    weighs twice, and speed is a ratio, so a configuration 10 % slower than the fastest loses
    only a little.

Ties go to the faster configuration, then to the earlier one in the suite.

Whether a lead is larger than the noise of the measurement is decided in one place,
:func:`lead_verdict`: each best-quality and fastest pick carries a :class:`Lead` over the
runner-up with that verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

BalanceFormula = Literal["minmax", "ratio"]
BALANCE_FORMULAS: dict[BalanceFormula, str] = {
    "minmax": "(quality + speed) / 2, quality = headline / best headline, "
    "speed = 1 - (p50 - min p50) / (max p50 - min p50)",
    "ratio": "(2*q + s) / 3, q = headline / best headline, s = best p50 / p50",
}
BALANCE_FORMULA = BALANCE_FORMULAS["minmax"]
Verdict = Literal["not_assessed", "within_noise", "beyond_noise"]


@dataclass(frozen=True)
class Candidate:
    """A successful configuration as the recommendations see it.

    ``values`` (the headline per query) and ``latencies_ms`` (per-query latency) are aligned on
    the comparison's query set; they feed :func:`lead_verdict`.
    """

    name: str
    quality: float | None
    p50_ms: float | None
    values: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    latencies_ms: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Lead(_Frozen):
    """How far a pick is ahead of the runner-up, and whether that is beyond noise."""

    over: str
    difference: float
    verdict: Verdict
    detail: str


class Recommendation(_Frozen):
    config: str
    reason: str
    value: float
    measure: str
    lead: Lead | None = None


class Recommendations(_Frozen):
    """The three picks (each ``None`` when no configuration qualifies), over ``num_queries``
    queries; ``note`` says why there is none, ``left_out`` which configurations were not
    eligible and why."""

    best_quality: Recommendation | None = None
    fastest: Recommendation | None = None
    best_balance: Recommendation | None = None
    num_queries: int = 0
    note: str | None = None
    left_out: dict[str, str] = {}

    def items(self) -> list[tuple[str, Recommendation]]:
        picks = [
            ("best_quality", self.best_quality),
            ("fastest", self.fastest),
            ("best_balance", self.best_balance),
        ]
        return [(key, rec) for key, rec in picks if rec is not None]


@dataclass(frozen=True)
class NoiseVerdict:
    verdict: Verdict
    detail: str


def lead_verdict(
    leader: NDArray[np.float64], runner_up: NDArray[np.float64], *, higher_is_better: bool
) -> NoiseVerdict:
    """Whether ``leader`` is ahead of ``runner_up`` by more than noise, from their per-query
    values on the same queries (aligned).

    This is where the paired tests of ``rankscope.stats`` plug in; until then every lead is
    reported as not assessed, so no recommendation claims more than the numbers show.
    """
    del leader, runner_up, higher_is_better  # used once comparison statistics are available
    return NoiseVerdict("not_assessed", "not tested for significance")


def recommend(
    candidates: Sequence[Candidate],
    measure: str = "ndcg@10",
    label: str | None = None,
    *,
    balance: BalanceFormula = "minmax",
    num_queries: int = 0,
    query_set: str = "",
) -> Recommendations:
    """Pick among successful configurations (callers leave failed ones out); ``quality`` is
    the value of ``measure`` (shown as ``label``) over ``num_queries`` queries
    (``query_set`` describes them, e.g. "the 80 queries every configuration answered")."""
    label = label or measure
    over = f" over {query_set}" if query_set else ""
    left_out: dict[str, str] = {}
    usable: list[Candidate] = []
    for c in candidates:
        if not _finite(c.quality) or not _finite(c.p50_ms):
            left_out[c.name] = f"no {label} or latency{over}"
        elif (c.quality or 0.0) <= 0.0:
            left_out[c.name] = f"{label} is 0{over}"
        else:
            usable.append(c)
    if not usable:
        if candidates:
            note = (
                f"no recommendation: no configuration scores above 0 on {label}{over}; check "
                "that the judgments' document ids match the ids the engines return"
            )
        else:
            note = "no recommendation: no configuration ran successfully"
        return Recommendations(num_queries=num_queries, note=note, left_out=left_out)

    order = {c.name: i for i, c in enumerate(usable)}
    by_name = {c.name: c for c in usable}
    quality = {c.name: float(c.quality or 0.0) for c in usable}
    p50 = {c.name: float(c.p50_ms or 0.0) for c in usable}
    best_q = max(quality.values())
    fast, slow = min(p50.values()), max(p50.values())

    def speed(name: str) -> float:
        if balance == "ratio":
            if p50[name] <= 0:
                return 1.0
            return fast / p50[name]
        return 1.0 if slow == fast else 1.0 - (p50[name] - fast) / (slow - fast)

    def score(name: str) -> float:
        q = quality[name] / best_q
        if balance == "ratio":
            return (2.0 * q + speed(name)) / 3.0
        return (q + speed(name)) / 2.0

    names = [c.name for c in usable]
    by_quality = sorted(names, key=lambda n: (-quality[n], p50[n], order[n]))
    by_speed = sorted(names, key=lambda n: (p50[n], -quality[n], order[n]))
    balanced = max(names, key=lambda n: (score(n), -p50[n], -order[n]))
    top, fastest = by_quality[0], by_speed[0]

    quality_lead = _lead(by_quality, quality, lambda n: by_name[n].values, True)
    speed_lead = _lead(by_speed, p50, lambda n: by_name[n].latencies_ms, False)
    q_text = f"highest {label} ({quality[top]:.4f}){over}"
    if quality_lead is not None:
        q_text += (
            f"; {quality_lead.difference:.4f} ahead of {quality_lead.over}, {quality_lead.detail}"
        )
    s_text = f"lowest p50 latency ({p50[fastest]:.3f} ms)"
    if speed_lead is not None:
        s_text += (
            f"; {-speed_lead.difference:.3f} ms faster than {speed_lead.over}, {speed_lead.detail}"
        )
    b_text = f"balance {score(balanced):.3f} = {BALANCE_FORMULAS[balance]}"
    b_text += f"; quality {quality[balanced] / best_q:.3f}, speed {speed(balanced):.3f}"
    return Recommendations(
        best_quality=Recommendation(
            config=top, reason=q_text, value=quality[top], measure=measure, lead=quality_lead
        ),
        fastest=Recommendation(
            config=fastest, reason=s_text, value=p50[fastest], measure="p50_ms", lead=speed_lead
        ),
        best_balance=Recommendation(
            config=balanced, reason=b_text, value=score(balanced), measure="balance"
        ),
        num_queries=num_queries,
        left_out=left_out,
    )


def _lead(
    ranked: list[str],
    values: dict[str, float],
    per_query: Callable[[str], NDArray[np.float64]],
    higher_is_better: bool,
) -> Lead | None:
    """The pick's lead over the runner-up (``None`` when there is only one)."""
    if len(ranked) < 2:
        return None
    first, second = ranked[0], ranked[1]
    verdict = lead_verdict(per_query(first), per_query(second), higher_is_better=higher_is_better)
    return Lead(
        over=second,
        difference=values[first] - values[second],
        verdict=verdict.verdict,
        detail=verdict.detail,
    )


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
