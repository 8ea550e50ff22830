"""``rankscope diff`` through the real entry point: both forms, formats, filters, the pool of
unjudged documents, and errors (status 2, a message, no traceback)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rankscope.cli.app import main
from rankscope.diff import diff_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
from diff_data import BM25 as LUCENE_BM25
from diff_data import CLASSIC, CRANFIELD, EXAMPLES, HAVE_CRANFIELD, LUCENE_QRELS
from report_suites import run_report_bench

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "bm25.run")
DENSE = str(EXAMPLES / "dense.run")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    engines = [("all", "reporttest-all"), ("most", "reporttest-most")]
    return run_report_bench(tmp_path_factory.mktemp("cli-diff"), engines=engines)[1]


def test_table_of_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = run_cli(capsys, QRELS, BM25, DENSE)
    assert code == 0 and err == ""
    assert text.splitlines()[0] == "dense vs bm25: ndcg@10, 10 queries, top 10 shown"
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80  # piped: 80 columns
    assert text.index("▲ 102") < text.index("▲ 104") < text.index("▼ 108")


def test_json_and_filters(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--only", "losses", "--min-delta", "0.05", "-m", "ndcg@10", "-f", "json")
    code, text, _ = run_cli(capsys, QRELS, BM25, DENSE, *args)
    assert code == 0
    data = json.loads(text)
    expected = diff_runs(QRELS, BM25, DENSE)
    assert [q["query_id"] for q in data["queries"]] == ["108", "106"]
    assert [q["delta"] for q in data["queries"]] == [
        expected.query("108").delta,
        expected.query("106").delta,
    ]
    assert data["filters"] == ["losses", "|Δ| >= 0.05"] and data["counts"]["queries"] == 10
    code, text, _ = run_cli(
        capsys, QRELS, BM25, DENSE, "--query-id", "105,101", "--rows", "3", "-f", "json"
    )
    data = json.loads(text)
    assert [q["query_id"] for q in data["queries"]] == ["105", "101"] and data["depth"] == 3
    assert all(len(q["a"]["rows"]) == 3 for q in data["queries"])
    code, text, _ = run_cli(
        capsys, QRELS, BM25, DENSE, "--sort", "delta", "--limit", "1", "-f", "json"
    )
    assert [q["query_id"] for q in json.loads(text)["queries"]] == ["108"]


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = run_cli(capsys, QRELS, BM25, DENSE, "-f", "markdown", "--limit", "1")
    assert code == 0
    assert text.startswith("## dense vs bm25: ndcg@10\n")
    assert "| 1 | wiki-35035 | 0 | gone | wiki-87765 | 3 | ↑3 |" in text


def test_benchmark_form(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = run_cli(capsys, str(out), "all", "most", "--category", "large", "-f", "json")
    assert code == 0, err
    data = json.loads(text)
    assert data["source"] == str(out) and data["view"] == "answered"
    assert [q["query_id"] for q in data["queries"]][:4] == ["q10", "q15", "q20", "q25"]
    assert data["queries"][0]["query"] == "w10" and data["queries"][0]["category"] == "large"
    code, text, err = run_cli(capsys, str(out / "results.json"), "all", "most", "--view", "all")
    assert code == 0, err
    assert "most vs all: ndcg@10, 30 queries (view all), top 5 shown" in text


def test_pool_unjudged(out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope.judge.pool import read_pool

    pool = tmp_path / "pool.jsonl"
    code, _, err = run_cli(
        capsys, str(out), "all", "most", "--only", "losses", "--pool-unjudged", str(pool)
    )
    assert code == 0, err
    assert f"wrote 24 unjudged (query, document) pairs of 6 queries to {pool}" in err
    back = read_pool(pool)
    assert {e.query_id for e in back.entries} == {"q00", "q05", "q10", "q15", "q20", "q25"}
    assert all(e.query and e.title for e in back.entries)  # texts from the suite
    # run files: the pool needs query texts
    code, _, err = run_cli(capsys, QRELS, BM25, DENSE, "--pool-unjudged", str(pool))
    assert code == 2 and "--pool-unjudged needs the query texts" in err
    # nothing unjudged: nothing written
    code, _, err = run_cli(
        capsys,
        QRELS,
        BM25,
        DENSE,
        "--queries",
        str(tmp_path / "q.tsv"),
        "--pool-unjudged",
        "x.jsonl",
    )
    assert code == 2 and "q.tsv" in err  # the queries file must exist


def test_pool_with_nothing_unjudged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.tsv"
    queries.write_text("".join(f"{q}\tquery {q}\n" for q in range(101, 111)))
    pool = tmp_path / "p.jsonl"
    code, _, err = run_cli(
        capsys, QRELS, BM25, DENSE, "--queries", str(queries), "--pool-unjudged", str(pool)
    )
    assert code == 0 and "no unjudged documents in the top 10" in err and not pool.exists()
    code, _, err = run_cli(
        capsys,
        QRELS,
        BM25,
        DENSE,
        "--rows",
        "20",
        "--queries",
        str(queries),
        "--pool-unjudged",
        str(pool),
    )
    assert code == 0 and pool.is_file() and "unjudged (query, document) pairs" in err


@pytest.mark.skipif(not HAVE_CRANFIELD, reason=f"no Cranfield data in {CRANFIELD}")
def test_cranfield_with_texts(capsys: pytest.CaptureFixture[str]) -> None:
    beir = CRANFIELD / "beir"
    code, text, err = run_cli(
        capsys,
        str(LUCENE_QRELS),
        str(LUCENE_BM25),
        str(CLASSIC),
        "--queries",
        str(beir / "queries.jsonl"),
        "--corpus",
        str(beir / "corpus.jsonl"),
        "--query-id",
        "1",
    )
    assert code == 0, err
    assert "what similarity laws must be obeyed" in text
    assert "  1  184 scale" in text  # the title, cut to the column
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.qrels", BM25, DENSE], "missing.qrels: file not found"),
        ([QRELS, BM25, "nope.run"], "nope.run: file not found"),
        ([QRELS, BM25, DENSE, "-m", "ndcg@x"], "ndcg@x"),
        ([QRELS, BM25, DENSE, "-m", "gm_map"], "geometric mean"),
        ([QRELS, BM25, DENSE, "--view", "all"], "--view applies to a benchmark"),
        ([QRELS, BM25, DENSE, "--category", "x"], "these queries have no categories"),
        ([QRELS, BM25, DENSE, "--query-id", "999"], "no query '999'"),
        ([QRELS, BM25, DENSE, "--rows", "0"], "at least 1"),
        ([QRELS, BM25, DENSE, "--corpus", "none.jsonl"], "none.jsonl: corpus file not found"),
    ],
)
def test_errors_exit_2_without_traceback(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_benchmark_errors(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, str(out), "all", "nope")
    assert code == 2 and "no configuration 'nope'" in err and "configurations: all, most" in err
    code, _, err = run_cli(capsys, str(out), "all", "most", "-l", "2")
    assert code == 2 and "--rel-level applies to run files" in err
