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


#: measure families whose per-query values lie in [0, 1] whatever the qrels (negative grades
#: are no gain for nDCG; ``ndcg`` with gains given as parameters is left out by
#: :attr:`Quantity.bounds`)
UNIT_FAMILIES = frozenset({
    "map", "Rprec", "bpref", "mrr", "iprec", "P", "recall", "Rprec_mult", "11pt_avg", "ndcg",
    "relative_P", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "hit", "judged",
    "f1", "ndcg_exp",
})  # fmt: skip


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

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The range every per-query value lies in by the measure's definition: ``(0, 1)``
        for the proportions and normalised measures of :data:`UNIT_FAMILIES` (nDCG with its
        default gains: a gain given as a parameter may be negative); None for counts, sums,
        measures with gains given as parameters, and quantities that are not measures."""
        m = self.measure
        if m is None or m.name not in UNIT_FAMILIES or (m.param is not None and m.name == "ndcg"):
            return None
        return (0.0, 1.0)

    @classmethod
    def of(cls, what: str | Measure | Quantity) -> Quantity:
        """``what`` as a quantity: a quantity as it is; a measure by its canonical name, higher
        is better; a name as given (any per-query value), higher is better."""
        if isinstance(what, Quantity):
            return what
        if isinstance(what, str):
            return cls(what)
        return cls(str(what), measure=what)


__all__ = ["UNIT_FAMILIES", "Quantity"]
