"""trec_eval's ``-m`` arguments, summary rules and output, for ``rankscope trec_eval`` only.

This module is the edge where trec_eval's measure strings live: :func:`parse_trec_measures`
reads ``-m`` arguments (``"official"``, ``"P.5,10"``, ``"ndcg_cut.10"``, ``"ndcg.1=3,2=9"``,
``"iprec_at_recall..10,.20"``, ``"relstring.20"``...) into output columns, each holding a
:class:`~rankscope.metrics.names.Measure`; :func:`trec_measures` scores them through the same
path as :func:`~rankscope.evaluate` (:func:`~rankscope.metrics.evaluate.score_run` and the
kernels), then summarises and formats as trec_eval 10.0 (commit f4253652) does:

- columns in trec_eval's measure order, cutoffs sorted, names as trec_eval prints them;
  parameters read with C ``atof``/``atol``; the first ``-m`` argument given for a measure wins;
- summaries: counts are summed, ``gm_*`` are geometric means (floor 0.00001), the rest averaged;
  with ``-c`` over every qrels query (a query the run lacks is scored on a one-document stand-in
  ranking, then the values printed as exactly ``num_ret``, ``utility``, ``rbp_resid`` and
  ``relstring``, and ``unj*``, are cleared: ``utility_2,-1,0,0`` keeps its value), ``num_q``
  counts every qrels query and the summary ``num_rel`` counts every judgment of the qrels file
  with a grade above 0, whatever ``-l`` says (``m_num_rel.c``);
- ``-Z``: per-query values become z-scores before they are summarised; ``-n``: no summary.

Deviations, kept on purpose: a qrels query missing from the run (without ``-c``) is skipped, as
trec_eval 9 did (trec_eval 10.0 stops with "result qid ... not found in qrels"); a first query
whose judgments are all negative is evaluated (trec_eval 10.0 stops with "Can't calculate
measure"); a negative ``-M`` is refused; debug traces (``-D``) are not printed.  Errors carry
trec_eval's exit status (:func:`exit_status`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankscope.data.numbers import c_atof, c_atol, is_plain_int
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import DuplicateError, InputError, MeasureError, RankscopeError
from rankscope.metrics import trec_compute as tc
from rankscope.metrics.align import query_split
from rankscope.metrics.evaluate import score_run
from rankscope.metrics.kernels import aggregate, kernel_for
from rankscope.metrics.names import (
    TREC_BY_NAME,
    TREC_MEASURES,
    TREC_NICKNAMES,
    Measure,
    TrecName,
)

Floats = NDArray[np.float64]

MISSING_ZSCORE = -1000000.0
_UNSUPPORTED = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
    "all_prefs", "prefs", "qrels_jg",
)  # fmt: skip


class TrecEvalError(InputError):
    """A refusal that trec_eval reports with its own exit status (``exit_code``)."""

    def __init__(self, problem: str, exit_code: int, **where: Any) -> None:
        super().__init__(problem, **where)
        self.exit_code = exit_code


class TrecMeasureError(MeasureError):
    """A measure trec_eval refuses with its own exit status (``exit_code``): 1 for a name it
    does not know, 4 for parameters it cannot calculate with."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def exit_status(error: RankscopeError) -> int:
    """The status trec_eval exits with for what ``error`` reports: 1 for an unknown measure
    (and bad usage), 2 for unreadable input or measure parameters, 4 for a document listed
    twice in an evaluated query or no query to evaluate, 255 for an unreadable z-score file."""
    return 4 if isinstance(error, DuplicateError) else error.exit_code


# --------------------------------------------------------------------------- -m arguments


