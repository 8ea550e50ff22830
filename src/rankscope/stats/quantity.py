"""What a comparison compares, query by query, and which way is better.

A :class:`Quantity` is an IR measure (``measure`` holds the :class:`~rankscope.Measure`, ``name``
its canonical spelling) or any other per-query value: a benchmark's latency (lower is better),
a score of your own. :class:`~rankscope.stats.ScoreMatrix` holds one per row of scores, so a
comparison knows the direction of each without reading it from a name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.metrics.names import Measure


@dataclass(frozen=True, slots=True)
class Quantity:
    """One compared quantity: ``name`` (how tables, JSON and look-ups call it), whether a
    higher value is better (it decides which way a significant difference is ``"better"`` and
    what counts as a win), and the :class:`~rankscope.Measure` when it is one."""

    name: str
    higher_is_better: bool = True
    measure: Measure | None = None

    def __str__(self) -> str:
        return self.name

    @classmethod
    def of(cls, what: str | Measure | Quantity) -> Quantity:
        """``what`` as a quantity: a quantity as it is; a measure by its canonical name, higher
        is better; a name as given (any per-query value), higher is better."""
        if isinstance(what, Quantity):
            return what
        if isinstance(what, str):
            return cls(what)
        return cls(str(what), measure=what)


__all__ = ["Quantity"]
