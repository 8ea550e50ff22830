"""trec_eval 10's measures, exactly, for all queries at once.

:func:`trec_measures` takes trec_eval ``-m`` arguments (``"official"``, ``"all_trec"``, ``"map"``,
``"P.5,10"``, ``"ndcg_cut.10"``, ``"ndcg.1=3,2=9"``, ``"iprec_at_recall..10,.20"``,
``"relstring.20"``...) and returns a :class:`TrecEvaluation` whose :meth:`~TrecEvaluation.format`
is byte-identical to trec_eval's standard output.  Semantics follow trec_eval 10.0 (commit
f4253652): measure order, parameter parsing and sorting, output names, how each measure is
averaged (``num_*`` are summed, ``gm_*`` use a geometric mean with floor 0.00001), ``-c``
(queries of the qrels missing from the run are evaluated against a one-document ranking of an
unknown document, then ``num_ret``, ``utility``, ``relstring``, ``unj*`` and ``rbp_resid`` are
zeroed, as trec_eval does), ``-M``, ``-l``, ``-J``, ``-N`` and ``-Z``.

Arithmetic follows trec_eval's C code where it matters for the printed digits: scores are
doubles, sums are accumulated left to right in rank order (not numpy's pairwise sums),
``log2``/``log``/``exp`` come from the C library, ``rbp``'s ``p**i`` is a running product, and
recall fractions become counts with ``lround`` (``iprec_at_recall``, ``11pt_avg``, trec_eval 10)
or ``(long)(x + 0.9)`` (``Rprec_mult``).

Where trec_eval's behaviour is undefined or not reproducible, this module picks one and says so:
``rbp`` assumes the uninitialised min/max of its gain rescaling start at 0 (what the reference
outputs show); gain levels are ordered by trec_eval's truncating comparator with a stable sort;
a negative ``-M`` is refused (trec_eval would compute with a negative list length); debug
traces (``-D``) are not printed.  The preference (``-R prefs``, ``qrels_prefs``),
multi-judgment (``-R qrels_jg``) and ``yaap`` measures are not provided; asking for them raises
:class:`~rankscope.errors.MeasureError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from rankscope.data.qrels import Qrels, _byte_key
from rankscope.data.run import Run
from rankscope.errors import InputError, MeasureError
from rankscope.metrics import trec_compute as tc
from rankscope.metrics.align import Aligned, align
from rankscope.metrics.trec_segments import offsets_from_counts

Floats = NDArray[np.float64]
Pairs = tuple[tuple[str, float], ...]

_LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # the document trec_eval -c ranks for a missing query
MISSING_ZSCORE = -1000000.0


@dataclass(frozen=True)
class _Def:
    name: str
    params: str  # none | long_cuts | double_cuts | double_params | pairs
    default: tuple[float, ...]
    per_query: str  # double | long | none | relstring
    average: str  # mean | sum | gm | none | num_q | runid


_DEFS: tuple[_Def, ...] = (
    _Def("runid", "none", (), "none", "runid"),
    _Def("num_q", "none", (), "none", "num_q"),
    _Def("num_ret", "none", (), "long", "sum"),
    _Def("num_rel", "none", (), "long", "sum"),
    _Def("num_rel_ret", "none", (), "long", "sum"),
    _Def("map", "none", (), "double", "mean"),
    _Def("gm_map", "none", (), "none", "gm"),
    _Def("Rprec", "none", (), "double", "mean"),
    _Def("bpref", "none", (), "double", "mean"),
    _Def("recip_rank", "none", (), "double", "mean"),
    _Def("iprec_at_recall", "double_cuts", _RECALL_POINTS, "double", "mean"),
    _Def("P", "long_cuts", _LONG_CUTS, "double", "mean"),
    _Def("relstring", "double_params", (10.0,), "relstring", "none"),
    _Def("recall", "long_cuts", _LONG_CUTS, "double", "mean"),
    _Def("infAP", "none", (), "double", "mean"),
    _Def("gm_bpref", "none", (), "none", "gm"),
    _Def(
        "Rprec_mult",
        "double_cuts",
        (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        "double",
        "mean",
    ),
    _Def("utility", "double_params", (1.0, -1.0, 0.0, 0.0), "double", "mean"),
    _Def("11pt_avg", "double_params", _RECALL_POINTS, "double", "mean"),
    _Def("binG", "none", (), "double", "mean"),
    _Def("G", "pairs", (), "double", "mean"),
    _Def("dcg", "pairs", (), "double", "mean"),
    _Def("ideal_dcg", "pairs", (), "double", "mean"),
    _Def("ndcg", "pairs", (), "double", "mean"),
    _Def("ndcg_rel", "pairs", (), "double", "mean"),
    _Def("Rndcg", "pairs", (), "double", "mean"),
    _Def("ndcg_cut", "long_cuts", _LONG_CUTS, "double", "mean"),
    _Def("map_cut", "long_cuts", _LONG_CUTS, "double", "mean"),
    _Def("relative_P", "long_cuts", _LONG_CUTS, "double", "mean"),
    _Def("success", "long_cuts", (1, 5, 10), "double", "mean"),
    _Def("set_P", "none", (), "double", "mean"),
    _Def("set_relative_P", "none", (), "double", "mean"),
    _Def("set_recall", "none", (), "double", "mean"),
    _Def("set_map", "none", (), "double", "mean"),
    _Def("set_F", "double_params", (1.0,), "double", "mean"),
    _Def("num_nonrel_judged_ret", "none", (), "long", "sum"),
    _Def("rbp", "pairs", (), "double", "mean"),
    _Def("rbp_resid", "pairs", (), "double", "mean"),
    _Def("unj", "long_cuts", (5, 10, 20), "double", "mean"),
)
_BY_NAME = {d.name: d for d in _DEFS}

_UNSUPPORTED = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
)  # fmt: skip

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
        "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
        "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
}  # fmt: skip
_UNSUPPORTED_NICKNAMES = ("all_prefs", "prefs", "qrels_jg")


# --------------------------------------------------------------------------- C conversions


_ATOF = re.compile(
    r"[ \t\n\v\f\r]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)
_ATOL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")


def c_atof(text: str) -> float:
    """C ``atof``: the longest numeric prefix, 0.0 when there is none."""
    m = _ATOF.match(text)
    return float(m.group(1)) if m else 0.0


def c_atol(text: str) -> int:
    """C ``atol``: the longest integer prefix, 0 when there is none."""
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def format_double(value: float) -> str:
    """C ``printf("%6.4f")``, including glibc's ``-nan``."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


