"""Per-query differences between two runs: which queries moved, and both ranked lists.

:func:`diff_runs` scores both runs with :func:`rankscope.metrics.evaluate` (the one
implementation of every measure: Δ here is exactly ``rankscope eval -q``'s difference) and
lays the two rankings side by side as evaluate sees them: trec_eval's order (score descending,
ties by document id descending), cut at the evaluation depth (``-M``) when there is one. Every
qrels query is compared, a query a run lacks scoring what trec_eval ``-c`` gives it (0 for
the usual measures), as ``rankscope compare`` does; run queries without judgments are dropped
and counted.

Texts (query text, document title and snippet) are attached afterwards by
:func:`attach_texts`, so that several diffs over one corpus read it once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeAlias, overload

import numpy as np
from numpy.typing import NDArray

from rankscope.engines.base import Document
from rankscope.errors import InputError, MeasureError
from rankscope.stats import equal_up_to_rounding

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]
Outcome = Literal["win", "loss", "tie"]
OUTCOMES: tuple[Outcome, ...] = ("loss", "win", "tie")
SortOrder = Literal["change", "delta", "query"]
SORT_ORDERS: tuple[SortOrder, ...] = ("change", "delta", "query")
#: rows shown for a measure without a rank cutoff (map, mrr, Rprec...)
DEFAULT_DEPTH = 10
#: characters of a document's text kept as its snippet
SNIPPET_CHARS = 300

#: ``{doc_id: Document}``, or a function giving the documents of the ids asked for (read from
#: a corpus file on demand, so that a large corpus is streamed once, not held)
DocumentSource: TypeAlias = "Mapping[str, Document] | Callable[[set[str]], Mapping[str, Document]]"


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One ranked document of one side.

    ``other_rank`` is its rank in the other run's ranking (as evaluated, the whole of it, not
    only the rows shown), ``None`` when the other run does not retrieve it. ``moved`` says the
    same from A to B, on both sides: ``↑3`` (B ranks it 3 places higher than A), ``↓5``, ``=``,
    ``new`` (only B retrieves it) or ``gone`` (only A does).
    """

    rank: int
    doc_id: str
    score: float
    grade: int | None  # None: unjudged (not in the qrels)
    other_rank: int | None
    moved: str
    title: str = ""
    snippet: str = ""

    @property
    def judged(self) -> bool:
        return self.grade is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "doc_id": self.doc_id,
            "score": self.score,
            "grade": self.grade,
            "judged": self.judged,
            "other_rank": self.other_rank,
            "moved": self.moved,
            "title": self.title,
            "snippet": self.snippet,
        }


@dataclass(frozen=True, slots=True)
class MissedDoc:
    """A relevant document that neither list shows, and where each run ranks it (``None``:
    not retrieved)."""

    doc_id: str
    grade: int
    rank_a: int | None
    rank_b: int | None
    title: str = ""
    snippet: str = ""

    @property
    def retrieved(self) -> bool:
        """Whether either run retrieves it (below the rows shown)."""
        return self.rank_a is not None or self.rank_b is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "grade": self.grade,
            "rank_a": self.rank_a,
            "rank_b": self.rank_b,
            "title": self.title,
            "snippet": self.snippet,
        }


@dataclass(frozen=True, slots=True)
class Side:
    """One run on one query: its value of the measure, the rows shown, and how many of them
    are judged (``judged_at_k`` is evaluate's ``judged@k``, k the rows shown)."""

    value: float
    rows: tuple[DiffRow, ...]
    retrieved: int
    judged_at_k: float
    in_run: bool = True

    @property
    def judged(self) -> int:
        return sum(1 for r in self.rows if r.judged)

    @property
    def unjudged(self) -> int:
        return len(self.rows) - self.judged

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "in_run": self.in_run,
            "retrieved": self.retrieved,
            "shown": len(self.rows),
            "judged": self.judged,
            "unjudged": self.unjudged,
            "judged_at_k": self.judged_at_k,
            "rows": [r.to_dict() for r in self.rows],
        }


