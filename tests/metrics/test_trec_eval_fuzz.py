"""Differential fuzz of ``rankscope trec_eval`` against a plain reference of trec_eval 10.0.

The reference is not trec_eval: it is a model of trec_eval 10.0 written in this file, from its C
source, one query at a time, in plain Python, sharing no code with rankscope. To keep the model
honest, every generated case that pytrec_eval (trec_eval 9's C code) can also run is scored by
pytrec_eval too, and the model's per-query values must match it (:func:`_check_with_pytrec`);
the printing, averaging, options and ``-c`` rules pytrec_eval lacks were checked by hand against
the trec_eval 10.0 binary, and the pinned tests at the end hold that binary's output. The model
covers reading (``get_qrels.c``, ``get_trec_results.c``: C ``isspace`` separators, ``#``
comments, at least six words per result line and exactly four per judgment, the last line's
runid, numbers through glibc's own ``atof``/``atol``/``lround``), ranking and judging
(``form_res_rels.c``: score descending, docno descending on ties, ``-M`` before the duplicate
check, ``-J``), the measures (``m_*.c``; ``utility`` with ``-N``; the gain measures ``dcg``,
``ideal_dcg``, ``ndcg``, ``ndcg_rel``, ``Rndcg`` with ``level=gain`` pairs, negative gains
included, as ``gain_init.c`` sets them up), averaging (``meas_avg.c``,
``m_num_q.c``, ``m_num_rel.c``: under ``-c`` every qrels query counts and the summary
``num_rel`` is the number of judgments graded above 0, whatever ``-l`` says), a qrels query the
run lacks under ``-c`` (``trec_eval.c``: scored on a one-document stand-in ranking, then the
values printed as exactly ``num_ret`` or ``utility`` set to 0), printing (``meas_print_*.c``)
and exit statuses (``trec_eval.c``: 1 for an unknown measure, 2 for unreadable input, 4 for a
document listed twice in an evaluated query, no query in common, or ``utility`` given other than
four coefficients).

It follows rankscope's two documented deviations from 10.0: a qrels query missing from the run
is skipped without ``-c`` (10.0 stops), and a first query judged only negatively is evaluated
(10.0 stops with "Can't calculate measure").  Inputs: random qrels and runs with ties, odd
docnos and query ids (``#``, dots, UTF-8, trec_eval's stand-in docno), graded and negative
grades, C-``atof`` scores (``abc``, ``0x1p1``, ``inf``), queries on one side only, duplicates,
any mix of blanks, CRLF, blank and comment lines, extra words, bytes that are not UTF-8 where
trec_eval never looks, and the options ``-q -c -l -M -J -N -n -m``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope.cli.trec_eval import run_trec_eval

if sys.platform != "linux":
    pytest.skip("the reference reads numbers with glibc", allow_module_level=True)

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.atof.restype = ctypes.c_double
_libc.atof.argtypes = [ctypes.c_char_p]
_libc.atol.restype = ctypes.c_long
_libc.atol.argtypes = [ctypes.c_char_p]
_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_libm.lround.restype = ctypes.c_long
_libm.lround.argtypes = [ctypes.c_double]

STAND_IN = b"ceci_nest_pas_un_docno"
MIN_GEO_MEAN = 0.00001
NONPOOL, UNJUDGED = -1, -2

# trec_eval's measure order (measures.c) for the measures the reference implements
ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "recall", "utility", "dcg", "ideal_dcg", "ndcg",
    "ndcg_rel", "Rndcg", "ndcg_cut", "success", "set_P", "set_recall", "num_nonrel_judged_ret",
)  # fmt: skip
OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEFAULTS = {
    "P": LONG_CUTS,
    "recall": LONG_CUTS,
    "ndcg_cut": LONG_CUTS,
    "success": (1, 5, 10),
    "iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
}
LONGS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
# gain measures: optional 'level=gain' pairs (gain_init.c), kept as level, gain, level, gain...
GAIN_MEASURES = ("dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg")
UTILITY = (1.0, -1.0, 0.0, 0.0)  # m_utility.c's default coefficients
# trec_eval.c, after scoring the stand-in ranking of a query the run lacks: the values whose
# printed name is exactly one of these are set to 0 (of the measures modelled here)
STAND_IN_ZEROED = ("num_ret", "utility")


class Refused(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


# --------------------------------------------------------------------------- reading


def _words(line: bytes) -> list[bytes]:
    return line.split()  # bytes.split() splits on C's isspace set: space \t \n \v \f \r


def read_qrels(data: bytes) -> list[tuple[bytes, bytes, int]]:
    """get_qrels.c: a line starting with '#' is skipped and the next one read as data."""
    if not data:
        raise Refused(2)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith(b"#"):
            i += 1
        words = _words(lines[i])
        if len(words) != 4:
            raise Refused(2)
        out.append((words[0], words[2], int(_libc.atol(words[3]))))
        i += 1
    return out


def read_run(data: bytes) -> tuple[list[tuple[bytes, bytes, float]], bytes]:
    """get_trec_results.c: blank lines and lines whose first word starts with '#' skipped."""
    if not data:
        raise Refused(2)
    out = []
    runid = b""
    for line in data.split(b"\n"):
        words = _words(line)
        if not words or words[0].startswith(b"#"):
            continue
        if len(words) < 6:
            raise Refused(2)
        out.append((words[0], words[2], float(_libc.atof(words[4]))))
        runid = words[5]
    if not out:
        raise Refused(2)
    return out, runid


# --------------------------------------------------------------------------- one query


@dataclass
class ResRels:
    rels: list[int]
    num_rel: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged: int
    rel_levels: dict[int, int] = field(default_factory=dict)

    @property
    def num_ret(self) -> int:
        return len(self.rels)

    @property
    def num_rel_levels(self) -> int:
        return max((g for g, n in self.rel_levels.items() if n), default=-1) + 1


def _comp_sim_docno(a: tuple[bytes, float], b: tuple[bytes, float]) -> int:
    if a[1] > b[1]:
        return -1
    if a[1] < b[1]:
        return 1
    return (b[0] > a[0]) - (b[0] < a[0])


def form_res_rels(
    judged: dict[bytes, int], results: list[tuple[bytes, float]], opts: Options
) -> ResRels:
    ranked = sorted(results, key=cmp_to_key(_comp_sim_docno))
    if opts.depth is not None:
        ranked = ranked[: opts.depth]
    docnos = [d for d, _ in ranked]
    if len(set(docnos)) != len(docnos):
        raise Refused(4)  # "duplicate docs"
    rels = []
    for d in docnos:
        g = judged.get(d)
        rels.append(NONPOOL if g is None else (UNJUDGED if g < 0 else g))
    levels: dict[int, int] = {}
    for g in judged.values():
        if g >= 0:
            levels[g] = levels.get(g, 0) + 1
    level = opts.level
    if opts.judged_only:
        rels = [r for r in rels if r >= 0]
        nonpool = unjudged = 0
    else:
        nonpool, unjudged = rels.count(NONPOOL), rels.count(UNJUDGED)
    num_rel_ret = sum(1 for r in rels if r >= 0 and r >= level)
    num_rel = sum(n for g, n in levels.items() if g >= level)
    return ResRels(rels, num_rel, num_rel_ret, nonpool, unjudged, levels)


def _div(a: float, b: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))  # C division: 0/0 is -nan, x/0 inf


def _at_cuts(values: list[float], cuts: Sequence[int], num_ret: int) -> list[float]:
    """The running value after each cutoff (the value at num_ret for those not reached)."""
    return [values[min(c, num_ret)] for c in cuts]


def measure(name: str, rr: ResRels, opts: Options, params: Sequence[float]) -> list[float]:
    level = opts.level
    hits = [r >= level for r in rr.rels]
    so_far = [0]
    for h in hits:
        so_far.append(so_far[-1] + h)
    if name == "num_q":
        return [1.0]
    if name == "num_ret":
        return [float(rr.num_ret)]
    if name == "num_rel":
        return [float(rr.num_rel)]
    if name == "num_rel_ret":
        return [float(rr.num_rel_ret)]
    if name == "num_nonrel_judged_ret":
        return [float(rr.num_ret - rr.num_nonpool - rr.num_unjudged - rr.num_rel_ret)]
    if name in ("map", "gm_map"):
        total = 0.0
        for i, h in enumerate(hits):
            if h:
                total += so_far[i + 1] / (i + 1)
        ap = _div(total, rr.num_rel) if so_far[-1] else 0.0
        return [math.log(max(ap, MIN_GEO_MEAN))] if name == "gm_map" else [ap]
    if name == "Rprec":
        look = min(rr.num_ret, rr.num_rel)
        return [so_far[look] / rr.num_rel if look else 0.0]
    if name == "bpref":
        num_nonrel = sum(rr.rel_levels.get(j, 0) for j in range(level))
        nonrel = 0
        bpref = 0.0
        for r in rr.rels:
            if r in (NONPOOL, UNJUDGED):
                continue
            if 0 <= r < level:
                nonrel += 1
            elif nonrel > 0:
                bpref += 1.0 - _div(min(nonrel, rr.num_rel), min(num_nonrel, rr.num_rel))
            else:
                bpref += 1.0
        return [bpref / rr.num_rel if rr.num_rel else bpref]
    if name == "recip_rank":
        first = next((i for i, h in enumerate(hits) if h), None)
        return [0.0 if first is None else 1.0 / (first + 1)]
    if name == "P":
        return [v / c for v, c in zip(_at_cuts(so_far, params, rr.num_ret), params, strict=True)]  # type: ignore[arg-type]
    if name == "recall":
        if not rr.num_rel:
            return [0.0] * len(params)
        return [v / rr.num_rel for v in _at_cuts(so_far, params, rr.num_ret)]  # type: ignore[arg-type]
    if name == "success":
        return [1.0 if v else 0.0 for v in _at_cuts(so_far, params, rr.num_ret)]  # type: ignore[arg-type]
    if name == "utility":
        if len(params) != 4:
            raise Refused(4)  # "improper number of coefficients", then "Can't calculate"
        a, b, c, d = params
        n = opts.num_docs
        ret, rel, rel_ret = rr.num_ret, rr.num_rel, rr.num_rel_ret
        return [
            a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (n + rel_ret - ret - rel)
        ]
    if name == "set_P":
        return [rr.num_rel_ret / rr.num_ret if rr.num_ret else 0.0]
    if name == "set_recall":
        return [rr.num_rel_ret / rr.num_rel if rr.num_rel else 0.0]
    if name == "ndcg_cut":
        dcg = [0.0]
        for i, r in enumerate(rr.rels):
            dcg.append(dcg[-1] + (r / math.log2(i + 2) if r > 0 else 0.0))
        ideal_gains = [
            g for g in sorted(rr.rel_levels, reverse=True) if g > 0 for _ in range(rr.rel_levels[g])
        ]
        ideal = [0.0]
        for i, g in enumerate(ideal_gains):
            ideal.append(ideal[-1] + g / math.log2(i + 2))
        out = []
        for c in params:
            gain, norm = dcg[min(int(c), rr.num_ret)], ideal[min(int(c), len(ideal_gains))]
            out.append(gain / norm if norm > 0.0 else gain)
        return out
    if name in GAIN_MEASURES:
        return [_gain_measure(name, rr, params)]
    if name == "iprec_at_recall":
        cuts = [int(_libm.lround(p * rr.num_rel)) for p in params]
        values = [0.0] * len(cuts)
        current = len(cuts) - 1
        while current >= 0 and cuts[current] > rr.num_rel_ret:
            current -= 1
        int_precis = _div(rr.num_rel_ret, rr.num_ret)
        rel_so_far = rr.num_rel_ret
        i = rr.num_ret
        while i > 0 and rel_so_far > 0:
            int_precis = max(int_precis, rel_so_far / i)
            if rr.rels[i - 1] >= level:
                while current >= 0 and rel_so_far == cuts[current]:
                    values[current] = int_precis
                    current -= 1
                rel_so_far -= 1
            i -= 1
        while current >= 0:
            values[current] = int_precis
            current -= 1
        return values
    raise AssertionError(name)


def _setup_gains(rr: ResRels, flat: Sequence[float]) -> list[tuple[int, float, int]]:
    """gain_init.c's setup_gains: ``(level, gain, num_at_level)`` by increasing gain; the
    pairs first, then each level 0 .. num_rel_levels - 1 not among them, its gain the level.
    qsort compares gains as ``(int)(g1 - g2)``: the generated gains are whole numbers, so the
    order is the numeric one (equal gains in any order give the same values)."""
    gains = [[int(flat[i]), float(flat[i + 1]), 0] for i in range(0, len(flat), 2)]
    for level in range(rr.num_rel_levels):
        entry = next((e for e in gains if e[0] == level), None)
        if entry is not None:
            entry[2] = rr.rel_levels.get(level, 0)
        else:
            gains.append([level, float(level), rr.rel_levels.get(level, 0)])
    gains.sort(key=lambda e: e[1])
    return [(int(e[0]), float(e[1]), int(e[2])) for e in gains]


def _gain_measure(name: str, rr: ResRels, flat: Sequence[float]) -> float:
    """m_ndcg.c (ndcg, dcg, ideal_dcg), m_ndcg_rel.c and m_Rndcg.c, line by line: the ideal
    ranking walks the levels down from the largest gain, ``num_at_level`` documents each,
    until a gain <= 0; a retrieved document's gain is its level's (0 for unjudged ones)."""
    gains = _setup_gains(rr, flat)

    def get_gain(rel: int) -> float:
        return next((g for level, g, _ in gains if level == rel), 0.0)

    f64 = np.float64
    results_dcg = ideal_dcg = f64(0.0)
    cur = len(gains) - 1
    ideal_gain = gains[cur][1] if cur >= 0 else 0.0
    old_ideal_gain = ideal_gain
    at_level = 0
    total = f64(0.0)
    changes = num_rel = num_rel_ret = 0

    def next_ideal() -> None:
        nonlocal at_level, cur, ideal_gain
        at_level += 1
        while cur >= 0 and at_level > gains[cur][2]:
            at_level = 1
            cur -= 1
            ideal_gain = gains[cur][1] if cur >= 0 else 0.0

    def boundary() -> None:  # Rndcg: an ndcg value where the ideal gain changes
        nonlocal total, changes, old_ideal_gain
        if old_ideal_gain != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old_ideal_gain = ideal_gain

    if name == "Rndcg" and rr.num_rel == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        i = 0
        while i < rr.num_ret and ideal_gain > 0.0:
            gain = get_gain(rr.rels[i])
            if name != "Rndcg" and gain != 0:
                results_dcg += f64(gain) / math.log2(i + 2)
            next_ideal()
            if name == "Rndcg":
                boundary()
                if gain != 0:
                    results_dcg += f64(gain) / math.log2(i + 2)
            if ideal_gain > 0.0:
                num_rel += 1
                ideal_dcg += f64(ideal_gain) / math.log2(i + 2)
            if name == "ndcg_rel" and gain > 0:
                total += results_dcg / ideal_dcg
                num_rel_ret += 1
            i += 1
        tail = i < rr.num_ret
        while i < rr.num_ret:
            gain = get_gain(rr.rels[i])
            if gain != 0:
                results_dcg += f64(gain) / math.log2(i + 2)
            if name == "ndcg_rel" and gain > 0:
                total += results_dcg / ideal_dcg
                num_rel_ret += 1
            i += 1
        if name == "Rndcg" and tail and ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
        while ideal_gain > 0.0:
            next_ideal()
            if name == "Rndcg":
                boundary()
            if ideal_gain > 0.0:
                num_rel += 1
                ideal_dcg += f64(ideal_gain) / math.log2(i + 2)
            i += 1
        if name == "dcg":
            return float(results_dcg)
        if name == "ideal_dcg":
            return float(ideal_dcg)
        if name == "ndcg":
            return float(results_dcg / ideal_dcg) if ideal_dcg > 0.0 else 0.0
        if name == "ndcg_rel":
            total += f64(num_rel - num_rel_ret) * results_dcg / ideal_dcg
            return float(total / f64(num_rel)) if total > 0.0 else 0.0
        return float(total / f64(changes))  # Rndcg: 0/0 is -nan


# --------------------------------------------------------------------------- the whole run


@dataclass
class Options:
    measures: list[str]
    per_query: bool = False
    complete: bool = False
    level: int = 1
    depth: int | None = None
    judged_only: bool = False
    summary: bool = True
    num_docs: int = 0  # -N, read with atol

    def argv(self) -> list[str]:
        args = [a for m in self.measures for a in ("-m", m)]
        args += ["-q"] * self.per_query + ["-c"] * self.complete + ["-J"] * self.judged_only
        args += ["-n"] * (not self.summary) + [f"-l{self.level}"]
        args += ["-N", str(self.num_docs)] if self.num_docs else []
        return args + ([] if self.depth is None else ["-M", str(self.depth)])


def _columns(specs: Sequence[str]) -> list[tuple[str, str, Sequence[float]]]:
    """(measure, printed name, parameters) in trec_eval's order; the first parameters given
    for a measure win; cutoffs sorted."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs:
        name, dot, param = spec.partition(".")
        if dot and not param:
            raise Refused(1)
        if dot:
            params.setdefault(name, param)
        if name == "official":
            marked.update(OFFICIAL)
        elif name in ORDER:
            marked.add(name)
        else:
            raise Refused(1)
    out: list[tuple[str, str, Sequence[float]]] = []
    for name in ORDER:
        if name not in marked:
            continue
        if name == "iprec_at_recall":
            levels = (
                sorted(float(_libc.atof(p.encode())) for p in params[name].split(","))
                if name in params
                else DEFAULTS[name]
            )
            out.extend((name, f"{name}_{x:3.2f}", (x,)) for x in levels)
        elif name in DEFAULTS:
            cuts = (
                sorted(int(_libc.atol(p.encode())) for p in params[name].split(","))
                if name in params
                else DEFAULTS[name]
            )
            if cuts[0] <= 0 or len(set(cuts)) != len(cuts):
                raise Refused(2)
            out.extend((name, f"{name}_{c}", (c,)) for c in cuts)
        elif name in GAIN_MEASURES:  # te_init_meas_s_double_p_pair: the name shows the text
            if name in params:
                pairs = [p.partition("=") for p in params[name].split(",")]
                flat = [
                    v
                    for level, _, gain in pairs
                    for v in (float(_libc.atol(level.encode())), float(_libc.atof(gain.encode())))
                ]
                out.append((name, f"{name}_{params[name]}", flat))
            else:
                out.append((name, name, ()))
        elif name == "utility":  # te_init_meas_s_double_p_double: the name shows the text
            if name in params:
                numbers = tuple(float(_libc.atof(p.encode())) for p in params[name].split(","))
                out.append((name, f"{name}_{params[name]}", numbers))
            else:
                out.append((name, name, UTILITY))
        else:
            out.append((name, name, ()))
    return out


