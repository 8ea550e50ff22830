"""What a benchmark's comparison table shows, whatever the format.

One row per configuration, measures as columns, the best value of each column highlighted
(highest for quality, lowest for latency and index time), over one query set whose size the
title states: by default the judged queries every configuration answered (``view="all"``: every
judged query, a skipped one scoring 0). Beside the headline: its 95% interval, the difference
from the best configuration and the randomised Tukey HSD p-value, ``▼`` marking a configuration
significantly worse than the best (:mod:`rankscope.bench.statistics`). Below the table: how
those were computed, queries skipped, sent as plain text or failed, failed configurations with
their error, then the recommendations. The formats render these columns and notes:
:mod:`.terminal` (a rich table fitted to the terminal), :mod:`.markdown`, :mod:`.csv` (every
column at full precision); :mod:`.json` writes the whole result.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from rankscope.bench.evaluation import GAIN_NOTE, has_gain_label, measure_label
from rankscope.bench.results import (
    BenchmarkResult,
    ConfigResult,
    ConfigurationComparison,
    Recommendation,
    ViewName,
    ViewStatistics,
)
from rankscope.report.numbers import FRONT_MARK, WORSE, fmt_p, fmt_value

Better = Literal["max", "min", "none"]

RECOMMENDATION_TITLES = {
    "best_quality": "Best quality",
    "fastest": "Fastest",
    "best_balance": "Best balance",
}


CACHE_HEADER = "emb. cache"

#: what --by-category prints when there is nothing to break down
NO_CATEGORIES = (
    "--by-category: no query has a category (give queries a `category:` in the suite), so "
    "there is no table per category"
)


@dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[ConfigResult], float | None]
    better: Better
    digits: int
    #: how a value is shown, when not as a number with ``digits`` decimals
    show: Callable[[float], str] | None = None
    #: the whole cell, for columns that are not one number (an interval, a marked difference)
    cell: Callable[[ConfigResult], str] | None = None
    #: left out first when the table is wider than the terminal (0: always shown)
    drop_rank: int = 0
    #: the numbers a CSV row gives for a column that shows several (an interval's ends)
    parts: tuple[tuple[str, Callable[[ConfigResult], float | None]], ...] = ()

    def text(self, value: float | None) -> str:
        if value is not None and self.show is not None:
            return self.show(value)
        return _fmt(value, self.digits)

    def render(self, config: ConfigResult) -> str:
        return self.cell(config) if self.cell is not None else self.text(self.value(config))


@dataclass(frozen=True)
class Note:
    """A line under the table: what it says and how it is shown (a rich style)."""

    text: str
    style: str = ""


def table_measures(result: BenchmarkResult) -> list[str]:
    """The measures shown as columns: the headline first, then the suite's ``measures`` when it
    names them, else a selection for its cut-offs."""
    settings = result.settings
    if settings.measures:
        wanted = list(result.measures)
    else:
        ks = sorted(set(settings.k))
        ref = 10 if 10 in ks else ks[0]
        wanted = ["ndcg@10", "map", "mrr", f"P@{ref}"]
        wanted += [f"recall@{k}" for k in ks]
        wanted += [f"recall@{settings.max_k}", f"hit@{ref}"]
    return [m for m in dict.fromkeys([result.headline, *wanted]) if m in result.measures]


def columns(result: BenchmarkResult, view: ViewName | None = None) -> list[Column]:
    """The table's columns: measures, latency percentiles, index time."""
    chosen = view or result.default_view
    measures = table_measures(result)
    # when the table must be narrower, secondary measures go first (last to first), then the
    # latency and index extras, the interval and p (compare prints them); the vector columns and
    # the front mark last; the headline, Δ best and p50 stay
    top = len(measures) + 10
    cols = [
        Column(measure_label(m), _summary(chosen, m), "max", 4, drop_rank=top + i)
        for i, m in enumerate(measures)
    ]
    cols[0] = Column(cols[0].header, cols[0].value, "max", 4)
    cols[1:1] = statistics_columns(result, chosen)
    cols += [
        Column("p50 ms", _latency(chosen, "p50_ms"), "min", 3),
        Column("p50 IQR", _latency(chosen, "p50_iqr_ms"), "none", 3, drop_rank=10),
        Column("p95 ms", _latency(chosen, "p95_ms"), "min", 3, drop_rank=8),
        Column("index s", lambda c: c.index_time_s, "min", 2, drop_rank=9),
    ]
    if any(c.index_cache is not None for c in result.successful):
        cols.append(
            Column(
                CACHE_HEADER,
                _cache_rate,
                "none",
                0,
                show=lambda v: f"{v:.0%}",
                drop_rank=7,
            )
        )
    cols += vector_columns(result, chosen, 2)
    return cols