@dataclass(frozen=True, slots=True)
class Column:
    """One line kind of trec_eval's output: its printed name and what computes it.

    ``measure`` is ``None`` for the text measures (``runid``, ``relstring``), which are not
    measures elsewhere in rankscope; ``length`` is relstring's.
    """

    name: str
    trec: TrecName
    measure: Measure | None = None
    length: float = 0.0

    @property
    def per_query(self) -> str:
        """How a query's line prints: ``long``, ``double``, ``text`` or ``none``."""
        if self.measure is None:
            return "none" if self.trec.name == "runid" else "text"
        kernel = kernel_for(self.measure)
        if kernel.aggregate == "gm" or self.trec.name == "num_q":
            return "none"
        return "long" if kernel.counts else "double"

    @property
    def summary(self) -> str:
        """How the ``all`` line prints: ``long``, ``double``, ``text`` or ``none``."""
        if self.measure is None:
            return "text" if self.trec.name == "runid" else "none"
        return "long" if kernel_for(self.measure).counts else "double"


def parse_trec_measures(specs: Sequence[str]) -> tuple[Column, ...]:
    """Read trec_eval ``-m`` arguments (``official`` when none) into output columns.

    An unknown name raises :class:`TrecMeasureError` (status 1, as trec_eval); a malformed
    parameter raises :class:`~rankscope.errors.MeasureError` (status 2).
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs or ("official",):
        name, dot, param = spec.partition(".")
        if dot:
            if param == "":
                raise TrecMeasureError(
                    f"illegal measure {spec!r}: empty parameter list after '.'; give values "
                    "such as 'P.5,10' or drop the '.'",
                    1,
                )
            params.setdefault(name, param)
        if name in TREC_NICKNAMES:
            marked.update(TREC_NICKNAMES[name])
        elif name in TREC_BY_NAME:
            marked.add(name)
        elif name in _UNSUPPORTED:
            raise TrecMeasureError(
                f"trec_eval measure {name!r} needs preference or multi-judgment qrels "
                "(-R prefs, qrels_prefs, qrels_jg), which rankscope does not read",
                1,
            )
        else:
            raise TrecMeasureError(
                f"illegal measure {spec!r}; use a trec_eval measure such as 'map', 'P.10' or "
                f"'ndcg_cut.10', or a set: {', '.join(TREC_NICKNAMES)}",
                1,
            )
    columns: list[Column] = []
    for t in TREC_MEASURES:
        if t.name in marked:
            columns.extend(_columns(t, params.get(t.name)))
    return tuple(columns)


def _columns(t: TrecName, param: str | None) -> list[Column]:
    family = t.family
    if t.params == "long_cuts":
        assert family is not None
        cuts = (
            sorted(c_atol(p) for p in param.split(",")) if param else [int(x) for x in t.defaults]
        )
        if cuts[0] <= 0:
            raise MeasureError(f"measure {t.name!r}: cutoffs must be positive (got {param!r})")
        _refuse_repeats(t.name, cuts, param)
        return [Column(f"{t.name}_{c}", t, Measure(family, c)) for c in cuts]
    if t.params == "double_cuts":
        assert family is not None
        levels = sorted(c_atof(p) for p in param.split(",")) if param else list(t.defaults)
        if not all(math.isfinite(x) for x in levels):
            raise MeasureError(f"measure {t.name!r}: cutoffs must be finite (got {param!r})")
        _refuse_repeats(t.name, levels, param)
        return [Column(f"{t.name}_{x:3.2f}", t, Measure(family, x)) for x in levels]
    name = f"{t.name}_{param}" if param else t.name
    if t.params == "double_params":
        values = [c_atof(p) for p in param.split(",")] if param else list(t.defaults)
        if family is None:  # relstring
            return [Column(name, t, length=values[0])]
        return [Column(name, t, Measure(family, param=_numbers(values) if param else None))]
    if t.params == "pairs":
        assert family is not None
        pairs = _pairs(t, param) if param else None
        return [Column(name, t, Measure(family, param=pairs))]
    return [Column(name, t, None if family is None else Measure(family))]


def _refuse_repeats(name: str, cuts: Sequence[float], param: str | None) -> None:
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"measure {name!r}: duplicate cutoffs in {param!r}")


def _number(value: float) -> str:
    """A double as canonical parameter text (shortest round-trip form)."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _numbers(values: Sequence[float]) -> str:
    return ",".join(_number(v) for v in values)


