"""Judging a pool by hand: ``rankscope annotate``.

- :mod:`~rankscope.judge.annotate.store`: the SQLite store (pairs, annotators, queues, and the
  append-only log of grades, skips, notes and undos);
- :mod:`~rankscope.judge.annotate.assign`: the seeded split of pairs over annotators, with
  overlap;
- :mod:`~rankscope.judge.annotate.export`: qrels, the CSV ``rankscope qrels import`` reads, the
  log as JSONL;
- :mod:`~rankscope.judge.annotate.agreement`: Cohen's kappa between annotators and against LLM
  labels on the overlap, and the disagreements to settle;
- :mod:`~rankscope.judge.annotate.server`: the page and its JSON API (standard library only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.judge.annotate.agreement import AgreementReport, agreement_report
    from rankscope.judge.annotate.assign import assign_pairs
    from rankscope.judge.annotate.export import export_rows, export_text, write_export
    from rankscope.judge.annotate.scale import Scale, template_scale
    from rankscope.judge.annotate.server import AnnotationServer, ServerConfig
    from rankscope.judge.annotate.store import AnnotationStore, default_store_path

__all__ = [
    "AgreementReport",
    "AnnotationServer",
    "AnnotationStore",
    "Scale",
    "ServerConfig",
    "agreement_report",
    "assign_pairs",
    "default_store_path",
    "export_rows",
    "export_text",
    "template_scale",
    "write_export",
]

__getattr__, __dir__ = lazy_exports(globals())