@dataclass(frozen=True, slots=True)
class QueryDiff:
    """One query: both sides, ``delta`` = B's value minus A's, and its outcome for B (a tie is
    equal values up to rounding, as ``stats`` counts ties). ``same_top`` is true when both
    lists shown are identical; ``missed`` lists the relevant documents in neither list shown."""

    query_id: str
    a: Side
    b: Side
    delta: float
    outcome: Outcome
    same_top: bool
    num_relevant: int
    missed: tuple[MissedDoc, ...]
    query: str = ""
    category: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "query": self.query,
            "category": self.category,
            "delta": self.delta,
            "outcome": self.outcome,
            "same_top": self.same_top,
            "num_relevant": self.num_relevant,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "missed": [m.to_dict() for m in self.missed],
        }


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One run over every compared query: the measure's mean (trec_eval ``-c``: over the qrels'
    queries), the unjudged documents among the rows shown, the mean of ``judged@k``, and the
    qrels queries it lacks."""

    name: str
    mean: float
    unjudged: int
    judged_at_k: float
    missing_queries: int
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "mean": self.mean,
            "unjudged": self.unjudged,
            "judged_at_k": self.judged_at_k,
            "missing_queries": self.missing_queries,
        }


@dataclass(frozen=True, slots=True)
class Counts:
    """How many queries a run won, lost and tied on a measure against the other run."""

    wins: int
    losses: int
    ties: int
    #: ties whose lists shown are identical
    identical: int

    @property
    def total(self) -> int:
        return self.wins + self.losses + self.ties

    def to_dict(self) -> dict[str, int]:
        return {
            "queries": self.total,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "identical": self.identical,
        }


@dataclass(frozen=True, slots=True)
class RunDiff:
    """Two runs compared query by query on one measure (see the module docstring).

    ``queries`` holds every compared query, sorted; ``shown`` those a filter kept
    (:meth:`select`; all of them at first). As :func:`diff_runs` makes them they are
    :class:`QueryDiffs`: columns, each query built when it is read. ``depth`` is the rows
    shown per list, ``eval_depth`` the evaluation's ``-M`` (None: whole rankings).
    ``documents`` holds the texts of the documents shown (for :func:`unjudged_pool`).
    """

    measure: str
    depth: int
    eval_depth: int | None
    rel_level: int
    a: RunSummary
    b: RunSummary
    queries: Sequence[QueryDiff]
    shown: Sequence[QueryDiff]
    unjudged_queries: tuple[str, ...] = ()
    sort: SortOrder = "change"
    filters: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    source: str | None = None
    view: str | None = None
    documents: Mapping[str, Document] = field(default_factory=dict, repr=False)
    #: how the runs' values over all queries (``RunSummary.mean``) aggregate the per-query
    #: ones: ``mean``, or ``sum`` for counts (num_rel_ret...), as trec_eval's ``all`` line
    aggregate: str = "mean"

    @property
    def judged_measure(self) -> str:
        return f"judged@{self.depth}"

    @property
    def counts(self) -> Counts:
        return count(self.queries)

    @property
    def shown_counts(self) -> Counts:
        return count(self.shown)

    @property
    def categories(self) -> tuple[str, ...]:
        if isinstance(self.queries, QueryDiffs):
            return ()  # categories come with the texts (attach_texts)
        return tuple(sorted({q.category for q in self.queries if q.category is not None}))

    def query(self, query_id: str) -> QueryDiff:
        if isinstance(self.queries, QueryDiffs):
            return self.queries.find(query_id)
        for q in self.queries:
            if q.query_id == query_id:
                return q
        raise KeyError(query_id)

    def select(
        self,
        *,
        only: Outcome | None = None,
        min_delta: float | None = None,
        categories: Sequence[str] = (),
        query_ids: Sequence[str] = (),
        limit: int | None = None,
    ) -> RunDiff:
        """A copy showing only the queries that pass every filter given: an outcome (``loss``,
        ``win``, ``tie``), ``|Δ| >= min_delta``, a category, a query id; then the first
        ``limit``. Unknown categories and query ids are errors naming the known ones."""
        if only is not None and only not in OUTCOMES:
            raise InputError("unknown outcome", value=only, hint="use losses, wins or ties")
        if min_delta is not None and not min_delta >= 0:
            raise InputError("--min-delta must be a number >= 0", value=min_delta)
        if limit is not None and limit < 1:
            raise InputError("--limit must be at least 1", value=limit)
        known = (
            self.queries.query_ids
            if isinstance(self.queries, QueryDiffs)
            else {q.query_id for q in self.queries}
        )
        unknown = [q for q in query_ids if q not in known]
        if unknown:
            raise InputError(
                f"no query {unknown[0]!r} among the {len(known)} compared",
                value=unknown if len(unknown) > 1 else None,
                hint="query ids are the qrels' (run queries without judgments are not compared)",
            )
        if categories:
            have = set(self.categories)
            if not have:
                raise InputError(
                    "these queries have no categories",
                    hint="categories come from a benchmark's suite, or from a `category` field "
                    "in the --queries JSONL",
                )
            bad = [c for c in categories if c not in have]
            if bad:
                raise InputError(
                    f"no category {bad[0]!r}", hint=f"categories: {', '.join(sorted(have))}"
                )
        wanted_q = set(query_ids)
        wanted_c = set(categories)
        kept: Sequence[QueryDiff]
        if isinstance(self.queries, QueryDiffs):  # no categories: see the property
            kept = self.queries.where(only, min_delta, wanted_q)
        else:
            kept = [
                q
                for q in self.queries
                if (only is None or q.outcome == only)
                and (min_delta is None or abs(q.delta) >= min_delta)
                and (not wanted_c or q.category in wanted_c)
                and (not wanted_q or q.query_id in wanted_q)
            ]
        said = list(self.filters)
        if only is not None:
            said.append({"loss": "losses", "win": "wins", "tie": "ties"}[only])
        if min_delta is not None:
            said.append(f"|Δ| >= {min_delta:g}")
        if categories:
            said.append("category " + ", ".join(categories))
        if query_ids:
            said.append("query " + ", ".join(query_ids))
        if limit is not None and len(kept) > limit:
            said.append(f"first {limit} of {len(kept)}")
            kept = kept[:limit]
        if not isinstance(kept, QueryDiffs):
            kept = tuple(kept)
        return dataclasses.replace(self, shown=kept, filters=tuple(said))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready value: settings, the summary over every compared query, and the
        queries shown."""
        return {
            "measure": self.measure,
            "depth": self.depth,
            "eval_depth": self.eval_depth,
            "rel_level": self.rel_level,
            "source": self.source,
            "view": self.view,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "counts": self.counts.to_dict(),
            "unjudged_queries": list(self.unjudged_queries),
            "sort": self.sort,
            "filters": list(self.filters),
            "notes": list(self.notes),
            "shown": len(self.shown),
            "queries": [q.to_dict() for q in self.shown],
        }


