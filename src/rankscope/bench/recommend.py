"""Three recommendations from a comparison: best quality, fastest, best balance.

Quality is the suite's headline measure (nDCG@10 unless the suite sets ``headline``).

- best quality: the highest headline value;
- fastest: the lowest median (p50) query latency;
- best balance: the highest ``(2·q + s) / 3``, where ``q = headline / best headline`` (quality
  relative to the best configuration) and ``s = best p50 / p50`` (speed relative to the fastest
  configuration). Both lie in [0, 1] with 1 for the leader; quality weighs twice as much as
  speed, so a configuration that is 10× slower must be far better to win, and one within a few
  per cent of the best quality wins when it is much faster.

Ties go to the faster configuration, then to the earlier one in the suite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

BALANCE_FORMULA = "(2*q + s) / 3, q = headline / best headline, s = best p50 / p50"


@dataclass(frozen=True)
class Candidate:
    """A successful configuration as the recommendations see it."""

    name: str
    quality: float | None
    p50_ms: float | None


class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    config: str
    reason: str
    value: float
    measure: str


class Recommendations(BaseModel):
    """The three picks; each is ``None`` when no configuration qualifies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    best_quality: Recommendation | None = None
    fastest: Recommendation | None = None
    best_balance: Recommendation | None = None

    def items(self) -> list[tuple[str, Recommendation]]:
        picks = [
            ("best_quality", self.best_quality),
            ("fastest", self.fastest),
            ("best_balance", self.best_balance),
        ]
        return [(key, rec) for key, rec in picks if rec is not None]


def recommend(
    candidates: Sequence[Candidate], measure: str = "ndcg@10", label: str | None = None
) -> Recommendations:
    """Pick among successful configurations (callers leave failed ones out); ``quality`` is
    the value of ``measure`` (shown as ``label``)."""
    usable = [
        c for c in candidates if _finite(c.quality) and _finite(c.p50_ms) and (c.p50_ms or 0.0) >= 0
    ]
    if not usable:
        return Recommendations()
    order = {c.name: i for i, c in enumerate(usable)}
    quality = {c.name: float(c.quality or 0.0) for c in usable}
    p50 = {c.name: float(c.p50_ms or 0.0) for c in usable}
    best_q = max(quality.values())
    best_p50 = min(p50.values())

    def speed(name: str) -> float:
        if p50[name] <= 0:
            return 1.0
        return best_p50 / p50[name] if best_p50 > 0 else 0.0

    def balance(name: str) -> float:
        q = quality[name] / best_q if best_q > 0 else 1.0
        return (2.0 * q + speed(name)) / 3.0

    names = [c.name for c in usable]
    top = max(names, key=lambda n: (quality[n], -p50[n], -order[n]))
    fastest = min(names, key=lambda n: (p50[n], -quality[n], order[n]))
    balanced = max(names, key=lambda n: (balance(n), -p50[n], -order[n]))
    return Recommendations(
        best_quality=Recommendation(
            config=top,
            reason=f"highest {label or measure} ({quality[top]:.4f})",
            value=quality[top],
            measure=measure,
        ),
        fastest=Recommendation(
            config=fastest,
            reason=f"lowest p50 latency ({p50[fastest]:.3f} ms)",
            value=p50[fastest],
            measure="p50_ms",
        ),
        best_balance=Recommendation(
            config=balanced,
            reason=f"best balance score {balance(balanced):.3f} = {BALANCE_FORMULA}",
            value=balance(balanced),
            measure="balance",
        ),
    )


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