def _pairs(t: TrecName, text: str) -> str | None:
    """trec_eval's ``name=value`` list as canonical parameter text: integer names (the gains
    of grades; other names do nothing in trec_eval) and rbp's ``p``; ``None`` when none is
    left.  Malformed lists are refused as trec_eval's ``get_param_pairs`` refuses them."""
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
            f"measure {t.name!r}: malformed parameters {text!r}; give level=gain pairs such as "
            f"'{t.name}.1=3,2=9'"
        )
    items: list[str] = []
    for item in text.split(","):
        key, _, value = item.partition("=")
        if is_plain_int(key):
            items.append(f"{c_atol(key)}={_number(c_atof(value))}")
        elif key == "p" and t.family in ("rbp", "rbp_resid"):
            items.append(f"p={_number(c_atof(value))}")
    return ",".join(items) or None


def column_name(measure: Measure) -> str | None:
    """The name trec_eval prints for ``measure`` (``ndcg_cut_10``, ``success_5``), or ``None``
    for a measure trec_eval lacks."""
    for t in TREC_MEASURES:
        if t.family != measure.name:
            continue
        cut = t.params in ("long_cuts", "double_cuts")
        if cut != (measure.cutoff is not None):
            continue
        if isinstance(measure.cutoff, float):
            return f"{t.name}_{measure.cutoff:3.2f}"
        if measure.cutoff is not None:
            return f"{t.name}_{measure.cutoff}"
        return f"{t.name}_{measure.param}" if measure.param else t.name
    return None


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class TrecEvaluation:
    """Per-query values and trec_eval's summary ("all") values of one run."""

    run_name: str
    query_ids: tuple[str, ...]
    columns: tuple[Column, ...]
    per_query: dict[str, Floats]
    summary: dict[str, float | str]
    relstrings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    zscores: bool = False

    def format(self, per_query: bool = False, summary: bool = True) -> str:
        """trec_eval's standard output (``-q`` for ``per_query``; ``-n`` is ``summary=False``).

        Ids and the run name may hold surrogate escapes (bytes that are not UTF-8): encode the
        text with ``surrogateescape`` to get trec_eval's bytes.
        """
        lines: list[str] = []
        z = "Z" if self.zscores else ""
        if per_query:
            for i, qid in enumerate(self.query_ids):
                for col in self.columns:
                    kind = col.per_query
                    if kind == "none":
                        continue
                    if kind == "text":
                        lines.append(f"{col.name:<22}\t{qid}\t'{self.relstrings[col.name][i]}'\n")
                    elif kind == "long" and not self.zscores:
                        value = _c_long(float(self.per_query[col.name][i]))
                        lines.append(f"{col.name:<22}\t{qid}\t{value}\n")
                    else:
                        value_f = float(self.per_query[col.name][i])
                        lines.append(f"{z}{col.name:<22}\t{qid}\t{format_double(value_f)}\n")
        if summary:
            for col in self.columns:
                kind = col.summary
                if kind == "none":
                    continue
                total = self.summary[col.name]
                if kind == "text":
                    lines.append(f"{'runid':<22}\tall\t{total}\n")
                elif kind == "long" and not self.zscores:
                    lines.append(f"{col.name:<22}\tall\t{_c_long(float(total))}\n")
                else:
                    lines.append(f"{z}{col.name:<22}\tall\t{format_double(float(total))}\n")
        return "".join(lines)

    def mean(self) -> dict[str, float]:
        """The numeric summary values (``runid`` left out)."""
        return {k: float(v) for k, v in self.summary.items() if not isinstance(v, str)}