ANN_HEADER = "ann R@{k}"
FRONT_HEADER = "Pareto"


def ann_cutoff(result: BenchmarkResult) -> int:
    """The cut-off of the ``ann_recall`` column: 10 when the suite measures it, else the
    smallest k."""
    ks = sorted(set(result.settings.k))
    return 10 if 10 in ks else ks[0]


def vector_columns(result: BenchmarkResult, view: ViewName, rank: int) -> list[Column]:
    """Columns for vector searches and index sweeps, each shown when some configuration has
    it: ``ann_recall@k`` (against exact search), the store's build time and index size, and
    the Pareto front mark."""
    ok = result.successful
    cols: list[Column] = []
    ref = ann_cutoff(result)
    key = f"ann_recall@{ref}"
    if any(c.view(view).ann_recall for c in ok):
        cols.append(
            Column(
                ANN_HEADER.format(k=ref),
                lambda c: c.view(view).ann_recall.get(key),
                "max",
                4,
                drop_rank=rank + 1,
            )
        )
    if any("build_seconds" in c.index_stats for c in ok):
        cols.append(
            Column(
                "build s",
                lambda c: c.index_stats.get("build_seconds"),
                "min",
                3,
                drop_rank=rank + 3,
            )
        )
    if any("index_bytes" in c.index_stats for c in ok):
        cols.append(
            Column(
                "index MB",
                lambda c: _megabytes(c.index_stats.get("index_bytes")),
                "min",
                2,
                drop_rank=rank + 2,
            )
        )
    stats = result.statistics.get(view)
    front = None if stats is None or stats.pareto is None else set(stats.pareto.configs)
    if front is not None and len(ok) > 1:
        cols.append(
            Column(
                FRONT_HEADER,
                lambda c: float(c.name in front),  # 1.0 on the front (CSV)
                "none",
                0,
                cell=lambda c: FRONT_MARK if c.name in front else "",
                drop_rank=1,  # among the last to go when the terminal is narrow
            )
        )
    return cols


def _megabytes(value: float | None) -> float | None:
    return None if value is None else value / 1e6


def fit_columns(
    cols: Sequence[Column], width: int, measure: Callable[[Sequence[Column]], int]
) -> tuple[list[Column], list[Column]]:
    """The columns that fit ``width`` terminal cells (``measure`` gives a table's width), and
    those left out: secondary columns go first (highest ``drop_rank``), never the headline,
    Δ best or p50."""
    kept = list(cols)
    dropped: list[Column] = []
    for col in sorted((c for c in cols if c.drop_rank), key=lambda c: -c.drop_rank):
        if measure(kept) <= width:
            break
        kept.remove(col)
        dropped.append(col)
    return kept, dropped


def quality_statistics(
    result: BenchmarkResult, view: ViewName | None = None
) -> ConfigurationComparison | None:
    """The headline comparison of a view (None when it could not be made, or for results
    written before schema version 3)."""
    found = result.statistics.get(view or result.default_view)
    return None if found is None else found.quality