def count(queries: Iterable[QueryDiff]) -> Counts:
    if isinstance(queries, QueryDiffs):
        return queries.counts()
    wins = losses = ties = identical = 0
    for q in queries:
        if q.outcome == "win":
            wins += 1
        elif q.outcome == "loss":
            losses += 1
        else:
            ties += 1
            identical += q.same_top
    return Counts(wins, losses, ties, identical)


def moved(rank: int, other: int | None, side: Literal["a", "b"]) -> str:
    """The move of a document from A to B, as shown beside it on either side."""
    if other is None:
        return "gone" if side == "a" else "new"
    rank_a, rank_b = (rank, other) if side == "a" else (other, rank)
    up = rank_a - rank_b
    return "=" if up == 0 else f"↑{up}" if up > 0 else f"↓{-up}"


def sort_queries(queries: Iterable[QueryDiff], order: SortOrder = "change") -> list[QueryDiff]:
    """``change``: the biggest changes first (by |Δ|; at equal |Δ| losses first), then the
    ties whose lists differ, then those with identical lists; ``delta``: Δ ascending (the
    biggest loss first, the biggest win last); ``query``: by query id (numbers numerically).
    Equal keys keep query id order."""
    from rankscope.util.order import natural_key

    by_id = sorted(queries, key=lambda q: natural_key(q.query_id))
    if order == "query":
        return by_id
    if order == "delta":
        return sorted(by_id, key=lambda q: q.delta)
    if order != "change":
        raise InputError("unknown sort order", value=order, hint="use change, delta or query")
    rank = {"loss": 0, "win": 0, "tie": 1}
    return sorted(
        by_id,
        key=lambda q: (rank[q.outcome], -abs(q.delta), q.outcome != "loss", q.same_top),
    )


# ----------------------------------------------------------------------------- building


