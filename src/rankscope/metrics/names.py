"""Measure names: one canonical spelling per measure, with trec_eval and ir_measures aliases.

A :class:`Measure` is a hashable value: a family name plus its parameters.  What a measure *is*
lives here, with trec_eval's own names for its measures (:data:`TREC_MEASURES`, its sets
:data:`TREC_NICKNAMES`); how each family is computed lives in :mod:`rankscope.metrics.kernels`.

Canonical spelling
------------------
``family[(param[,rel=N])][@cutoff]``, for example::

    map  mrr  ndcg  ndcg@10  map@100  P@10  recall@100  Rprec  bpref  infAP  hit@5  judged@10
    f1@10  mrr@10  ndcg_exp@10  iprec@0.5  Rprec_mult@0.2  num_rel_ret  set_F  P(rel=2)@10
    ndcg(1=3,2=9)  utility(2,-1,0,0)  11pt_avg(.25,.5,.75)

- ``@k`` is a rank cutoff (``P@10``); for ``iprec`` and ``Rprec_mult`` it is a recall level or a
  multiplier of R (``iprec@0.5``).
- ``(…)`` holds trec_eval's free-form parameters for the families that take them (``ndcg``,
  ``ndcg_rel``, ``Rndcg``, ``G``, ``dcg``, ``ideal_dcg``: gains per grade; ``utility``: four
  coefficients; ``11pt_avg``: recall levels; ``set_F``: beta; ``rbp``/``rbp_resid``:
  persistence ``p=0.8`` and gains per grade), and/or ``rel=N``, a relevance level for this
  measure alone (otherwise ``evaluate(rel_level=…)`` applies).
- trec_eval's own measures keep their trec_eval names, except that ``recip_rank`` is ``mrr``,
  ``ndcg_cut.k`` is ``ndcg@k``, ``map_cut.k`` is ``map@k``, ``iprec_at_recall.x`` is
  ``iprec@x``, and ``success.k`` is ``hit@k`` (the same quantity; one name for it).
- ``runid`` and ``relstring`` are text, not numbers: use ``rankscope trec_eval`` for them.
  trec_eval's preference measures (``prefs_*``, ``*_avgjg``, ``yaap``) need preference or
  multi-judge qrels and are not measures here.

Accepted spellings
------------------
- Names match case-insensitively (``NDCG@10``, ``p@10``, ``rprec``); the canonical case is kept.
- trec_eval: ``ndcg_cut.10``, ``ndcg_cut_10``, ``P.10``, ``P_10``, ``recip_rank``, ``recall.100``,
  ``map_cut.100``, ``success.5``, ``iprec_at_recall_0.50``, ``ndcg.1=3,2=9`` … (the ``-m`` argument
  or the output column name).
- ir_measures: ``nDCG@10``, ``AP``, ``MAP``, ``AP@100``, ``RR``, ``MRR``, ``RR@10``, ``R@100``,
  ``Recall@100``, ``P@10``, ``Precision@10``, ``Judged@10``, ``Success@5``, ``Bpref``, ``BPref``,
  ``Rprec``, ``RPrec``, ``NumRet``, ``NumRelRet``, ``NumRel``, ``NumQ``, ``infAP``, ``SetP``,
  ``SetR``, ``SetF``, ``SetAP``, ``SetRelP``, ``IPrec@0.5``, ``nDCG(dcg='exp-log2')@10``
  (= ``ndcg_exp@10``), ``P(rel=2)@10``, ``SetF(beta=0.5)``.
- Several measures in one string: ``"map,ndcg@10"`` or ``"map ndcg@10"``; several cutoffs
  at once: ``P@5,10`` or ``P.5,10`` name two measures; a bare trec_eval cutoff family (``P``,
  ``recall``, ``ndcg_cut``, ``map_cut``, ``success``, ``iprec_at_recall``, ``Rprec_mult``,
  ``relative_P``, ``unj``) names trec_eval's default cutoffs, as ``-m P`` does.
  ``official`` and ``all_trec`` name trec_eval's measure sets.  Use :func:`parse_measures` for
  these; :func:`parse_measure` wants exactly one measure.

Unknown names raise :class:`~rankscope.errors.MeasureError` with the closest valid names.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rankscope.errors import MeasureError

CutoffKind = Literal["none", "int", "float"]
Cutoff = int | float


@dataclass(frozen=True, slots=True)
class Family:
    """A measure family: its canonical name and what parameters it takes.

    ``cutoff``: ``"none"`` (no ``@``), ``"int"`` (a rank cutoff) or ``"float"`` (a level).
    ``cutoff_required``: a measure of this family needs a cutoff.  ``free_param``: the family
    takes trec_eval's free-form parameter string.  ``trec``: the trec_eval measure computing it
    without a cutoff, ``trec_cut``: with a cutoff (``None``: computed in :mod:`.extra`).
    """

    name: str
    cutoff: CutoffKind
    cutoff_required: bool
    free_param: bool
    trec: str | None
    trec_cut: str | None
    description: str


def _f(
    name: str,
    description: str,
    *,
    cutoff: CutoffKind = "none",
    required: bool = False,
    free: bool = False,
    trec: str | None = None,
    trec_cut: str | None = None,
) -> Family:
    return Family(name, cutoff, required, free, trec, trec_cut, description)


# Canonical families, in the order measures are listed by ``all_trec`` (then the extras).
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        _f("num_q", "number of queries evaluated", trec="num_q"),
        _f("num_ret", "number of documents retrieved", trec="num_ret"),
        _f("num_rel", "number of relevant documents in the qrels", trec="num_rel"),
        _f("num_rel_ret", "number of relevant documents retrieved", trec="num_rel_ret"),
        _f(
            "map",
            "mean average precision (@k: trec_eval map_cut)",
            cutoff="int",
            trec="map",
            trec_cut="map_cut",
        ),
        _f("gm_map", "geometric mean of average precision", trec="gm_map"),
        _f("Rprec", "precision after R documents, R = number relevant", trec="Rprec"),
        _f("bpref", "binary preference", trec="bpref"),
        _f(
            "mrr",
            "reciprocal rank of the first relevant document (@k: within the top k)",
            cutoff="int",
            trec="recip_rank",
        ),
        _f(
            "iprec",
            "interpolated precision at a recall level",
            cutoff="float",
            required=True,
            trec_cut="iprec_at_recall",
        ),
        _f("P", "precision at k", cutoff="int", required=True, trec_cut="P"),
        _f("recall", "recall at k", cutoff="int", required=True, trec_cut="recall"),
        _f("infAP", "inferred average precision", trec="infAP"),
        _f("gm_bpref", "geometric mean of bpref", trec="gm_bpref"),
        _f(
            "Rprec_mult",
            "precision after x·R documents",
            cutoff="float",
            required=True,
            trec_cut="Rprec_mult",
        ),
        _f("utility", "set utility with coefficients a,b,c,d", free=True, trec="utility"),
        _f(
            "11pt_avg",
            "interpolated precision averaged over recall levels",
            free=True,
            trec="11pt_avg",
        ),
        _f("binG", "binary G", trec="binG"),
        _f("G", "normalized cumulative gain without discount", free=True, trec="G"),
        _f("dcg", "discounted cumulative gain, trec_eval gains", free=True, trec="dcg"),
        _f("ideal_dcg", "DCG of the ideal ranking", free=True, trec="ideal_dcg"),
        _f(
            "ndcg",
            "normalized DCG, trec_eval gains (@k: trec_eval ndcg_cut)",
            cutoff="int",
            free=True,
            trec="ndcg",
            trec_cut="ndcg_cut",
        ),
        _f("ndcg_rel", "nDCG averaged over relevant documents", free=True, trec="ndcg_rel"),
        _f("Rndcg", "nDCG at R", free=True, trec="Rndcg"),
        _f(
            "relative_P",
            "precision at k relative to the best possible",
            cutoff="int",
            required=True,
            trec_cut="relative_P",
        ),
        _f("set_P", "precision of the whole retrieved set", trec="set_P"),
        _f("set_relative_P", "relative precision of the retrieved set", trec="set_relative_P"),
        _f("set_recall", "recall of the whole retrieved set", trec="set_recall"),
        _f("set_map", "set precision times set recall", trec="set_map"),
        _f("set_F", "F-measure of the retrieved set (param: beta)", free=True, trec="set_F"),
        _f(
            "num_nonrel_judged_ret",
            "judged non-relevant documents retrieved",
            trec="num_nonrel_judged_ret",
        ),
        _f("rbp", "rank-biased precision (param: persistence)", free=True, trec="rbp"),
        _f("rbp_resid", "residual of rank-biased precision", free=True, trec="rbp_resid"),
        _f("unj", "unjudged documents in the top k", cutoff="int", required=True, trec_cut="unj"),
        # hit is trec_eval's success; the rest is not in trec_eval (rankscope.metrics.extra).
        _f(
            "hit",
            "1 when a relevant document is in the top k (trec_eval success)",
            cutoff="int",
            required=True,
            trec_cut="success",
        ),
        _f("judged", "fraction of the top-k retrieved documents that are judged", cutoff="int"),
        _f("f1", "harmonic mean of P@k and recall@k", cutoff="int"),
        _f("ndcg_exp", "nDCG with gain 2^grade - 1 and log2(rank + 1) discount", cutoff="int"),
    )
}


# ------------------------------------------------------------------ trec_eval's own names
_LONG_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

TrecParams = Literal["none", "long_cuts", "double_cuts", "double_params", "pairs"]


@dataclass(frozen=True, slots=True)
class TrecName:
    """One of trec_eval 10's measures as its ``-m`` option names it.

    ``family``: the canonical family computing it (``None`` for ``runid`` and ``relstring``,
    which are text).  ``params``: what a ``.``-argument holds (cutoffs, numbers or
    ``level=gain`` pairs); ``defaults``: the cutoffs or numbers trec_eval uses without one.
    """

    name: str
    family: str | None
    params: TrecParams = "none"
    defaults: tuple[float, ...] = ()


def _t(
    name: str, family: str | None, params: TrecParams = "none", defaults: tuple[float, ...] = ()
) -> TrecName:
    return TrecName(name, family, params, defaults)


#: trec_eval 10's measures in the order it computes and prints them (``measures.c``).
TREC_MEASURES: tuple[TrecName, ...] = (
    _t("runid", None),
    _t("num_q", "num_q"),
    _t("num_ret", "num_ret"),
    _t("num_rel", "num_rel"),
    _t("num_rel_ret", "num_rel_ret"),
    _t("map", "map"),
    _t("gm_map", "gm_map"),
    _t("Rprec", "Rprec"),
    _t("bpref", "bpref"),
    _t("recip_rank", "mrr"),
    _t("iprec_at_recall", "iprec", "double_cuts", _RECALL_LEVELS),
    _t("P", "P", "long_cuts", _LONG_CUTOFFS),
    _t("relstring", None, "double_params", (10.0,)),
    _t("recall", "recall", "long_cuts", _LONG_CUTOFFS),
    _t("infAP", "infAP"),
    _t("gm_bpref", "gm_bpref"),
    _t("Rprec_mult", "Rprec_mult", "double_cuts", _RPREC_MULTS),
    _t("utility", "utility", "double_params", (1.0, -1.0, 0.0, 0.0)),
    _t("11pt_avg", "11pt_avg", "double_params", _RECALL_LEVELS),
    _t("binG", "binG"),
    _t("G", "G", "pairs"),
    _t("dcg", "dcg", "pairs"),
    _t("ideal_dcg", "ideal_dcg", "pairs"),
    _t("ndcg", "ndcg", "pairs"),
    _t("ndcg_rel", "ndcg_rel", "pairs"),
    _t("Rndcg", "Rndcg", "pairs"),
    _t("ndcg_cut", "ndcg", "long_cuts", _LONG_CUTOFFS),
    _t("map_cut", "map", "long_cuts", _LONG_CUTOFFS),
    _t("relative_P", "relative_P", "long_cuts", _LONG_CUTOFFS),
    _t("success", "hit", "long_cuts", (1, 5, 10)),
    _t("set_P", "set_P"),
    _t("set_relative_P", "set_relative_P"),
    _t("set_recall", "set_recall"),
    _t("set_map", "set_map"),
    _t("set_F", "set_F", "double_params", (1.0,)),
    _t("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    _t("rbp", "rbp", "pairs"),
    _t("rbp_resid", "rbp_resid", "pairs"),
    _t("unj", "unj", "long_cuts", (5, 10, 20)),
)
TREC_BY_NAME: dict[str, TrecName] = {t.name: t for t in TREC_MEASURES}

#: trec_eval's measure sets (``-m official``...), by trec_eval name.
TREC_NICKNAMES: dict[str, frozenset[str]] = {
    "official": frozenset({
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P",
    }),
    "set": frozenset({
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    }),
    "all_trec": frozenset({
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
        "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
        "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    }),
}  # fmt: skip


def default_params(family: str) -> tuple[float, ...]:
    """The numbers trec_eval gives a free-parameter family without a ``.``-argument
    (``utility``: 1,-1,0,0; ``11pt_avg``: the 11 recall levels; ``set_F``: beta 1)."""
    for t in TREC_MEASURES:
        if t.family == family and t.params == "double_params":
            return t.defaults
    return ()


@dataclass(frozen=True, slots=True)
class _Alias:
    family: str  # canonical family
    arg: Literal["cutoff", "param", "none"]  # what a '.'/'_' argument means for this spelling
    defaults: tuple[Cutoff, ...] | None = None  # bare trec_eval family: its default cutoffs
    force_cutoff: bool = False  # spelling names the cutoff variant (ndcg_cut, map_cut)


def _cutoffs(values: tuple[float, ...], params: str) -> tuple[Cutoff, ...]:
    return tuple(int(v) for v in values) if params == "long_cuts" else tuple(values)


def _build_aliases() -> dict[str, _Alias]:
    aliases: dict[str, _Alias] = {}
    for fam in FAMILIES.values():
        if fam.cutoff != "none" and fam.cutoff_required:
            aliases[fam.name.lower()] = _Alias(fam.name, "cutoff")
        elif fam.free_param:
            aliases[fam.name.lower()] = _Alias(fam.name, "param")
        else:
            aliases[fam.name.lower()] = _Alias(
                fam.name, "cutoff" if fam.cutoff != "none" else "none"
            )
    trec: dict[str, _Alias] = {}
    for t in TREC_MEASURES:
        if t.family is None or t.name == t.family:
            continue  # text measures are not measures here; same-named ones are families
        cut = t.params in ("long_cuts", "double_cuts")
        trec[t.name.lower()] = _Alias(
            t.family,
            "cutoff" if cut else ("param" if t.params != "none" else "none"),
            _cutoffs(t.defaults, t.params) if cut else None,
            force_cutoff=cut and FAMILIES[t.family].cutoff_required is False,
        )
    for t in TREC_MEASURES:  # bare cutoff families (P, recall...) name trec_eval's defaults
        if t.family is not None and t.name == t.family and t.params in ("long_cuts", "double_cuts"):
            trec[t.name.lower()] = _Alias(t.family, "cutoff", _cutoffs(t.defaults, t.params))
    ir_measures = {
        "ap": _Alias("map", "cutoff"),
        "rr": _Alias("mrr", "cutoff"),
        "r": _Alias("recall", "cutoff"),
        "precision": _Alias("P", "cutoff"),
        "numret": _Alias("num_ret", "none"),
        "numrelret": _Alias("num_rel_ret", "none"),
        "numrel": _Alias("num_rel", "none"),
        "numq": _Alias("num_q", "none"),
        "setp": _Alias("set_P", "none"),
        "setr": _Alias("set_recall", "none"),
        "setf": _Alias("set_F", "param"),
        "setap": _Alias("set_map", "none"),
        "setrelp": _Alias("set_relative_P", "none"),
        "hit_rate": _Alias("hit", "cutoff"),
    }
    aliases.update(trec)
    aliases.update(ir_measures)
    return aliases


_ALIASES = _build_aliases()
# Longest first, so that "ndcg_cut_10" matches "ndcg_cut" before "ndcg".
_ALIAS_ORDER = sorted(_ALIASES, key=len, reverse=True)

#: Canonical measure sets: trec_eval's, less its text measures, in trec_eval's order.
NICKNAMES: dict[str, tuple[str, ...]] = {
    nick: tuple(t.name for t in TREC_MEASURES if t.name in TREC_NICKNAMES[nick] and t.family)
    for nick in ("official", "all_trec")
}

_TEXT_MEASURES = {"runid", "relstring"}


@dataclass(frozen=True, slots=True)
class Measure:
    """One measure: a family (canonical name) and its parameters; hashable and immutable.

    ``str(measure)`` is the canonical spelling; :func:`parse_measure` reads any accepted one.
    """

    name: str
    cutoff: Cutoff | None = None
    param: str | None = None
    rel: int | None = None

    def __post_init__(self) -> None:
        fam = FAMILIES.get(self.name)
        if fam is None and load_measure_plugins():
            fam = FAMILIES.get(self.name)
        if fam is None:
            raise MeasureError(f"unknown measure family {self.name!r}{_suggest(self.name)}")
        if self.cutoff is None:
            if fam.cutoff_required:
                raise MeasureError(
                    f"measure {self.name!r} needs a cutoff, e.g. {self.name}@10"
                    if fam.cutoff == "int"
                    else f"measure {self.name!r} needs a level, e.g. {self.name}@0.5"
                )
        elif fam.cutoff == "none":
            raise MeasureError(f"measure {self.name!r} takes no cutoff (got @{self.cutoff})")
        elif fam.cutoff == "int":
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise MeasureError(
                    f"cutoff of {self.name!r} must be a positive integer (got {self.cutoff!r})"
                )
            if self.cutoff <= 0:
                raise MeasureError(f"cutoff of {self.name!r} must be positive (got {self.cutoff})")
        else:
            # Any level is computable (trec_eval takes any); the name parser refuses the
            # meaningless ones (a recall level outside [0, 1], a multiplier <= 0).
            object.__setattr__(self, "cutoff", float(self.cutoff))
        if self.param is not None:
            if not fam.free_param:
                raise MeasureError(
                    f"measure {self.name!r} takes no parameters (got {self.param!r})"
                )
            if self.cutoff is not None:
                raise MeasureError(
                    f"measure {self.name!r} takes either a cutoff or parameters, not both"
                )
            _check_param(self.name, self.param)

    @property
    def family(self) -> Family:
        return FAMILIES[self.name]

    @property
    def is_extra(self) -> bool:
        """A measure trec_eval lacks (computed by :mod:`rankscope.metrics.extra`)."""
        return self.trec_name is None

    @property
    def trec_name(self) -> str | None:
        """The trec_eval measure computing this one (``None`` for the extras)."""
        fam = self.family
        return fam.trec if self.cutoff is None else fam.trec_cut

    def __str__(self) -> str:
        text = self.name
        inner = [p for p in (self.param, None if self.rel is None else f"rel={self.rel}") if p]
        if inner:
            text += "(" + ",".join(inner) + ")"
        if self.cutoff is not None:
            text += "@" + _format_cutoff(self.cutoff)
        return text

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _format_cutoff(cutoff: Cutoff) -> str:
    if isinstance(cutoff, float):
        text = repr(cutoff)
        return text[:-2] if text.endswith(".0") else text
    return str(cutoff)


# Numbers as Python's float() writes them back (inf and nan included: trec_eval reads them).
_NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)"
_PAIRS_RE = re.compile(rf"^(?:{_NUMBER}={_NUMBER})(?:,{_NUMBER}={_NUMBER})*$")
_NUMBERS_RE = re.compile(rf"^{_NUMBER}(?:,{_NUMBER})*$")
# rbp: the persistence p (``p=0.8``, or a bare ``0.8``) and gains per grade
_RBP_ITEM = rf"(?:p={_NUMBER}|{_NUMBER}={_NUMBER}|{_NUMBER})"
_RBP_RE = re.compile(rf"^{_RBP_ITEM}(?:,{_RBP_ITEM})*$")
PAIR_FAMILIES = frozenset(
    {"ndcg", "ndcg_rel", "Rndcg", "G", "dcg", "ideal_dcg", "rbp", "rbp_resid"}
)


def _check_param(family: str, param: str) -> None:
    if family in ("rbp", "rbp_resid"):
        if not _RBP_RE.match(param):
            raise MeasureError(
                f"parameters of {family!r} are the persistence and gains per grade like "
                f"'p=0.8' or 'p=0.8,1=2' (got {param!r})"
            )
    elif family in PAIR_FAMILIES:
        if not _PAIRS_RE.match(param):
            raise MeasureError(
                f"parameters of {family!r} are gains per grade like '1=3,2=9' (got {param!r})"
                + (f"; for a rank cutoff write {family}@{param}" if param.isdigit() else "")
            )
    elif not _NUMBERS_RE.match(param):
        raise MeasureError(f"parameters of {family!r} are comma-separated numbers (got {param!r})")


_SPLIT_RE = re.compile(
    r"^(?P<head>[^()@]*?)(?:\((?P<inner>[^()]*)\))?(?:@(?P<at>[^()@]+))?"
    r"(?:\((?P<inner2>[^()]*)\))?$"
)


def parse_measures(specs: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse measure names (any accepted spelling) into measures, in order, without repeats.

    A string may name several measures (``"P@5,10"``, ``"P.5,10"``, bare ``"P"``, ``"official"``).
    """
    items: Iterable[str | Measure] = [specs] if isinstance(specs, str | Measure) else specs
    out: list[Measure] = []
    seen: set[Measure] = set()
    for item in items:
        for m in [item] if isinstance(item, Measure) else _parse_all(item):
            if m not in seen:
                seen.add(m)
                out.append(m)
    if not out:
        raise MeasureError("no measures given; name at least one, e.g. ndcg@10")
    return out