def statistics_columns(result: BenchmarkResult, view: ViewName) -> list[Column]:
    """The headline's 95% interval, the difference from the best and its p-value."""
    stats = quality_statistics(result, view)
    if stats is None:
        return []

    def row(config: ConfigResult) -> tuple[float | None, float | None] | None:
        try:
            r = stats.row(config.name)
        except KeyError:
            return None
        low, high = r.mean_interval.low, r.mean_interval.high
        return (low if math.isfinite(low) else None), (high if math.isfinite(high) else None)

    def interval(config: ConfigResult) -> str:
        found = row(config)
        if found is None or found[0] is None or found[1] is None:
            return "-"
        return f"[{found[0]:.4f}, {found[1]:.4f}]"

    def end(i: int) -> Callable[[ConfigResult], float | None]:
        return lambda c: None if (found := row(c)) is None else found[i]

    def number(field: str) -> Callable[[ConfigResult], float | None]:
        def value(config: ConfigResult) -> float | None:
            try:
                found = getattr(stats.row(config.name), field)
            except KeyError:
                return None
            return None if found is None else float(found)

        return value

    parts = (("95% CI low", end(0)), ("95% CI high", end(1)))
    cols = [Column("95% CI", lambda c: None, "none", 4, cell=interval, parts=parts, drop_rank=6)]
    if not stats.compared:
        return cols

    def delta(config: ConfigResult) -> str:
        if config.name == stats.baseline:
            return "best"
        try:
            r = stats.row(config.name)
        except KeyError:
            return "-"
        mark = f" {WORSE}" if r.significant and r.direction == "worse" else ""
        return fmt_value(r.delta, 4, signed=True, none="-") + mark

    def p_value(config: ConfigResult) -> str:
        if config.name == stats.baseline:
            return ""
        try:
            return fmt_p(stats.row(config.name).p_adjusted, none="-")
        except KeyError:
            return "-"

    cols.append(Column("Δ best", number("delta"), "none", 4, cell=delta))
    cols.append(Column("p", number("p_adjusted"), "none", 4, cell=p_value, drop_rank=5))
    return cols


def statistics_notes(
    result: BenchmarkResult, view: ViewName | None = None, folder: str | None = None
) -> list[Note]:
    """How the interval, the difference and the p-value were computed, and what to run to
    recompute them."""
    chosen = view or result.default_view
    found: ViewStatistics | None = result.statistics.get(chosen)
    if found is None:
        return []
    out = [Note(f"statistics: {n}", "yellow") for n in found.notes]
    stats = found.quality
    if stats is None:
        return out
    level = f"{found.level * 100:g}%"
    text = f"{level} CI: t interval of the mean over the {stats.num_queries} queries"
    if stats.compared:
        text += (
            f"; Δ best, p: {stats.label} minus the best's ({stats.baseline}), "
            f"{stats.test_name} ({stats.family}; B = {found.resamples:,}, seed {found.seed}); "
            f"{WORSE} significantly worse than the best (p <= {found.alpha:g}). Recompute: "
            f"rankscope compare {shlex.quote(folder) if folder else '<output folder>'} "
            f"{stats.command}"
        )
    out.append(Note(text, "dim"))
    out += [Note(f"statistics: {w}", "yellow") for w in stats.warnings]
    return out


def category_columns(
    result: BenchmarkResult, category: str, view: ViewName | None = None
) -> list[Column]:
    chosen = view or result.default_view
    return [
        Column(measure_label(m), _category(chosen, category, m), "max", 4)
        for m in table_measures(result)
    ]


def title(result: BenchmarkResult, view: ViewName | None = None) -> str:
    """What the table compares: the suite, the query set and its size, the corpus size."""
    chosen = view or result.default_view
    suite = result.suite
    n = len(result.query_sets[chosen].query_ids)
    total = suite.num_judged_queries
    docs = f"{suite.num_documents} documents"
    skipping = any(c.skipped_queries for c in result.successful)
    failing = any(c.failed_queries for c in result.successful)
    if chosen == "all":
        which = " or ".join(w for w, on in (("skipped", skipping), ("failed", failing)) if on)
        scored = f"; a {which} query scores 0" if which else ""
        return f"{suite.name}: all {total} judged {query_word(total)}{scored}, {docs}"
    if n == total:
        return f"{suite.name}: {total} judged {query_word(total)}, {docs}"
    left = "skipped or failed" if failing else "skipped"
    return (
        f"{suite.name}: the {n} judged {query_word(n)} every configuration answered "
        f"({total - n} of {total} {left} by some configuration are left out), {docs}"
    )