def diff_runs(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    measure: str = "ndcg@10",
    *,
    depth: int | None = None,
    eval_depth: int | None = None,
    rel_level: int = 1,
    queries: Mapping[str, str] | None = None,
    categories: Mapping[str, str | None] | None = None,
    corpus: DocumentSource | str | os.PathLike[str] | None = None,
    sort: SortOrder = "change",
    names: tuple[str, str] | None = None,
    left_out: Mapping[str, str] | None = None,
) -> RunDiff:
    """Compare ``run_b`` with ``run_a`` query by query on ``measure``.

    - ``qrels``, ``run_a``, ``run_b``: as :func:`rankscope.evaluate` takes them (values, dicts
      or file paths).
    - ``depth``: rows shown per list (default: the measure's cutoff, else 10), at most
      ``eval_depth``.
    - ``eval_depth`` (trec_eval ``-M``) and ``rel_level`` (``-l``): as in evaluate.
    - ``queries`` (``{id: text}``), ``categories`` (``{id: category}``) and ``corpus``
      (``{doc_id: Document}``, a function of the ids wanted, or a BEIR ``corpus.jsonl``
      path): texts to show; optional.
    - ``names``: the runs' names (default: their own, told apart by file when equal).
    - ``left_out``: ``{query_id: why}`` for queries judged elsewhere but left out of
      ``qrels`` (a benchmark view without the queries some configuration skipped): said so
      instead of "no judgments".
    """
    from rankscope.data import Qrels, Run, unique_run_names
    from rankscope.metrics.evaluate import evaluate, no_shared_query
    from rankscope.metrics.kernels import kernel_for, reads_top
    from rankscope.metrics.names import parse_measure

    m = parse_measure(measure)
    if kernel_for(m).aggregate == "gm":
        raise MeasureError(
            f"{m} is a geometric mean, which has no per-query value; compare "
            f"{str(m).removeprefix('gm_')} instead"
        )
    if depth is not None and depth < 1:
        raise InputError("the rows shown per list must be at least 1", value=depth)
    if eval_depth is not None and eval_depth < 1:
        raise InputError("the evaluation depth must be at least 1", value=eval_depth)
    the_qrels = qrels if isinstance(qrels, Qrels) else _read_qrels(qrels)
    first, second = (r if isinstance(r, Run) else _read_run(r) for r in (run_a, run_b))
    if names is not None:
        from rankscope.data.run import renamed

        first, second = renamed(first, names[0]), renamed(second, names[1])
    first, second = unique_run_names([first, second])
    shown = depth or reads_top(m) or DEFAULT_DEPTH
    if eval_depth is not None:
        shown = min(shown, eval_depth)
    judged_m = parse_measure(f"judged@{shown}")
    wanted = [m] if m == judged_m else [m, judged_m]
    judged_qids = set(the_qrels.query_ids)
    for run in (first, second):
        if not judged_qids.intersection(run.query_ids):
            raise no_shared_query(run, the_qrels)
    results = evaluate(
        the_qrels,
        {first.name: first, second.name: second},
        wanted,
        depth=eval_depth,
        rel_level=rel_level,
        average_over_qrels=True,
    )
    level = max(m.rel if m.rel is not None else rel_level, 0)
    side_a, side_b = (_Ranked.of(run, eval_depth, results, m, judged_m) for run in (first, second))
    table = _Table.of(the_qrels, results.query_ids(first.name), side_a, side_b, shown, level)
    unjudged_q = sorted((set(first.query_ids) | set(second.query_ids)) - judged_qids, key=_natural)
    notes = []
    for run, side in ((first, side_a), (second, side_b)):
        lacking = side.missing
        if lacking:
            notes.append(
                f"{run.name} lacks {len(lacking)} of the {len(table.query_ids)} judged queries "
                f"(they score as an empty ranking does, as trec_eval -c scores them): "
                f"{', '.join(sorted(lacking, key=_natural)[:5])}"
                + (", ..." if len(lacking) > 5 else "")
            )
    reasons = left_out or {}
    outside = [q for q in unjudged_q if q in reasons]
    if outside:
        why = sorted(set(reasons[q] for q in outside))
        notes.append(
            f"{len(outside)} run queries are left out of the comparison ({'; '.join(why)}): "
            + ", ".join(outside[:5])
            + (", ..." if len(outside) > 5 else "")
        )
    unjudged = [q for q in unjudged_q if q not in reasons]
    if unjudged:
        notes.append(
            f"{len(unjudged)} run queries have no judgments and are not compared: "
            + ", ".join(unjudged[:5])
            + (", ..." if len(unjudged) > 5 else "")
        )
    ordered = QueryDiffs(table, table.order(sort))
    diff = RunDiff(
        measure=str(m),
        depth=shown,
        eval_depth=eval_depth,
        rel_level=rel_level,
        a=side_a.summary(results, m, judged_m, int(table.unjudged_a.sum())),
        b=side_b.summary(results, m, judged_m, int(table.unjudged_b.sum())),
        queries=ordered,
        shown=ordered,
        unjudged_queries=tuple(unjudged_q),
        sort=sort,
        notes=tuple(notes),
        aggregate=kernel_for(m).aggregate,
    )
    if queries is None and categories is None and corpus is None:
        return diff
    return attach_texts([diff], queries=queries, categories=categories, corpus=corpus)[0]


def _natural(qid: str) -> tuple[int, int, str]:
    from rankscope.util.order import natural_key

    return natural_key(qid)