def parse_measure(spec: str | Measure) -> Measure:
    """Parse exactly one measure from any accepted spelling (see the module docstring)."""
    if isinstance(spec, Measure):
        return spec
    found = _parse_all(spec)
    if len(found) != 1:
        raise MeasureError(
            f"{spec!r} names {len(found)} measures ({', '.join(map(str, found[:5]))}"
            f"{', ...' if len(found) > 5 else ''}); use parse_measures() for several"
        )
    return found[0]


def _parse_all(spec: str) -> list[Measure]:
    if not isinstance(spec, str):
        raise MeasureError(f"a measure name must be a string (got {spec!r})")
    text = spec.strip()
    if not text:
        raise MeasureError("empty measure name; give one like ndcg@10 or map")
    try:
        return _parse_one(text)
    except MeasureError as whole:
        # "map,ndcg@10" or "map ndcg@10": a list of names.
        parts = text.split() if any(c.isspace() for c in text) else text.split(",")
        parts = [p for p in parts if p]
        listlike = str(whole).startswith(("unknown measure", "malformed"))
        if len(parts) < 2 or "(" in text or not listlike:
            raise
        found: list[Measure] = []
        failed: MeasureError | None = None
        for part in parts:
            try:
                found.extend(_parse_one(part))
            except MeasureError as error:
                failed = failed or error
        if failed is None:
            return found
        raise (failed if found else whole) from None


