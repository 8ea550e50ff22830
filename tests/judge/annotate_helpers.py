"""Pools and stores for the annotation tests (tests/judge/test_annotate_*.py)."""

from __future__ import annotations

from pathlib import Path

from rankscope.judge.annotate.scale import template_scale
from rankscope.judge.annotate.store import AnnotationStore
from rankscope.judge.pool import Pool, PoolEntry, write_pool

TOKEN = "test-token-0123456789abcdef"


def make_pool(queries: int = 3, docs: int = 4) -> Pool:
    """``queries`` x ``docs`` pairs: q1..qN, each with d1..dM (doc ids unique per query)."""
    entries = []
    for q in range(1, queries + 1):
        for d in range(1, docs + 1):
            entries.append(
                PoolEntry(
                    query_id=f"q{q}",
                    doc_id=f"q{q}d{d}",
                    provenance=(("bm25", d),),
                    query=f"query {q} about cancer tumors",
                    title=f"Title {q}.{d}",
                    text=f"Passage {d} of query {q}: tumors and cancer treatment.",
                )
            )
    return Pool(tuple(entries))


def write_test_pool(folder: Path, pool: Pool | None = None) -> Path:
    path = folder / "pool.jsonl"
    write_pool(pool or make_pool(), path)
    return path


def new_store(
    path: Path,
    pool: Pool | None = None,
    annotators: list[str] | None = None,
    *,
    overlap: float | None = None,
    seed: int | None = None,
) -> AnnotationStore:
    store = AnnotationStore(path, create=True)
    store.load_pool(pool or make_pool())
    store.set_scale(template_scale())
    store.configure(annotators, overlap=overlap, seed=seed)
    return store


def hostile_strings() -> list[tuple[str, str]]:
    """(name, text) of the shared hostile strings; skips the test when they are absent."""
    import json

    from prerequisites import shared_data

    path = shared_data("hostile", "strings.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(r["name"], r["text"]) for r in rows]