def notes(
    result: BenchmarkResult,
    view: ViewName | None = None,
    folder: str | None = None,
    shown: Collection[str] | None = None,
) -> list[Note]:
    """Everything printed under the table, in order (``folder``: where the results are, for
    the commands the notes give; ``shown``: the headers of the columns the table shows, when
    it leaves some out: the notes about the others are left out too)."""
    chosen = view or result.default_view
    ok = result.successful

    def showing(header: str) -> bool:
        return shown is None or header in shown

    out = [Note(f"warning: {w}", "bold yellow") for w in result.warnings]
    out += statistics_notes(result, chosen, folder)
    for c in ok:
        if c.skipped_queries:
            out.append(Note(_skipped_note(c, chosen), "yellow"))
        if c.as_text_queries:
            out.append(Note(_as_text_note(c), "yellow"))
        if c.failed_queries:
            out.append(Note(_failed_note(c, chosen), "yellow"))
    for c in result.configurations:
        if c.rerun_reason:
            out.append(Note(f"{c.name}: run again, {c.rerun_reason}", "dim"))
    resumed = [c.name for c in ok if c.resumed]
    if resumed:
        out.append(Note(f"reused from checkpoint (--fresh to redo): {', '.join(resumed)}", "dim"))
    for failure in result.failures:
        out.append(Note(f"FAILED {failure.name}: {failure.error}", "bold red"))
    if any(c.index_cache is not None for c in ok) and showing(CACHE_HEADER):
        out.append(
            Note(
                f"{CACHE_HEADER}: share of the document embeddings read from the embedding "
                "cache while indexing; at 100% index s measured reading the cache, not "
                "embedding",
                "dim",
            )
        )
    if has_gain_label(table_measures(result)):
        out.append(Note(GAIN_NOTE, "dim"))
    out += vector_notes(result, chosen, showing)
    out += search_notes(result)
    repeats = result.settings.repeats
    out.append(
        Note(
            f"latency: each query's median over {repeats} timed "
            f"{'pass' if repeats == 1 else 'passes'}, percentiles over queries; p50 IQR: "
            "interquartile range of the p50 across passes",
            "dim",
        )
    )
    recommendations = result.recommended(chosen)
    if recommendations.note:
        out.append(Note(recommendations.note, "bold yellow"))
    elif recommendations.left_out:
        why = "; ".join(f"{name}: {reason}" for name, reason in recommendations.left_out.items())
        out.append(Note(f"not recommended: {why}", "yellow"))
    return out


def vector_notes(
    result: BenchmarkResult,
    view: ViewName,
    showing: Callable[[str], bool] = lambda header: True,
) -> list[Note]:
    """What the vector-search columns and the front mark mean (those ``showing`` says the
    table shows)."""
    ok = result.successful
    out: list[Note] = []
    k = ann_cutoff(result)
    if any(c.view(view).ann_recall for c in ok) and showing(ANN_HEADER.format(k=k)):
        out.append(
            Note(
                f"ann R@{k}: ann_recall@{k}, the share of the exact {k} nearest neighbours of the "
                "query vector (brute force over the same vectors) in the configuration's top "
                f"{k}, mean over the view's queries; 1 for exact search",
                "dim",
            )
        )
    if any("build_seconds" in c.index_stats for c in ok) and (
        showing("build s") or showing("index MB")
    ):
        out.append(
            Note(
                "build s: the store building its index from the vectors (embedding excluded); "
                "index MB: its files on disk, or its serialised size for in-memory indexes",
                "dim",
            )
        )
    exact = [c.name for c in ok if c.index_stats.get("exact_search")]
    if exact:
        out.append(
            Note(
                f"exact search whatever the index settings (Qdrant local mode): {', '.join(exact)}",
                "yellow",
            )
        )
    stats = result.statistics.get(view)
    if stats is not None and stats.pareto is not None and len(ok) > 1 and showing(FRONT_HEADER):
        p = stats.pareto
        out.append(Note(f"{FRONT_MARK} Pareto front: {p.rule}", "dim"))
        out += [Note(f"Pareto front: {n}", "yellow") for n in p.notes]
    return out


def search_notes(result: BenchmarkResult) -> list[Note]:
    """What the engines really did: parameters they searched with other than given, queries
    that got fewer hits than asked for, configurations that repeat another, and what the
    engines' libraries said while indexing (once per message)."""
    ok = result.successful
    out: list[Note] = []
    changed = [
        f"{c.name} {', '.join(differences)}" for c in ok if (differences := changed_params(c))
    ]
    if changed:
        k = max((c.fetch_k or 0) for c in ok)
        out.append(Note(f"searched {k} deep with other values than given: {'; '.join(changed)}"))
    short = [f"{c.name} on {len(c.short_queries)} of {_answered(c)}" for c in ok if c.short_queries]
    if short:
        out.append(
            Note(
                f"fewer hits than asked for (the index reached fewer vectors): {'; '.join(short)}",
                "yellow",
            )
        )
    same = [
        f"{c.name} = {c.duplicate_of.of}"
        + (" (same rankings)" if c.duplicate_of.reason == "same_rankings" else "")
        for c in ok
        if c.duplicate_of is not None
    ]
    if same:
        out.append(Note(f"duplicates, identical searches: {'; '.join(same)}", "yellow"))
    said: dict[str, list[str]] = {}
    for c in ok:
        for text in c.engine_notes:
            said.setdefault(text, []).append(c.name)
    for text, names in said.items():
        out.append(Note(f"{_names(names)}: {text}", "dim"))
    return out


