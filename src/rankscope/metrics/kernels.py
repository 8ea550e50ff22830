"""The measure registry: family name -> kernel, each taking :class:`Measure` values.

A measure goes from its name to its kernel without becoming a string again::

    parse_measure("ndcg@10")  ->  Measure("ndcg", cutoff=10)  ->  KERNELS["ndcg"]
        -> compute(ctx, [Measure("ndcg", 10), ...])  ->  per-query arrays (m_ndcg_cut)

Each :class:`Kernel` computes every measure of its family asked for at once (``P@5`` and
``P@10`` share one pass) for all queries of a :class:`~rankscope.metrics.trec_compute.Ctx`
(one aligned run at one relevance level), and says how its per-query values are aggregated
(``mean``, ``sum`` for counts, ``gm`` for trec_eval's geometric means, whose per-query values
are logarithms).  trec_eval's measures come from :mod:`.trec_compute`, the others from
:mod:`.extra`.  Parameters are read from the measure itself: its cutoff, its free parameter
text (``utility(2,-1,0,0)``, ``ndcg(1=3,2=9)``, ``rbp(p=0.8)``) or trec_eval's defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import MeasureError
from rankscope.metrics import trec_compute as tc
from rankscope.metrics.align import Aligned
from rankscope.metrics.names import FAMILIES, Measure, default_params

Floats = NDArray[np.float64]
Pairs = tuple[tuple[str, float], ...]
Aggregate = Literal["mean", "sum", "gm"]
Compute = Callable[[tc.Ctx, Sequence[Measure]], list[Floats]]
MIN_GEO_MEAN = tc.MIN_GEO_MEAN


@dataclass(frozen=True, slots=True)
class Kernel:
    """How one measure family is computed and aggregated.

    - ``compute(ctx, measures)``: one per-query array per measure, in order; every measure is
      of this family (any cutoffs or parameters).
    - ``aggregate``: ``mean`` over queries, ``sum`` (counts), or ``gm`` (exp of the mean of
      the per-query values, which are logarithms floored at log(0.00001)).
    - ``counts``: per-query values are whole numbers (printed without decimals).
    - ``stand_in_zero``: trec_eval's ``-c`` zeroes this family for the stand-in ranking it
      gives a query the run lacks (``num_ret``, ``utility``, ``unj``, ``rbp_resid``), but only
      a measure without parameters: see :func:`zeroed_for_stand_in`.
    """

    family: str
    compute: Compute
    aggregate: Aggregate = "mean"
    counts: bool = False
    stand_in_zero: bool = False


KERNELS: dict[str, Kernel] = {}


def add_kernel(kernel: Kernel) -> None:
    """Register the kernel of a family :func:`rankscope.metrics.names.add_family` added."""
    if kernel.family not in FAMILIES:
        raise MeasureError(f"no measure family {kernel.family!r}; add it first")
    KERNELS[kernel.family] = kernel


def kernel_for(measure: Measure) -> Kernel:
    """The kernel computing ``measure``'s family."""
    try:
        return KERNELS[measure.name]
    except KeyError:  # pragma: no cover - every family of names.FAMILIES is registered
        raise MeasureError(f"no kernel computes {measure}") from None


def zeroed_for_stand_in(measure: Measure) -> bool:
    """Whether trec_eval's ``-c`` sets ``measure`` to 0 on a query the run lacks.

    trec_eval scores such a query on a one-document stand-in ranking, then zeroes the values
    it prints as exactly ``num_ret``, ``utility`` or ``rbp_resid``, or as ``unj…``
    (``trec_eval.c``).  A measure given parameters prints with them appended
    (``utility_2,-1,0.5,1``, ``rbp_resid_p=0.5``), so it keeps its stand-in value.
    """
    return kernel_for(measure).stand_in_zero and measure.param is None


