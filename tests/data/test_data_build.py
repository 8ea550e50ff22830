"""The vectorised pieces behind the readers: hashing, duplicate search, ordering fixes."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from rankscope.data import Run, fingerprints
from rankscope.data._build import QueryBlocks, build_run
from rankscope.data._source import Where
from rankscope.data.fingerprints import find_duplicate, hash_strings
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