def _read_qrels(source: Any) -> Any:
    from rankscope.data import Qrels, read_qrels

    if isinstance(source, Mapping):
        return Qrels.from_dict(source)
    return read_qrels(source)


def _read_run(source: Any) -> Any:
    from rankscope.data import Run, read_run

    if isinstance(source, Mapping):
        return Run.from_dict(source)
    return read_run(source)


@dataclass
class _Ranked:
    """One run's rankings as evaluate sees them (trec_eval order, cut at ``-M``) and its
    values."""

    name: str
    source: str | None
    index: dict[str, int]
    offsets: Ints
    docs: Any
    scores: Any
    eval_depth: int | None
    query_ids: tuple[str, ...]  # the results' order, as ``values`` and ``judged_at``
    values: Floats
    judged_at: Floats
    missing: tuple[str, ...]

    @classmethod
    def of(cls, run: Any, eval_depth: int | None, results: Any, m: Any, judged_m: Any) -> _Ranked:
        return cls(
            name=run.name,
            source=run.source,
            index={q: i for i, q in enumerate(run.query_ids)},
            offsets=run.offsets,
            docs=run.doc_ids,
            scores=run.scores,
            eval_depth=eval_depth,
            query_ids=results.query_ids(run.name),
            values=results.values(m, run.name),
            judged_at=results.values(judged_m, run.name),
            missing=tuple(results.run(run.name).missing_query_ids),
        )

    def column(self, values: Floats, query_ids: tuple[str, ...]) -> Floats:
        """``values`` (in the results' order) aligned with ``query_ids``."""
        if query_ids == self.query_ids:
            return values
        at = {q: i for i, q in enumerate(self.query_ids)}
        return values[np.fromiter((at[q] for q in query_ids), np.int64, len(query_ids))]

    def bounds(self, query_ids: Sequence[str]) -> tuple[Ints, Ints]:
        """Per query: the first row and the end of the ranking evaluate sees (0, 0 when the
        run lacks the query)."""
        at = np.fromiter((self.index.get(q, -1) for q in query_ids), np.int64, len(query_ids))
        offsets = self.offsets
        has = at >= 0
        lo = np.where(has, offsets[np.maximum(at, 0)], 0)
        hi = np.where(has, offsets[np.maximum(at, 0) + 1], 0)
        if self.eval_depth is not None:
            hi = np.minimum(hi, lo + self.eval_depth)
        return lo, hi

    def _bounds(self, qid: str) -> tuple[int, int]:
        i = self.index.get(qid)
        if i is None:
            return 0, 0
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        if self.eval_depth is not None:
            hi = min(hi, lo + self.eval_depth)
        return lo, hi

    def ranks(self, qid: str) -> dict[str, int]:
        """``{doc_id: rank}`` over the whole ranking evaluate sees."""
        lo, hi = self._bounds(qid)
        return {d: r for r, d in enumerate(self.docs.slice(lo, hi - lo).to_pylist(), 1)}

    def side(
        self,
        qid: str,
        value: float,
        judged_at_k: float,
        shown: int,
        judged: Mapping[str, int],
        other: Mapping[str, int],
        which: Literal["a", "b"],
    ) -> Side:
        lo, hi = self._bounds(qid)
        top = min(hi, lo + shown)
        ids = self.docs.slice(lo, top - lo).to_pylist()
        scores = self.scores[lo:top].tolist()
        rows = tuple(
            DiffRow(
                rank=r,
                doc_id=d,
                score=s,
                grade=judged.get(d),
                other_rank=other.get(d),
                moved=moved(r, other.get(d), which),
            )
            for r, (d, s) in enumerate(zip(ids, scores, strict=True), 1)
        )
        return Side(
            value=value,
            rows=rows,
            retrieved=hi - lo,
            judged_at_k=judged_at_k,
            in_run=qid in self.index,
        )

    def summary(self, results: Any, m: Any, judged_m: Any, unjudged: int) -> RunSummary:
        means = results.mean(self.name)
        return RunSummary(
            name=self.name,
            mean=means[str(m)],
            unjudged=unjudged,
            judged_at_k=means[str(judged_m)],
            missing_queries=len(self.missing),
            source=self.source,
        )