def _parse_one(text: str) -> list[Measure]:
    lower = text.lower()
    if lower in NICKNAMES:
        return [m for name in NICKNAMES[lower] for m in _parse_all(name)]
    if lower in _TEXT_MEASURES:
        raise MeasureError(
            f"{text!r} is text, not a number; use `rankscope trec_eval -m {text}` to print it"
        )
    match = _SPLIT_RE.match(text)
    if match is None:
        raise MeasureError(f"malformed measure name {text!r}; write it like ndcg@10 or P(rel=2)@5")
    head = match["head"]
    inner = match["inner"] if match["inner"] is not None else match["inner2"]
    if match["inner"] is not None and match["inner2"] is not None:
        raise MeasureError(f"malformed measure name {text!r}: two parameter lists")
    at = match["at"]

    alias, rest = _match_alias(head, text)
    fam = FAMILIES[alias.family]
    family = alias.family
    param: str | None = None
    rel: int | None = None
    cutoffs: list[Cutoff] | None = None

    if rest:  # trec_eval spelling: "P.5,10", "ndcg_cut_10", "ndcg.1=3,2=9"
        if at is not None:
            raise MeasureError(f"malformed measure name {text!r}: both '{rest[0]}' and '@' given")
        arg = rest[1:]
        if not arg:
            raise MeasureError(f"measure name {text!r} ends with {rest[0]!r}; add the parameter")
        if alias.arg == "cutoff":
            cutoffs = _parse_cutoffs(arg, fam, text)
        elif alias.arg == "param":
            param = arg
        else:
            raise MeasureError(f"measure {fam.name!r} takes no parameters (got {text!r})")
    elif at is not None:
        if fam.cutoff == "none":
            raise MeasureError(f"measure {fam.name!r} takes no cutoff (got {text!r})")
        cutoffs = _parse_cutoffs(at, fam, text)
    elif alias.defaults is not None:
        cutoffs = list(alias.defaults)

    if inner is not None:
        family, param, rel = _parse_inner(inner, family, param, text)
        if family == "num_ret" and rel is not None:
            family = "num_rel_ret"  # ir_measures spells num_rel_ret as NumRet(rel=N)
    if alias.force_cutoff and not cutoffs:
        raise MeasureError(f"{text!r} needs a cutoff, e.g. {head}.10")

    if not cutoffs:
        return [_make(family, None, param, rel, text)]
    return [_make(family, c, param, rel, text) for c in cutoffs]


