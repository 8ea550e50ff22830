"""Exports (qrels, the `qrels import` CSV, the log) and agreement on the overlap."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from annotate_helpers import make_pool, new_store

from rankscope.cli.app import main
from rankscope.errors import InputError
from rankscope.judge.agreement import label_agreement
from rankscope.judge.annotate.agreement import agreement_report
from rankscope.judge.annotate.export import export_rows, export_text, write_export
from rankscope.judge.annotate.store import AnnotationStore
from rankscope.judge.annotations import read_annotations
from rankscope.judge.io import load_qrels


@pytest.fixture
def store(tmp_path: Path) -> AnnotationStore:
    """alice grades pairs 1-5 as 0 1 2 3 3, bob pairs 1-6 as 0 1 3 3 2 1: they differ on 3, 5."""
    s = new_store(tmp_path / "a.sqlite")
    for name in ("alice", "bob"):
        s.join(name)
    for pair, grade in zip(range(1, 6), [0, 1, 2, 3, 3], strict=True):
        s.grade("alice", pair, grade)
    for pair, grade in zip(range(1, 7), [0, 1, 3, 3, 2, 1], strict=True):
        s.grade("bob", pair, grade)
    s.skip("alice", 7)
    s.grade("bob", 7, 2)
    s.undo("bob")  # bob's 7 is undone: not exported
    s.note("alice", 2, '=HYPERLINK("http://x","y")')
    s.note("bob", 3, "mentions it once")
    return s


def test_one_annotators_qrels(store: AnnotationStore) -> None:
    text, result = export_text(store, "qrels", "alice")
    assert text == (
        "q1 0 q1d1 0\nq1 0 q1d2 1\nq1 0 q1d3 2\nq1 0 q1d4 3\nq2 0 q2d1 3\n"
    )  # the skip of pair 7 is no grade
    assert result is not None and result.disagreements == ()
    assert export_text(store, "qrels", "bob")[0] == (
        "q1 0 q1d1 0\nq1 0 q1d2 1\nq1 0 q1d3 3\nq1 0 q1d4 3\nq2 0 q2d1 2\nq2 0 q2d2 1\n"
    )


def test_combined_export_leaves_disagreements_out_or_stops(store: AnnotationStore) -> None:
    text, result = export_text(store, "qrels")
    assert text == "q1 0 q1d1 0\nq1 0 q1d2 1\nq1 0 q1d4 3\nq2 0 q2d2 1\n"
    assert result is not None and result.disagreements == (
        ("q1", "q1d3", {"alice": 2, "bob": 3}),
        ("q2", "q2d1", {"alice": 3, "bob": 2}),
    )
    assert [r.annotators for r in result.rows] == [("alice", "bob")] * 3 + [("bob",)]
    with pytest.raises(InputError, match=r"2 pair\(s\) are graded differently.*\(q1, q1d3\)"):
        export_rows(store, disagreements="error")


def test_csv_is_what_qrels_import_reads(store: AnnotationStore, tmp_path: Path) -> None:
    out = tmp_path / "alice.csv"
    write_export(store, out, "csv", "alice")
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert [r["grade"] for r in rows] == ["0", "1", "2", "3", "3"]
    assert rows[1]["note"] == '\'=HYPERLINK("http://x","y")'  # no formula in a spreadsheet
    assert rows[1]["query"] == "query 1 about cancer tumors" and rows[1]["annotators"] == "alice"
    pool_file = tmp_path / "pool.jsonl"
    from rankscope.judge.pool import write_pool

    write_pool(make_pool(), pool_file)
    graded, blank = read_annotations(out, None)
    assert blank == 0 and graded == store.grades()["alice"]
    # and through the command: the same qrels as the qrels export
    imported = tmp_path / "imported.qrels"
    code = main(["qrels", "import", str(out), "--pool", str(pool_file), "--out", str(imported)])
    assert code == 0
    assert imported.read_text() == export_text(store, "qrels", "alice")[0]


def test_csv_ids_a_spreadsheet_would_run_are_neutralised_and_read_back(tmp_path: Path) -> None:
    """Ids are cells too: ``=HYPERLINK(...)`` gets its apostrophe, and qrels import (and any
    CSV reader of rankscope) takes it off again, so the ids round-trip."""
    from rankscope.judge.pool import Pool, PoolEntry, read_pool, write_pool

    ids = ['=HYPERLINK("http://x","y")', "'=q", "-1", "@a"]
    pool = Pool(
        tuple(
            PoolEntry(query_id=q, doc_id=f"+{q}", provenance=(("-run", 1),), query="=1+1")
            for q in ids
        )
    )
    s = new_store(tmp_path / "a.sqlite", pool)
    s.join("alice")
    for pair in range(1, 5):
        s.grade("alice", pair, pair - 1)
    out = tmp_path / "alice.csv"
    write_export(s, out, "csv", "alice")
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))[1:]
    assert [r[:3] for r in rows] == [
        ['\'=HYPERLINK("http://x","y")', '\'+=HYPERLINK("http://x","y")', "0"],
        ["''=q", "'+'=q", "1"],
        ["-1", "'+-1", "2"],
        ["'@a", "'+@a", "3"],
    ]
    assert {r[5] for r in rows} == {"'=1+1"}
    graded, blank = read_annotations(out, None)
    assert blank == 0 and graded == s.grades()["alice"]
    assert sorted(q for q, _ in graded) == sorted(ids)
    pool_csv = tmp_path / "pool.csv"
    write_pool(pool, pool_csv)
    assert "\n''=q,'=1+1,'+'=q," in pool_csv.read_text(encoding="utf-8").replace("\r\n", "\n")
    assert read_pool(pool_csv).entries == pool.entries


def test_log_holds_every_action(store: AnnotationStore) -> None:
    text, result = export_text(store, "jsonl")
    assert result is None
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r["kind"] for r in rows].count("undo") == 1
    undo = next(r for r in rows if r["kind"] == "undo")
    undone = next(r for r in rows if r["id"] == undo["undoes"])
    assert (undone["annotator"], undone["doc_id"], undone["grade"]) == ("bob", "q2d3", 2)
    assert set(rows[0]) == {
        "id", "annotator", "query_id", "doc_id", "kind", "grade", "note", "undoes",
        "elapsed_ms", "created_at",
    }  # fmt: skip
    with pytest.raises(InputError, match="every annotator"):
        export_text(store, "jsonl", "alice")


def test_agreement_on_the_overlap(store: AnnotationStore) -> None:
    """alice 0 1 2 3 3 against bob 0 1 3 3 2 on five pairs: kappa as label_agreement gives it,
    and as worked out by hand: linear 1 - (2/15)/(32/75) = 11/16, quadratic 1 - (2/45)/(2.72/9)
    = 29/34, binary (grade >= 1) identical, 1."""
    store.set_references("llm", {("q1", "q1d1"): 0, ("q1", "q1d2"): 3, ("q1", "q1d3"): 3})
    report = agreement_report(store)
    (pair,) = report.between_annotators
    assert (pair.a, pair.b, pair.shared) == ("alice", "bob", 5)
    a = pair.labels
    assert a is not None
    assert a.exact == pytest.approx(0.6, abs=1e-12)
    assert a.kappa_binary == pytest.approx(1.0, abs=1e-12)
    assert a.kappa_linear == pytest.approx(11 / 16, abs=1e-12)
    assert a.kappa_quadratic == pytest.approx(29 / 34, abs=1e-12)
    assert (a.only_a, a.only_b) == (0, 1)  # bob alone graded q2d2
    direct = label_agreement(
        {"q1": {"q1d1": 0, "q1d2": 1, "q1d3": 2, "q1d4": 3}, "q2": {"q2d1": 3}},
        {"q1": {"q1d1": 0, "q1d2": 1, "q1d3": 3, "q1d4": 3}, "q2": {"q2d1": 2, "q2d2": 1}},
    )
    assert direct == a  # the one implementation
    refs = {(r.a, r.b): r for r in report.with_references}
    assert list(refs) == [("alice", "llm"), ("bob", "llm")]
    assert refs[("alice", "llm")].shared == 3
    assert refs[("alice", "llm")].labels is not None
    assert refs[("alice", "llm")].labels.exact == pytest.approx(1 / 3, abs=1e-12)  # d1 only
    assert [(d.pair.doc_id, d.grades, d.references, d.notes) for d in report.disagreements] == [
        ("q1d3", {"alice": 2, "bob": 3}, {"llm": 3}, {"bob": "mentions it once"}),
        ("q2d1", {"alice": 3, "bob": 2}, {}, {}),
    ]


def test_no_overlap_means_no_kappa(tmp_path: Path) -> None:
    s = new_store(tmp_path / "a.sqlite", annotators=["alice", "bob"], overlap=0.0)
    s.grade("alice", s.queue("alice")[0], 2)
    s.grade("bob", s.queue("bob")[0], 2)
    (pair,) = agreement_report(s).between_annotators
    assert (pair.shared, pair.labels) == (0, None)


def test_exports_match_the_per_annotator_qrels_agree_reads(
    store: AnnotationStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per-annotator qrels feed `rankscope agree`, which gives the same kappa."""
    for name in ("alice", "bob"):
        write_export(store, tmp_path / f"{name}.qrels", "qrels", name)
    qa, qb = load_qrels(tmp_path / "alice.qrels"), load_qrels(tmp_path / "bob.qrels")
    assert label_agreement(qa, qb) == agreement_report(store).between_annotators[0].labels
    code = main(["agree", str(tmp_path / "alice.qrels"), str(tmp_path / "bob.qrels"), "--json"])
    assert code == 0
    shown = json.loads(capsys.readouterr().out)["labels"]
    assert shown["kappa_linear"] == pytest.approx(11 / 16, abs=1e-12)
