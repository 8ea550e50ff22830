"""unique_run_names: the one rule that tells runs named alike apart (eval, pool and agree)."""

from __future__ import annotations

from pathlib import Path

from rankscope import evaluate
from rankscope.data import Run, fingerprints, read_run, unique_run_names


def _run(name: str, source: str | None = None) -> Run:
    run = Run.from_dict({"q": {"d": 1.0}}, name=name)
    return Run(run.name, run.query_ids, run.offsets, run.doc_ids, run.scores, source=source)


def _names(runs: list[Run]) -> list[str]:
    return [r.name for r in unique_run_names(runs)]


def test_distinct_names_are_kept_as_they_are() -> None:
    runs = [_run("bm25", "a/x.run"), _run("dense", "a/x.run")]
    assert unique_run_names(runs) == runs


def test_runs_named_alike_are_named_by_their_file_stem() -> None:
    runs = [_run("STANDARD", "out/bm25.run.gz"), _run("STANDARD", "out/dense.trec"), _run("x")]
    assert _names(runs) == ["bm25", "dense", "x"]  # the run with a unique name keeps it


def test_file_names_when_stems_collide_then_numbered_suffixes() -> None:
    assert _names([_run("r", "a/run.txt"), _run("r", "a/run.tsv")]) == ["run.txt", "run.tsv"]
    # the same file twice, or runs built in memory: -2, -3 in order
    assert _names([_run("r", "a/run.txt"), _run("r", "b/run.txt"), _run("r", "c/run.txt")]) == [
        "r",
        "r-2",
        "r-3",
    ]
    assert _names([_run("r"), _run("r"), _run("r-2")]) == ["r", "r-3", "r-2"]


def test_a_stem_taken_by_another_run_falls_back_to_the_file_name() -> None:
    runs = [_run("bm25", "a/bm25.run"), _run("bm25", "a/dense.run"), _run("dense", "a/d.run")]
    assert _names(runs) == ["bm25.run", "dense.run", "dense"]


def test_evaluate_names_runs_sharing_a_runid_by_file(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n")
    for stem in ("bm25", "dense"):
        (tmp_path / f"{stem}.run").write_text("1 Q0 a 1 1.0 STANDARD\n")
    results = evaluate(qrels, [tmp_path / "bm25.run", tmp_path / "dense.run"], "P@1")
    assert results.run_names == ("bm25", "dense")


def test_renaming_keeps_the_reader_fingerprints(tmp_path: Path) -> None:
    path = tmp_path / "a.run"
    path.write_text("1 Q0 a 1 1.0 r\n")
    run = read_run(path)
    [renamed, _] = unique_run_names([run, _run("r", "b.run")])
    assert renamed.name == "a" and fingerprints.recall(renamed) is fingerprints.recall(run)