def _c_long(value: float) -> int:
    if math.isnan(value) or math.isinf(value):
        return -(2**63)
    return int(value)


# --------------------------------------------------------------------------- measure requests


@dataclass(frozen=True)
class _Request:
    marked: tuple[str, ...]  # measure names in trec_eval's order
    params: dict[str, str]  # first parameter string given for each measure


def parse_measures(specs: Sequence[str]) -> _Request:
    """Read trec_eval ``-m`` arguments; an unknown name raises MeasureError."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs or ("official",):
        name, dot, param = spec.partition(".")
        if dot:
            if param == "":
                raise MeasureError(
                    f"measure {spec!r} has an empty parameter list after '.'; give values "
                    f"such as 'P.5,10' or drop the '.'"
                )
            params.setdefault(name, param)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in _BY_NAME:
            marked.add(name)
        elif name in _UNSUPPORTED or name in _UNSUPPORTED_NICKNAMES:
            raise MeasureError(
                f"trec_eval measure {name!r} needs preference or multi-judgment qrels "
                f"(-R prefs, qrels_prefs, qrels_jg), which rankscope does not read"
            )
        else:
            raise MeasureError(
                f"unknown trec_eval measure {spec!r}; use a measure name such as 'map', "
                f"'P.10' or 'ndcg_cut.10', or a set: {', '.join(NICKNAMES)}"
            )
    order = tuple(d.name for d in _DEFS if d.name in marked)
    return _Request(order, params)


def _long_cuts(name: str, text: str) -> list[int]:
    cuts = sorted(c_atol(p) for p in text.split(","))
    if cuts[0] <= 0:
        raise MeasureError(f"measure {name!r}: cutoffs must be positive (got {text!r})")
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"measure {name!r}: duplicate cutoffs in {text!r}")
    return cuts


def _double_cuts(name: str, text: str) -> list[float]:
    cuts = sorted(c_atof(p) for p in text.split(","))
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"measure {name!r}: duplicate cutoffs in {text!r}")
    return cuts


def _pairs(name: str, text: str) -> Pairs:
    # trec_eval's check: every comma-separated item must be name=value.
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise MeasureError(
            f"measure {name!r}: malformed parameters {text!r}; give level=gain pairs "
            f"such as '{name}.1=3,2=9'"
        )
    out: list[tuple[str, float]] = []
    for item in text.split(","):
        key, _, value = item.partition("=")
        out.append((key, c_atof(value)))
    return tuple(out)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class _Column:
    name: str
    per_query: str  # double | long | none | relstring
    average: str


@dataclass(frozen=True)
class TrecEvaluation:
    """Per-query values and trec_eval's summary ("all") values of one run."""

    run_name: str
    query_ids: tuple[str, ...]
    per_query: dict[str, Floats]
    summary: dict[str, float | str]
    relstrings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    columns: tuple[_Column, ...] = ()
    zscores: bool = False

    def format(self, per_query: bool = False, summary: bool = True) -> str:
        """trec_eval's standard output (``-q`` for ``per_query``; ``-n`` is ``summary=False``)."""
        lines: list[str] = []
        z = "Z" if self.zscores else ""
        if per_query:
            printed = [c for c in self.columns if c.per_query != "none"]
            for i, qid in enumerate(self.query_ids):
                for col in printed:
                    if col.per_query == "relstring":
                        lines.append(f"{col.name:<22}\t{qid}\t'{self.relstrings[col.name][i]}'\n")
                    elif col.per_query == "long" and not self.zscores:
                        value = _c_long(float(self.per_query[col.name][i]))
                        lines.append(f"{col.name:<22}\t{qid}\t{value}\n")
                    else:
                        value_f = float(self.per_query[col.name][i])
                        lines.append(f"{z}{col.name:<22}\t{qid}\t{format_double(value_f)}\n")
        if summary:
            for col in self.columns:
                if col.average == "none":
                    continue
                total = self.summary[col.name]
                if col.average == "runid":
                    lines.append(f"{'runid':<22}\tall\t{total}\n")
                elif col.average in ("sum", "num_q") and not self.zscores:
                    lines.append(f"{col.name:<22}\tall\t{_c_long(float(total))}\n")
                else:
                    lines.append(f"{z}{col.name:<22}\tall\t{format_double(float(total))}\n")
        return "".join(lines)

    def mean(self) -> dict[str, float]:
        """The numeric summary values (``runid`` left out)."""
        return {k: float(v) for k, v in self.summary.items() if not isinstance(v, str)}


