"""Per-query diffs of a benchmark's configurations, from its output folder.

The rankings are the run files ``results.json`` names (``runs/<name>.trec``), evaluated as the
benchmark evaluated them (``evaluation`` in results.json: the view's qrels file, ``-c``, ``-M``,
``-l``), so every Δ equals the difference of the stored per-query values. Categories come from
results.json; query texts and documents from the suite the benchmark ran
(``suite.resolved.yaml``), unless files are given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.diff.core import DocumentSource, RunDiff, SortOrder, attach_texts, diff_runs, pick
from rankscope.errors import InputError, RankscopeError

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.bench.results import BenchmarkResult, ViewName
    from rankscope.data import Qrels, Run

RESOLVED_SUITE = "suite.resolved.yaml"


def diff_benchmark(
    source: str | os.PathLike[str],
    config_a: str,
    config_b: str,
    measure: str | None = None,
    *,
    view: ViewName | None = None,
    depth: int | None = None,
    queries: Mapping[str, str] | str | os.PathLike[str] | None = None,
    corpus: DocumentSource | str | os.PathLike[str] | None = None,
    sort: SortOrder = "change",
) -> RunDiff:
    """Compare configuration ``config_b`` with ``config_a`` of the benchmark in ``source`` (its
    output folder or results.json) on ``measure`` (default: the headline), over a view's
    queries (default: the table's). ``queries`` and ``corpus`` (files or values) replace the
    suite's texts."""
    return diff_configurations(
        source,
        config_a,
        [config_b],
        measure,
        view=view,
        depth=depth,
        queries=queries,
        corpus=corpus,
        sort=sort,
    )[0]


def diff_configurations(
    source: str | os.PathLike[str] | BenchFolder,
    baseline: str,
    others: Sequence[str],
    measure: str | None = None,
    *,
    view: ViewName | None = None,
    depth: int | None = None,
    queries: Mapping[str, str] | str | os.PathLike[str] | None = None,
    corpus: DocumentSource | str | os.PathLike[str] | None = None,
    sort: SortOrder = "change",
    texts: bool = True,
) -> list[RunDiff]:
    """One diff per configuration of ``others`` against ``baseline`` (A), reading the qrels,
    the suite's queries and its corpus once."""
    bench = source if isinstance(source, BenchFolder) else BenchFolder.open(source)
    chosen = bench.view_name(view)
    wanted = measure or bench.result.headline
    if wanted == "latency" or wanted.startswith("latency"):
        raise InputError(
            "latency is not a ranking measure; diff compares rankings",
            value=wanted,
            hint="see per-query latency with rankscope compare OUT_DIR -m latency",
        )
    evaluation = bench.result.evaluation
    qrels = bench.qrels(chosen)
    first = bench.run(baseline)
    diffs = [
        diff_runs(
            qrels,
            first,
            bench.run(other),
            wanted,
            depth=depth,
            eval_depth=evaluation.depth,
            rel_level=evaluation.rel_level,
            sort=sort,
            names=(baseline, other),
            left_out=bench.left_out(chosen),
        )
        for other in others
    ]
    if texts:
        query_texts, documents = bench.texts(queries, corpus)
        diffs = attach_texts(
            diffs, queries=query_texts, categories=bench.categories(), corpus=documents
        )
    else:
        diffs = attach_texts(diffs, categories=bench.categories())
    return [
        replace(d, source=str(bench.folder), view=chosen, notes=(*d.notes, *bench.notes))
        for d in diffs
    ]


@dataclass
class BenchFolder:
    """A benchmark's output folder, read once: its results, qrels files and run files."""

    result: BenchmarkResult
    folder: Path
    notes: list[str] = field(default_factory=list)
    _qrels: dict[str, Qrels] = field(default_factory=dict, repr=False)
    _runs: dict[str, Run] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, source: str | os.PathLike[str]) -> BenchFolder:
        from rankscope.bench.results import read_results

        path = Path(source)
        return cls(read_results(path), path if path.is_dir() else path.parent)

    def view_name(self, view: ViewName | None) -> ViewName:
        chosen = view or self.result.default_view
        if chosen not in self.result.query_sets:
            raise InputError(
                f"no view {chosen!r} in these results",
                path=self.folder / "results.json",
                hint=f"use {' or '.join(self.result.query_sets)}",
            )
        return chosen

    def qrels(self, view: ViewName) -> Qrels:
        found = self._qrels.get(view)
        if found is None:
            from rankscope.data import read_qrels

            found = read_qrels(self._file(self.result.query_sets[view].qrels_file))
            self._qrels[view] = found
        return found

    def run(self, name: str) -> Run:
        found = self._runs.get(name)
        if found is not None:
            return found
        from rankscope.data import read_run

        names = [c.name for c in self.result.configurations]
        try:
            config = self.result.config(name)
        except KeyError:
            raise InputError(
                f"no configuration {name!r} in this benchmark",
                path=self.folder / "results.json",
                hint=f"configurations: {', '.join(names) or '(none)'}",
            ) from None
        if not config.ok or config.run_file is None:
            raise InputError(
                f"configuration {name!r} has no ranking ({config.status}: {config.error})",
                path=self.folder / "results.json",
                hint="choose one that ran: " + ", ".join(c.name for c in self.result.successful),
            )
        found = read_run(self._file(config.run_file))
        self._runs[name] = found
        return found

    def left_out(self, view: ViewName) -> dict[str, str]:
        """``{query_id: why}`` for the judged queries the view leaves out: those some
        configuration skipped or failed (the ``answered`` view compares only the others)."""
        result = self.result
        kept = set(result.query_sets[view].query_ids)
        judged = {q for q, j in zip(result.query_ids, result.judged, strict=True) if j}
        out: dict[str, list[str]] = {}
        for config in result.successful:
            for qid in config.skipped_queries:
                out.setdefault(qid, []).append(f"skipped by {config.name}")
            for qid in config.failed_queries:
                out.setdefault(qid, []).append(f"failed in {config.name}")
        return {q: ", ".join(why) for q, why in out.items() if q in judged and q not in kept}

    def categories(self) -> dict[str, str | None]:
        return dict(zip(self.result.query_ids, self.result.query_categories, strict=True))

    def texts(
        self,
        queries: Mapping[str, str] | str | os.PathLike[str] | None,
        corpus: DocumentSource | str | os.PathLike[str] | None,
    ) -> tuple[Mapping[str, str], DocumentSource | str | os.PathLike[str] | None]:
        """Query texts and a document source: those given, else the suite's. A suite that can
        no longer be read (a corpus moved since) gives none, with a note."""
        if isinstance(queries, str | os.PathLike):
            from rankscope.judge.io import read_queries

            queries = read_queries(queries)
        if queries is not None and corpus is not None:
            return queries, corpus
        try:
            suite_queries, suite_corpus = self._suite_texts()
        except (RankscopeError, OSError) as error:
            self.notes.append(f"no texts from the suite ({error}); pass --queries and --corpus")
            return queries or {}, corpus
        return (queries if queries is not None else suite_queries), (
            corpus if corpus is not None else suite_corpus
        )

    def _suite_texts(self) -> tuple[dict[str, str], DocumentSource]:
        import yaml
        from pydantic import ValidationError

        from rankscope.suite.corpus import corpus_queries, iter_documents, read_jsonl_queries
        from rankscope.suite.schema import QueriesFile, SuiteSpec

        path = self.folder / RESOLVED_SUITE
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            spec = SuiteSpec.model_validate(data)
        except FileNotFoundError:
            raise InputError("the benchmark's suite is not there", path=path) from None
        except (yaml.YAMLError, ValidationError) as error:
            raise InputError(f"cannot read the suite: {error}", path=path) from None
        base = self.folder
        found: list[Any]
        if isinstance(spec.queries, list):
            texts = {q.id: q.text for q in spec.queries}
        elif isinstance(spec.queries, QueriesFile):
            texts = {q.id: q.text for q in read_jsonl_queries(base / spec.queries.path)}
        else:
            found = corpus_queries(spec.corpus, base) or []
            texts = {q.id: q.text for q in found}
        corpus_spec = spec.corpus

        def documents(wanted: set[str]) -> Mapping[str, Any]:
            try:
                return pick(iter_documents(corpus_spec, base), wanted)
            except (RankscopeError, OSError) as error:
                self.notes.append(f"no document texts from the suite's corpus ({error})")
                return {}

        return texts, documents

    def _file(self, relative: str) -> Path:
        path = self.folder / relative
        if not path.is_file():
            raise InputError(
                "a file results.json names is missing",
                path=path,
                hint="the output folder must be complete (rerun the benchmark to write it)",
            )
        return path


__all__ = ["RESOLVED_SUITE", "BenchFolder", "diff_benchmark", "diff_configurations"]