def _fmt(value: float) -> str:
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


@dataclass
class Seen:
    """What the model read and computed, for :func:`_check_with_pytrec`: the judgments and
    rankings per query, the columns, and each evaluated query's values before ``-c`` zeroes
    any (a query the run lacks maps to the stand-in ranking in ``rankings``)."""

    topics: dict[bytes, dict[bytes, int]] = field(default_factory=dict)
    rankings: dict[bytes, list[tuple[bytes, float]]] = field(default_factory=dict)
    columns: list[tuple[str, str, Sequence[float]]] = field(default_factory=list)
    values: dict[bytes, dict[str, float]] = field(default_factory=dict)


def reference(
    qrels_data: bytes, run_data: bytes, opts: Options, seen: Seen | None = None
) -> tuple[int, bytes]:
    """trec_eval 10.0's exit status and standard output (rankscope's deviations applied)."""
    seen = Seen() if seen is None else seen
    try:
        columns = seen.columns = _columns(opts.measures or ["official"])
        judgments = read_qrels(qrels_data)
        results, runid = read_run(run_data)
        # only measures that rank and judge (all but runid and num_q) call form_res_rels,
        # where trec_eval notices a repeated document
        judging = any(name not in ("runid", "num_q") for name, _, _ in columns)
        topics = seen.topics
        for q, d, g in judgments:
            if d in topics.setdefault(q, {}) and judging:
                raise Refused(4)  # found when the query is evaluated (10.0 evaluates all)
            topics[q].setdefault(d, g)
        ranked: dict[bytes, list[tuple[bytes, float]]] = {}
        for q, d, s in results:
            ranked.setdefault(q, []).append((d, s))
        lines: list[bytes] = []
        totals: dict[str, list[float]] = {}
        evaluated = 0
        for q in sorted(topics):
            if q in ranked:
                mine = ranked[q]
            elif opts.complete:
                mine = [(STAND_IN, 1.0)]
            else:
                continue  # rankscope's deviation: trec_eval 9's skip
            rr = form_res_rels(topics[q], mine, opts) if judging else None
            evaluated += 1
            seen.rankings[q] = mine
            values = seen.values[q] = {}
            for name, printed, params in columns:
                if name == "runid":
                    continue
                [v] = [1.0] if rr is None else measure(name, rr, opts, params)
                values[printed] = v
                if q not in ranked and printed in STAND_IN_ZEROED:
                    v = 0.0  # trec_eval.c's clean-up after a stand-in ranking
                totals.setdefault(printed, []).append(v)
                if opts.per_query and name not in ("num_q", "gm_map"):
                    text = str(int(v)) if name in LONGS else _fmt(v)
                    lines.append(f"{printed:<22}\t".encode() + q + f"\t{text}\n".encode())
        if not evaluated:
            raise Refused(4)  # 10.0: "result qid not found" at the first qrels query
    except Refused as refused:
        return refused.status, b""
    if opts.summary:
        n = len(topics) if opts.complete else evaluated
        for name, printed, _ in columns:
            if name == "runid":
                lines.append(b"runid                 \tall\t" + runid + b"\n")
                continue
            total = 0.0
            for v in totals[printed]:
                total += v
            if name == "num_q":
                value = float(n)
            elif name == "num_rel" and opts.complete:
                value = float(sum(1 for _, _, g in judgments if g > 0))  # m_num_rel.c
            elif name in LONGS:
                value = total
            elif name == "gm_map":
                value = math.exp(total / n)
            else:
                value = total / n
            text = str(int(value)) if name in LONGS else _fmt(value)
            lines.append(f"{printed:<22}\tall\t{text}\n".encode())
    return 0, b"".join(lines)


