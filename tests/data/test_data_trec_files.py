"""TREC files from trec_eval's own test folder, read as trec_eval reads them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rankscope.data import Qrels, Run, read_qrels, read_run
from rankscope.data._source import Warner, load
from rankscope.data.trec import read_trec_qrels, read_trec_run
from rankscope.errors import FormatError


def _python_order(path: Path) -> dict[str, list[tuple[str, float]]]:
    """Reference: a plain-Python reading of a well-formed run, sorted the trec_eval way."""
    rows: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text().splitlines():
        w = line.split()
        if w and not w[0].startswith("#"):
            rows.setdefault(w[0], []).append((w[2], float(w[4])))
    for q in rows:
        rows[q].sort(key=lambda ds: ds[0].encode(), reverse=True)
        rows[q].sort(key=lambda ds: ds[1], reverse=True)  # stable: ties keep docno descending
    return rows


def test_qrels_with_comments_match_plain_qrels(trec_eval_dir: Path) -> None:
    plain = read_qrels(trec_eval_dir / "qrels.test").to_dict()
    commented = read_qrels(trec_eval_dir / "qrels.test.with-comments").to_dict()
    # The commented copy has one docno with a `#` inserted: it stays part of the docno.
    assert commented["301"].pop("CR#93E-1860") == 0
    assert plain["301"].pop("CR93E-1860") == 0
    assert plain == commented


def test_qrels_shape(trec_eval_dir: Path) -> None:
    q = read_qrels(trec_eval_dir / "qrels.test")
    assert q.query_ids == ("301", "302", "303")
    assert len(q) == 3681
    assert sum(1 for _, _, g in q if g == 1) == 561
    docs = q.doc_ids.to_pylist()
    for i in range(q.num_queries):
        block = [d.encode() for d in docs[q.offsets[i] : q.offsets[i + 1]]]
        assert block == sorted(block)


def test_graded_qrels_keep_negative_grades(trec_eval_dir: Path) -> None:
    q = read_qrels(trec_eval_dir / "qrels.rel_level")
    grades = sorted(set(q.grades.tolist()))
    assert grades == [-1, 0, 1, 2, 3, 4]


def test_multi_judgment_qrels_are_refused_as_plain_qrels(trec_eval_dir: Path) -> None:
    with pytest.raises(FormatError, match=r"qrels\.123:\d+: duplicate judgment"):
        read_qrels(trec_eval_dir / "qrels.123")


def test_run_order_and_name(trec_eval_dir: Path) -> None:
    path = trec_eval_dir / "results.test"
    run = read_run(path)
    assert run.name == "STANDARD"
    assert run.query_ids == ("301", "302", "303")
    assert len(run) == 1500
    assert {q: run.ranking(q) for q in run.query_ids} == _python_order(path)


def test_run_with_trailing_words(trec_eval_dir: Path) -> None:
    path = trec_eval_dir / "results.trunc"
    run = read_run(path)
    assert run.name == "STANDARD"
    assert run.query_ids == ("301", "303")
    assert len(run) == 584
    assert {q: run.ranking(q) for q in run.query_ids} == _python_order(path)


def test_docnos_with_hash_are_not_comments(trec_eval_dir: Path) -> None:
    run = read_run(trec_eval_dir / "results.comment.test")
    assert run.name == "comment.test"
    assert (run.num_queries, len(run)) == (301, 30100)
    assert all("#" in d for d in run.doc_ids.to_pylist())
    qrels = read_qrels(trec_eval_dir / "qrels.comment.test")
    assert qrels.num_queries == 31
    assert "msmarco_v2.1_doc_00_880019750#4_1633802806" in qrels.query("2024-127266")


@pytest.mark.parametrize(
    "name", ["results.test", "results.trunc", "results.comment.test", "results-302.test"]
)
def test_fast_and_exact_paths_agree_on_runs(
    trec_eval_dir: Path, name: str, same_run: Callable[[Run, Run], None]
) -> None:
    path = trec_eval_dir / name
    exact = read_trec_run(load(path), name=None, strict=True, warn=Warner(None), fast=False)
    fast = read_trec_run(load(path), name=None, strict=True, warn=Warner(None), fast=True)
    same_run(exact, fast)


@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level", "qrels.comment.test"])
def test_fast_and_exact_paths_agree_on_qrels(
    trec_eval_dir: Path, name: str, same_qrels: Callable[[Qrels, Qrels], None]
) -> None:
    path = trec_eval_dir / name
    exact = read_trec_qrels(load(path), strict=True, warn=Warner(None), fast=False)
    fast = read_trec_qrels(load(path), strict=True, warn=Warner(None), fast=True)
    same_qrels(exact, fast)


def test_trec_readers_open_a_path_or_file_and_call_a_plain_warning_function(
    tmp_path: Path,
) -> None:
    # what ``rankscope trec_eval`` calls, without reaching into the package's private modules
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("q1 0 d1 1x\n")
    run_path = tmp_path / "r.txt"
    run_path.write_text("q1 Q0 d1 1 0.5x r\n")
    warnings: list[str] = []
    qrels = read_trec_qrels(qrels_path, strict=False, warn=warnings.append)
    with run_path.open("rb") as handle:
        run = read_trec_run(handle, name=None, strict=False, warn=warnings.append)
    assert qrels.to_dict() == {"q1": {"d1": 1}} and run.name == "r"
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "grade '1x' read as 1 (trec_eval reads grades with C atol)",
        "score '0.5x' read as 0.5 (trec_eval reads scores with C atof)",
    ]