def changed_params(config: ConfigResult) -> list[str]:
    """``name value (given X)`` for each option the engine searched with another value of."""
    options = config.config.options
    return [
        f"{key} {value} (given {options[key]})"
        for key, value in config.effective_params.items()
        if key in options and options[key] != value
    ]


def _answered(config: ConfigResult) -> str:
    ran = ("answered", "as_text")
    n = sum(1 for s in config.per_query.status if s in ran) if config.per_query else 0
    return f"{n} {query_word(n)}"


def _names(names: Sequence[str], shown: int = 3) -> str:
    """Configuration names, the first few then how many more."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def recommendation_line(key: str, rec: Recommendation, label: str) -> str:
    """A pick in a few words (the full reason is in results.json and the report): the value
    it was picked by and how many others are within noise of it (``label``: the headline's)."""
    n = len(rec.within_noise)
    others = f"{n} other{'s' if n != 1 else ''}"
    if key == "best_quality":
        return f"{label} {rec.value:.4f}, {others} within noise"
    if key == "fastest":
        return f"p50 {rec.value:.3f} ms, {others} within noise on per-query latency"
    if key == "best_balance":
        return f"balance {rec.value:.3f}"
    return rec.reason


def _skipped_note(config: ConfigResult, view: ViewName) -> str:
    skipped = config.skipped_queries
    reasons = "; ".join(sorted(set(skipped.values())))
    n = len(skipped)
    if view == "all":
        return f"{config.name}: {n} {query_word(n)} skipped and scored 0 ({reasons})"
    return f"{config.name}: {n} {query_word(n)} skipped, left out of the comparison ({reasons})"


def _failed_note(config: ConfigResult, view: ViewName) -> str:
    """How many queries the engine could not run, and the first one's error."""
    failed = config.failed_queries
    n = len(failed)
    qid, error = next(iter(failed.items()))
    fate = "scored 0" if view == "all" else "left out of the comparison"
    return f"{config.name}: {n} {query_word(n)} failed and {fate} (first: {qid}: {error})"


def _as_text_note(config: ConfigResult) -> str:
    sent = config.as_text_queries
    kinds = sorted({note.split(" ", 1)[0] for note in sent.values()})
    n = len(sent)
    return (
        f"{config.name}: {n} {', '.join(kinds)} {query_word(n)} sent as plain text "
        f"(unsupported_queries: as_text)"
    )


def _cache_rate(config: ConfigResult) -> float | None:
    return None if config.index_cache is None else config.index_cache.hit_rate


def query_word(n: int) -> str:
    return "query" if n == 1 else "queries"


def best(col: Column, rows: Sequence[ConfigResult]) -> float | None:
    values = [v for v in (col.value(r) for r in rows) if v is not None]
    if not values or col.better == "none":
        return None
    return max(values) if col.better == "max" else min(values)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _summary(view: ViewName, measure: str) -> Callable[[ConfigResult], float | None]:
    return lambda c: c.view(view).summary.get(measure)


def _latency(view: ViewName, key: str) -> Callable[[ConfigResult], float | None]:
    def value(c: ConfigResult) -> float | None:
        found = getattr(c.view(view).latency, key)
        return None if found is None else float(found)

    return value


def _category(
    view: ViewName, category: str, measure: str
) -> Callable[[ConfigResult], float | None]:
    def value(c: ConfigResult) -> float | None:
        scores = c.view(view).per_category.get(category)
        return None if scores is None else scores.means.get(measure)

    return value


__all__ = [
    "RECOMMENDATION_TITLES",
    "Column",
    "Note",
    "best",
    "category_columns",
    "columns",
    "fit_columns",
    "notes",
    "quality_statistics",
    "query_word",
    "recommendation_line",
    "statistics_columns",
    "table_measures",
    "title",
]