# --------------------------------------------------------------------------- inputs

QIDS = [b"1", b"2", b"10", b"a", b"B.2", b"\xc3\xa9", b"#3", b"-1"]
DOCS = [b"d1", b"d2", b"D1", b"d10", b"a#b", b"x", b"\xc3\xa9t\xc3\xa9", STAND_IN, b"0", b"-"]
SCORES = [b"1", b"2.5", b"-1", b"0", b"1e1", b"+.5", b"0x1p1", b"abc", b"3x", b"inf", b"2.50"]
GRADES = [b"0", b"1", b"2", b"3", b"-1", b"-2", b"2x", b"+1"]
SEPS = [b" ", b"\t", b"  ", b" \t", b"\x0b", b"\x0c", b" \r "]
IGNORED = [b"Q0", b"0", b"q\xa0", b"\xff\xfe", b"Z"]  # what trec_eval never reads
RUNIDS = [b"r", b"run\xa0x", b"R-2"]
MEASURES = [
    "official", "map", "P.1,3,5", "P.2", "recall.2,4", "success.1,2", "ndcg_cut.3,10",
    "num_rel", "num_ret", "num_rel_ret", "Rprec", "recip_rank", "set_P", "set_recall",
    "gm_map", "num_nonrel_judged_ret", "runid", "num_q", "bpref", "iprec_at_recall..2,.5",
    "utility", "utility.2,-1,0.5,1", "utility.0,0,0,1", "utility.1,-1,0,0",
]  # fmt: skip
# gains per level, negative ones too (a judged non-relevant or low grade that costs); whole
# numbers, so that trec_eval's qsort of the gains has one order (see _setup_gains)
GAIN_SPECS = [
    "ndcg", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg", "ndcg.0=-1,1=1,2=3", "ndcg.2=-2",
    "dcg.0=-2,3=1", "ideal_dcg.1=-1,2=4", "ndcg_rel.0=-1,1=2", "ndcg_rel.1=-3,3=1",
    "Rndcg.0=-1,2=5", "Rndcg.1=-1,2=-2,3=0", "ndcg.0=-3,1=0,2=2", "dcg.1=-1",
]  # fmt: skip
MEASURES += GAIN_SPECS
# -c zeroes the first two on a query the run lacks, not the rest (their printed names differ)
ZEROED_OR_NOT = ["num_ret", "utility", "utility.2,-1,0.5,1", "utility.0,0,0,1", "utility.1,-1,0,0"]


