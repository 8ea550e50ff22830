"""Importing reviewed annotations: validation by line and merge policies."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.data import Qrels
from rankscope.errors import InputError
from rankscope.judge.annotations import import_annotations, merge_qrels
from rankscope.judge.pool import Pool, PoolEntry

POOL = Pool(tuple(PoolEntry(q, d, (("r", 1),)) for q, d in [("1", "a"), ("1", "b"), ("2", "c")]))


def test_jsonl_with_blank_rows(tmp_path: Path) -> None:
    f = tmp_path / "ann.jsonl"
    f.write_text(
        '{"query_id": "1", "doc_id": "a", "grade": 2}\n'
        '{"query_id": "1", "doc_id": "b", "grade": null}\n'
        '{"query_id": "2", "doc_id": "c", "grade": "3"}\n'
    )
    r = import_annotations(f, POOL)
    assert r.qrels.to_dict() == {"1": {"a": 2}, "2": {"c": 3}}
    assert (r.annotated, r.blank, r.added) == (2, 1, 2)


def test_errors_are_listed_with_their_lines(tmp_path: Path) -> None:
    f = tmp_path / "ann.csv"
    f.write_text(
        "query_id,doc_id,grade\n"
        "1,a,2\n"
        "9,a,1\n"  # unknown query
        "1,zz,1\n"  # unknown doc
        "2,c,7\n"  # out of range
        "1,b,high\n"  # not an integer
        '1,"multi\nline",\n'  # blank grade on a two-line record: skipped
        "2,c,x\n"  # line 9
    )
    with pytest.raises(InputError) as info:
        import_annotations(f, POOL)
    text = str(info.value)
    assert "5 invalid annotation row(s)" in text
    assert f"{f}:3: unknown query id '9'" in text
    assert f"{f}:4: unknown doc id 'zz'" in text
    assert f"{f}:5: grade 7 is outside the scale 0..3" in text
    assert f"{f}:6: grade 'high' is not a whole number" in text
    assert f"{f}:9: grade 'x'" in text


def test_yaml_lines(tmp_path: Path) -> None:
    f = tmp_path / "ann.yaml"
    f.write_text(
        "- query_id: '1'\n  doc_id: a\n  grade: 1\n- query_id: '1'\n  doc_id: b\n  grade: -1\n"
    )
    with pytest.raises(InputError, match=r"ann.yaml:4: grade -1 is outside"):
        import_annotations(f, POOL)
    ok = import_annotations(f, POOL, min_grade=-1)
    assert ok.qrels.to_dict() == {"1": {"a": 1, "b": -1}}


def test_contradicting_rows_in_one_file(tmp_path: Path) -> None:
    f = tmp_path / "ann.jsonl"
    f.write_text(
        '{"query_id": "1", "doc_id": "a", "grade": 2}\n'
        '{"query_id": "1", "doc_id": "a", "grade": 0}\n'
    )
    with pytest.raises(InputError, match=r"graded 2 on line 1 and 0 here"):
        import_annotations(f, POOL)


def test_merge_policies() -> None:
    existing = Qrels.from_dict({"1": {"a": 0, "x": 1}})
    human = {("1", "a"): 3, ("1", "b"): 2, ("1", "x"): 1}
    merged, added, conflicts, unchanged = merge_qrels(existing, human, "prefer-human")
    assert merged.to_dict() == {"1": {"a": 3, "b": 2, "x": 1}}
    assert (added, unchanged, len(conflicts)) == (1, 1, 1)
    assert (conflicts[0].existing, conflicts[0].human, conflicts[0].kept) == (0, 3, 3)
    kept, *_ = merge_qrels(existing, human, "prefer-existing")
    assert kept.to_dict() == {"1": {"a": 0, "b": 2, "x": 1}}
    with pytest.raises(InputError, match=r"1 annotation\(s\) conflict.*\(1, a\): existing 0"):
        merge_qrels(existing, human, "error")
    with pytest.raises(InputError, match="policy"):
        merge_qrels(existing, human, "newest")  # type: ignore[arg-type]