def reads_top(measure: Measure) -> int | None:
    """How many ranked rows per query ``measure`` reads (``None``: all of them).

    Rank-cutoff measures read only their top ``k`` rows (and the qrels), so a run can be
    joined to the qrels that deep only.
    """
    if FAMILIES[measure.name].cutoff == "int" and measure.cutoff is not None:
        return int(measure.cutoff)
    return None


def measure_values(
    aligned: Aligned,
    measures: Sequence[Measure],
    rel_level: int = 1,
    *,
    num_docs_in_coll: int = 0,
) -> dict[Measure, Floats]:
    """Per-query values (``aligned.query_ids`` order) of each measure, its own ``rel`` or
    ``rel_level`` deciding what counts as relevant.  ``gm_*`` values are logarithms."""
    out: dict[Measure, Floats] = {}
    for level, group in group_by_level(measures, rel_level).items():
        ctx = tc.Ctx(aligned, level, num_docs_in_coll)
        out.update(compute(ctx, group))
    return out


def group_by_level(measures: Sequence[Measure], rel_level: int) -> dict[int, list[Measure]]:
    """Measures by the relevance level they are computed at (their ``rel``, else the default)."""
    groups: dict[int, list[Measure]] = {}
    for m in measures:
        groups.setdefault(rel_level if m.rel is None else m.rel, []).append(m)
    return groups


def compute(ctx: tc.Ctx, measures: Sequence[Measure]) -> dict[Measure, Floats]:
    """Per-query values of ``measures`` at ``ctx``'s level, one kernel call per family."""
    families: dict[str, list[Measure]] = {}
    for m in measures:
        families.setdefault(m.name, []).append(m)
    out: dict[Measure, Floats] = {}
    for family, members in families.items():
        values = KERNELS[family].compute(ctx, members)
        out.update(zip(members, values, strict=True))
    return out


def aggregate(kernel: Kernel, values: Floats, counted: int | None = None) -> float:
    """trec_eval's summary of per-query ``values``: sums added left to right, as trec_eval
    accumulates, then averaged over ``counted`` queries (default: one per value; trec_eval's
    ``-c`` with ``-D`` counts queries without a value, as 0 or, in a geometric mean, as the
    floor 0.00001).  An average over no queries is 0."""
    total = float(np.cumsum(values)[-1]) if values.shape[0] else 0.0
    n = values.shape[0] if counted is None else counted
    if kernel.aggregate == "sum":
        return total
    if not n:
        return 0.0
    if kernel.aggregate == "gm":
        total += (n - values.shape[0]) * math.log(MIN_GEO_MEAN)
        return math.exp(total / n)
    return total / n


# ------------------------------------------------------------------------- parameters


def _cutoffs(measures: Sequence[Measure]) -> list[float]:
    return [float(m.cutoff) for m in measures if m.cutoff is not None]


def _numbers(measure: Measure) -> list[float]:
    """A free parameter list (``utility(2,-1,0,0)``), or trec_eval's default one."""
    if measure.param is None:
        return list(default_params(measure.name))
    return [float(x) for x in measure.param.split(",")]


def _pairs(measure: Measure) -> Pairs:
    """``level=gain`` pairs (``ndcg(1=3,2=9)``); for rbp also ``p=`` or a bare persistence."""
    if measure.param is None:
        return ()
    out: list[tuple[str, float]] = []
    for item in measure.param.split(","):
        key, eq, value = item.partition("=")
        out.append((key, float(value)) if eq else ("p", float(key)))
    return tuple(out)


# ------------------------------------------------------------------------- registration


def _register(
    family: str,
    compute: Compute,
    *,
    aggregate: Aggregate = "mean",
    counts: bool = False,
    stand_in_zero: bool = False,
) -> None:
    if family not in FAMILIES:  # pragma: no cover - a registry typo
        raise ValueError(f"unknown family {family!r}")
    KERNELS[family] = Kernel(family, compute, aggregate, counts, stand_in_zero)


