"""The join through the (query, doc) fingerprints the run reader keeps must equal the others."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.data import Qrels, Run, fingerprints, read_run
from rankscope.data.fingerprints import hash_strings
from rankscope.data.run import renamed
from rankscope.metrics import align as align_module
from rankscope.metrics.align import Aligned, align

doc_ids = st.text(alphabet="abcXYZ09é_", min_size=1, max_size=20)


def _read(run: dict[str, dict[str, float]]) -> Run:
    lines = [f"{q} Q0 {d} 0 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.txt"
        path.write_text("".join(lines), encoding="utf-8")
        return read_run(path)


def _as_tuple(a: Aligned) -> tuple[object, ...]:
    return (
        a.query_ids,
        a.offsets.tolist(),
        a.grades.tolist(),
        a.judged.tolist(),
        a.num_rel.tolist(),
        a.num_judged.tolist(),
        a.qrels_grades.tolist(),
        a.missing_query_ids,
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[Qrels, dict[str, dict[str, float]]]:
    docs = draw(st.lists(doc_ids, min_size=1, max_size=12, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("1", "2", "10", "3"):
        if draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        if draw(st.booleans()):
            ranked = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 1.5, 2.0])) for d in ranked}
    return Qrels.from_dict(qrels), run


@settings(max_examples=60, deadline=None)
@given(
    case=cases(),
    depth=st.one_of(st.none(), st.integers(0, 4)),
    judged_only=st.booleans(),
)
def test_align_cached_keys_equal_rehashed(
    case: tuple[Qrels, dict[str, dict[str, float]]], depth: int | None, judged_only: bool
) -> None:
    qrels, plain = case
    if not plain:
        return
    read = _read(plain)
    assert fingerprints.recall(read) is not None
    built = Run.from_dict(plain)
    assert fingerprints.recall(built) is None
    fast = align(qrels, read, depth=depth, judged_only=judged_only)
    other = align(qrels, built, depth=depth, judged_only=judged_only)
    assert _as_tuple(fast) == _as_tuple(other)


def test_align_cached_keys_collision_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 2}, "2": {"c": 1}})
    run = _read({"1": {"a": 2.0, "b": 1.0, "z": 0.5}, "2": {"c": 1.0, "a": 0.0}})
    expected = _as_tuple(align(qrels, run))
    kept = fingerprints.recall(run)
    assert kept is not None
    # every row claims the first row's fingerprint
    run = dataclasses.replace(run)
    fingerprints.remember(run, np.full(len(run), kept[0], dtype=np.uint64))
    calls: list[object] = []
    real = align_module._join_exact

    def spy(*args: object) -> object:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(align_module, "_join_exact", spy)
    assert _as_tuple(align(qrels, run)) == expected
    assert calls  # the hashed join noticed the mismatching strings and stepped aside


def test_renamed_runs_keep_their_fingerprints() -> None:
    run = _read({"1": {"a": 2.0}})
    copy = renamed(run, "other")
    assert copy.name == "other" and fingerprints.recall(copy) is fingerprints.recall(run)
    assert fingerprints.recall(dataclasses.replace(run, name="x")) is None  # other copies: none


def test_hash_strings_depends_only_on_the_string() -> None:
    words = ["", "a", "abcdefgh", "abcdefghi", "x" * 40, "é" * 70]
    alone = [int(hash_strings(pa.array([w]))[0]) for w in words]
    together = hash_strings(pa.array(words)).tolist()
    padded = hash_strings(pa.array([*words, "y" * 300])).tolist()[: len(words)]
    assert alone == together == padded
    assert len(set(alone)) == len(alone)
