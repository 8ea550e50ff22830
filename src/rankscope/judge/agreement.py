"""Agreement between two sets of judgments: Cohen's kappa, confusion, and system-ranking tau.

Label agreement is computed over the (query, doc) pairs both sides judged (optionally counting a
pair judged by one side only as a fixed grade on the other). System agreement evaluates the same
runs under both qrels and compares the two orderings of systems with Kendall's tau-b. The
statistics are :mod:`rankscope.stats.agreement`'s, re-exported here and by :mod:`rankscope.judge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rankscope.data import Qrels, Run
from rankscope.errors import InputError
from rankscope.stats.agreement import cohen_kappa, confusion_matrix, kendall_tau_b

# -- label agreement --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelAgreement:
    """Agreement over the queries both sides judge (``queries``); pairs of the other queries
    are left out, so label and ranking agreement are computed on the same queries."""

    pairs: int  # pairs compared: ``shared``, plus the one-sided ones when filled (missing_as)
    only_a: int  # pairs judged by a only, in the shared queries (left out unless filled)
    only_b: int
    threshold: int
    exact: float | None  # fraction of identical labels
    kappa_binary: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    labels: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]  # rows: a's label, columns: b's label
    binary_confusion: tuple[tuple[int, int], tuple[int, int]]  # [[a0b0, a0b1], [a1b0, a1b1]]
    shared: int = 0  # pairs judged by both
    queries: int = 0  # queries judged by both: the ones compared
    queries_only_a: int = 0  # queries judged by a only (left out)
    queries_only_b: int = 0
    missing_as: int | None = None


def parse_grade_map(text: str | None) -> dict[int, int]:
    """``"4=3,3=2,2=1"`` -> ``{4: 3, 3: 2, 2: 1}``; grades not named map to themselves."""
    if not text:
        return {}
    out: dict[int, int] = {}
    for part in text.split(","):
        src, sep, dst = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[int(src)] = int(dst)
        except ValueError:
            raise InputError(
                "bad grade mapping", value=part, hint="write it as SRC=DST pairs, e.g. 4=3,3=2"
            ) from None
    return out


def label_agreement(
    a: Qrels | Mapping[str, Mapping[str, int]],
    b: Qrels | Mapping[str, Mapping[str, int]],
    *,
    threshold: int = 1,
    map_a: Mapping[int, int] | None = None,
    map_b: Mapping[int, int] | None = None,
    missing_as: int | None = None,
) -> LabelAgreement:
    """Agreement of ``a`` and ``b`` over the queries both judge, on the pairs both judged.

    ``map_a``/``map_b`` rewrite grades first (to bring two scales together). ``missing_as``
    counts a pair judged by one side only (in a query both judge) as that grade on the other
    side. Binary kappa calls a grade relevant when it is ``>= threshold``. Queries judged by one
    side only are left out, whatever ``missing_as``: a query the other side never looked at says
    nothing about agreement. Raises InputError when the two share no query, or no pair and
    ``missing_as`` is not given: there is nothing to compare.
    """
    da = a.to_dict() if isinstance(a, Qrels) else {q: dict(v) for q, v in a.items()}
    db = b.to_dict() if isinstance(b, Qrels) else {q: dict(v) for q, v in b.items()}
    ma, mb = map_a or {}, map_b or {}
    queries = set(da) & set(db)
    sources = (getattr(a, "source", None), getattr(b, "source", None))
    if not queries:
        raise InputError(
            f"the two qrels share no query ({len(da)} and {len(db)} queries), so there is "
            "nothing to compare",
            value=sources if any(sources) else None,
            hint="check that both judge the same topics with the same query ids",
        )
    keys_a = {(q, d) for q in queries for d in da[q]}
    keys_b = {(q, d) for q in queries for d in db[q]}
    shared = keys_a & keys_b
    if not shared and missing_as is None:
        raise InputError(
            f"the two qrels share {len(queries)} queries but no judged (query, doc) pair, so "
            "there is nothing to compare",
            value=sources if any(sources) else None,
            hint="pass --unjudged-as G to count a pair judged by one side only as grade G",
        )
    compared = sorted(keys_a | keys_b) if missing_as is not None else sorted(shared)
    xs: list[int] = []
    ys: list[int] = []
    for q, d in compared:
        ga = da.get(q, {}).get(d)
        gb = db.get(q, {}).get(d)
        xs.append(ma.get(ga, ga) if ga is not None else int(missing_as or 0))
        ys.append(mb.get(gb, gb) if gb is not None else int(missing_as or 0))
    cats, m = confusion_matrix(xs, ys)
    bx = [int(v >= threshold) for v in xs]
    by = [int(v >= threshold) for v in ys]
    _, bm = confusion_matrix(bx, by, labels=(0, 1))
    return LabelAgreement(
        pairs=len(xs),
        only_a=len(keys_a - keys_b),
        only_b=len(keys_b - keys_a),
        threshold=threshold,
        exact=(sum(x == y for x, y in zip(xs, ys, strict=True)) / len(xs)) if xs else None,
        kappa_binary=cohen_kappa(bx, by),
        kappa_linear=cohen_kappa(xs, ys, "linear"),
        kappa_quadratic=cohen_kappa(xs, ys, "quadratic"),
        labels=cats,
        confusion=tuple(tuple(int(v) for v in row) for row in m),
        binary_confusion=(
            (int(bm[0, 0]), int(bm[0, 1])),
            (int(bm[1, 0]), int(bm[1, 1])),
        ),
        shared=len(shared),
        queries=len(queries),
        queries_only_a=len(set(da) - queries),
        queries_only_b=len(set(db) - queries),
        missing_as=missing_as,
    )


# -- system-ranking agreement -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankingAgreement:
    """Whether two qrels rank the runs alike: each run's mean score under each, and Kendall's
    tau-b between the two orders."""

    measure: str
    tau_b: float | None
    scores_a: dict[str, float]  # run -> mean under qrels a
    scores_b: dict[str, float]
    queries: int  # queries judged by both, over which runs were scored

    def order(self, which: str = "a") -> list[str]:
        scores = self.scores_a if which == "a" else self.scores_b
        return sorted(scores, key=lambda r: (-scores[r], r))


def ranking_agreement(
    a: Qrels,
    b: Qrels,
    runs: Sequence[Run],
    measures: Sequence[str] = ("ndcg@10",),
    *,
    rel_level: int = 1,
) -> list[RankingAgreement]:
    """Kendall's tau-b between the orderings of ``runs`` under qrels ``a`` and under ``b``.

    Both sides are scored over the queries both qrels judge, so that a difference in coverage
    (LLM labels for a subset of queries, say) does not pass for a difference in judgments.
    """
    from rankscope import evaluate  # numpy, pyarrow: not for the judge's start

    shared = set(a.query_ids) & set(b.query_ids)
    if not shared:
        raise InputError(
            "the two qrels have no query in common; system rankings cannot be compared",
            value=(a.source, b.source),
        )
    a = _restrict(a, shared)
    b = _restrict(b, shared)

    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise InputError(
            "run names must be distinct to compare system rankings",
            value=names,
            hint="give the runs different names (file stems are used by the CLI)",
        )
    res_a = evaluate(a, list(runs), measures=tuple(measures), rel_level=rel_level)
    res_b = evaluate(b, list(runs), measures=tuple(measures), rel_level=rel_level)
    out = []
    for m in res_a.measures:
        sa = {n: float(res_a.mean(n)[m]) for n in names}
        sb = {n: float(res_b.mean(n)[m]) for n in names}
        tau = kendall_tau_b([sa[n] for n in names], [sb[n] for n in names])
        out.append(RankingAgreement(m, tau, sa, sb, len(shared)))
    return out


def _restrict(qrels: Qrels, queries: set[str]) -> Qrels:
    data = {q: qrels.query(q) for q in qrels.query_ids if q in queries}
    return Qrels.from_dict(data, source=qrels.source)


__all__ = [
    "LabelAgreement",
    "RankingAgreement",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "label_agreement",
    "parse_grade_map",
    "ranking_agreement",
]