def _each(fn: Callable[[tc.Ctx], Floats]) -> Compute:
    """A family without parameters: one computation serves every measure asked for."""

    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
        values = fn(ctx)
        return [values for _ in measures]

    return run


def _by_cutoff(
    fn: Callable[[tc.Ctx, list[int]], list[Floats]],
    whole: Callable[[tc.Ctx], Floats] | None = None,
) -> Compute:
    """A rank-cutoff family: trec_eval computes sorted, distinct cutoffs in one call;
    ``whole`` computes the measure without a cutoff."""

    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
        cuts = sorted({int(m.cutoff) for m in measures if m.cutoff is not None})
        by_cut: dict[int | None, Floats] = (
            dict(zip(cuts, fn(ctx, cuts), strict=True)) if cuts else {}
        )
        if whole is not None and any(m.cutoff is None for m in measures):
            by_cut[None] = whole(ctx)
        return [by_cut[None if m.cutoff is None else int(m.cutoff)] for m in measures]

    return run


def _by_level(fn: Callable[[tc.Ctx, list[float]], list[Floats]]) -> Compute:
    """A recall-level or R-multiple family (``iprec``, ``Rprec_mult``), sorted as trec_eval
    sorts its cutoffs."""

    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
        levels = sorted(set(_cutoffs(measures)))
        by_level = dict(zip(levels, fn(ctx, levels), strict=True))
        return [by_level[float(m.cutoff or 0.0)] for m in measures]

    return run


def _by_param(fn: Callable[[tc.Ctx, Measure], Floats]) -> Compute:
    """A free-parameter family: one computation per distinct parameter."""

    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
        done: dict[str | None, Floats] = {}
        for m in measures:
            if m.param not in done:
                done[m.param] = fn(ctx, m)
        return [done[m.param] for m in measures]

    return run