@st.composite
def line(draw: st.DrawFn, words: list[bytes]) -> bytes:
    out = draw(st.sampled_from([b"", b" ", b"\t"]))
    for i, w in enumerate(words):
        out += (draw(st.sampled_from(SEPS)) if i else b"") + w
    return out + draw(st.sampled_from([b"", b" ", b"\r"]))


@st.composite
def case(
    draw: st.DrawFn, lacking: bool = False, gains: bool = False
) -> tuple[bytes, bytes, Options]:
    """One input; ``lacking``: under ``-c``, with a qrels query the run lacks and a measure
    whose value on it ``-c`` may zero (``num_ret``, ``utility``); ``gains``: the measures are
    gain measures (:data:`GAIN_SPECS`), most with negative gains."""

    # hypothesis favours the ends of a range: rare events are drawn as a value inside one
    def rarely(n: int) -> bool:
        return draw(st.integers(0, n)) == n // 2

    qrels_lines: list[bytes] = []
    judged = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    for q in judged:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
        if rarely(20):
            docs.append(docs[0])  # a repeated judgment
        for d in docs:
            words = [q, draw(st.sampled_from(IGNORED)), d, draw(st.sampled_from(GRADES))]
            qrels_lines.append(draw(line(words)))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(qrels_lines) - 1))
        qrels_lines.insert(at, b"# a comment")
    if qrels_lines[-1].startswith(b"#"):  # trec_eval reads past the end after a final comment
        qrels_lines[-1] = b" " + qrels_lines[-1]
    run_lines: list[bytes] = []
    ranked = [q for q in judged if not rarely(4)]  # a qrels query the run lacks, now and then
    if lacking:
        ranked = [q for q in ranked if q != judged[-1]]
    ranked += draw(st.lists(st.sampled_from(QIDS), max_size=2))  # queries without judgments
    for q in dict.fromkeys(ranked):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
        if rarely(20):
            docs.append(docs[-1])  # a repeated document
        for d in docs:
            words = [q, draw(st.sampled_from(IGNORED)), d, draw(st.sampled_from(IGNORED))]
            words += [draw(st.sampled_from(SCORES)), draw(st.sampled_from(RUNIDS))]
            words += draw(st.lists(st.sampled_from(IGNORED), max_size=2))
            run_lines.append(draw(line(words)))
    run_lines = draw(st.permutations(run_lines))
    for extra in draw(st.lists(st.sampled_from([b"", b"  ", b"# note", b"\t# x y"]), max_size=2)):
        run_lines.insert(draw(st.integers(0, len(run_lines))), extra)
    if rarely(30):
        run_lines.append(b"1 Q0 short")  # malformed
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    qrels = end.join(qrels_lines) + draw(st.sampled_from([end, b""]))
    run = end.join(run_lines) + end
    measures = draw(st.lists(st.sampled_from(GAIN_SPECS if gains else MEASURES), max_size=4))
    if lacking:
        measures.insert(draw(st.integers(0, len(measures))), draw(st.sampled_from(ZEROED_OR_NOT)))
    if rarely(30):
        measures.append(draw(st.sampled_from(["nope", "utility.1,2"])))
    opts = Options(
        measures,
        per_query=draw(st.booleans()),
        complete=lacking or draw(st.booleans()),
        level=draw(st.sampled_from([1, 0, 1, 2])),
        depth=draw(st.sampled_from([None, None, 0, 1, 2, 3, 10])),
        judged_only=rarely(4),
        summary=not rarely(6),
        num_docs=draw(st.sampled_from([0, 0, 5, 30])),
    )
    return qrels, run, opts


