"""trec_eval 10's measures over all queries at once (kernels of :mod:`.kernels`).

Each function mirrors one ``m_*.c`` file of trec_eval and returns one value per query.  The
ranked relevance of a row uses trec_eval's coding (``form_res_rels.c``): the qrels grade when
it is ``>= 0``, ``-1`` for a doc absent from the qrels and ``-2`` for a negative grade ("in the
pool, unjudged").  A row is relevant when that code is ``>= rel_level``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, cmp_to_key
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankscope.data import compute as pc  # np.unique imports numpy.ma
from rankscope.data.numbers import c_atol, is_plain_int
from rankscope.errors import MeasureError
from rankscope.metrics.align import Aligned
from rankscope.metrics.extra import ExtraKernel
from rankscope.metrics.segments import (
    Floats,
    Ints,
    count_in_top,
    counts_before,
    log2_table,
    offsets_from_counts,
    positions,
    power_table,
    segment_count,
    segment_ids,
    seq_cumsum,
    seq_sum,
    seq_sum_in_top,
    suffix_max,
)

NONPOOL = -1
UNJUDGED_IN_POOL = -2
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


def _div(a: NDArray[Any] | float, b: NDArray[Any] | float) -> Floats:
    """C double division: x/0 gives inf or nan instead of an error."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.true_divide(a, b), dtype=np.float64)


@dataclass(frozen=True)
class Gains:
    """trec_eval's ``setup_gains`` for one value of ``num_rel_levels``."""

    order: tuple[tuple[int, float], ...]  # (level, gain) sorted the way trec_eval sorts them
    lookup_levels: Ints  # sorted levels, and the gain get_gain() returns for each
    lookup_gains: Floats

    def gain_of(self, rel: Ints) -> Floats:
        if self.lookup_levels.shape[0] == 0:
            return np.zeros(rel.shape[0], dtype=np.float64)
        at = np.minimum(np.searchsorted(self.lookup_levels, rel), self.lookup_levels.shape[0] - 1)
        return np.where(self.lookup_levels[at] == rel, self.lookup_gains[at], 0.0)


#: the most relevance levels a query may have (1 + its largest grade) when a measure's gains
#: are not all whole numbers; with whole-number gains (the default: the grade) any grade works
MAX_LEVELS_FRACTIONAL_GAINS = 1 << 16


def setup_gains(
    pairs: tuple[tuple[str, float], ...],
    num_rel_levels: int,
    present: Ints | None = None,
) -> Gains:
    """trec_eval's ``setup_gains``: the gain pairs given, then the default gain (the level
    itself) of every level in ``range(num_rel_levels)`` the pairs leave out, sorted by gain.

    ``present``: the grades the queries hold. With it, the defaults are listed only for those
    grades, level 0 (the lowest default gain) and the highest level the pairs leave out (the
    highest default gain): no measure reads the others, so a grade of 999999999 costs no more
    than a grade of 3. This is exact when every gain is a whole number: trec_eval's comparison
    ``(int)(g1 - g2)`` is then a total order, and a stable sort of fewer entries keeps their
    order. Gains that are not whole numbers compare equal to neighbours 1 apart, which need
    not be transitive: then every level is listed, and at most
    :data:`MAX_LEVELS_FRACTIONAL_GAINS` of them.
    """
    entries: list[tuple[int, float]] = []
    for name, value in pairs:
        if is_plain_int(name):  # trec_eval skips names that are not integers
            entries.append((c_atol(name), float(value)))
    given = {level for level, _ in entries}
    if present is None:
        levels: Iterable[int] = range(num_rel_levels)
    else:
        levels = _levels_read(num_rel_levels, given, present)
    entries.extend((level, float(level)) for level in levels if level not in given)

    # trec_eval compares gains as (int)(g1 - g2): gains less than 1 apart compare equal.
    def compare(a: tuple[int, float], b: tuple[int, float]) -> int:
        return int(a[1] - b[1])

    order = tuple(sorted(entries, key=cmp_to_key(compare)))
    first: dict[int, float] = {}
    for level, gain in order:
        first.setdefault(level, gain)
    levels_arr = np.array(sorted(first), dtype=np.int64)
    return Gains(order, levels_arr, np.array([first[int(x)] for x in levels_arr], dtype=np.float64))


def _levels_read(num_rel_levels: int, given: set[int], present: Ints) -> list[int]:
    """The default levels a measure can read (see :func:`setup_gains`), ascending."""
    if num_rel_levels <= 0:
        return []
    wanted = {int(g) for g in present.tolist() if 0 <= g < num_rel_levels}
    wanted.add(0)
    top = num_rel_levels - 1
    while top > 0 and top in given:  # the pairs are few: a short walk
        top -= 1
    wanted.add(top)
    return sorted(wanted)


def whole_gains(pairs: tuple[tuple[str, float], ...]) -> bool:
    """Whether every gain given for a level is a whole number (see :func:`setup_gains`)."""
    return all(float(v).is_integer() for name, v in pairs if is_plain_int(name))


