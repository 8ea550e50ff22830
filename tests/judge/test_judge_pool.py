"""Depth-k pooling with provenance, and the pool files in three formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.data import Run
from rankscope.engines.base import Document
from rankscope.errors import FormatError, InputError
from rankscope.judge.pool import build_pool, make_snippet, read_pool, write_pool

A = Run.from_dict({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d9": 1.0}}, name="bm25")
B = Run.from_dict({"1": {"d3": 9.0, "d4": 8.0, "d1": 7.0}, "3": {"d5": 1.0}}, name="dense")
CORPUS = {
    f"d{i}": Document(id=f"d{i}", title=f"Title {i}", text=f"text of doc {i} " * 5)
    for i in range(1, 10)
}
QUERIES = {"1": "wing flutter", "2": "heat transfer", "3": "boundary layer"}


def test_depth_dedup_and_provenance() -> None:
    pool = build_pool([A, B], depth=2, queries=QUERIES, corpus=CORPUS)
    got = {(e.query_id, e.doc_id): e.provenance for e in pool.entries}
    assert got == {
        ("1", "d1"): (("bm25", 1),),
        ("1", "d2"): (("bm25", 2),),
        ("1", "d3"): (("dense", 1),),
        ("1", "d4"): (("dense", 2),),
        ("2", "d9"): (("bm25", 1),),
        ("3", "d5"): (("dense", 1),),
    }
    deeper = build_pool([A, B], depth=3)
    assert dict(((e.query_id, e.doc_id), e.provenance) for e in deeper.entries)[("1", "d1")] == (
        ("bm25", 1),
        ("dense", 3),
    )
    assert len(deeper) == 6  # d1 and d3 are found by both runs, pooled once


def test_order_by_query_then_best_rank() -> None:
    pool = build_pool([A, B], depth=3)
    assert [(e.query_id, e.doc_id) for e in pool.entries][:4] == [
        ("1", "d1"), ("1", "d3"), ("1", "d2"), ("1", "d4"),
    ]  # fmt: skip


def test_query_filter_and_duplicate_run_names() -> None:
    twin = Run.from_dict({"1": {"d7": 1.0}}, name="bm25")
    pool = build_pool([A, twin], depth=5, query_ids=["1"])
    # named as rankscope eval names them (no file here: a numeric suffix)
    assert pool.run_names == ("bm25", "bm25-2")
    assert {e.query_id for e in pool.entries} == {"1"}


def test_bad_depth() -> None:
    with pytest.raises(InputError, match="depth"):
        build_pool([A], depth=0)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".yaml"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    pool = build_pool([A, B], depth=3, queries=QUERIES, corpus=CORPUS)
    path = tmp_path / f"pool{suffix}"
    write_pool(pool, path)
    back = read_pool(path)
    assert [
        (e.query_id, e.doc_id, e.provenance, e.query, e.title, e.text) for e in back.entries
    ] == [(e.query_id, e.doc_id, e.provenance, e.query, e.title, e.text) for e in pool.entries]


def test_unknown_suffix_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\.jsonl, \.csv or \.yaml"):
        write_pool(build_pool([A], 1), tmp_path / "pool.txt")
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"query_id": "1", "doc_id": "d1"}\n{"query_id": "1", "doc_id": "d1"}\n')
    with pytest.raises(FormatError, match=r"dup.jsonl:2: duplicate"):
        read_pool(dup)


def test_snippet_cuts_at_a_word() -> None:
    assert make_snippet("short  text") == "short text"
    long = "word " * 100
    snip = make_snippet(long, 50)
    assert snip.endswith("…") and len(snip) <= 51 and not snip[:-1].endswith(" ")


def test_query_selection_and_pool_stats() -> None:
    from rankscope.judge.pool import pool_stats, select_query_ids

    many = Run.from_dict({str(q): {"d1": 1.0} for q in (10, 2, 1, "x")}, name="m")
    assert select_query_ids([many], None, 3) == ["1", "2", "10"]  # numeric ids in numeric order
    assert select_query_ids([many], ["x", "2"], 1) == ["x"]
    assert select_query_ids([many], None, None) is None
    pool = build_pool([A, B], depth=2, queries=QUERIES, corpus=CORPUS)
    stats = pool_stats(pool, {"1": "wing"}, {"d1": CORPUS["d1"]})
    assert (stats.pairs, stats.queries, stats.mean_per_query) == (6, 3, 2.0)
    assert [(r.name, r.pairs, r.unique) for r in stats.runs] == [("bm25", 3, 3), ("dense", 3, 3)]
    assert stats.queries_without_text == ("2", "3") and stats.docs_without_text == 5