def _make(
    family: str, cutoff: Cutoff | None, param: str | None, rel: int | None, text: str
) -> Measure:
    try:
        measure = Measure(family, cutoff, param, rel)
    except MeasureError as error:
        raise MeasureError(f"in {text!r}: {error}") from None
    level = measure.cutoff
    if family == "iprec" and level is not None and not 0.0 <= level <= 1.0:
        raise MeasureError(
            f"in {text!r}: recall level of 'iprec' must be in [0, 1] (got {level:g})"
        )
    if family == "Rprec_mult" and level is not None and level <= 0.0:
        raise MeasureError(
            f"in {text!r}: multiplier of 'Rprec_mult' must be positive (got {level:g})"
        )
    return measure


def _match_alias(head: str, text: str) -> tuple[_Alias, str]:
    lower = head.lower()
    for name in _ALIAS_ORDER:
        if lower.startswith(name) and (len(lower) == len(name) or lower[len(name)] in "._"):
            return _ALIASES[name], head[len(name) :]
    if load_measure_plugins():  # a plugin's measure, named before its package was loaded
        return _match_alias(head, text)
    raise MeasureError(f"unknown measure {text!r}{_suggest(text)}")


def add_family(family: Family) -> None:
    """Make a measure family known by name (:func:`rankscope.measures.register`): its
    canonical name, case-insensitively, as every other family's."""
    global _ALIAS_ORDER
    FAMILIES[family.name] = family
    _ALIASES[family.name.lower()] = _Alias(
        family.name, "cutoff" if family.cutoff != "none" else "none"
    )
    _ALIAS_ORDER = sorted(_ALIASES, key=len, reverse=True)


