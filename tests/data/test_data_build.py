"""The vectorised pieces behind the readers: hashing, duplicate search, ordering fixes."""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pytest

from rankscope.data import Run, _build, fingerprints
from rankscope.data._build import QueryBlocks
from rankscope.data._source import Where
from rankscope.data.fingerprints import find_duplicate, hash_strings
from rankscope.data.run import build_run
from rankscope.errors import FormatError


@pytest.mark.parametrize("chunk", [3, 1 << 18])
def test_hash_is_a_function_of_the_string(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(fingerprints, "_CHUNK", chunk)
    words = ["a", "bb", "a", "x" * 200, "é", "bb", "x" * 200, "", "ab", "ba", "a\0"]
    arr = pa.array(words)
    h = hash_strings(arr)
    for i, wi in enumerate(words):
        for j, wj in enumerate(words):
            if wi == wj:
                assert h[i] == h[j]
    assert len({int(x) for x, w in zip(h, words, strict=True) if w in ("a", "ab", "ba")}) == 3
    sliced = hash_strings(arr.slice(2, 5))
    assert sliced.tolist() == h[2:7].tolist()
    same_len = pa.array(["abcdefghi", "bcdefghij", "abcdefghi"])
    hs = hash_strings(same_len)
    assert hs[0] == hs[2] != hs[1]
    chunked = hash_strings(pa.chunked_array([arr.slice(0, 4), arr.slice(4)]))
    assert chunked.tolist() == h.tolist()


def test_find_duplicate_reports_the_earliest_repeat() -> None:
    docs = pa.array(["d1", "d2", "d1", "d3", "d2", "d1"])
    rows = np.array([0, 0, 1, 1, 1, 0], dtype=np.int32)
    assert find_duplicate(rows, docs, 2) == (0, 5)
    assert find_duplicate(np.array([0, 1, 2], dtype=np.int32), pa.array(["a"] * 3), 3) is None


def test_forced_hash_collisions_never_report_false_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        fingerprints, "hash_strings", lambda values: np.zeros(len(values), dtype=np.uint64)
    )
    docs = pa.array(["a", "b", "c", "d"])
    assert find_duplicate(np.zeros(4, dtype=np.int32), docs, 1) is None
    docs = pa.array(["a", "b", "c", "b"])
    assert find_duplicate(np.zeros(4, dtype=np.int32), docs, 1) == (1, 3)


def test_build_run_matches_from_dict_on_random_rows() -> None:
    rng = random.Random(7)
    data: dict[str, dict[str, float]] = {}
    rows = []
    for q in range(40):
        qid = str(rng.randrange(1000))
        for d in range(rng.randrange(1, 30)):
            doc = f"doc{rng.randrange(100)}-{d}"
            score = float(rng.choice([1, 2, 3, rng.random()]))
            if doc not in data.setdefault(qid, {}):
                data[qid][doc] = score
                rows.append((qid, doc, score))
        del q
    for shuffle in (False, True):
        if shuffle:
            rng.shuffle(rows)
        qids, docs, scores = zip(*rows, strict=True)
        run = build_run(
            pa.array(qids),
            pa.array(docs),
            np.array(scores),
            name="r",
            where=Where("x"),
        )
        expected = Run.from_dict(data, name="r")
        assert run.query_ids == expected.query_ids
        assert run.doc_ids.to_pylist() == expected.doc_ids.to_pylist()
        assert run.scores.tolist() == expected.scores.tolist()


def test_query_blocks_merge_across_batches() -> None:
    a = QueryBlocks.of(pa.array(["1", "1", "2"]))
    b = QueryBlocks.of(pa.array(["2", "3"]))
    merged = QueryBlocks.concat([a, b])
    assert merged.names == ["1", "2", "3"]
    assert merged.lengths.tolist() == [2, 2, 1]
    with pytest.raises(FormatError, match=r"x:4: duplicate document 'd' for query '2'"):
        build_run(
            merged, pa.array(["a", "b", "d", "d", "e"]), np.ones(5), name="r", where=Where("x")
        )


