"""The one table of stored measures: for each per-query value a record's row stores, its column
(``store/models.py`` declares it, its migration created it), its name in the API, the design's
summary field that averages it, and the :class:`~rankscope.metrics.Measure` that
:func:`rankscope.evaluate` computes into it. The write path's ``evaluate()`` call and value
order, the API's measure names and sort choices, the summaries and the alert rules all take
their names from here (``tests/service/test_service_measure_table.py`` checks that the
models' columns and the bodies agree). The store is handed the columns it averages; it knows
no measure."""

from __future__ import annotations

from dataclasses import dataclass

from rankscope.metrics.names import Measure, parse_measure


@dataclass(frozen=True)
class StoredMeasure:
    """A per-query value a record's row stores: its column, its name in the API (``sort=``,
    ``measures=``, comparisons), the design's summary field that averages it, and the measure
    :func:`rankscope.evaluate` computes into it, with trec_eval's name for it (``rankscope eval
    -m``)."""

    column: str
    api_name: str
    summary_field: str | None
    measure: Measure
    trec_eval: str


def _stored(
    column: str, api_name: str, summary_field: str | None, name: str, trec_eval: str | None = None
) -> StoredMeasure:
    return StoredMeasure(column, api_name, summary_field, parse_measure(name), trec_eval or name)


#: The one table of the stored measures: the six averaged ones in the API's order, from which
#: the summaries, sort choices, comparisons and alert rules take their names.
STORED_MEASURES = (
    _stored("precision", "precision", "average_precision", "set_P"),
    _stored("recall", "recall", "average_recall", "set_recall"),
    _stored("f1_score", "f1Score", "average_f1_score", "set_F"),
    _stored("mean_reciprocal_rank", "meanReciprocalRank", "average_mrr", "mrr", "recip_rank"),
    _stored("average_precision", "averagePrecision", "average_ap", "map"),
    _stored("ndcg", "ndcg", "average_ndcg", "ndcg"),
)
#: the counts stored beside them (integers)
STORED_COUNTS = (
    _stored("total_retrieved", "totalRetrieved", None, "num_ret"),
    _stored("total_relevant", "totalRelevant", None, "num_rel"),
    _stored("relevant_retrieved", "relevantRetrieved", None, "num_rel_ret"),
)
#: the columns of the averaged measures
MEASURE_COLUMNS = tuple(m.column for m in STORED_MEASURES)
#: every computed column in a row's order (the fields of ``ingest.measures.QueryMeasures``):
#: the counts, then the measures
VALUE_COLUMNS = tuple(m.column for m in (*STORED_COUNTS, *STORED_MEASURES))
#: the API's names of the averaged measures -> their columns
MEASURE_API_NAMES = {m.api_name: m.column for m in STORED_MEASURES}


__all__ = [
    "MEASURE_API_NAMES",
    "MEASURE_COLUMNS",
    "STORED_COUNTS",
    "STORED_MEASURES",
    "VALUE_COLUMNS",
    "StoredMeasure",
]