def remove_family(name: str) -> None:
    """Forget a family :func:`add_family` added (:func:`rankscope.measures.unregister`)."""
    global _ALIAS_ORDER
    FAMILIES.pop(name, None)
    if _ALIASES.get(name.lower(), None) is not None and _ALIASES[name.lower()].family == name:
        del _ALIASES[name.lower()]
    _ALIAS_ORDER = sorted(_ALIASES, key=len, reverse=True)


def known_spelling(name: str) -> str | None:
    """The family a name already spells (any accepted spelling), or None."""
    alias = _ALIASES.get(name.lower())
    if alias is not None:
        return alias.family
    if name.lower() in NICKNAMES or name.lower() in _TEXT_MEASURES:
        return name
    return None


_plugins_loaded = False


def load_measure_plugins() -> bool:
    """Load every ``rankscope.measures`` entry point once (:mod:`rankscope.plugins`); True
    when this call loaded any, so that a name they define can be looked up again."""
    global _plugins_loaded
    if _plugins_loaded:
        return False
    _plugins_loaded = True
    from rankscope.plugins import MEASURE_GROUP, load_entry_point, plugin_entry_points

    points = plugin_entry_points(MEASURE_GROUP)
    for point in points.values():
        loaded = load_entry_point(point, MEASURE_GROUP)
        if callable(loaded) and not isinstance(loaded, type):
            loaded()  # a function that registers the package's measures
    return bool(points)