def _pytrec_spec(name: str, printed: str, params: Sequence[float]) -> tuple[str, str] | None:
    """The pytrec_eval measure and result key for one of the model's columns (``None``: a
    column pytrec_eval cannot compute: runid, and utility given coefficients, which its
    parameter parser cannot read when negative)."""
    if name == "runid" or (name == "utility" and printed != name):
        return None
    if name in GAIN_MEASURES:  # trec_eval 9 has no dcg, and crashes on gain parameters
        return (name, name) if printed == name and name not in ("dcg", "ideal_dcg") else None
    if name == "iprec_at_recall":
        return f"{name}.{params[0]!r}", printed
    if name in DEFAULTS:
        return f"{name}.{int(params[0])}", printed
    return name, name


def _top(ranking: list[tuple[bytes, float]], depth: int | None) -> list[tuple[bytes, float]]:
    return sorted(ranking, key=cmp_to_key(_comp_sim_docno))[:depth]


def _old_cut(p: float, r: int) -> int:
    return int(p * r + 0.9)  # trec_eval 9 (pytrec_eval); 10 uses lround(p * r)


def _check_with_pytrec(opts: Options, seen: Seen, status: int) -> int:
    """The model's per-query values against pytrec_eval's, on every query of a case it can run;
    returns the number of values compared.

    pytrec_eval scores one query at a time from dictionaries, so it checks the measures, not
    reading, options or printing. It cannot run: a case trec_eval refuses (duplicates...),
    ``-l`` below 1, or a query judged only negatively (it crashes); it has no ``-M``, so it is
    handed the model's top ``-M`` documents; it rounds ``iprec_at_recall``'s cutoffs as
    trec_eval 9 did (compared where both roundings agree) and has no ``-N`` (so no ``utility``
    with coefficients). A query the run lacks is given the stand-in ranking that trec_eval's
    ``-c`` scores.
    """
    if status != 0 or opts.level < 1 or not seen.values:
        return 0
    queries = [q for q in seen.values if any(g >= 0 for g in seen.topics[q].values())]
    specs = {c[1]: _pytrec_spec(*c) for c in seen.columns}
    wanted = {s[0] for s in specs.values() if s is not None}
    if not queries or not wanted:
        return 0
    qrels = {q.decode(): {d.decode(): g for d, g in seen.topics[q].items()} for q in queries}
    run = {
        q.decode(): {d.decode(): s for d, s in _top(seen.rankings[q], opts.depth)} for q in queries
    }
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, wanted, relevance_level=opts.level, judged_docs_only_flag=opts.judged_only
    )
    theirs = evaluator.evaluate(run)
    compared = 0
    for q in queries:
        num_rel = sum(1 for g in seen.topics[q].values() if g >= opts.level)
        for (name, printed, params), spec in zip(seen.columns, specs.values(), strict=True):
            if spec is None:
                continue
            if name == "iprec_at_recall" and _old_cut(params[0], num_rel) != int(
                _libm.lround(params[0] * num_rel)
            ):
                continue
            want, got = theirs[q.decode()][spec[1]], seen.values[q][printed]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15, nan_ok=True), (q, printed)
            compared += 1
    return compared


