"""Per-query measures of collected records, through :func:`rankscope.evaluate` (never a copy).

Each record is one query: its ranked list becomes a run, its judgments qrels, and all records
of a request (one, or a whole batch) are scored in one ``evaluate()`` call on the measures of
the table of stored measures (:data:`rankscope.service.stored_measures.STORED_MEASURES` and
``STORED_COUNTS``):

==========================  =====================  ==============================================
stored column               measure                meaning (trec_eval semantics)
==========================  =====================  ==============================================
``precision``               ``set_P``              relevant retrieved / retrieved
``recall``                  ``set_recall``         relevant retrieved / relevant
``f1_score``                ``set_F`` (beta 1)     harmonic mean of the two
``mean_reciprocal_rank``    ``mrr``                1 / rank of the first relevant document
``average_precision``       ``map``                sum of precision at each relevant retrieved
                                                   document / number of relevant documents
``ndcg``                    ``ndcg``               nDCG over the whole list, gain = grade
``total_retrieved`` ...     ``num_ret``, ``num_rel``, ``num_rel_ret``
==========================  =====================  ==============================================

Average precision divides by the number of relevant documents, retrieved or not: one relevant
document retrieved at rank 1 out of two relevant gives 0.5 (the design this service replaces
divided by the relevant documents retrieved and gave 1.0).

The ranking is the order the application showed, not a re-sort by score: the retriever's scores
may come from a stage before a reranker. Several chunks of one document count once, at the
position of the first (a document ranks at its best chunk, as in ``rankscope bench``). Only the
first ``cutoff`` distinct documents are evaluated. The run given to ``evaluate()`` scores the
documents ``n, n-1, ..., 1`` so that its order is the shown order; the export writes those
scores, so ``rankscope eval`` on an export reproduces every stored value.

Without judgments a document counts as relevant (grade 1) when its best chunk's score is at
least the threshold, else as not relevant (grade 0); such rows are marked ``heuristic``.
Judged rows grade every retrieved document that the judgments do not mention 0 (the judgments
list every relevant document).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import numpy as np

from rankscope.data.arrow import string_array
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.metrics.evaluate import evaluate
from rankscope.service.stored_measures import STORED_COUNTS, STORED_MEASURES

#: what one evaluate() call computes: the averaged measures, then the counts (the table of
#: stored measures, rankscope.service.stored_measures)
MEASURES = tuple(m.measure for m in (*STORED_MEASURES, *STORED_COUNTS))
#: the trec_eval names of the averaged measures, for ``rankscope eval -m``
TREC_EVAL_MEASURES = tuple(m.trec_eval for m in STORED_MEASURES)
#: the name of the run :func:`run_of` builds (and the export writes)
RUN_NAME = "collected"


class Evaluable(NamedTuple):
    """What one record gives ``evaluate()``: its key, shown ranking and judgments. (A named
    tuple: one is made per collected record, and a frozen dataclass costs several times more to
    create.)"""

    key: str
    ranking: tuple[str, ...]
    judgments: Mapping[str, int]


@dataclass(frozen=True)
class QueryMeasures:
    """One record's computed columns, named and ordered as ``VALUE_COLUMNS`` (a test checks
    that they agree)."""

    total_retrieved: int
    total_relevant: int
    relevant_retrieved: int
    precision: float
    recall: float
    f1_score: float
    mean_reciprocal_rank: float
    average_precision: float
    ndcg: float


NOTHING = QueryMeasures(0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def shown_ranking(document_ids: Iterable[str], cutoff: int | None = None) -> tuple[str, ...]:
    """Distinct documents in the order first shown, the first ``cutoff`` of them (at least
    one)."""
    # a dict keeps the first position of each
    return first_shown(tuple(dict.fromkeys(document_ids)), cutoff)


def first_shown(distinct: tuple[str, ...], cutoff: int | None) -> tuple[str, ...]:
    """The first ``cutoff`` (at least one) of documents already distinct, in shown order."""
    return distinct if cutoff is None else distinct[: max(cutoff, 1)]


def heuristic_judgments(scored: Iterable[tuple[str, float]], threshold: float) -> dict[str, int]:
    """Grade 1 for each document whose best score reaches ``threshold``, else 0 (the documents
    in the order first shown)."""
    pairs = list(scored)
    best = dict(pairs)  # each document at its first position (with its last score)
    if len(best) < len(pairs):  # a document shown more than once counts at its best score
        best = {}
        for doc, score in pairs:
            if doc not in best or score > best[doc]:
                best[doc] = score
    return {doc: int(score >= threshold) for doc, score in best.items()}


def complete_judgments(judgments: Mapping[str, int], retrieved: Iterable[str]) -> dict[str, int]:
    """The judgments plus grade 0 for each retrieved document they do not mention."""
    full = dict(judgments)
    for doc in retrieved:
        full.setdefault(doc, 0)
    return full


def run_scores(ranking: Sequence[str]) -> dict[str, float]:
    """Scores whose trec_eval order (score descending) is exactly ``ranking``."""
    n = len(ranking)
    return {doc: float(n - i) for i, doc in enumerate(ranking)}


def qrels_of(items: Sequence[Evaluable]) -> Qrels:
    """The items' judgments as one Qrels (queries and documents in byte order, as
    ``Qrels.from_dict`` orders them; Python orders str by code point, which is UTF-8 byte
    order)."""
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    offsets = [0]
    for key, _, judgments in _in_key_order(items):
        if judgments:
            qids.append(key)
            ordered = sorted(judgments)
            docs += ordered
            grades += map(judgments.__getitem__, ordered)
            offsets.append(len(docs))
    return Qrels(
        query_ids=tuple(qids),
        offsets=np.asarray(offsets, dtype=np.int64),
        doc_ids=string_array(docs),
        grades=np.asarray(grades, dtype=np.int64),
    )


def run_of(items: Sequence[Evaluable]) -> Run:
    """The items' rankings as one Run, scored ``n .. 1`` (already in trec_eval order: score
    descending, no ties)."""
    qids: list[str] = []
    docs: list[str] = []
    offsets = [0]
    for key, ranking, _ in _in_key_order(items):
        if ranking:
            qids.append(key)
            docs += ranking
            offsets.append(len(docs))
    ends = np.asarray(offsets, dtype=np.int64)
    # the document at row r of a query whose rows end at e scores e - r: n, n-1, ..., 1
    scores = np.repeat(ends[1:], np.diff(ends)) - np.arange(len(docs), dtype=np.int64)
    return Run(
        name=RUN_NAME,
        query_ids=tuple(qids),
        offsets=ends,
        doc_ids=string_array(docs),
        scores=scores.astype(np.float64),
    )


def _in_key_order(items: Sequence[Evaluable]) -> Sequence[Evaluable]:
    """The items by key (the write path's keys come in order already: no sort then)."""
    keys = [it.key for it in items]
    if all(a < b for a, b in itertools.pairwise(keys)):
        return items
    return sorted(items, key=operator.itemgetter(0))


#: the values of one item in ``VALUE_COLUMNS``' order: (num_ret, num_rel, num_rel_ret, set_P,
#: set_recall, set_F, mrr, map, ndcg)
Values = tuple[int, int, int, float, float, float, float, float, float]
_NOTHING_VALUES: Values = (0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def score(items: Sequence[Evaluable]) -> list[QueryMeasures]:
    """Measures of every item, in one ``evaluate()`` call."""
    return [QueryMeasures(*values) for values in score_values(items)]


def score_values(items: Sequence[Evaluable]) -> list[Values]:
    """:func:`score` as plain tuples (the fields of :class:`QueryMeasures` in order), for the
    write path, which stores them as they are."""
    if len({it.key for it in items}) != len(items):
        raise ValueError("two items share a key")
    if not any(it.judgments for it in items):
        return [_NOTHING_VALUES] * len(items)
    results = evaluate(
        qrels_of(items),
        run_of(items),
        MEASURES,
        average_over_qrels=True,  # a record with nothing retrieved scores an empty ranking
    )
    scores = results.run()
    # per measure one list of per-query values (in MEASURES' order); the counts as int
    # (evaluate() gives floats), first, as in VALUE_COLUMNS
    n = len(STORED_MEASURES)
    averaged = scores.values[:n].tolist()
    counts = scores.values[n:].astype(np.int64).tolist()
    table = cast(list[Values], list(zip(*counts, *averaged, strict=True)))
    if len(table) == len(items) and all(
        q == it.key for q, it in zip(scores.query_ids, items, strict=True)
    ):
        return table  # every item scored, in the items' order (the write path's usual case)
    index = dict(zip(scores.query_ids, table, strict=True))
    # neither judgments nor documents: nothing to evaluate
    return [index.get(it.key, _NOTHING_VALUES) for it in items]


__all__ = [
    "MEASURES",
    "NOTHING",
    "RUN_NAME",
    "TREC_EVAL_MEASURES",
    "Evaluable",
    "QueryMeasures",
    "Values",
    "complete_judgments",
    "first_shown",
    "heuristic_judgments",
    "run_scores",
    "score",
    "score_values",
    "shown_ranking",
]