def _extra(
    fn: Callable[[tc.Ctx, int | None], Floats],
    whole: Callable[[tc.Ctx], Floats] | None = None,
) -> Compute:
    """A measure trec_eval lacks (from :class:`~rankscope.metrics.extra.ExtraKernel`);
    ``whole`` computes the family without a cutoff where trec_eval defines that one."""

    def run(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
        done: dict[int | None, Floats] = {}
        for m in measures:
            k = None if m.cutoff is None else int(m.cutoff)
            if k not in done:
                done[k] = whole(ctx) if k is None and whole is not None else fn(ctx, k)
        return [done[None if m.cutoff is None else int(m.cutoff)] for m in measures]

    return run


def _count(values: Callable[[tc.Ctx], NDArray[np.int64]]) -> Callable[[tc.Ctx], Floats]:
    return lambda ctx: values(ctx).astype(np.float64)


def _utility(ctx: tc.Ctx, m: Measure) -> Floats:
    params = _numbers(m)
    if len(params) != 4:
        raise MeasureError(
            f"measure {m} takes 4 coefficients a,b,c,d (got {len(params)}), e.g. utility(1,-1,0,0)"
        )
    return tc.m_utility(ctx, params, ctx.num_docs_in_coll)


def _dcg(ctx: tc.Ctx, pairs: Pairs) -> Floats:
    return tc.dcg_and_ideal(ctx, pairs)[0]


def _ideal_dcg(ctx: tc.Ctx, pairs: Pairs) -> Floats:
    return tc.dcg_and_ideal(ctx, pairs)[1]


def _with_pairs(fn: Callable[[tc.Ctx, Pairs], Floats]) -> Compute:
    return _by_param(lambda ctx, m: fn(ctx, _pairs(m)))


def _ndcg(ctx: tc.Ctx, measures: Sequence[Measure]) -> list[Floats]:
    """``ndcg@k`` (trec_eval's ndcg_cut) and ``ndcg`` / ``ndcg(gains)`` (trec_eval's ndcg)."""
    cut = [m for m in measures if m.cutoff is not None]
    whole = [m for m in measures if m.cutoff is None]
    values = dict(zip(cut, _by_cutoff(tc.m_ndcg_cut)(ctx, cut), strict=True)) if cut else {}
    if whole:
        values.update(zip(whole, _with_pairs(tc.m_ndcg)(ctx, whole), strict=True))
    return [values[m] for m in measures]


_register(
    "num_q", _each(lambda ctx: np.ones(ctx.nq, dtype=np.float64)), aggregate="sum", counts=True
)
_register(
    "num_ret", _each(_count(lambda c: c.num_ret)), aggregate="sum", counts=True, stand_in_zero=True
)
_register("num_rel", _each(_count(lambda c: c.num_rel)), aggregate="sum", counts=True)
_register("num_rel_ret", _each(_count(lambda c: c.num_rel_ret)), aggregate="sum", counts=True)
_register("map", _by_cutoff(tc.m_map_cut, tc.m_map))
_register("gm_map", _each(tc.m_gm_map), aggregate="gm")
_register("Rprec", _each(tc.m_rprec))
_register("bpref", _each(tc.m_bpref))
_register("mrr", _extra(lambda ctx, k: ctx.extra.mrr(k, ctx.rel_level), tc.m_recip_rank))
_register("iprec", _by_level(tc.m_iprec_at_recall))
_register("P", _by_cutoff(tc.m_P))
_register("recall", _by_cutoff(tc.m_recall))
_register("infAP", _each(tc.m_infap))
_register("gm_bpref", _each(tc.m_gm_bpref), aggregate="gm")
_register("Rprec_mult", _by_level(tc.m_rprec_mult))
_register("utility", _by_param(_utility), stand_in_zero=True)
_register("11pt_avg", _by_param(lambda ctx, m: tc.m_11pt_avg(ctx, _numbers(m))))
_register("binG", _each(tc.m_binG))
_register("G", _with_pairs(tc.m_G))
_register("dcg", _with_pairs(_dcg))
_register("ideal_dcg", _with_pairs(_ideal_dcg))
_register("ndcg", _ndcg)
_register("ndcg_rel", _with_pairs(tc.m_ndcg_rel))
_register("Rndcg", _with_pairs(tc.m_rndcg))
_register("relative_P", _by_cutoff(tc.m_relative_P))
_register("set_P", _each(tc.m_set_P))
_register("set_relative_P", _each(tc.m_set_relative_P))
_register("set_recall", _each(tc.m_set_recall))
_register("set_map", _each(tc.m_set_map))
_register("set_F", _by_param(lambda ctx, m: tc.m_set_F(ctx, _numbers(m))))
_register("num_nonrel_judged_ret", _each(tc.m_num_nonrel_judged_ret), aggregate="sum", counts=True)
_register("rbp", _with_pairs(tc.m_rbp))
_register("rbp_resid", _with_pairs(tc.m_rbp_resid), stand_in_zero=True)
_register("unj", _by_cutoff(tc.m_unj), stand_in_zero=True)
_register("hit", _by_cutoff(tc.m_success))  # trec_eval's success
_register("judged", _extra(lambda ctx, k: ctx.extra.judged(k)))
_register("f1", _extra(lambda ctx, k: ctx.extra.f1(k, ctx.rel_level)))
_register("ndcg_exp", _extra(lambda ctx, k: ctx.extra.ndcg_exp(k, ctx.rel_level)))


if set(KERNELS) != set(FAMILIES):  # pragma: no cover - checked at import
    raise RuntimeError(f"families without a kernel: {sorted(set(FAMILIES) - set(KERNELS))}")


__all__ = [
    "KERNELS",
    "Aggregate",
    "Kernel",
    "add_kernel",
    "aggregate",
    "compute",
    "group_by_level",
    "kernel_for",
    "measure_values",
    "reads_top",
    "zeroed_for_stand_in",
]