class QueryDiffs(Sequence[QueryDiff]):
    """Compared queries in one order, held as columns: a query's :class:`QueryDiff` (both
    lists, the moves, the missed documents) is built when it is read, so that a million
    queries cost their columns and only the queries shown cost objects. Counting, sorting and
    the filters of :meth:`RunDiff.select` read the columns."""

    __slots__ = ("_order", "_table")

    def __init__(self, table: _Table, order: Ints) -> None:
        self._table = table
        self._order = order

    def __len__(self) -> int:
        return int(self._order.shape[0])

    @overload
    def __getitem__(self, i: int) -> QueryDiff: ...

    @overload
    def __getitem__(self, i: slice) -> QueryDiffs: ...

    def __getitem__(self, i: int | slice) -> QueryDiff | QueryDiffs:
        if isinstance(i, slice):
            return QueryDiffs(self._table, self._order[i])
        return self._table.build(int(self._order[i]))

    def __iter__(self) -> Iterator[QueryDiff]:
        for i in self._order.tolist():
            yield self._table.build(i)

    def __repr__(self) -> str:
        return f"QueryDiffs({len(self)} of {len(self._table.query_ids)} queries)"

    @property
    def query_ids(self) -> Mapping[str, int]:
        """Every compared query (not only these) and its row in the columns."""
        return self._table.position

    def ids(self) -> list[str]:
        """These queries' ids, in this order."""
        ids = self._table.query_ids
        return [ids[i] for i in self._order.tolist()]

    def find(self, query_id: str) -> QueryDiff:
        i = self._table.position.get(query_id)
        if i is None:
            raise KeyError(query_id)
        return self._table.build(i)

    def where(self, only: Outcome | None, min_delta: float | None, ids: set[str]) -> QueryDiffs:
        """These queries with outcome ``only``, ``|Δ| >= min_delta`` and an id among ``ids``
        (each filter when given), in this order."""
        t, o = self._table, self._order
        keep = np.ones(o.shape[0], dtype=np.bool_)
        if only is not None:
            keep &= t.outcome[o] == OUTCOMES.index(only)
        if min_delta is not None:
            keep &= np.abs(t.delta[o]) >= min_delta
        if ids:
            keep &= np.isin(o, np.fromiter((t.position[q] for q in ids), np.int64, len(ids)))
        return QueryDiffs(t, o[keep])

    def counts(self) -> Counts:
        outcome = self._table.outcome[self._order]
        ties = outcome == OUTCOMES.index("tie")
        return Counts(
            wins=int(np.count_nonzero(outcome == OUTCOMES.index("win"))),
            losses=int(np.count_nonzero(outcome == OUTCOMES.index("loss"))),
            ties=int(np.count_nonzero(ties)),
            identical=int(np.count_nonzero(ties & self._table.same_top[self._order])),
        )