def trec_measures(
    qrels: Qrels,
    run: Run,
    specs: Sequence[str] = ("official",),
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    average_over_qrels: bool = False,
    num_docs_in_coll: int = 0,
    zscores: Mapping[tuple[str, str], tuple[float, float]] | None = None,
    aligned: Aligned | None = None,
) -> TrecEvaluation:
    """Evaluate ``run`` against ``qrels`` as trec_eval 10 does.

    ``specs`` are trec_eval ``-m`` arguments; ``depth`` is ``-M``, ``rel_level`` ``-l``,
    ``judged_only`` ``-J``, ``average_over_qrels`` ``-c``, ``num_docs_in_coll`` ``-N`` and
    ``zscores`` the content of a ``-Z`` file (``(query, measure) -> (mean, stddev)``, see
    :func:`read_zscores`).  ``aligned``: what ``align(qrels, run, depth=depth,
    rel_level=rel_level, judged_only=judged_only)`` returns, when the caller has it already
    (not used when ``average_over_qrels`` adds queries the run lacks).  Raises
    :class:`~rankscope.errors.InputError` when no query is in both the run and the qrels
    (trec_eval's "No queries with both results and relevance info").
    """
    request = parse_measures(specs)
    missing_set: set[str] = set()
    if average_over_qrels:
        in_run = set(run.query_ids)
        missing = [q for q in qrels.query_ids if q not in in_run]
        if missing:
            run = _with_missing(run, missing)
            missing_set = set(missing)
            aligned = None  # aligned to the run without the added queries
    if aligned is None:
        aligned = align(qrels, run, depth=depth, rel_level=rel_level, judged_only=judged_only)
    if not aligned.query_ids:
        raise InputError(
            "no query is in both the run and the qrels",
            path=run.source,
            hint="Check that the run and the qrels use the same query ids",
        )
    ctx = tc.Ctx(aligned, rel_level)
    bogus = np.array([q in missing_set for q in aligned.query_ids], dtype=np.bool_)
    columns: list[_Column] = []
    per_query: dict[str, Floats] = {}
    strings: dict[str, tuple[str, ...]] = {}
    for name in request.marked:
        d = _BY_NAME[name]
        for out_name, values in _compute(d, request.params.get(name), ctx, num_docs_in_coll):
            columns.append(_Column(out_name, d.per_query, d.average))
            if isinstance(values, list):
                strings[out_name] = tuple(
                    "" if b and out_name == "relstring" else s
                    for s, b in zip(values, bogus.tolist(), strict=True)
                )
                continue
            if bogus.any() and _cleared_for_missing(out_name):
                values = np.where(bogus, 0.0, values)
            per_query[out_name] = values
    if zscores is not None:
        per_query = _to_zscores(per_query, aligned.query_ids, zscores)
    summary = _summarise(columns, per_query, run.name, aligned.num_queries)
    public = {c.name: per_query[c.name] for c in columns if c.per_query in ("double", "long")}
    return TrecEvaluation(
        run_name=run.name,
        query_ids=aligned.query_ids,
        per_query=public,
        summary=summary,
        relstrings=strings,
        columns=tuple(columns),
        zscores=zscores is not None,
    )