def _parse_cutoffs(arg: str, fam: Family, text: str) -> list[Cutoff]:
    out: list[Cutoff] = []
    for part in arg.split(","):
        part = part.strip()
        try:
            if fam.cutoff == "float":
                out.append(float(part))
            else:
                out.append(int(part))
        except ValueError:
            kind = "a number like 0.5" if fam.cutoff == "float" else "a positive integer like 10"
            raise MeasureError(f"cutoff {part!r} in {text!r} is not {kind}") from None
    return out


def _parse_inner(
    inner: str, family: str, param: str | None, text: str
) -> tuple[str, str | None, int | None]:
    """Read ``(rel=2)``, ``(dcg='exp-log2')``, ``(beta=0.5)`` or trec_eval-style ``(1=3,2=9)``."""
    rel: int | None = None
    free: list[str] = []
    for item in (p.strip() for p in inner.split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key_l = key.strip().lower()
        value = value.strip().strip("'\"")
        if eq and key_l == "rel":
            try:
                rel = int(value)
            except ValueError:
                raise MeasureError(
                    f"rel in {text!r} must be an integer grade (got {value!r})"
                ) from None
        elif eq and key_l == "dcg":
            if family != "ndcg" or value not in {"exp-log2", "log2"}:
                raise MeasureError(
                    f"unsupported dcg={value!r} in {text!r}; supported: ndcg(dcg='exp-log2') "
                    "(= ndcg_exp) and dcg='log2' (= ndcg)"
                )
            if value == "exp-log2":
                family = "ndcg_exp"
        elif eq and key_l in {"beta", "p"}:
            free.append(value)
        elif eq and key_l in {"judged_only", "cutoff", "gains", "relative"}:
            raise MeasureError(
                f"parameter {key.strip()!r} in {text!r} is not supported here"
                + ("; pass judged_only=True to evaluate() (-J)" if key_l == "judged_only" else "")
            )
        elif eq and not key_l.lstrip("-+").replace(".", "", 1).isdigit():
            raise MeasureError(f"unknown parameter {key.strip()!r} in {text!r}; known: rel")
        else:
            free.append(item)
    if free:
        if param is not None:
            raise MeasureError(f"{text!r} gives parameters twice")
        param = ",".join(free)
    return family, param, rel


def _suggest(name: str) -> str:
    names = {c.lower(): c for c in (*_TRECISH_NAMES, *NICKNAMES, *FAMILIES)}
    base = re.split(r"[@(]", name, maxsplit=1)[0]
    suffix = name[len(base) :]
    close = difflib.get_close_matches(base.lower(), list(names), n=6, cutoff=0.5)
    shown: list[str] = []
    for candidate in (names[c] for c in close):
        try:  # prefer the user's own cutoff when the suggestion takes one
            text = str(parse_measure(candidate + suffix)) if suffix else _example(candidate)
        except MeasureError:
            text = _example(candidate)
        if text not in shown:
            shown.append(text)
    if shown:
        return "; did you mean " + " or ".join(shown[:3]) + "?"
    return "; see `rankscope eval --help` for the measure names"


def _example(name: str) -> str:
    fam = FAMILIES.get(name)
    if fam is not None and (fam.cutoff_required or (fam.cutoff == "int" and fam.trec is None)):
        return f"{name}@0.5" if fam.cutoff == "float" else f"{name}@10"
    return name


_TRECISH_NAMES = (
    "recip_rank", "ndcg_cut", "map_cut", "success", "iprec_at_recall", "nDCG", "AP", "RR",
    "Judged", "Success", "Bpref", "NumRet", "NumRelRet", "NumRel", "NumQ", "SetP", "SetR",
    "SetF", "SetAP", "Precision", "Recall", "MRR", "MAP",
)  # fmt: skip


def describe_measures() -> list[tuple[str, str, str]]:
    """Per family: an example canonical name, where it comes from, and what it measures.

    The source is the trec_eval measure (``ndcg_cut``, ``recip_rank``) or ``rankscope`` for the
    measures trec_eval lacks; a family computed both ways shows both (``mrr`` / ``mrr@k``).
    """
    rows = []
    for fam in FAMILIES.values():
        sources = [s for s in (fam.trec, fam.trec_cut) if s]
        if fam.cutoff != "none" and fam.trec_cut is None:
            sources.append("rankscope" if fam.trec is None else "rankscope (@k)")
        if not sources:
            sources = ["rankscope"]
        rows.append((_example(fam.name), " / ".join(sources), fam.description))
    return rows


__all__ = [
    "FAMILIES",
    "NICKNAMES",
    "PAIR_FAMILIES",
    "TREC_BY_NAME",
    "TREC_MEASURES",
    "TREC_NICKNAMES",
    "Family",
    "Measure",
    "TrecName",
    "add_family",
    "default_params",
    "describe_measures",
    "known_spelling",
    "load_measure_plugins",
    "parse_measure",
    "parse_measures",
    "remove_family",
]
