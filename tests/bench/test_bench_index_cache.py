"""The table says when index time came from the embedding cache: the runner reads what an
engine reports through ``index_stats()`` and results.json and the table carry the hit rate."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import ClassVar

from bench_suites import Overlap, make_suite
from rich.console import Console

from rankscope.bench import IndexCache, run_benchmark
from rankscope.bench.runner import read_index_stats
from rankscope.engines.base import Document, register_engine
from rankscope.report import render_table
from rankscope.suite import load_suite


@register_engine("benchtest-cached")
class Cached(Overlap):
    """Reports its documents as embedding-cache hits once it has seen them."""

    name = "benchtest-cached"
    seen: ClassVar[set[str]] = set()

    def index(self, docs: Iterable[Document]) -> None:
        super().index(docs)
        ids = {d.id for d in self.docs}
        self.hits, self.misses = len(ids & self.seen), len(ids - self.seen)
        type(self).seen |= ids

    def index_stats(self) -> Mapping[str, int | float]:
        return {
            "embedding_cache_hits": self.hits,
            "embedding_cache_misses": self.misses,
            "embedding_seconds": 0.5,
        }


def test_cold_and_warm_cache_are_reported(tmp_path: Path) -> None:
    Cached.seen.clear()
    engines = """
    - {name: cold, engine: benchtest-cached}
    - {name: warm, engine: benchtest-cached}
    - {name: plain, engine: benchtest-overlap}
    """
    result = run_benchmark(load_suite(make_suite(tmp_path, engines)), tmp_path / "out")
    assert result.config("cold").index_cache == IndexCache(hits=0, misses=5)
    assert result.config("warm").index_cache == IndexCache(hits=5, misses=0)
    assert result.config("warm").index_stats["embedding_seconds"] == 0.5
    assert result.config("plain").index_cache is None

    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    header = next(line for line in text.splitlines() if "configuration" in line)
    assert "emb. cache" in header
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ ")}
    column = [h.strip() for h in header.split("┃")].index("emb. cache")
    assert rows["cold"].split("│")[column].strip() == "0%"
    assert rows["warm"].split("│")[column].strip() == "100%"
    assert "emb. cache: share of the document embeddings read from the embedding cache" in text


def test_index_stats_hook_is_optional_and_never_fails_a_configuration() -> None:
    class Engine:
        def index_stats(self) -> Mapping[str, int]:
            raise RuntimeError("broken report")

    assert read_index_stats(Engine()) == ({}, None)  # type: ignore[arg-type]
    assert read_index_stats(object()) == ({}, None)  # type: ignore[arg-type]