def level_groups(
    ctx: Ctx, pairs: tuple[tuple[str, float], ...]
) -> Iterator[tuple[Gains, Ints, Ints, Ints]]:
    """The queries grouped by their number of relevance levels, with the gains of each group:
    ``(gains, queries, their ranked rows, their qrels rows with a grade >= 0)``. Each group
    costs its own rows, whatever the grades."""
    top_grade = ctx.max_grade
    whole = whole_gains(pairs)
    if not whole and ctx.nq and int(top_grade.max()) >= MAX_LEVELS_FRACTIONAL_GAINS:
        worst = int(np.argmax(top_grade))
        given = ",".join(f"{name}={v:g}" for name, v in pairs if is_plain_int(name))
        raise MeasureError(
            f"gains that are not whole numbers ({given}) take every relevance level one by "
            f"one, and query {ctx.aligned.query_ids[worst]!r} has a grade of "
            f"{int(top_grade[worst])} (at most {MAX_LEVELS_FRACTIONAL_GAINS - 1} with "
            "such gains); give whole-number gains (ndcg(1=2,2=5)), or smaller grades"
        )
    by_levels = np.argsort(top_grade, kind="stable")
    cuts = np.flatnonzero(np.diff(top_grade[by_levels])) + 1
    qg = ctx.aligned.qrels_grades
    for qs in np.split(by_levels, cuts):
        if qs.shape[0] == 0:
            continue
        rows = _rows_of(ctx.offsets, qs)
        qrows = _rows_of(ctx.aligned.qrels_offsets, qs)
        qrows = qrows[qg[qrows] >= 0]
        n_levels = int(top_grade[qs[0]]) + 1  # a Python int: LONG_MAX + 1 fits
        present = pc.distinct(qg[qrows]) if whole else None
        yield setup_gains(pairs, n_levels, present), qs, rows, qrows


def _rows_of(offsets: Ints, qs: Ints) -> Ints:
    """The rows of queries ``qs`` (each query's rows ``offsets[q]:offsets[q + 1]``)."""
    starts = offsets[qs]
    counts = offsets[qs + 1] - starts
    return positions(offsets_from_counts(counts)) + np.repeat(starts, counts)


