"""Position weights: the total score is the grade times a weight for the needle's rank."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PositionWeights:
    """Multiplier of the grade by the needle's rank."""

    rank1: float = 1.0
    rank2_3: float = 0.95
    rank4_5: float = 0.85
    beyond5: float = 0.85  # found at rank 6..k
    not_found: float = 0.6

    def weight(self, rank: int | None) -> float:
        if rank is None:
            return self.not_found
        if rank == 1:
            return self.rank1
        if rank <= 3:
            return self.rank2_3
        if rank <= 5:
            return self.rank4_5
        return self.beyond5

    def total_score(self, grade: int | None, rank: int | None) -> float | None:
        """``grade × weight(rank)``, rounded to 4 places; None without a grade."""
        if grade is None:
            return None
        return round(grade * self.weight(rank), 4)


#: the named position weightings of ``rankscope needle --weights``
WEIGHT_PRESETS: dict[str, PositionWeights] = {
    "default": PositionWeights(),
    "steep": PositionWeights(rank1=1.0, rank2_3=0.8, rank4_5=0.8, beyond5=0.8, not_found=0.5),
}

__all__ = ["WEIGHT_PRESETS", "PositionWeights"]