@dataclass
class _Table:
    """Every compared query as columns, in the results' order: both values, Δ, the outcome
    (an index into :data:`OUTCOMES`), whether the lists shown are identical, the unjudged rows
    shown per side; and what builds one query's :class:`QueryDiff`."""

    query_ids: tuple[str, ...]
    value_a: Floats
    value_b: Floats
    judged_a: Floats  # judged@k, k the rows shown
    judged_b: Floats
    delta: Floats
    outcome: NDArray[np.int8]
    same_top: NDArray[np.bool_]
    unjudged_a: Ints
    unjudged_b: Ints
    side_a: _Ranked
    side_b: _Ranked
    qrels: Any
    shown: int
    level: int

    @classmethod
    def of(
        cls, qrels: Any, query_ids: tuple[str, ...], a: _Ranked, b: _Ranked, shown: int, level: int
    ) -> _Table:
        value_a, value_b = a.column(a.values, query_ids), b.column(b.values, query_ids)
        delta = value_b - value_a
        tie = np.fromiter(
            map(equal_up_to_rounding, value_b.tolist(), value_a.tolist()), np.bool_, len(delta)
        )
        outcome = np.where(
            tie, OUTCOMES.index("tie"), np.where(delta > 0, OUTCOMES.index("win"), 0)
        ).astype(np.int8)
        lo_a, hi_a = a.bounds(query_ids)
        lo_b, hi_b = b.bounds(query_ids)
        rows_a, rows_b = np.minimum(hi_a - lo_a, shown), np.minimum(hi_b - lo_b, shown)
        # judged@k (k the rows shown) is the judged share of the rows shown
        judged_at_a, judged_at_b = (
            a.column(a.judged_at, query_ids),
            b.column(b.judged_at, query_ids),
        )
        judged_a = np.rint(judged_at_a * rows_a).astype(np.int64)
        judged_b = np.rint(judged_at_b * rows_b).astype(np.int64)
        return cls(
            query_ids=query_ids,
            value_a=value_a,
            value_b=value_b,
            judged_a=judged_at_a,
            judged_b=judged_at_b,
            delta=delta,
            outcome=outcome,
            same_top=_same_lists(a.docs, lo_a, rows_a, b.docs, lo_b, rows_b),
            unjudged_a=rows_a - judged_a,
            unjudged_b=rows_b - judged_b,
            side_a=a,
            side_b=b,
            qrels=qrels,
            shown=shown,
            level=level,
        )

    @cached_property
    def position(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}

    @cached_property
    def _qrels_index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qrels.query_ids)}

    def order(self, sort: SortOrder) -> Ints:
        """The rows in ``sort`` order (see :func:`sort_queries`, which orders the same)."""
        by_id = self._natural_order()
        if sort == "query":
            return by_id
        if sort == "delta":
            return by_id[np.argsort(self.delta[by_id], kind="stable")]
        if sort != "change":
            raise InputError("unknown sort order", value=sort, hint="use change, delta or query")
        outcome = self.outcome[by_id]
        keys = (
            self.same_top[by_id],
            outcome != OUTCOMES.index("loss"),
            -np.abs(self.delta[by_id]),
            outcome == OUTCOMES.index("tie"),
        )
        return by_id[np.lexsort(keys)]  # stable: equal keys keep query id order

    def _natural_order(self) -> Ints:
        """Rows by query id, numbers numerically (:func:`rankscope.judge.pool.natural_key`)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = pa.array(self.query_ids, pa.string())
        if len(ids) and pc.all(pc.match_substring_regex(ids, r"^[0-9]{1,18}$")).as_py():
            numbers = np.asarray(pc.cast(ids, pa.int64()).to_numpy(zero_copy_only=False))
            return np.argsort(numbers, kind="stable").astype(np.int64)
        return np.array(
            sorted(range(len(self.query_ids)), key=lambda i: _natural(self.query_ids[i])),
            dtype=np.int64,
        )

    def build(self, i: int) -> QueryDiff:
        qid = self.query_ids[i]
        judged = self._judged(qid)
        ranks_a, ranks_b = self.side_a.ranks(qid), self.side_b.ranks(qid)
        a_side = self.side_a.side(
            qid, float(self.value_a[i]), float(self.judged_a[i]), self.shown, judged, ranks_b, "a"
        )
        b_side = self.side_b.side(
            qid, float(self.value_b[i]), float(self.judged_b[i]), self.shown, judged, ranks_a, "b"
        )
        top_a = {r.doc_id for r in a_side.rows}
        top_b = {r.doc_id for r in b_side.rows}
        relevant = sorted(
            ((d, g) for d, g in judged.items() if g >= self.level), key=lambda dg: (-dg[1], dg[0])
        )
        return QueryDiff(
            query_id=qid,
            a=a_side,
            b=b_side,
            delta=float(self.delta[i]),
            outcome=OUTCOMES[int(self.outcome[i])],
            same_top=bool(self.same_top[i]),
            num_relevant=len(relevant),
            missed=tuple(
                MissedDoc(d, g, ranks_a.get(d), ranks_b.get(d))
                for d, g in relevant
                if d not in top_a and d not in top_b
            ),
        )

    def _judged(self, qid: str) -> dict[str, int]:
        """``{doc_id: grade}`` of one query's qrels."""
        i = self._qrels_index.get(qid)
        if i is None:
            return {}
        lo, hi = int(self.qrels.offsets[i]), int(self.qrels.offsets[i + 1])
        docs = self.qrels.doc_ids.slice(lo, hi - lo).to_pylist()
        return dict(zip(docs, self.qrels.grades[lo:hi].tolist(), strict=True))