def dropin(qrels: bytes, run: bytes, opts: Options, tmp: Path) -> tuple[int, bytes]:
    (tmp / "qrels").write_bytes(qrels)
    (tmp / "run").write_bytes(run)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    status = run_trec_eval([*opts.argv(), str(tmp / "qrels"), str(tmp / "run")], out, io.StringIO())
    out.flush()
    return status, out.buffer.getvalue()  # type: ignore[attr-defined]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(example=case())
def test_dropin_matches_the_reference(
    example: tuple[bytes, bytes, Options], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _check(*example, tmp_path_factory.mktemp("fuzz"))


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(example=case(lacking=True))
def test_complete_matches_the_reference_on_queries_the_run_lacks(
    example: tuple[bytes, bytes, Options], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _check(*example, tmp_path_factory.mktemp("fuzz"))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(example=case(gains=True))
def test_gain_measures_match_the_reference(
    example: tuple[bytes, bytes, Options], tmp_path_factory: pytest.TempPathFactory
) -> None:
    # negative gains lower the DCG (a DCG that kept only positive gains passed every other test)
    _check(*example, tmp_path_factory.mktemp("fuzz"))


def _check(qrels: bytes, run: bytes, opts: Options, tmp: Path) -> None:
    seen = Seen()
    want = reference(qrels, run, opts, seen)
    _check_with_pytrec(opts, seen, want[0])
    got = dropin(qrels, run, opts, tmp)
    assert got[0] == want[0], (got, want)
    assert got[1] == want[1]


# --------------------------------------------------------------- the cases the issue names


def _both(qrels: bytes, run: bytes, opts: Options, tmp: Path) -> tuple[int, bytes]:
    want = reference(qrels, run, opts)
    got = dropin(qrels, run, opts, tmp)
    assert got == want
    return got


@pytest.mark.parametrize(
    ("level", "per_query", "summary"),
    [(0, b"2", b"1"), (1, b"1", b"1"), (2, b"0", b"1")],
)
def test_complete_num_rel_summary_counts_grades_above_zero(
    level: int, per_query: bytes, summary: bytes, tmp_path: Path
) -> None:
    qrels, run = b"1 0 d1 0\n1 0 d2 1\n", b"1 Q0 d1 1 1 r\n"
    opts = Options(["num_rel"], per_query=True, complete=True, level=level)
    _, out = _both(qrels, run, opts, tmp_path)
    assert out == (
        b"num_rel               \t1\t"
        + per_query
        + b"\nnum_rel               \tall\t"
        + summary
        + b"\n"
    )


def test_complete_num_rel_under_zscores(tmp_path: Path) -> None:
    (tmp_path / "z").write_text("1 num_rel 1 2\n")
    (tmp_path / "q").write_bytes(b"1 0 d1 0\n1 0 d2 1\n")
    (tmp_path / "r").write_bytes(b"1 Q0 d1 1 1 r\n")
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    args = ["-q", "-c", "-l0", "-m", "num_rel", "-Z", str(tmp_path / "z")]
    assert run_trec_eval([*args, str(tmp_path / "q"), str(tmp_path / "r")], out, io.StringIO()) == 0
    out.flush()
    # per query: (2 - 1) / 2; summary: the count of grades above 0, not a z-score sum
    assert out.buffer.getvalue() == (  # type: ignore[attr-defined]
        b"Znum_rel" + b" " * 15 + b"\t1\t0.5000\n" + b"Znum_rel" + b" " * 15 + b"\tall\t1.0000\n"
    )


@pytest.mark.parametrize(
    ("measure", "value"),
    [
        # DCG -1/log2(2) + 1/log2(3) + 0 + 3/log2(5) = 0.9230 over the ideal 3 + 1/log2(3)
        ("ndcg.0=-1,1=1,2=3", b"0.2542"),  # 0.5296 with the negative gain dropped
        ("dcg.0=-2,3=1", b"-0.5077"),  # 1.4923
        ("ndcg_rel.0=-1,1=2", b"0.2123"),  # 0.5189
        ("Rndcg.0=-1,2=5", b"0.0171"),  # 0.2022
        ("ndcg", b"0.5672"),  # the negative grade of d4 is no gain: it is unjudged
        ("Rndcg.1=-1,2=-2,3=0", b"  -nan"),  # no positive gain: 0 / 0 R-levels
    ],
)
def test_negative_gains_count(measure: str, value: bytes, tmp_path: Path) -> None:
    qrels = b"1 0 d1 0\n1 0 d2 1\n1 0 d3 2\n1 0 d4 -1\n"
    run = b"1 Q0 d1 1 4 r\n1 Q0 d2 2 3 r\n1 Q0 d4 3 2 r\n1 Q0 d3 4 1 r\n"
    _, out = _both(qrels, run, Options([measure]), tmp_path)
    assert out == f"{measure.replace('.', '_', 1):<22}\tall\t".encode() + value + b"\n"


def test_bytes_that_are_not_utf8_where_trec_eval_never_looks(tmp_path: Path) -> None:
    qrels = b"1 \xff d1 1\n"
    run = b"1 Q\xa0 d1 \xfe 1 r\xa0x trailing \xc3\n"
    status, out = _both(qrels, run, Options(["official"]), tmp_path)
    assert status == 0
    assert out.startswith(b"runid                 \tall\tr\xa0x\n")


@pytest.mark.parametrize(
    ("qrels", "run", "measures", "status"),
    [
        (b"1 0 d1 1\n", b"1 Q0 d1 1 1 r\n1 Q0 d1 2 0.5 r\n", ["map"], 4),  # duplicate doc
        (b"1 0 d1 1\n1 0 d1 0\n", b"1 Q0 d1 1 1 r\n", ["map"], 4),  # duplicate judgment
        (b"2 0 d1 1\n", b"1 Q0 d1 1 1 r\n", ["map"], 4),  # no query in common
        (b"1 0 d1 1\n", b"1 Q0 d1 1 1 r\n", ["nope"], 1),  # unknown measure
        (b"1 0 d1 1\n", b"1 Q0 d1 1 1 r\n", ["P."], 1),  # empty parameters
        (b"1 0 d1 1\n", b"1 Q0 d1 1 1 r\n", ["P.0"], 2),  # bad parameters
        (b"1 0 d1 1\n", b"1 Q0 d1\n", ["map"], 2),  # malformed line
        (b"", b"1 Q0 d1 1 1 r\n", ["map"], 2),  # empty file
    ],
)
def test_exit_statuses_are_trec_evals(
    qrels: bytes, run: bytes, measures: list[str], status: int, tmp_path: Path
) -> None:
    got, out = _both(qrels, run, Options(measures), tmp_path)
    assert (got, out) == (status, b"")


def test_a_duplicate_below_the_depth_or_outside_the_qrels_is_not_read(tmp_path: Path) -> None:
    qrels = b"1 0 d1 1\n"
    run = b"1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n1 Q0 d2 3 0 r\n9 Q0 x 1 1 r\n9 Q0 x 2 1 r\n"
    opts = Options(["P.1"], depth=2)
    assert _both(qrels, run, opts, tmp_path) == (0, b"P_1                   \tall\t1.0000\n")
    assert _both(qrels, run, Options(["P.1"], depth=3), tmp_path)[0] == 4


def test_documented_deviations_from_trec_eval_10(tmp_path: Path) -> None:
    # a qrels query the run lacks is skipped without -c (10.0 stops: "not found in qrels")
    qrels = b"1 0 d1 1\n2 0 d1 1\n"
    out = _both(qrels, b"2 Q0 d1 1 1 r\n", Options(["num_q"]), tmp_path)
    assert out == (0, b"num_q                 \tall\t1\n")
    # a first query judged only negatively is evaluated (10.0: "Can't calculate measure")
    qrels = b"1 0 d1 -1\n2 0 d1 1\n"
    out = _both(qrels, b"1 Q0 d1 1 1 r\n2 Q0 d1 1 1 r\n", Options(["map"]), tmp_path)
    assert out == (0, b"map                   \tall\t0.5000\n")


def test_debug_query_not_in_the_qrels_exits_7(tmp_path: Path) -> None:
    (tmp_path / "q").write_bytes(b"1 0 d1 1\n")
    (tmp_path / "r").write_bytes(b"1 Q0 d1 1 1 r\n")
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    args = ["-D", "0.5", "-m", "map", str(tmp_path / "q"), str(tmp_path / "r")]
    assert run_trec_eval(args, out, io.StringIO()) == 7  # "No queries with both results..."


def test_repeated_documents_go_unnoticed_by_query_counts(tmp_path: Path) -> None:
    # runid and num_q never rank the documents: trec_eval does not see the repeats
    qrels, run = b"1 0 d1 1\n1 0 d1 0\n", b"1 Q0 d1 1 1 r\n1 Q0 d1 2 0.5 r\n"
    assert _both(qrels, run, Options(["num_q", "runid"]), tmp_path) == (
        0,
        b"runid                 \tall\tr\nnum_q                 \tall\t1\n",
    )
    assert _both(qrels, run, Options(["num_q", "map"]), tmp_path)[0] == 4


@pytest.mark.parametrize(
    ("measures", "expected"),
    [
        (  # parameters are appended to the printed name: nothing cleared but num_ret and unj
            [
                "utility.2,-1,0.5,1",
                "rbp_resid.p=0.5",
                "relstring.3",
                "unj.3",
                "num_ret",
                "ideal_dcg",
            ],
            "num_ret               \t1\t2\n"
            "relstring_3           \t1\t'1-'\n"
            "utility_2,-1,0.5,1    \t1\t4.0000\n"
            "ideal_dcg             \t1\t1.0000\n"
            "rbp_resid_p=0.5       \t1\t0.5000\n"
            "unj_3                 \t1\t0.3333\n"
            "num_ret               \t2\t0\n"
            "relstring_3           \t2\t'-'\n"
            "utility_2,-1,0.5,1    \t2\t2.0000\n"
            "ideal_dcg             \t2\t2.6309\n"
            "rbp_resid_p=0.5       \t2\t1.0000\n"
            "unj_3                 \t2\t0.0000\n"
            "num_ret               \tall\t2\n"
            "utility_2,-1,0.5,1    \tall\t3.0000\n"
            "ideal_dcg             \tall\t1.8155\n"
            "rbp_resid_p=0.5       \tall\t0.7500\n"
            "unj_3                 \tall\t0.1667\n",
        ),
        (  # printed as exactly utility, rbp_resid, relstring: cleared
            ["utility", "rbp_resid", "relstring", "num_ret"],
            "num_ret               \t1\t2\n"
            "relstring             \t1\t'1-'\n"
            "utility               \t1\t0.0000\n"
            "rbp_resid             \t1\t0.9000\n"
            "num_ret               \t2\t0\n"
            "relstring             \t2\t''\n"
            "utility               \t2\t0.0000\n"
            "rbp_resid             \t2\t0.0000\n"
            "num_ret               \tall\t2\n"
            "utility               \tall\t0.0000\n"
            "rbp_resid             \tall\t0.4500\n",
        ),
    ],
)
def test_complete_clears_only_the_names_trec_eval_clears(
    measures: list[str], expected: str, tmp_path: Path
) -> None:
    # trec_eval 10.0's output.  Query 2 is missing from the run: -c scores it on the stand-in
    # ranking (one unjudged document), then clears the values printed as exactly num_ret,
    # utility, rbp_resid or relstring, and unj_*.  With -N 5 and R = 2 (d1, d3), utility
    # 2,-1,0.5,1 is 2·0 - 1·1 + 0.5·2 + 1·(5 - 1 - 2) = 2; ideal_dcg is never 0 there.
    (tmp_path / "q").write_bytes(b"1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n2 0 d3 2\n2 0 d4 0\n")
    (tmp_path / "r").write_bytes(b"1 Q0 d1 1 2 r\n1 Q0 d5 2 1 r\n")
    out = io.StringIO()
    args = ["-q", "-c", "-N", "5", *(a for m in measures for a in ("-m", m))]
    assert run_trec_eval([*args, str(tmp_path / "q"), str(tmp_path / "r")], out, io.StringIO()) == 0
    assert out.getvalue() == expected
