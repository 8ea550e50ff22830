"""Three recommendations from a comparison: best quality, fastest, best balance.

- best quality: the highest nDCG@10;
- fastest: the lowest median (p50) query latency;
- best balance: the highest ``(2·q + s) / 3``, where ``q = nDCG@10 / best nDCG@10`` (quality
  relative to the best configuration) and ``s = best p50 / p50`` (speed relative to the fastest
  configuration). Both lie in [0, 1] with 1 for the leader; quality weighs twice as much as
  speed, so a configuration that is 10× slower must be far better to win, and one within a few
  per cent of the best quality wins when it is much faster.

Ties go to the faster configuration, then to the earlier one in the suite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

QUALITY_MEASURE = "ndcg@10"
BALANCE_FORMULA = "(2*q + s) / 3, q = nDCG@10 / best nDCG@10, s = best p50 / p50"


@dataclass(frozen=True)
class Recommendation:
    config: str
    reason: str
    value: float
    measure: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def recommend(rows: Sequence[Mapping[str, Any]]) -> dict[str, Recommendation]:
    """Rows are ``{"name", "quality", "p50_ms"}``; failed configurations are left out by callers."""
    usable = [
        r
        for r in rows
        if _finite(r.get("quality")) and _finite(r.get("p50_ms")) and r["p50_ms"] >= 0
    ]
    if not usable:
        return {}
    order = {r["name"]: i for i, r in enumerate(usable)}
    best_q = max(r["quality"] for r in usable)
    best_p50 = min(r["p50_ms"] for r in usable)

    def speed(r: Mapping[str, Any]) -> float:
        if r["p50_ms"] <= 0:
            return 1.0
        return float(best_p50 / r["p50_ms"]) if best_p50 > 0 else 0.0

    def balance(r: Mapping[str, Any]) -> float:
        q = r["quality"] / best_q if best_q > 0 else 1.0
        return (2.0 * q + speed(r)) / 3.0

    quality = max(usable, key=lambda r: (r["quality"], -r["p50_ms"], -order[r["name"]]))
    fastest = min(usable, key=lambda r: (r["p50_ms"], -r["quality"], order[r["name"]]))
    balanced = max(usable, key=lambda r: (balance(r), -r["p50_ms"], -order[r["name"]]))
    return {
        "best_quality": Recommendation(
            quality["name"],
            f"highest nDCG@10 ({quality['quality']:.4f})",
            quality["quality"],
            QUALITY_MEASURE,
        ),
        "fastest": Recommendation(
            fastest["name"],
            f"lowest p50 latency ({fastest['p50_ms']:.3f} ms)",
            fastest["p50_ms"],
            "p50_ms",
        ),
        "best_balance": Recommendation(
            balanced["name"],
            f"best balance score {balance(balanced):.3f} = {BALANCE_FORMULA}",
            balance(balanced),
            "balance",
        ),
    }


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