def _cleared_for_missing(name: str) -> bool:
    return name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")


def _compute(
    d: _Def, param: str | None, ctx: tc.Ctx, num_docs: int
) -> list[tuple[str, Floats | list[str]]]:
    name = d.name
    nq = ctx.nq
    if d.params == "long_cuts":
        cuts = _long_cuts(name, param) if param else [int(x) for x in d.default]
        fn: Callable[[tc.Ctx, list[int]], list[Floats]] = _LONG_FNS[name]
        return list(zip([f"{name}_{c}" for c in cuts], fn(ctx, cuts), strict=True))
    if d.params == "double_cuts":
        dcuts = _double_cuts(name, param) if param else list(d.default)
        names = [f"{name}_{c:3.2f}" for c in dcuts]
        values = (
            tc.m_iprec_at_recall(ctx, dcuts)
            if name == "iprec_at_recall"
            else tc.m_rprec_mult(ctx, dcuts)
        )
        return list(zip(names, values, strict=True))
    out_name = f"{name}_{param}" if param and d.params != "none" else name
    if d.params == "double_params":
        values_p = [c_atof(p) for p in param.split(",")] if param else list(d.default)
        if name == "relstring":
            return [(out_name, tc.relstrings(ctx, values_p[0]))]
        if name == "utility":
            if len(values_p) != 4:
                raise MeasureError(
                    f"measure 'utility' takes 4 coefficients (got {param!r}), e.g. utility.1,-1,0,0"
                )
            return [(out_name, tc.m_utility(ctx, values_p, num_docs))]
        if name == "11pt_avg":
            return [(out_name, tc.m_11pt_avg(ctx, values_p))]
        return [(out_name, tc.m_set_F(ctx, values_p))]
    if d.params == "pairs":
        pairs = _pairs(name, param) if param else ()
        return [(out_name, _PAIR_FNS[name](ctx, pairs))]
    simple = _SIMPLE_FNS.get(name)
    if simple is not None:
        return [(name, simple(ctx))]
    if name == "num_q":
        return [(name, np.ones(nq, dtype=np.float64))]
    if name == "runid":
        return [(name, np.zeros(nq, dtype=np.float64))]
    raise MeasureError(f"measure {name!r} is not implemented")  # pragma: no cover


def _dcg(ctx: tc.Ctx, pairs: Pairs) -> Floats:
    return tc.dcg_and_ideal(ctx, pairs)[0]


def _ideal_dcg(ctx: tc.Ctx, pairs: Pairs) -> Floats:
    return tc.dcg_and_ideal(ctx, pairs)[1]


_LONG_FNS: dict[str, Callable[[tc.Ctx, list[int]], list[Floats]]] = {
    "P": tc.m_P,
    "recall": tc.m_recall,
    "ndcg_cut": tc.m_ndcg_cut,
    "map_cut": tc.m_map_cut,
    "relative_P": tc.m_relative_P,
    "success": tc.m_success,
    "unj": tc.m_unj,
}
_PAIR_FNS: dict[str, Callable[[tc.Ctx, Pairs], Floats]] = {
    "G": tc.m_G,
    "dcg": _dcg,
    "ideal_dcg": _ideal_dcg,
    "ndcg": tc.m_ndcg,
    "ndcg_rel": tc.m_ndcg_rel,
    "Rndcg": tc.m_rndcg,
    "rbp": tc.m_rbp,
    "rbp_resid": tc.m_rbp_resid,
}
_SIMPLE_FNS: dict[str, Callable[[tc.Ctx], Floats]] = {
    "num_ret": lambda c: c.num_ret.astype(np.float64),
    "num_rel": lambda c: c.num_rel.astype(np.float64),
    "num_rel_ret": lambda c: c.num_rel_ret.astype(np.float64),
    "map": tc.m_map,
    "gm_map": tc.m_gm_map,
    "Rprec": tc.m_rprec,
    "bpref": tc.m_bpref,
    "recip_rank": tc.m_recip_rank,
    "infAP": tc.m_infap,
    "gm_bpref": tc.m_gm_bpref,
    "binG": tc.m_binG,
    "set_P": tc.m_set_P,
    "set_relative_P": tc.m_set_relative_P,
    "set_recall": tc.m_set_recall,
    "set_map": tc.m_set_map,
    "num_nonrel_judged_ret": tc.m_num_nonrel_judged_ret,
}


