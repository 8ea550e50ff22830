"""A small benchmark for the report and compare tests: queries ``w<i>`` in two categories,
engines that find every relevant document, most, half of them, none, or fail (deterministic)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rankscope.bench import BenchmarkResult, run_benchmark
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.suite import load_suite


class Finder(Engine):
    """Finds query ``w<i>``'s document ``d<i>`` first when ``keep(i)``; pads with others."""

    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    thread_safe = True

    def __init__(self, **options: object) -> None:
        self.ids: list[str] = []

    def index(self, docs: Iterable[Document]) -> None:
        self.ids = [d.id for d in docs]

    def keep(self, i: int) -> bool:
        return True

    def _search(self, query: Query, k: int) -> list[Hit]:
        i = int(query.text[1:])
        wanted = f"d{i}"
        others = [Hit(d, 0.5) for d in self.ids if d != wanted][: k - 1]
        return [Hit(wanted, 1.0), *others] if self.keep(i) else others


@register_engine("reporttest-all")
class All(Finder):
    name = "reporttest-all"


@register_engine("reporttest-most")
class Most(Finder):
    """Misses every fifth query."""

    name = "reporttest-most"

    def keep(self, i: int) -> bool:
        return i % 5 != 0


@register_engine("reporttest-half")
class Half(Finder):
    name = "reporttest-half"

    def keep(self, i: int) -> bool:
        return i % 2 == 0


@register_engine("reporttest-none")
class Nothing(Finder):
    name = "reporttest-none"

    def keep(self, i: int) -> bool:
        return False

    def _search(self, query: Query, k: int) -> list[Hit]:
        return []


@register_engine("reporttest-broken")
class Broken(Finder):
    name = "reporttest-broken"

    def _search(self, query: Query, k: int) -> list[Hit]:
        raise RuntimeError("connection reset by peer")


ENGINES = [
    ("half", "reporttest-half"),
    ("all", "reporttest-all"),
    ("most", "reporttest-most"),
    ("sqlite", "sqlite"),
]


def run_report_bench(
    folder: Path, queries: int = 30, engines: list[tuple[str, str]] | None = None
) -> tuple[BenchmarkResult, Path]:
    """Run the benchmark of ``engines`` (name, engine) over ``queries`` queries in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = "".join(
        json.dumps({"_id": f"d{i}", "title": f"doc {i}", "text": f"w{i} words"}) + "\n"
        for i in range(queries)
    )
    (folder / "docs.jsonl").write_text(docs)
    lines = [
        "name: report-bench",
        "description: a tiny benchmark for the report",
        "corpus: {type: jsonl, path: docs.jsonl}",
        "settings: {k: [1, 3], max_k: 5, warmup: 0, repeats: 3}",
        "queries:",
        *(
            f"  - {{id: q{i:02d}, text: w{i}, category: {'small' if i < 10 else 'large'}, "
            f"judgments: {{d{i}: 2}}}}"
            for i in range(queries)
        ),
        "engines:",
        *(f"  - {{name: {name}, engine: {engine}}}" for name, engine in engines or ENGINES),
    ]
    (folder / "suite.yaml").write_text("\n".join(lines) + "\n")
    out = folder / "out"
    return run_benchmark(load_suite(folder / "suite.yaml"), out), out