def _random_rows(seed: int, nan: bool) -> tuple[list[str], list[str], list[float]]:
    """Queries as blocks in no particular order, with ties, rising scores, ids of mixed
    lengths and (with ``nan``) NaN scores."""
    rng = random.Random(seed)
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    for q in rng.sample(range(300), 60):
        n = rng.randrange(1, 80)
        names = rng.sample(range(10**6), n)
        vals = sorted((float(rng.randrange(6)) for _ in range(n)), reverse=rng.random() < 0.8)
        for name, v in zip(names, vals, strict=True):
            qids.append(str(q))
            docs.append("d" * rng.randrange(1, 4) + str(name))
            scores.append(math.nan if nan and rng.random() < 0.02 else v)
    return qids, docs, scores


def _chunked(values: list[str] | list[float], cut: int) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(values[a : a + cut]) for a in range(0, len(values), cut)])


@pytest.mark.parametrize("seed", range(6))
def test_block_copy_matches_the_gather_path(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    qids, docs, scores = _random_rows(seed, nan=seed % 2 == 1)
    cut = [7, 64, 333, 10**6][seed % 4]  # chunks that end inside query blocks
    monkeypatch.setattr(_build, "_GATHER_ROWS", 5)  # rows moved a few at a time

    def build() -> Run:
        return build_run(
            QueryBlocks.of(pa.array(qids)),
            _chunked(docs, cut),
            _chunked(scores, cut),
            name="r",
            where=Where("x"),
        )

    assert _build._copies_blocks(_build._Groups(QueryBlocks.of(pa.array(qids))), pa.array(docs))
    blocks = build()
    monkeypatch.setattr(_build, "_BLOCK_ROWS", 10**9)  # the gather path
    gathered = build()
    assert blocks.query_ids == gathered.query_ids
    assert blocks.offsets.tolist() == gathered.offsets.tolist()
    assert blocks.doc_ids.to_pylist() == gathered.doc_ids.to_pylist()
    assert blocks.scores.tobytes() == gathered.scores.tobytes()  # NaN included
    kept_a, kept_b = fingerprints.recall(blocks), fingerprints.recall(gathered)
    assert kept_a is not None and kept_b is not None
    assert kept_a.tolist() == kept_b.tolist()
    if seed % 2 == 0:
        data: dict[str, dict[str, float]] = {}
        for q, d, s in zip(qids, docs, scores, strict=True):
            data.setdefault(q, {})[d] = s
        expected = Run.from_dict(data, name="r")
        assert blocks.doc_ids.to_pylist() == expected.doc_ids.to_pylist()
        assert blocks.scores.tolist() == expected.scores.tolist()


@pytest.mark.parametrize("gather_path", [False, True])
def test_block_copy_names_the_lines_of_a_repeat(
    monkeypatch: pytest.MonkeyPatch, gather_path: bool
) -> None:
    if gather_path:
        monkeypatch.setattr(_build, "_BLOCK_ROWS", 10**9)
    qids = ["9"] * 3 + ["10"] * 4
    docs = ["a", "b", "c", "x", "y", "x", "z"]
    lines = np.arange(3, 10, dtype=np.int64)

    def build(keep: bool) -> Run:
        return build_run(
            pa.chunked_array([pa.array(qids[:4]), pa.array(qids[4:])]),
            pa.chunked_array([pa.array(docs[:2]), pa.array(docs[2:])]),
            np.array([3.0, 2, 1, 4, 3, 2, 1]),
            name="r",
            where=Where("f"),
            lines=lines,
            keep_duplicates=keep,
        )

    with pytest.raises(FormatError, match=r"f:8: duplicate document 'x' for query '10' "):
        build(False)
    with pytest.raises(FormatError, match=r"first seen on line 6\)"):
        build(False)
    kept = build(True)
    assert kept.doc_ids.to_pylist() == ["x", "y", "x", "z", "a", "b", "c"]
    assert fingerprints.recall(kept) is None  # the cache promises distinct pairs
