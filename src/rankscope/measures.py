"""Your own measure: a function of one query's ranking and judgments, registered by name.

::

    from rankscope.measures import RankedQuery, register

    def first_relevant_in_3(q: RankedQuery) -> float:
        return 1.0 if any(q.relevant[:3]) else 0.0

    register("hit3", first_relevant_in_3, description="a relevant document in the top 3")

After :func:`register`, ``hit3`` is a measure like any other: ``rankscope eval -m hit3``, a
suite's ``settings.measures``, ``compare``, ``diff``, the report and the statistics use it,
because every one of them looks measures up in the one registry
(:mod:`rankscope.metrics.names` and :mod:`rankscope.metrics.kernels`). rankscope applies its own
rules around the function: which queries are evaluated and how a query the run lacks counts
(trec_eval's ``-c``: 0), judged-only rankings (``-J``), ``-M`` depth, the relevance level
(``-l`` or ``rel=N``), the cutoff (``hit3@10`` gives the function the top 10), the mean over
queries. The value must be a finite number, higher meaning better.

A package registers its measures for every command through a ``rankscope.measures`` entry
point (:mod:`rankscope.plugins`); they load when a measure name is not otherwise known.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import MeasureError
from rankscope.metrics import trec_compute as tc
from rankscope.metrics.kernels import KERNELS, Kernel, add_kernel
from rankscope.metrics.names import Family, Measure, add_family, known_spelling, remove_family


@dataclass(frozen=True, slots=True)
class RankedQuery:
    """What a measure function sees of one query.

    - ``query_id``: the query.
    - ``grades``: the grade of each ranked document, best first, in trec_eval's order (score
      descending, then document id descending), cut to the measure's cutoff; ``None`` for a
      document the qrels do not judge.
    - ``judgments``: every grade the qrels give this query, highest first (the ideal ranking).
    - ``rel_level``: the lowest grade that counts as relevant.
    - ``cutoff``: the measure's ``@k`` (None without one).
    """

    query_id: str
    grades: tuple[int | None, ...]
    judgments: tuple[int, ...]
    rel_level: int
    cutoff: int | None

    @property
    def relevant(self) -> tuple[bool, ...]:
        """Per ranked document: judged with a grade at least ``rel_level`` (and not negative,
        as in trec_eval)."""
        level = max(self.rel_level, 0)
        return tuple(g is not None and g >= level for g in self.grades)

    @property
    def num_rel(self) -> int:
        """Relevant documents in the qrels for this query."""
        level = max(self.rel_level, 0)
        return sum(1 for g in self.judgments if g >= level)


PerQuery = Callable[[RankedQuery], float]
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_CUSTOM: dict[str, PerQuery] = {}


def register(
    name: str,
    per_query: PerQuery,
    *,
    description: str = "",
    cutoff: bool = True,
    aggregate: Literal["mean", "sum"] = "mean",
    replace: bool = False,
) -> None:
    """Make ``name`` a measure computed by ``per_query`` for each query.

    ``cutoff``: the measure takes an optional ``@k`` (``name@10`` gives the function the top 10
    documents). ``aggregate``: ``mean`` over queries (the default) or ``sum``. A name that
    already names a measure is refused, unless ``replace`` and it is one registered here.
    """
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise MeasureError(
            f"a measure name is a letter then letters, digits or '_' (64 at most), got {name!r}"
        )
    if not callable(per_query):
        raise MeasureError(f"measure {name!r}: {per_query!r} is not a function")
    if aggregate not in ("mean", "sum"):
        raise MeasureError(f"measure {name!r}: aggregate must be 'mean' or 'sum'")
    existing = known_spelling(name)
    if existing is not None and not (replace and existing in _CUSTOM):
        raise MeasureError(
            f"{name!r} already names the measure {existing!r}; choose another name"
            + (" or pass replace=True" if existing in _CUSTOM else "")
        )
    family = Family(
        name=name,
        cutoff="int" if cutoff else "none",
        cutoff_required=False,
        free_param=False,
        trec=None,
        trec_cut=None,
        description=description or f"registered measure ({_qualname(per_query)})",
    )
    _CUSTOM[name] = per_query
    add_family(family)
    add_kernel(Kernel(name, _compute(name, per_query), aggregate=aggregate))


def unregister(name: str) -> None:
    """Forget a measure :func:`register` added (nothing happens for another name)."""
    if _CUSTOM.pop(name, None) is not None:
        KERNELS.pop(name, None)
        remove_family(name)


def registered() -> dict[str, PerQuery]:
    """The measures registered through :func:`register`, by name."""
    return dict(_CUSTOM)


def _qualname(fn: PerQuery) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _compute(
    name: str, per_query: PerQuery
) -> Callable[[tc.Ctx, Sequence[Measure]], list[NDArray[np.float64]]]:
    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[NDArray[np.float64]]:
        done: dict[int | None, NDArray[np.float64]] = {}
        for m in measures:
            k = None if m.cutoff is None else int(m.cutoff)
            if k not in done:
                done[k] = _values(name, per_query, ctx, k)
        return [done[None if m.cutoff is None else int(m.cutoff)] for m in measures]

    return run


def _values(name: str, per_query: PerQuery, ctx: tc.Ctx, k: int | None) -> NDArray[np.float64]:
    """One value per evaluated query: the function on each query's ranking (a Python loop:
    a registered measure is a function of one query)."""
    a = ctx.aligned
    offsets = a.offsets.tolist()
    judged = a.judged.tolist()
    grades = a.grades.tolist()
    q_offsets = a.qrels_offsets.tolist()
    q_grades = a.qrels_grades.tolist()
    out = np.zeros(a.num_queries, dtype=np.float64)
    for i, qid in enumerate(a.query_ids):
        start, end = offsets[i], offsets[i + 1]
        if k is not None:
            end = min(end, start + k)
        ranked = RankedQuery(
            query_id=qid,
            grades=tuple(grades[j] if judged[j] else None for j in range(start, end)),
            judgments=tuple(q_grades[q_offsets[i] : q_offsets[i + 1]]),
            rel_level=ctx.rel_level,
            cutoff=k,
        )
        try:
            value = per_query(ranked)
        except Exception as exc:
            raise MeasureError(
                f"measure {name!r} failed on query {qid!r}: {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise MeasureError(
                f"measure {name!r} returned {value!r} ({type(value).__name__}) for query "
                f"{qid!r}; a measure function returns a float"
            )
        number = float(value)
        if not math.isfinite(number):
            raise MeasureError(
                f"measure {name!r} returned {number} for query {qid!r}; a measure's value "
                "must be a finite number"
            )
        out[i] = number
    return out


__all__ = ["PerQuery", "RankedQuery", "register", "registered", "unregister"]