@dataclass
class Ctx:
    """Everything the kernels share for one evaluation at one relevance level.

    ``num_docs_in_coll`` is trec_eval's ``-N`` (used by ``utility``).  Derived arrays are
    computed on first use and cached, so measures asked for together share them.
    """

    aligned: Aligned
    rel_level: int
    num_docs_in_coll: int = 0
    offsets: Ints = field(init=False)

    def __post_init__(self) -> None:
        self.offsets = self.aligned.offsets

    @cached_property
    def extra(self) -> ExtraKernel:
        """The kernels of the measures trec_eval lacks, over the same rows."""
        return ExtraKernel(self.aligned)

    @cached_property
    def rel(self) -> Ints:
        """Per ranked row: trec_eval's rel code (grade, UNJUDGED_IN_POOL or NONPOOL)."""
        a = self.aligned
        rel = a.grades.copy()
        rel[rel < 0] = UNJUDGED_IN_POOL  # a negative grade: in the pool, unjudged
        rel[~a.judged] = NONPOOL
        return rel

    # Most ranked rows are usually unjudged (NONPOOL); the common measures need only the judged
    # rows, their queries and positions, so these sparse views spare passes over every row.

    @cached_property
    def jrows(self) -> Ints:
        """Global indices of the judged (in the qrels) rows, in order."""
        return np.flatnonzero(self.aligned.judged)

    @cached_property
    def jq(self) -> Ints:
        """Per judged row: its query."""
        return np.searchsorted(self.offsets, self.jrows, side="right") - 1

    @cached_property
    def jpos(self) -> Ints:
        """Per judged row: its 0-based rank within its query."""
        return self.jrows - self.offsets[self.jq]

    @cached_property
    def jrel(self) -> Ints:
        """Per judged row: its rel code (the grade, or UNJUDGED_IN_POOL when negative)."""
        g = self.aligned.judged_grades.copy()  # one per judged row, as jrows
        g[g < 0] = UNJUDGED_IN_POOL
        return g

    @cached_property
    def _sparse_rel(self) -> bool:
        """Whether only judged rows can be relevant (NONPOOL rows are below the level)."""
        return self.rel_level > NONPOOL

    @cached_property
    def _rel_in_judged(self) -> Ints:
        """Indices into the judged rows of the relevant ones (when :attr:`_sparse_rel`)."""
        return np.flatnonzero(self.jrel >= self.rel_level)

    @cached_property
    def rel_q(self) -> Ints:
        """Per relevant row: its query."""
        if self._sparse_rel:
            return self.jq[self._rel_in_judged]
        return np.searchsorted(self.offsets, self.rel_rows, side="right") - 1

    @cached_property
    def rel_pos(self) -> Ints:
        """Per relevant row: its 0-based rank within its query."""
        if self._sparse_rel:
            return self.jpos[self._rel_in_judged]
        return self.rel_rows - self.offsets[self.rel_q]

    def _per_query(self, q: Ints) -> Ints:
        return np.bincount(q, minlength=self.nq).astype(np.int64)

    @property
    def nq(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @cached_property
    def pos(self) -> Ints:
        return positions(self.offsets)

    @cached_property
    def qidx(self) -> Ints:
        return segment_ids(self.offsets)

    @cached_property
    def num_ret(self) -> Ints:
        return np.diff(self.offsets)

    @cached_property
    def is_rel(self) -> NDArray[np.bool_]:
        return self.rel >= self.rel_level

    @cached_property
    def rel_cum(self) -> Ints:
        return counts_before(self.is_rel, self.offsets)

    @cached_property
    def num_rel_ret(self) -> Ints:
        """res_rels.num_rel_ret: judged (code >= 0) rows at or above the level."""
        hit = (self.jrel >= 0) & (self.jrel >= self.rel_level)
        return self._per_query(self.jq[hit])

    @cached_property
    def num_nonpool(self) -> Ints:
        return self.num_ret - self._per_query(self.jq)

    @cached_property
    def num_unjudged_in_pool(self) -> Ints:
        return self._per_query(self.jq[self.jrel == UNJUDGED_IN_POOL])

    @cached_property
    def num_rel(self) -> Ints:
        """Per query: qrels docs with grade >= rel_level and >= 0 (trec_eval's num_rel)."""
        a = self.aligned
        if a.rel_level == self.rel_level:
            return a.num_rel
        g = a.qrels_grades
        return segment_count((g >= self.rel_level) & (g >= 0), a.qrels_offsets)

    @cached_property
    def qrels_qidx(self) -> Ints:
        return segment_ids(self.aligned.qrels_offsets)

    @cached_property
    def max_grade(self) -> Ints:
        """The largest non-negative grade in the query's qrels (-1 when none): trec_eval's
        ``num_rel_levels`` is one more, which int64 cannot hold for the grade ``LONG_MAX``."""
        g = self.aligned.qrels_grades
        out = np.full(self.nq, -1, dtype=np.int64)
        has = g >= 0
        np.maximum.at(out, self.qrels_qidx[has], g[has])
        return out

    @cached_property
    def num_nonrel_judged(self) -> Ints:
        """Qrels docs with 0 <= grade < rel_level (bpref's num_nonrel)."""
        g = self.aligned.qrels_grades
        hit = (g >= 0) & (g < self.rel_level)
        cum = counts_before(hit, self.aligned.qrels_offsets)
        qo = self.aligned.qrels_offsets
        return cum[qo[1:]] - cum[qo[:-1]]

    def count_top(self, k: Ints | int) -> Ints:
        """Per query: relevant rows among its top ``k`` (an int, or one per query)."""
        limit = np.asarray(k)[self.rel_q] if np.ndim(k) else k
        return self._per_query(self.rel_q[self.rel_pos < limit])

    @cached_property
    def rel_rows(self) -> Ints:
        """Global indices of relevant rows, in order."""
        if self._sparse_rel:
            return self.jrows[self._rel_in_judged]
        return np.flatnonzero(self.is_rel)

    @cached_property
    def rel_offsets(self) -> Ints:
        return offsets_from_counts(self._per_query(self.rel_q))

    @cached_property
    def rel_so_far(self) -> Ints:
        """Per relevant row: its 1-based rank among its query's relevant rows."""
        return positions(self.rel_offsets) + 1

    @cached_property
    def ap_running(self) -> Floats:
        """Per relevant row: trec_eval's running sum of precisions (map, map_cut)."""
        prec = _div(self.rel_so_far.astype(np.float64), self.rel_pos + 1.0)
        return seq_cumsum(prec, self.rel_offsets)

    @cached_property
    def ap_sum(self) -> Floats:
        nrr = np.diff(self.rel_offsets)
        return seq_sum_in_top(self.ap_running, nrr, self.rel_offsets)

    def log2(self, n: int) -> Floats:
        return log2_table(n)

    @cached_property
    def max_len(self) -> int:
        return int(self.num_ret.max()) if self.nq else 0

    # ----------------------------------------------------------------- gains / ideal ranking

    def gains(self, pairs: tuple[tuple[str, float], ...]) -> tuple[Floats, Ideal]:
        key = pairs
        cache = self.__dict__.setdefault("_gains_cache", {})
        if key not in cache:
            cache[key] = _gains_and_ideal(self, pairs)
        result: tuple[Floats, Ideal] = cache[key]
        return result


@dataclass(frozen=True)
class Ideal:
    """Per query: the ideal gains sequence (positive gains, trec_eval's level order)."""

    offsets: Ints
    gains: Floats
    top_gain: Floats  # gain of the highest level in sorted order (even with no docs)
    stop_gain: Floats  # the first non-positive gain met going down (0.0 when none)


def _gains_and_ideal(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> tuple[Floats, Ideal]:
    """Per row result gains and per query ideal sequence for setup_gains-based measures."""
    nq = ctx.nq
    row_gain = np.zeros(ctx.rel.shape[0], dtype=np.float64)
    top_gain = np.zeros(nq, dtype=np.float64)
    stop_gain = np.zeros(nq, dtype=np.float64)
    qg = ctx.aligned.qrels_grades
    q_rank = np.full(qg.shape[0], -1, dtype=np.int64)  # rank in level order, -1: not in ideal
    q_gain = np.zeros(qg.shape[0], dtype=np.float64)
    qq = ctx.qrels_qidx
    for gains, qs, rows, qrows in level_groups(ctx, pairs):
        row_gain[rows] = gains.gain_of(ctx.rel[rows])
        order = gains.order
        top_gain[qs] = order[-1][1] if order else 0.0
        # Walk levels from the top: those before the first non-positive gain form the ideal.
        active: dict[int, int] = {}
        stop = 0.0
        for rank in range(len(order) - 1, -1, -1):
            level, gain = order[rank]
            if gain <= 0.0:
                stop = gain
                break
            active.setdefault(level, rank)
        stop_gain[qs] = stop
        if qrows.shape[0] and active:
            lv = np.array(sorted(active), dtype=np.int64)
            rk = np.array([active[int(x)] for x in lv], dtype=np.int64)
            g = qg[qrows]
            at = np.minimum(np.searchsorted(lv, g), lv.shape[0] - 1)
            hit = lv[at] == g
            q_rank[qrows[hit]] = rk[at[hit]]
            q_gain[qrows[hit]] = _level_gain(order, g[hit], active)
    keep = np.flatnonzero(q_rank >= 0)
    sort = keep[np.lexsort((-q_rank[keep], qq[keep]))]
    ideal_offsets = offsets_from_counts(np.bincount(qq[sort], minlength=nq).astype(np.int64))
    return row_gain, Ideal(ideal_offsets, q_gain[sort], top_gain, stop_gain)


def _level_gain(
    order: tuple[tuple[int, float], ...], levels: Ints, active: dict[int, int]
) -> Floats:
    by_rank = np.array([order[active[int(x)]][1] for x in levels.tolist()], dtype=np.float64)
    return by_rank


# --------------------------------------------------------------------------- measures


def m_map(ctx: Ctx) -> Floats:
    nrr = np.diff(ctx.rel_offsets)
    return np.where(nrr > 0, _div(ctx.ap_sum, ctx.num_rel.astype(np.float64)), 0.0)


def m_gm_map(ctx: Ctx) -> Floats:
    ap = m_map(ctx)
    return np.array([math.log(max(x, MIN_GEO_MEAN)) for x in ap.tolist()], dtype=np.float64)


def m_rprec(ctx: Ctx) -> Floats:
    look = np.minimum(ctx.num_ret, ctx.num_rel)
    hits = ctx.count_top(look)
    return np.where(look > 0, _div(hits.astype(np.float64), ctx.num_rel.astype(np.float64)), 0.0)


def _bpref_sum(ctx: Ctx) -> Floats:
    """bpref's sum over judged relevant rows (before dividing by num_rel)."""
    judged = ctx.rel >= 0
    nonrel = judged & (ctx.rel < ctx.rel_level)
    relrow = judged & ~nonrel
    nonrel_cum = counts_before(nonrel, ctx.offsets)
    rows = np.flatnonzero(relrow)
    q = ctx.qidx[rows]
    nonrel_before = nonrel_cum[rows] - nonrel_cum[ctx.offsets[q]]
    nr = ctx.num_rel[q]
    denom = np.minimum(ctx.num_nonrel_judged[q], nr).astype(np.float64)
    frac = 1.0 - _div(np.minimum(nonrel_before, nr).astype(np.float64), denom)
    contrib = np.where(nonrel_before > 0, frac, 1.0)
    return seq_sum(contrib, offsets_from_counts(np.bincount(q, minlength=ctx.nq)))


def m_bpref(ctx: Ctx) -> Floats:
    s = _bpref_sum(ctx)
    return np.where(ctx.num_rel > 0, _div(s, ctx.num_rel.astype(np.float64)), s)


def m_gm_bpref(ctx: Ctx) -> Floats:
    b = m_bpref(ctx)
    return np.array([math.log(max(x, MIN_GEO_MEAN)) for x in b.tolist()], dtype=np.float64)


def m_recip_rank(ctx: Ctx) -> Floats:
    nrr = np.diff(ctx.rel_offsets)
    out = np.zeros(ctx.nq, dtype=np.float64)
    has = nrr > 0
    out[has] = 1.0 / (ctx.rel_pos[ctx.rel_offsets[:-1][has]] + 1.0)
    return out


def m_infap(ctx: Ctx) -> Floats:
    judged = ctx.rel >= 0
    nonrel = judged & (ctx.rel < ctx.rel_level)
    relrow = judged & ~nonrel
    unj = ctx.rel == UNJUDGED_IN_POOL
    nonrel_cum = counts_before(nonrel, ctx.offsets)
    unj_cum = counts_before(unj, ctx.offsets)
    relc = counts_before(relrow, ctx.offsets)
    rows = np.flatnonzero(relrow)
    q = ctx.qidx[rows]
    start = ctx.offsets[q]
    rel_so_far = relc[rows + 1] - relc[start]
    nonrel_so_far = nonrel_cum[rows] - nonrel_cum[start]
    unj_so_far = unj_cum[rows] - unj_cum[start]
    j = ctx.pos[rows]
    fj = j.astype(np.float64)
    r1 = rel_so_far - 1
    a = _div(1.0, fj + 1.0)
    b = _div(fj, fj + 1.0)
    c = _div((r1 + nonrel_so_far + unj_so_far).astype(np.float64), fj)
    d = _div(r1 + INFAP_EPSILON, (r1 + nonrel_so_far) + 2 * INFAP_EPSILON)
    contrib = np.where(j == 0, 1.0, a + b * c * d)
    s = seq_sum(contrib, offsets_from_counts(np.bincount(q, minlength=ctx.nq)))
    return np.where(ctx.num_rel > 0, _div(s, ctx.num_rel.astype(np.float64)), s)


def m_P(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    return [_div(ctx.count_top(k).astype(np.float64), float(k)) for k in cutoffs]


def m_recall(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    nr = ctx.num_rel.astype(np.float64)
    return [
        np.where(ctx.num_rel > 0, _div(ctx.count_top(k).astype(np.float64), nr), 0.0)
        for k in cutoffs
    ]


def m_relative_P(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    out = []
    for k in cutoffs:
        denom = np.minimum(ctx.num_rel, k).astype(np.float64)
        v = _div(ctx.count_top(k).astype(np.float64), denom)
        out.append(np.where(ctx.num_rel > 0, v, 0.0))
    return out


def m_success(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    return [(ctx.count_top(k) > 0).astype(np.float64) for k in cutoffs]


def m_unj(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    cum = counts_before(ctx.rel < 0, ctx.offsets)
    return [_div(count_in_top(cum, ctx.offsets, k).astype(np.float64), float(k)) for k in cutoffs]


def m_map_cut(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    nr = ctx.num_rel.astype(np.float64)
    out = []
    for k in cutoffs:
        n_in = ctx.count_top(k)
        s = seq_sum_in_top(ctx.ap_running, n_in, ctx.rel_offsets)
        out.append(np.where(ctx.num_rel > 0, _div(s, nr), 0.0))
    return out


def m_ndcg_cut(ctx: Ctx, cutoffs: list[int]) -> list[Floats]:
    # Gain is the raw relevance value (rows with value > 0), ideal from qrels levels >= 1.
    kmax = max(cutoffs)
    # Rows with rel > 0 are judged: work on the judged rows only.
    top = np.flatnonzero((ctx.jpos < kmax) & (ctx.jrel > 0))
    q = ctx.jq[top]
    top_pos = ctx.jpos[top]
    offs = offsets_from_counts(np.bincount(q, minlength=ctx.nq).astype(np.int64))
    logs = log2_table(kmax)
    dcg_run = seq_cumsum(ctx.jrel[top].astype(np.float64) / logs[top_pos], offs)
    qg = ctx.aligned.qrels_grades
    ideal_rows = np.flatnonzero(qg >= 1)
    iq = ctx.qrels_qidx[ideal_rows]
    ipos = ideal_rows - ctx.aligned.qrels_offsets[iq]  # grades sorted descending per query
    keep = ipos < kmax
    ideal_rows, iq, ipos = ideal_rows[keep], iq[keep], ipos[keep]
    ioffs = offsets_from_counts(np.bincount(iq, minlength=ctx.nq).astype(np.int64))
    idcg_run = seq_cumsum(qg[ideal_rows].astype(np.float64) / logs[ipos], ioffs)
    pos_cum = counts_before(np.ones(top.shape[0], dtype=np.bool_), offs)
    out = []
    for k in cutoffs:
        n_dcg = _count_pos_below(top_pos, offs, k, pos_cum)
        dcg = seq_sum_in_top(dcg_run, n_dcg, offs)
        n_idcg = np.minimum(np.diff(ioffs), k)
        idcg = seq_sum_in_top(idcg_run, n_idcg, ioffs)
        out.append(np.where(idcg > 0.0, _div(dcg, idcg), dcg))
    return out


def _count_pos_below(pos: Ints, offs: Ints, k: int, cum: Ints) -> Ints:
    below = counts_before(pos < k, offs)
    del cum
    return below[offs[1:]] - below[offs[:-1]]


def _interp(ctx: Ctx, cutoffs: Ints) -> tuple[Floats, NDArray[np.bool_]]:
    """Interpolated precision at relevant-count cutoffs (iprec_at_recall, 11pt_avg).

    ``cutoffs`` is (queries, m) in trec_eval's parameter order.  Returns the value each cutoff
    gets and whether it got one (cutoffs above num_rel_ret that trec_eval skips get none),
    replaying trec_eval's walk from the last cutoff down, including its behaviour with
    unsorted cutoffs.
    """
    nq, m = cutoffs.shape
    nrr = ctx.num_rel_ret
    prec = _div(ctx.rel_cum[1:] - ctx.rel_cum[ctx.offsets[ctx.qidx]], ctx.pos + 1.0)
    smax = suffix_max(prec, ctx.offsets)
    n_rel_rows = np.diff(ctx.rel_offsets)
    final = np.where(
        n_rel_rows > 0,
        smax[ctx.rel_rows[np.minimum(ctx.rel_offsets[:-1], max(ctx.rel_rows.shape[0] - 1, 0))]]
        if ctx.rel_rows.shape[0]
        else 0.0,
        _div(nrr.astype(np.float64), ctx.num_ret.astype(np.float64)),
    )
    values = np.zeros((nq, m), dtype=np.float64)
    got = np.zeros((nq, m), dtype=np.bool_)
    skipping = np.ones(nq, dtype=np.bool_)
    stuck = np.zeros(nq, dtype=np.bool_)
    last = np.full(nq, np.iinfo(np.int64).max, dtype=np.int64)
    for j in range(m - 1, -1, -1):
        c = cutoffs[:, j]
        skip = skipping & (c > nrr)
        skipping &= skip
        live = ~skip
        matches = live & ~stuck & (c >= 1) & (c <= last) & (c <= n_rel_rows)
        stuck |= live & ~matches
        idx = ctx.rel_offsets[:-1] + np.maximum(c, 1) - 1
        idx = np.minimum(idx, max(ctx.rel_rows.shape[0] - 1, 0))
        at = smax[ctx.rel_rows[idx]] if ctx.rel_rows.shape[0] else np.zeros(nq)
        values[:, j] = np.where(matches, at, np.where(live, final, 0.0))
        got[:, j] = live
        last = np.where(matches, c, last)
    return values, got


def m_iprec_at_recall(ctx: Ctx, cutoffs: list[float]) -> list[Floats]:
    nr = ctx.num_rel.astype(np.float64)
    cuts = np.stack(
        [np.array([_lround(p * x) for x in nr.tolist()], dtype=np.int64) for p in cutoffs], axis=1
    ).reshape(ctx.nq, len(cutoffs))
    values, _ = _interp(ctx, cuts)
    return [values[:, j].copy() for j in range(len(cutoffs))]


def _lround(x: float) -> int:
    """C ``lround``: nearest integer, halves away from zero (``x - floor(x)`` is exact)."""
    if x < 0:
        return -_lround(-x)
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def m_11pt_avg(ctx: Ctx, params: list[float]) -> Floats:
    nr = ctx.num_rel.astype(np.float64)
    cuts = np.stack(
        [np.array([_lround(p * x) for x in nr.tolist()], dtype=np.int64) for p in params], axis=1
    ).reshape(ctx.nq, len(params))
    values, got = _interp(ctx, cuts)
    total = np.zeros(ctx.nq, dtype=np.float64)
    for j in range(len(params) - 1, -1, -1):  # trec_eval adds from the last cutoff down
        total = np.where(got[:, j], total + values[:, j], total)
    return total / float(len(params))


def m_rprec_mult(ctx: Ctx, cutoffs: list[float]) -> list[Floats]:
    nr = ctx.num_rel.astype(np.float64)
    out = []
    for p in cutoffs:
        cut = (p * nr + 0.9).astype(np.int64)
        inside = _div(ctx.count_top(cut).astype(np.float64), cut.astype(np.float64))
        beyond = _div(ctx.num_rel_ret.astype(np.float64), cut.astype(np.float64))
        v = np.where(cut > ctx.num_ret, beyond, np.where(cut >= 1, inside, 0.0))
        out.append(v)
    return out


def m_utility(ctx: Ctx, params: list[float], num_docs_in_coll: int) -> Floats:
    a = ctx.num_rel_ret.astype(np.float64)
    ret = ctx.num_ret
    nrr = ctx.num_rel_ret
    return (
        params[0] * a
        + params[1] * (ret - nrr).astype(np.float64)
        + params[2] * (ctx.num_rel - nrr).astype(np.float64)
        + params[3] * (num_docs_in_coll + nrr - ret - ctx.num_rel).astype(np.float64)
    )


def m_binG(ctx: Ctx) -> Floats:
    rows = ctx.rel_rows
    arg = 3 + ctx.pos[rows] - ctx.rel_so_far  # log2(3 + i - rel_so_far), an integer >= 2
    table = log2_table(int(arg.max()) if arg.shape[0] else 0)
    contrib = 1.0 / table[arg - 2] if arg.shape[0] else np.zeros(0)
    s = seq_sum(contrib, ctx.rel_offsets)
    n = np.diff(ctx.rel_offsets)
    return np.where(n > 0, _div(s, ctx.num_rel.astype(np.float64)), 0.0)


def _dcg_running(ctx: Ctx, gain: Floats) -> tuple[Ints, Ints, Floats]:
    """Rows with non-zero gain, their offsets, and the running DCG over them."""
    rows = np.flatnonzero(gain != 0.0)
    q = ctx.qidx[rows]
    offs = offsets_from_counts(np.bincount(q, minlength=ctx.nq).astype(np.int64))
    logs = log2_table(ctx.max_len)
    return rows, offs, seq_cumsum(gain[rows] / logs[ctx.pos[rows]], offs)


def _ideal_running(ideal: Ideal) -> Floats:
    n = ideal.gains.shape[0]
    p = positions(ideal.offsets)
    logs = log2_table(int(p.max()) + 1 if n else 0)
    return seq_cumsum(ideal.gains / logs[p], ideal.offsets) if n else np.zeros(0)


def dcg_and_ideal(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> tuple[Floats, Floats]:
    gain, ideal = ctx.gains(pairs)
    _, offs, run = _dcg_running(ctx, gain)
    dcg = seq_sum_in_top(run, np.diff(offs), offs)
    irun = _ideal_running(ideal)
    idcg = seq_sum_in_top(irun, np.diff(ideal.offsets), ideal.offsets)
    return dcg, idcg


def m_ndcg(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    dcg, idcg = dcg_and_ideal(ctx, pairs)
    return np.where(idcg > 0.0, _div(dcg, idcg), 0.0)


def m_ndcg_rel(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    gain, ideal = ctx.gains(pairs)
    rows, offs, run = _dcg_running(ctx, gain)
    irun = _ideal_running(ideal)
    ilen = np.diff(ideal.offsets)
    # Rows with positive gain: running DCG over ideal DCG up to the same rank.
    pos_rows_mask = gain[rows] > 0.0
    prow = rows[pos_rows_mask]
    q = ctx.qidx[prow]
    upto = np.minimum(ctx.pos[prow], ilen[q] - 1)
    idcg_at = np.zeros(prow.shape[0], dtype=np.float64)
    if irun.shape[0]:
        idcg_at = np.where(upto >= 0, irun[np.maximum(ideal.offsets[q] + upto, 0)], 0.0)
    contrib = _div(run[pos_rows_mask], idcg_at)
    poffs = offsets_from_counts(np.bincount(q, minlength=ctx.nq).astype(np.int64))
    s = seq_sum(contrib, poffs)
    n_pos = np.diff(poffs)
    dcg = seq_sum_in_top(run, np.diff(offs), offs)
    idcg = seq_sum_in_top(irun, ilen, ideal.offsets) if irun.shape[0] else np.zeros(ctx.nq)
    s = s + _div((ilen - n_pos).astype(np.float64) * dcg, idcg)
    return np.where(s > 0.0, _div(s, ilen.astype(np.float64)), 0.0)


def m_rndcg(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    gain, ideal = ctx.gains(pairs)
    rows, offs, run = _dcg_running(ctx, gain)
    irun = _ideal_running(ideal)
    ilen = np.diff(ideal.offsets)
    nq = ctx.nq
    # Boundaries j in [0, len]: where the ideal gain changes (g[-1] = top gain, g[len] = stop).
    g = ideal.gains
    ip = positions(ideal.offsets)
    iq = segment_ids(ideal.offsets)
    prev = np.where(ip == 0, ideal.top_gain[iq], np.r_[0.0, g[:-1]] if g.shape[0] else g)
    bj_inner = ip[g != prev]
    bq_inner = iq[g != prev]
    # Boundary at j = len (ideal gain becomes the stop gain), unless the walk never started.
    last_gain = np.where(
        ilen > 0, g[np.maximum(ideal.offsets[1:] - 1, 0)] if g.shape[0] else 0.0, ideal.top_gain
    )
    started = ideal.top_gain > 0.0
    end_boundary = started & (last_gain != ideal.stop_gain)
    bq = np.concatenate([bq_inner, np.flatnonzero(end_boundary)])
    bj = np.concatenate([bj_inner, ilen[end_boundary]])
    order = np.lexsort((bj, bq))
    bq, bj = bq[order], bj[order]
    # Ideal DCG before position j, results DCG over rows before min(j, num_ret).
    idcg_before = (
        np.where(bj > 0, irun[np.maximum(ideal.offsets[bq] + bj - 1, 0)], 0.0)
        if (irun.shape[0])
        else np.zeros(bq.shape[0])
    )
    k = np.minimum(bj, ctx.num_ret[bq])
    gain_rows_pos = ctx.pos[rows]
    below = _rows_below(gain_rows_pos, offs, bq, k)
    dcg_before = (
        np.where(below > 0, run[np.maximum(offs[bq] + below - 1, 0)], 0.0)
        if (run.shape[0])
        else np.zeros(bq.shape[0])
    )
    use = idcg_before > 0.0
    contrib = _div(dcg_before, idcg_before)[use]
    cq = bq[use]
    coffs = offsets_from_counts(np.bincount(cq, minlength=nq).astype(np.int64))
    s = seq_sum(contrib, coffs)
    n_changed = np.diff(coffs)
    # After the walk, leftover rows (beyond len + 1) add the final ratio once more.
    dcg = seq_sum_in_top(run, np.diff(offs), offs)
    idcg = seq_sum_in_top(irun, ilen, ideal.offsets) if irun.shape[0] else np.zeros(nq)
    walked = np.where(started, ilen + 1, 0)
    extra = (walked < ctx.num_ret) & (idcg > 0.0)
    s = np.where(extra, s + _div(dcg, idcg), s)
    n_changed = n_changed + extra
    value = _div(s, n_changed.astype(np.float64))
    return np.where(ctx.num_rel == 0, 0.0, value)


def _rows_below(pos_of_rows: Ints, offs: Ints, q: Ints, k: Ints) -> Ints:
    """For each (query q, k): how many of q's rows (positions ``pos_of_rows``) have pos < k."""
    if pos_of_rows.shape[0] == 0:
        return np.zeros(q.shape[0], dtype=np.int64)
    # positions are increasing within a query: binary search inside each query's slice
    key = segment_ids(offs) * (int(pos_of_rows.max()) + 2) + pos_of_rows
    target = q * (int(pos_of_rows.max()) + 2) + np.minimum(k, int(pos_of_rows.max()) + 1)
    return np.searchsorted(key, target) - offs[q]


def m_G(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    gain, ideal = ctx.gains(pairs)
    n = ctx.rel.shape[0]
    ilen = np.diff(ideal.offsets)
    q = ctx.qidx
    p = ctx.pos
    at_ideal = p < ilen[q]
    ideal_gain = np.zeros(n, dtype=np.float64)
    ideal_gain[at_ideal] = ideal.gains[ideal.offsets[q[at_ideal]] + p[at_ideal]]
    cost = np.where(ideal_gain >= 1.0, ideal_gain, 1.0)
    sum_cost = seq_cumsum(cost, ctx.offsets)
    sum_results = seq_cumsum(gain, ctx.offsets)
    rows = np.flatnonzero(gain != 0.0)
    args = (2 + sum_cost[rows]) - sum_results[rows]
    logs = np.array([_c_log2(x) for x in args.tolist()], dtype=np.float64)
    contrib = gain[rows] / logs
    results_g = seq_sum(contrib, offsets_from_counts(np.bincount(q[rows], minlength=ctx.nq)))
    sum_ideal = seq_sum(ideal.gains, ideal.offsets)
    return np.where(sum_ideal > 0.0, _div(results_g, sum_ideal), 0.0)


def _c_log2(x: float) -> float:
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def _rbp_p(pairs: tuple[tuple[str, float], ...]) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def m_rbp(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    p = _rbp_p(pairs)
    gain = np.zeros(ctx.rel.shape[0], dtype=np.float64)
    for gains, _, rows, _ in level_groups(ctx, pairs):
        rel = ctx.rel[rows]
        g = gains.gain_of(rel)
        # trec_eval rescales gains to [0, 1] when some fall outside; its min/max start at 0.
        lo = min([0.0, *(x for _, x in gains.order)])
        hi = max([0.0, *(x for _, x in gains.order)])
        if lo < 0 or hi > 1:
            g = np.where(np.isin(rel, gains.lookup_levels), (g - lo) / (hi - lo), 0.0)
        gain[rows] = g
    powers = power_table(p, ctx.max_len)
    nz = np.flatnonzero(gain != 0.0)
    contrib = gain[nz] * powers[ctx.pos[nz]]
    s = seq_sum(contrib, offsets_from_counts(np.bincount(ctx.qidx[nz], minlength=ctx.nq)))
    return (1.0 - p) * s


def m_rbp_resid(ctx: Ctx, pairs: tuple[tuple[str, float], ...]) -> Floats:
    p = _rbp_p(pairs)
    powers = power_table(p, ctx.max_len)
    rows = np.flatnonzero(ctx.rel < 0)
    q = ctx.qidx[rows]
    offs = offsets_from_counts(np.bincount(q, minlength=ctx.nq).astype(np.int64))
    s = seq_sum(powers[ctx.pos[rows]], offs)
    value = powers[ctx.num_ret] + (1 - p) * s
    return np.where(np.diff(offs) > 0, value, 0.0)


def m_set_P(ctx: Ctx) -> Floats:
    return np.where(
        ctx.num_ret > 0,
        _div(ctx.num_rel_ret.astype(np.float64), ctx.num_ret.astype(np.float64)),
        0.0,
    )


def m_set_recall(ctx: Ctx) -> Floats:
    return np.where(
        ctx.num_rel > 0,
        _div(ctx.num_rel_ret.astype(np.float64), ctx.num_rel.astype(np.float64)),
        0.0,
    )


def m_set_relative_P(ctx: Ctx) -> Floats:
    ok = (ctx.num_ret > 0) & (ctx.num_rel > 0)
    denom = np.minimum(ctx.num_ret, ctx.num_rel).astype(np.float64)
    return np.where(ok, _div(ctx.num_rel_ret.astype(np.float64), denom), 0.0)


def m_set_map(ctx: Ctx) -> Floats:
    ok = (ctx.num_ret > 0) & (ctx.num_rel > 0)
    a = ctx.num_rel_ret.astype(np.float64)
    v = _div(a * a, ctx.num_ret.astype(np.float64) * ctx.num_rel.astype(np.float64))
    return np.where(ok, v, 0.0)


def m_set_F(ctx: Ctx, params: list[float]) -> Floats:
    x = params[0]
    P = _div(ctx.num_rel_ret.astype(np.float64), ctx.num_ret.astype(np.float64))
    R = _div(ctx.num_rel_ret.astype(np.float64), ctx.num_rel.astype(np.float64))
    v = _div((x + 1.0) * P * R, x * P + R)
    return np.where(ctx.num_rel_ret > 0, v, 0.0)


def m_num_nonrel_judged_ret(ctx: Ctx) -> Floats:
    return (ctx.num_ret - ctx.num_nonpool - ctx.num_unjudged_in_pool - ctx.num_rel_ret).astype(
        np.float64
    )


def relstrings(ctx: Ctx, length: float) -> list[str]:
    n = int(length)  # C (long) conversion truncates toward zero
    out = []
    rel = ctx.rel
    for q in range(ctx.nq):
        lo = int(ctx.offsets[q])
        take = max(min(n, int(ctx.num_ret[q])), 0)
        chars = []
        for r in rel[lo : lo + take].tolist():
            if r > 9:
                chars.append(">")
            elif r >= 0:
                chars.append(chr(48 + r))
            elif r == NONPOOL:
                chars.append("-")
            elif r == UNJUDGED_IN_POOL:
                chars.append(".")
            else:
                chars.append("<")
        out.append("".join(chars))
    return out