def _seq_total(values: Floats) -> float:
    """Left-to-right sum over queries, as trec_eval accumulates."""
    return float(np.cumsum(values)[-1]) if values.shape[0] else 0.0


def _summarise(
    columns: list[_Column], per_query: dict[str, Floats], run_name: str, nq: int
) -> dict[str, float | str]:
    summary: dict[str, float | str] = {}
    for col in columns:
        if col.average == "none":
            continue
        if col.average == "runid":
            summary[col.name] = run_name
            continue
        values = per_query[col.name]
        if col.average == "num_q":
            summary[col.name] = float(nq)
        elif col.average == "sum":
            summary[col.name] = _seq_total(values)
        elif col.average == "gm":
            summary[col.name] = math.exp(_seq_total(values) / nq)
        else:
            summary[col.name] = _seq_total(values) / nq
    return summary


def _with_missing(run: Run, missing: list[str]) -> Run:
    """``run`` plus, for each missing query, trec_eval's one-document stand-in ranking."""
    all_q = sorted([*run.query_ids, *missing], key=_byte_key)
    index = {q: i for i, q in enumerate(run.query_ids)}
    n_run = len(run)
    src_start = np.empty(len(all_q), dtype=np.int64)
    counts = np.empty(len(all_q), dtype=np.int64)
    run_counts = np.diff(run.offsets)
    bogus_i = 0
    for k, q in enumerate(all_q):
        i = index.get(q)
        if i is None:
            src_start[k], counts[k] = n_run + bogus_i, 1
            bogus_i += 1
        else:
            src_start[k], counts[k] = run.offsets[i], run_counts[i]
    offsets = offsets_from_counts(counts)
    rows = np.arange(int(offsets[-1]), dtype=np.int64) + np.repeat(src_start - offsets[:-1], counts)
    docs = pa.concat_arrays(
        [run.doc_ids.cast(pa.string()), pa.array([BOGUS_DOCNO] * len(missing), pa.string())]
    )
    scores = np.concatenate([run.scores, np.ones(len(missing), dtype=np.float64)])
    return Run(
        name=run.name,
        query_ids=tuple(all_q),
        offsets=offsets,
        doc_ids=docs.take(pa.array(rows)),
        scores=scores[rows],
        source=run.source,
    )


# --------------------------------------------------------------------------- z-scores


def read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """Read a trec_eval ``-Z`` file: lines ``qid measure mean stddev``."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
    except OSError as error:
        raise InputError(f"cannot read z-score file: {error.strerror}", path=path) from error
    for lineno, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        if len(words) != 4:
            raise InputError(
                "malformed z-score line: expected 'qid measure mean stddev'",
                path=path,
                line=lineno,
                value=line,
            )
        out.setdefault((words[0], words[1]), (c_atof(words[2]), c_atof(words[3])))
    return out


def _to_zscores(
    per_query: dict[str, Floats],
    query_ids: tuple[str, ...],
    zscores: Mapping[tuple[str, str], tuple[float, float]],
) -> dict[str, Floats]:
    known_q = {q for q, _ in zscores}
    out: dict[str, Floats] = {}
    for name, values in per_query.items():
        z = values.copy()
        for i, q in enumerate(query_ids):
            if q not in known_q:
                z[i] = MISSING_ZSCORE
                continue
            found = zscores.get((q, name))
            if found is None:
                z[i] = MISSING_ZSCORE
                continue
            mean, std = found
            v = float(values[i])
            if std:
                z[i] = (v - mean) / std
            else:
                z[i] = 0.0 if v == mean else MISSING_ZSCORE
        out[name] = z
    return out