def format_double(value: float) -> str:
    """C ``printf("%6.4f")``, including glibc's ``-nan``."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


def _c_long(value: float) -> int:
    if math.isnan(value) or math.isinf(value):
        return -(2**63)
    return int(value)


def trec_measures(
    qrels: Qrels,
    run: Run,
    specs: Sequence[str] | tuple[Column, ...] = ("official",),
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    average_over_qrels: bool = False,
    num_docs_in_coll: int = 0,
    zscores: Mapping[tuple[str, str], tuple[float, float]] | None = None,
    only_query: str | None = None,
) -> TrecEvaluation:
    """Evaluate ``run`` against ``qrels`` as trec_eval 10 does.

    ``specs`` are trec_eval ``-m`` arguments (or columns :func:`parse_trec_measures` made);
    ``depth`` is ``-M``, ``rel_level`` ``-l``, ``judged_only`` ``-J``, ``average_over_qrels``
    ``-c``, ``num_docs_in_coll`` ``-N``, ``zscores`` the content of a ``-Z`` file (see
    :func:`read_zscores`) and ``only_query`` the query of ``-D level.qid``.  Raises
    :class:`TrecEvalError` (status 4) when no query can be evaluated, and
    :class:`~rankscope.errors.DuplicateError` when an evaluated query lists a document twice
    within ``depth``.
    """
    columns = _as_columns(specs)
    if depth is not None and depth < 0:
        raise InputError(
            "-M needs a number of documents, 0 or more", value=depth, hint="For example -M 1000"
        )
    for col in columns:
        if col.measure is not None and col.measure.name == "utility":
            given = col.measure.param
            if given is not None and len(given.split(",")) != 4:
                raise TrecMeasureError(
                    f"measure {col.name!r}: utility takes 4 coefficients a,b,c,d, e.g. "
                    "utility.1,-1,0,0",
                    4,
                )
    evaluated = qrels if only_query is None else _only(qrels, only_query)
    shared, _ = query_split(evaluated, run)
    if not shared and not (average_over_qrels and evaluated.query_ids):
        raise TrecEvalError(
            "no query is in both the run and the qrels"
            + (f" (-D restricts the evaluation to query {only_query!r})" if only_query else ""),
            7 if not evaluated.query_ids else 4,
            path=run.source,
            hint="Check that the run and the qrels use the same query ids",
        )
    if not needs_judgments(columns):
        return _counted_only(qrels, evaluated, run, columns, average_over_qrels, zscores)
    measures = list(dict.fromkeys(c.measure for c in columns if c.measure is not None))
    scored = score_run(
        evaluated,
        run,
        measures,
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=average_over_qrels,
        num_docs_in_coll=num_docs_in_coll,
        all_rows=True,  # duplicates are refused anywhere within depth, as trec_eval does
    )
    query_ids = scored.query_ids
    per_query: dict[str, Floats] = {}
    strings: dict[str, tuple[str, ...]] = {}
    for col in columns:
        if col.measure is not None:
            per_query[col.name] = scored.values[col.measure]
        elif col.per_query == "text":
            texts = tc.relstrings(scored.contexts[rel_level], col.length)
            # trec_eval clears the string it prints as exactly "relstring", not relstring_20
            cleared = (
                scored.stand_in.tolist() if col.name == col.trec.name else [False] * len(texts)
            )
            strings[col.name] = tuple(
                "" if gone else s for s, gone in zip(texts, cleared, strict=True)
            )
    if zscores is not None:
        per_query = _to_zscores(per_query, query_ids, zscores)
    # -c averages over every qrels query (all of the file, even under -D), trec_eval's
    # accumulator over the queries it evaluated
    n_all = qrels.num_queries if average_over_qrels else len(query_ids)
    summary: dict[str, float | str] = {}
    for col in columns:
        if col.summary == "text":
            summary[col.name] = run.name
        elif col.measure is not None:
            summary[col.name] = _summary(col, per_query[col.name], n_all)
    if average_over_qrels:
        for col in columns:
            if col.trec.name == "num_rel":  # m_num_rel.c: every judgment graded above 0
                summary[col.name] = float(np.count_nonzero(qrels.grades > 0))
    public = {c.name: per_query[c.name] for c in columns if c.per_query in ("double", "long")}
    return TrecEvaluation(
        run_name=run.name,
        query_ids=query_ids,
        columns=columns,
        per_query=public,
        summary=summary,
        relstrings=strings,
        zscores=zscores is not None,
    )


def needs_judgments(columns: Sequence[Column]) -> bool:
    """Whether any column reads the judged ranking (trec_eval's ``form_res_rels``): all but
    ``runid`` and ``num_q``, which is also where trec_eval notices a repeated document."""
    return any(c.trec.name not in ("runid", "num_q") for c in columns)


def _counted_only(
    qrels: Qrels,
    evaluated: Qrels,
    run: Run,
    columns: tuple[Column, ...],
    average_over_qrels: bool,
    zscores: Mapping[tuple[str, str], tuple[float, float]] | None,
) -> TrecEvaluation:
    """``runid`` and ``num_q`` alone: trec_eval counts the queries without ranking anything."""
    shared, _ = query_split(evaluated, run)
    query_ids = evaluated.query_ids if average_over_qrels else shared
    ones = np.ones(len(query_ids), dtype=np.float64)
    per_query = {c.name: ones for c in columns if c.measure is not None}
    if zscores is not None:
        per_query = _to_zscores(per_query, query_ids, zscores)
    n_all = qrels.num_queries if average_over_qrels else len(query_ids)
    summary: dict[str, float | str] = {
        c.name: run.name if c.measure is None else float(n_all) for c in columns
    }
    return TrecEvaluation(
        run_name=run.name,
        query_ids=query_ids,
        columns=columns,
        per_query=per_query,
        summary=summary,
        zscores=zscores is not None,
    )


def _as_columns(specs: Sequence[str] | tuple[Column, ...]) -> tuple[Column, ...]:
    if all(isinstance(c, Column) for c in specs) and specs:
        return tuple(c for c in specs if isinstance(c, Column))
    return parse_trec_measures([c for c in specs if isinstance(c, str)])


def _only(qrels: Qrels, query_id: str) -> Qrels:
    judged = qrels.query(query_id)
    return Qrels.from_dict({query_id: judged} if judged else {}, source=qrels.source)


def _summary(col: Column, values: Floats, counted: int) -> float:
    """trec_eval's ``calc_avg`` for one column, over ``counted`` queries (``-c``: every
    qrels query, even those ``-D`` left out)."""
    assert col.measure is not None
    if col.trec.name == "num_q":
        return float(counted)
    return aggregate(kernel_for(col.measure), values, counted)


# --------------------------------------------------------------------------- z-scores


def read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """Read a trec_eval ``-Z`` file: lines ``qid measure mean stddev`` (numbers read with C
    ``atof``).  An unreadable or empty file, or a line without four words, raises
    :class:`TrecEvalError` with trec_eval's status for it (255)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as error:
        raise TrecEvalError(f"cannot read z-score file: {error.strerror}", 255, path=path) from None
    if not data:
        raise TrecEvalError("cannot read z-score file: it is empty", 255, path=path)
    out: dict[tuple[str, str], tuple[float, float]] = {}
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for lineno, line in enumerate(lines, start=1):
        words = line.split()
        if len(words) != 4:
            raise TrecEvalError(
                "malformed z-score line: expected 'qid measure mean stddev'",
                255,
                path=path,
                line=lineno,
                value=line.decode("utf-8", "replace"),
            )
        qid, name = (w.decode("utf-8", "surrogateescape") for w in words[:2])
        out.setdefault((qid, name), (c_atof(words[2]), c_atof(words[3])))
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
            found = zscores.get((q, name)) if q in known_q else None
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


__all__ = [
    "Column",
    "TrecEvalError",
    "TrecEvaluation",
    "TrecMeasureError",
    "column_name",
    "exit_status",
    "format_double",
    "needs_judgments",
    "parse_trec_measures",
    "read_zscores",
    "trec_measures",
]
