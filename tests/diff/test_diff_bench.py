"""``rankscope.diff.diff_benchmark``: two configurations of a benchmark's output folder, from its
run files, evaluated as the benchmark evaluated them: every Δ equals the difference of the
per-query values stored in results.json; categories from results.json, texts from the suite."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from diff_data import CRANFIELD, HAVE_CRANFIELD, cranfield_bench

from rankscope.bench import BenchmarkResult, run_benchmark
from rankscope.diff import diff_benchmark
from rankscope.errors import InputError
from rankscope.suite import load_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_suites import run_report_bench


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    engines = [("all", "reporttest-all"), ("most", "reporttest-most"), ("half", "reporttest-half")]
    engines.append(("broken", "reporttest-broken"))
    return run_report_bench(tmp_path_factory.mktemp("diff-bench"), engines=engines)[1]


def stored_deltas(out: Path, a: str, b: str, measure: str, view: str) -> dict[str, float]:
    result = BenchmarkResult.read(out / "results.json")
    ids, values = result.per_query_values(measure, view)  # type: ignore[arg-type]
    return {q: float(values[b][i] - values[a][i]) for i, q in enumerate(ids)}


@pytest.mark.parametrize("view", ["answered", "all"])
@pytest.mark.parametrize("measure", ["ndcg@10", "map", "P@1"])
def test_delta_equals_results_json(out: Path, view: str, measure: str) -> None:
    diff = diff_benchmark(out, "all", "half", measure, view=view)  # type: ignore[arg-type]
    expected = stored_deltas(out, "all", "half", measure, view)
    assert {q.query_id: q.delta for q in diff.queries} == expected
    assert diff.view == view and diff.eval_depth == 5  # the benchmark's max_k
    assert diff.counts.losses == 15 and diff.counts.ties == 15  # half misses the odd queries


def test_categories_texts_and_rows(out: Path) -> None:
    diff = diff_benchmark(out, "all", "most")
    assert diff.measure == "ndcg@10" and diff.depth == 5  # the headline, cut at max_k 5
    assert diff.categories == ("large", "small")
    q = diff.query("q05")
    assert (q.query, q.category, q.outcome) == ("w5", "small", "loss")
    assert (q.a.rows[0].doc_id, q.a.rows[0].grade, q.a.rows[0].title) == ("d5", 2, "doc 5")
    assert q.a.rows[0].moved == "gone" and q.a.rows[0].snippet == "w5 words"
    assert [m.doc_id for m in q.missed] == []  # all finds d5
    losses = diff.select(only="loss", categories=["large"])
    assert [x.query_id for x in losses.shown] == ["q10", "q15", "q20", "q25"]


def test_texts_given_replace_the_suites(out: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q05", "text": "given text"}\n')
    diff = diff_benchmark(out, "all", "most", queries=queries)
    assert diff.query("q05").query == "given text" and diff.query("q06").query == ""


def test_a_suite_that_moved_gives_a_note_not_an_error(out: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "suite.resolved.yaml").unlink()
    diff = diff_benchmark(copy, "all", "most")
    assert diff.query("q05").query == "" and diff.query("q05").a.rows[0].title == ""
    assert any("no texts from the suite" in n for n in diff.notes)


def test_errors_name_the_configurations(out: Path) -> None:
    with pytest.raises(InputError, match=r"no configuration 'nope'.*configurations: all, most"):
        diff_benchmark(out, "all", "nope")
    with pytest.raises(InputError, match=r"'broken' has no ranking.*choose one that ran"):
        diff_benchmark(out, "broken", "all")
    with pytest.raises(InputError, match="latency is not a ranking measure"):
        diff_benchmark(out, "all", "most", "latency")
    with pytest.raises(InputError, match=r"no results\.json"):
        diff_benchmark(out / "runs", "all", "most")


@pytest.mark.skipif(not HAVE_CRANFIELD, reason=f"no Cranfield data in {CRANFIELD}")
def test_cranfield_benchmark(tmp_path: Path) -> None:
    out = cranfield_bench(tmp_path)
    diff = diff_benchmark(out, "bm25", "classic")
    expected = stored_deltas(out, "bm25", "classic", "ndcg@10", "answered")
    assert {q.query_id: q.delta for q in diff.queries} == expected
    assert len(diff.queries) == 225 and diff.eval_depth == 50
    # the BEIR qrels here (grades 0-4), not the runs' own: other values, the same documents
    q1 = diff.query("1")
    assert q1.query.startswith("what similarity laws must be obeyed")
    assert (q1.a.rows[0].doc_id, q1.a.rows[0].title) == (
        "184",
        "scale models for thermo-aeroelastic research .",
    )


def test_queries_a_configuration_skipped_are_not_called_unjudged(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    (tmp_path / "docs.jsonl").write_text(
        "".join(f'{{"_id": "d{i}", "text": "w{i} words here"}}\n' for i in range(6))
    )
    (tmp_path / "suite.yaml").write_text(
        "name: skips\n"
        "corpus: {type: jsonl, path: docs.jsonl}\n"
        "settings: {k: [1], max_k: 3, warmup: 0, repeats: 1, unsupported_queries: skip}\n"
        "queries:\n"
        "  - {id: q1, text: w1, judgments: {d1: 1}}\n"
        "  - {id: q2, text: w2 words, kind: phrase, judgments: {d2: 1}}\n"
        "  - {id: q3, text: w3, judgments: {d3: 1}}\n"
        "  - {id: q4, text: w4}\n"
        "engines:\n"
        "  - {name: lite, engine: sqlite}\n"
        "  - {name: dense, engine: faiss, options: {model: 'hashing:16', index: flat}}\n"
    )
    out = tmp_path / "out"
    run_benchmark(load_suite(tmp_path / "suite.yaml"), out)
    notes = diff_benchmark(out, "lite", "dense").notes
    assert "1 run queries are left out of the comparison (skipped by dense): q2" in notes
    assert "1 run queries have no judgments and are not compared: q4" in notes
    # over every judged query nothing is left out: q2 is compared (dense scores it 0)
    every = diff_benchmark(out, "lite", "dense", view="all").notes
    assert not any("left out of the comparison" in n for n in every)