def _same_lists(
    docs_a: Any, lo_a: Ints, rows_a: Ints, docs_b: Any, lo_b: Ints, rows_b: Ints
) -> NDArray[np.bool_]:
    """Per query: whether A's ``rows_a`` documents from ``lo_a`` are B's, in the same order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankscope.metrics.segments import offsets_from_counts, positions, segment_count

    same = rows_a == rows_b
    both = np.flatnonzero(same & (rows_a > 0))
    n = rows_a[both]
    offsets = offsets_from_counts(n)
    at = positions(offsets)
    ids_a = docs_a.take(pa.array(np.repeat(lo_a[both], n) + at))
    ids_b = docs_b.take(pa.array(np.repeat(lo_b[both], n) + at))
    equal = np.asarray(pc.equal(ids_a, ids_b).to_numpy(zero_copy_only=False), dtype=np.bool_)
    same[both] = segment_count(equal, offsets) == n
    result: NDArray[np.bool_] = same
    return result


# ----------------------------------------------------------------------------- texts


def attach_texts(
    diffs: Sequence[RunDiff],
    *,
    queries: Mapping[str, str] | None = None,
    categories: Mapping[str, str | None] | None = None,
    corpus: DocumentSource | str | os.PathLike[str] | None = None,
) -> list[RunDiff]:
    """``diffs`` with query texts, categories and document titles and snippets filled in;
    the corpus is read once for all of them, keeping only the documents shown."""
    built = [tuple(diff.queries) for diff in diffs]  # QueryDiffs build each query once here
    documents: Mapping[str, Document] = {}
    if corpus is not None:
        wanted = {
            d
            for every in built
            for q in every
            for d in [
                *(r.doc_id for r in q.a.rows),
                *(r.doc_id for r in q.b.rows),
                *(x.doc_id for x in q.missed),
            ]
        }
        documents = _lookup(corpus, wanted)
    out = []
    for diff, every in zip(diffs, built, strict=True):
        filled = tuple(_with_texts(q, queries, categories, documents) for q in every)
        by_id = {q.query_id: q for q in filled}
        shown = filled if diff.shown is diff.queries else tuple(by_id[q] for q in _ids(diff.shown))
        out.append(
            dataclasses.replace(
                diff,
                queries=filled,
                shown=shown,
                documents={
                    d: documents[d]
                    for q in filled
                    for d in (*(r.doc_id for r in q.a.rows), *(r.doc_id for r in q.b.rows))
                    if d in documents
                },
            )
        )
    return out


def _ids(queries: Sequence[QueryDiff]) -> list[str]:
    """The query ids of ``queries``, without building a :class:`QueryDiffs`' queries."""
    if isinstance(queries, QueryDiffs):
        return queries.ids()
    return [q.query_id for q in queries]


def corpus_reader(path: str | os.PathLike[str]) -> Callable[[set[str]], dict[str, Document]]:
    """A :data:`DocumentSource` reading a BEIR ``corpus.jsonl`` (or ``.jsonl.gz``) once per call,
    keeping only the ids asked for."""
    from pathlib import Path

    from rankscope.suite.corpus import read_jsonl_documents

    file = Path(path)
    if not file.is_file():
        raise InputError("corpus file not found", path=file, hint="give a BEIR corpus.jsonl")

    def read(wanted: set[str]) -> dict[str, Document]:
        return pick(read_jsonl_documents(file), wanted)

    return read


def pick(documents: Iterable[Document], wanted: set[str]) -> dict[str, Document]:
    """The documents of ``wanted`` ids, stopping once all are found."""
    found: dict[str, Document] = {}
    if not wanted:
        return found
    for doc in documents:
        if doc.id in wanted and doc.id not in found:
            found[doc.id] = doc
            if len(found) == len(wanted):
                break
    return found


def _lookup(source: Any, wanted: set[str]) -> Mapping[str, Document]:
    if isinstance(source, str | os.PathLike):
        source = corpus_reader(source)
    if isinstance(source, Mapping):
        return {d: source[d] for d in wanted if d in source}
    found: Mapping[str, Document] = source(wanted)
    return found


def _with_texts(
    q: QueryDiff,
    queries: Mapping[str, str] | None,
    categories: Mapping[str, str | None] | None,
    documents: Mapping[str, Document],
) -> QueryDiff:
    def row(r: DiffRow) -> DiffRow:
        doc = documents.get(r.doc_id)
        if doc is None:
            return r
        return dataclasses.replace(r, title=doc.title, snippet=snippet(doc.text))

    def missed(x: MissedDoc) -> MissedDoc:
        doc = documents.get(x.doc_id)
        if doc is None:
            return x
        return dataclasses.replace(x, title=doc.title, snippet=snippet(doc.text))

    return dataclasses.replace(
        q,
        query=(queries or {}).get(q.query_id, q.query),
        category=(categories or {}).get(q.query_id, q.category),
        a=dataclasses.replace(q.a, rows=tuple(map(row, q.a.rows))),
        b=dataclasses.replace(q.b, rows=tuple(map(row, q.b.rows))),
        missed=tuple(map(missed, q.missed)),
    )


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    from rankscope.judge.pool import make_snippet

    return make_snippet(text, limit)


__all__ = [
    "DEFAULT_DEPTH",
    "OUTCOMES",
    "SORT_ORDERS",
    "Counts",
    "DiffRow",
    "DocumentSource",
    "MissedDoc",
    "Outcome",
    "QueryDiff",
    "QueryDiffs",
    "RunDiff",
    "RunSummary",
    "Side",
    "SortOrder",
    "attach_texts",
    "corpus_reader",
    "count",
    "diff_runs",
    "moved",
    "pick",
    "sort_queries",
]
