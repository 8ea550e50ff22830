"""The value :func:`~rankscope.metrics.evaluate.evaluate` returns: per-query scores and aggregates.

Inside, each run keeps one float64 matrix (measures × queries) and one vector of aggregates;
dictionaries and tables are built on request, so that evaluating 10,000 queries stays cheap.

Aggregates (:meth:`Results.mean`) are trec_eval's ``all`` values for trec_eval's measures
(arithmetic mean for most, geometric mean for ``gm_map``/``gm_bpref``, sums for ``num_ret``,
``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``) and the arithmetic mean over the
evaluated queries for the extra measures; with ``average_over_qrels`` (trec_eval ``-c``) every
qrels query counts, those the run lacks scored as trec_eval scores them (0 for most measures).
``gm_map`` and ``gm_bpref`` exist only as aggregates: their per-query values are NaN (``null``
in JSON); ``num_q`` is 1 per query. The aggregate of a count is always the sum of its per-query
values: under ``-c`` with a relevance level other than 1 trec_eval prints instead, for
``num_rel``, the number of judgments graded above 0 in the whole qrels file
(``rankscope trec_eval`` reproduces that line).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import MeasureError, RankscopeError
from rankscope.metrics.names import Measure, parse_measure
from rankscope.util.extras import needs_extra

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

# Measures whose values are counts: shown without decimals.
_COUNT_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})


@dataclass(frozen=True, eq=False, slots=True)
class RunScores:
    """Scores of one run: ``values[m, q]`` is measure ``m`` on query ``query_ids[q]``.

    ``means[m]`` is the aggregate of measure ``m``; ``missing_query_ids`` are the qrels queries
    the run lacks (listed in ``query_ids`` only with ``average_over_qrels``, scored as trec_eval
    ``-c`` scores them: on a one-document stand-in ranking, which gives 0 for most measures but
    not for ``num_rel``, ``ideal_dcg`` or a ``utility``/``rbp_resid`` given parameters).
    """

    name: str
    query_ids: tuple[str, ...]
    values: NDArray[np.float64]
    means: NDArray[np.float64]
    missing_query_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.values.setflags(write=False)
        self.means.setflags(write=False)


class Results:
    """Scores of one or more runs on the same measures; immutable.

    - ``run_names``: the runs, in the order given.
    - ``measures``: canonical measure names (``"ndcg@10"``, ``"map"``); ``measure_objects``: the
      :class:`~rankscope.metrics.names.Measure` values.
    - :meth:`mean`, :meth:`per_query`, :meth:`values`: aggregates, per-query dictionaries, and the
      per-query array of one measure.  ``run`` may be omitted when there is one run.
    - :meth:`to_frame` (pandas, long format), :meth:`to_dict` / :meth:`to_json` (shape documented
      at :meth:`to_dict`), and a table in the terminal (``str``) and in notebooks (HTML, rich).

    Each run is scored on the queries it shares with the qrels (trec_eval's rule); with
    ``average_over_qrels`` every run is scored on all qrels queries, so per-query rows line up.
    :meth:`common_query_ids` gives the queries every run was scored on.
    """

    __slots__ = ("_measures", "_runs", "_settings")

    def __init__(
        self,
        measures: Sequence[Measure],
        runs: Sequence[RunScores],
        settings: Mapping[str, object] | None = None,
    ) -> None:
        self._measures = tuple(measures)
        names = [r.name for r in runs]
        if len(set(names)) != len(names):
            raise RankscopeError(f"run names must be unique (got {names})")
        for r in runs:
            if r.values.shape != (len(self._measures), len(r.query_ids)):
                raise ValueError(f"scores of run {r.name!r} do not match its measures and queries")
        self._runs = {r.name: r for r in runs}
        self._settings = dict(settings or {})

    # ------------------------------------------------------------------ access
    @property
    def run_names(self) -> tuple[str, ...]:
        return tuple(self._runs)

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(str(m) for m in self._measures)

    @property
    def measure_objects(self) -> tuple[Measure, ...]:
        return self._measures

    @property
    def settings(self) -> dict[str, object]:
        """The evaluation options (depth, rel_level, judged_only, average_over_qrels)."""
        return dict(self._settings)

    def run(self, run: str | None = None) -> RunScores:
        """The scores of one run (``None``: the only run)."""
        if run is None:
            if len(self._runs) != 1:
                raise RankscopeError(
                    f"these results hold {len(self._runs)} runs; name one of "
                    f"{', '.join(map(repr, self._runs))}"
                )
            return next(iter(self._runs.values()))
        try:
            return self._runs[run]
        except KeyError:
            raise RankscopeError(
                f"no run named {run!r} in these results; runs: {', '.join(map(repr, self._runs))}"
            ) from None

    def query_ids(self, run: str | None = None) -> tuple[str, ...]:
        """The queries ``run`` was scored on, byte order."""
        return self.run(run).query_ids

    def common_query_ids(self) -> tuple[str, ...]:
        """Queries every run was scored on, byte order (all of them under ``-c``)."""
        runs = list(self._runs.values())
        if not runs:
            return ()
        shared = set(runs[0].query_ids).intersection(*(r.query_ids for r in runs[1:]))
        return tuple(q for q in runs[0].query_ids if q in shared)

    def _measure_index(self, measure: str | Measure) -> int:
        m = parse_measure(measure)
        try:
            return self._measures.index(m)
        except ValueError:
            raise MeasureError(
                f"{m} was not evaluated; these results hold {', '.join(self.measures)}"
            ) from None

    def mean(self, run: str | None = None) -> dict[str, float]:
        """Aggregate of every measure for ``run``: ``{measure: value}``."""
        scores = self.run(run)
        return dict(zip(self.measures, scores.means.tolist(), strict=True))

    def values(
        self,
        measure: str | Measure,
        run: str | None = None,
        query_ids: Sequence[str] | None = None,
    ) -> NDArray[np.float64]:
        """Per-query values of one measure (read-only), aligned with :meth:`query_ids`, or with
        ``query_ids`` when given (e.g. :meth:`common_query_ids`, to pair two runs)."""
        scores = self.run(run)
        row: NDArray[np.float64] = scores.values[self._measure_index(measure)]
        if query_ids is None or tuple(query_ids) == scores.query_ids:
            return row
        position = {q: i for i, q in enumerate(scores.query_ids)}
        absent = [q for q in query_ids if q not in position]
        if absent:
            raise RankscopeError(
                f"run {scores.name!r} was not scored on {len(absent)} of the queries asked for "
                f"(e.g. {absent[0]!r}); use common_query_ids() or average_over_qrels=True"
            )
        picked = row[np.fromiter((position[q] for q in query_ids), np.int64, len(query_ids))]
        picked.setflags(write=False)
        return picked

    def per_query(self, run: str | None = None) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for ``run``."""
        scores = self.run(run)
        names = self.measures
        columns = scores.values.T.tolist()
        return {
            q: dict(zip(names, row, strict=True))
            for q, row in zip(scores.query_ids, columns, strict=True)
        }

    def __iter__(self) -> Iterator[str]:
        return iter(self._runs)

    def __len__(self) -> int:
        return len(self._runs)

    # ------------------------------------------------------------------ export
    def to_frame(self) -> pd.DataFrame:
        """A pandas long table with columns ``run, query_id, measure, value`` (per query)."""
        try:
            import pandas as pd  # the pandas extra, for this method alone
        except ImportError:  # pragma: no cover - depends on the environment
            raise RankscopeError(needs_extra("Results.to_frame()", "pandas", "pandas")) from None
        frames = []
        names = np.asarray(self.measures, dtype=object)
        for r in self._runs.values():
            nm, nq = r.values.shape
            frames.append(
                pd.DataFrame(
                    {
                        "run": np.full(nm * nq, r.name, dtype=object),
                        "query_id": np.tile(np.asarray(r.query_ids, dtype=object), nm),
                        "measure": np.repeat(names, nq),
                        "value": r.values.reshape(-1),
                    }
                )
            )
        if not frames:
            return pd.DataFrame(columns=["run", "query_id", "measure", "value"])
        return pd.concat(frames, ignore_index=True)

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """A JSON-ready dictionary, stable shape::

            {"measures": ["map", "ndcg@10", ...],
             "settings": {"depth": null, "rel_level": 1, "judged_only": false,
                          "average_over_qrels": false},
             "runs": [{"name": "bm25", "num_queries": 50, "missing_query_ids": [...],
                       "mean": {"map": 0.31, ...},
                       "per_query": {"q1": {"map": 0.5, ...}, ...}}]}

        ``per_query`` is left out when ``per_query=False``.  NaN becomes ``null``.
        """
        runs = []
        for name, r in self._runs.items():
            entry: dict[str, Any] = {
                "name": name,
                "num_queries": len(r.query_ids),
                "missing_query_ids": list(r.missing_query_ids),
                "mean": _clean(self.mean(name)),
            }
            if per_query:
                entry["per_query"] = {q: _clean(v) for q, v in self.per_query(name).items()}
            runs.append(entry)
        return {"measures": list(self.measures), "settings": self.settings, "runs": runs}

    def to_json(self, per_query: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_query=per_query), indent=indent, allow_nan=False)

    # ------------------------------------------------------------------ display
    def table_rows(self) -> tuple[list[str], list[list[str]]]:
        """Header and rows of the summary table: runs as rows, measures as columns."""
        header = ["run", *self.measures]
        rows = [
            [
                name,
                *(
                    format_value(m, v)
                    for m, v in zip(self._measures, r.means.tolist(), strict=True)
                ),
            ]
            for name, r in self._runs.items()
        ]
        return header, rows

    def __str__(self) -> str:
        header, rows = self.table_rows()
        widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0])
            rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
            return "  ".join([first, *rest]).rstrip()

        out = [line(header), "  ".join("-" * w for w in widths)]
        out.extend(line(r) for r in rows)
        return "\n".join(out)

    def __repr__(self) -> str:
        nq = {len(r.query_ids) for r in self._runs.values()}
        queries = count(nq.pop(), "query", "queries") if len(nq) == 1 else "queries per run differ"
        runs = count(len(self._runs), "run", "runs")
        measures = count(len(self._measures), "measure", "measures")
        head = f"<Results: {runs}, {measures}, {queries}>"
        return f"{head}\n{self}"

    def _repr_html_(self) -> str:
        from rankscope.util.markup import html_text

        header, rows = self.table_rows()
        head = "".join(f"<th>{html_text(h)}</th>" for h in header)
        body = "".join(
            "<tr>"
            + f"<th style='text-align:left'>{html_text(r[0])}</th>"
            + "".join(f"<td style='text-align:right'>{html_text(c)}</td>" for c in r[1:])
            + "</tr>"
            for r in rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __rich__(self) -> Any:
        # rich: when a console prints the results (rankscope eval's table is this one)
        from rich.table import Table
        from rich.text import Text

        # Names are shown as written: Text is not read as markup or :emoji: codes (a run called
        # "[b]m25" or "a:ok:b" keeps its brackets and colons), and nothing loads rich's emoji
        # table.
        header, rows = self.table_rows()
        table = Table(show_edge=False)
        table.add_column(Text(header[0]))
        for name in header[1:]:
            table.add_column(Text(name), justify="right")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        return table


def count(n: int, one: str, many: str) -> str:
    """``1 query``, ``2 queries``: a number with its noun in the right form."""
    return f"{n} {one if n == 1 else many}"


def format_value(measure: Measure, value: float) -> str:
    """A value as tables show it: counts as integers, the rest with 4 decimals (as trec_eval)."""
    if math.isnan(value):
        return "nan"
    if measure.name in _COUNT_MEASURES:
        return str(round(value))
    return f"{value:.4f}"


def _clean(values: Mapping[str, float]) -> dict[str, float | None]:
    return {k: (None if math.isnan(v) else v) for k, v in values.items()}


__all__ = ["Results", "RunScores", "count", "format_value"]
