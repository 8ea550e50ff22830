"""``rankscope bench`` and ``rankscope demo`` through the real entry point."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rankscope.cli.app import main

DOCS = [
    {"_id": "a", "title": "Apples", "text": "apples are red or green fruit"},
    {"_id": "b", "title": "Bananas", "text": "bananas are long yellow fruit"},
    {"_id": "c", "title": "Cars", "text": "cars have four wheels and an engine"},
]


def tiny_suite(tmp_path: Path) -> Path:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    path = tmp_path / "tiny.yaml"
    path.write_text(
        textwrap.dedent(
            """
            name: tiny
            corpus: {type: jsonl, path: docs.jsonl}
            settings: {k: [1, 2], max_k: 3, warmup: 0, repeats: 1}
            queries:
              - {id: q1, text: red fruit, category: food, judgments: {a: 3, b: 1}}
              - {id: q2, text: yellow banana, category: food, judgments: {b: 3}}
              - {id: q3, text: engine wheels, category: cars, judgments: {c: 2}}
            engines:
              - {name: lite, engine: sqlite}
              - {name: lite-chunks, engine: sqlite, chunking: {size: 3, overlap: 1}}
            """
        )
    )
    return path


def test_bench_prints_table_and_writes_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    out = tmp_path / "out"
    assert main(["bench", str(suite), "--out", str(out), "--quiet", "--by-category"]) == 0
    printed, err = capsys.readouterr()
    # --quiet hides the progress, not where the results are
    assert f"Results, run files and the resolved suite are in {out}" in err
    assert "lite-chunks" in printed and "nDCG@10" in printed and "p50 ms" in printed
    assert "category food" in printed and "Best balance" in printed
    assert {p.name for p in (out / "runs").iterdir()} == {"lite.trec", "lite-chunks.trec"}
    assert (out / "results.json").is_file() and (out / "suite.resolved.yaml").is_file()

    # the second run resumes; --configuration picks one; JSON goes to stdout
    assert (
        main(
            [
                "bench",
                str(suite),
                "-o",
                str(out),
                "--quiet",
                "--configuration",
                "lite",
                "--format",
                "json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["configurations"]] == ["lite"]
    assert data["configurations"][0]["resumed"] is True

    assert main(["bench", str(suite), "-o", str(out), "--quiet", "--fresh", "-f", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("## tiny") and "| lite |" in markdown


def test_bench_bad_suite_exits_nonzero_with_message_and_no_traceback(tmp_path: Path) -> None:
    suite = tiny_suite(tmp_path)
    suite.write_text(
        suite.read_text().replace("{id: q2, text: yellow banana,", "{id: q2, kind: x,")
    )
    done = subprocess.run(
        [sys.executable, "-m", "rankscope", "bench", str(suite), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{suite}:7" in done.stderr
    assert "queries[1].kind" in done.stderr and "queries[1].text" in done.stderr


def test_bench_unknown_config_and_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    assert main(["bench", str(suite), "-o", str(tmp_path / "o"), "--configuration", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no configuration named 'nope'" in err and "lite-chunks" in err
    assert main(["bench", str(tmp_path / "missing.yaml")]) == 2
    assert "suite file not found" in capsys.readouterr().err


def test_bench_preset_runs_its_configurations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    code = main(
        [
            "bench",
            str(suite),
            "-o",
            str(tmp_path / "o"),
            "--quiet",
            "--preset",
            "quick",
            "-f",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["configurations"]][:2] == ["sqlite", "sqlite-c256o32"]


def test_demo_lexical_only_when_embeddings_are_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    import rankscope.suite

    # the core install: no embedding backend, no tantivy
    monkeypatch.setattr(rankscope.suite, "embeddings_available", lambda: False)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tantivy" else find_spec(name, *a),
    )
    args = ["demo", "--out", str(tmp_path / "demo"), "--quiet", "-f", "json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "lexical engines only" in captured.err
    assert "tantivy is not installed: tantivy-whole left out" in captured.err
    data = json.loads(captured.out)
    names = [c["name"] for c in data["configurations"]]
    assert names == ["sqlite-whole", "sqlite-chunk32"]  # exit 0 all the same
    assert all(c["status"] == "ok" for c in data["configurations"])
    assert not any(c["config"]["engine"] in {"vector", "hybrid"} for c in data["configurations"])
    chunkings = {json.dumps(c["config"]["chunking"]) for c in data["configurations"]}
    assert len(chunkings) >= 2  # whole documents and chunks
    assert data["suite"]["num_judged_queries"] >= 50
    assert not any(c["resumed"] for c in data["configurations"])
    # like bench, the demo resumes by default (--fresh redoes everything, as in bench)
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)["configurations"]
    assert [c["name"] for c in again] == names and all(c["resumed"] for c in again)


def test_by_category_says_when_no_query_has_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    suite.write_text(
        suite.read_text().replace(", category: food", "").replace(", category: cars", "")
    )
    out = tmp_path / "out"
    assert main(["bench", str(suite), "--out", str(out), "--quiet", "--by-category"]) == 0
    assert "--by-category: no query has a category" in capsys.readouterr().out
    args = ["bench", str(suite), "--out", str(out), "--quiet", "--by-category", "-f", "markdown"]
    assert main(args) == 0
    assert "--by-category: no query has a category" in capsys.readouterr().out


def test_bench_exits_3_when_a_configuration_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    suite.write_text(
        suite.read_text().replace(
            "- {name: lite, engine: sqlite}",
            "- {name: lite, engine: sqlite}\n  - {name: broken, engine: sqlite, "
            'options: {tokenizer: ""}}',
        )
    )
    out = tmp_path / "out"
    assert main(["bench", str(suite), "--out", str(out), "--quiet"]) == 3
    printed = capsys.readouterr().out
    assert "FAILED broken" in printed and "lite-chunks" in printed  # the others are reported
    assert json.loads((out / "results.json").read_text())["failures"][0]["name"] == "broken"


def test_bench_csv_has_the_table_columns_at_full_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    out = tmp_path / "out"
    assert main(["bench", str(suite), "-o", str(out), "--quiet", "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    data = json.loads((out / "results.json").read_text())
    assert [r["configuration"] for r in rows] == ["lite", "lite-chunks"]
    assert list(rows[0])[:6] == [
        "configuration", "nDCG@10 lin", "95% CI low", "95% CI high", "Δ best", "p"
    ]  # fmt: skip
    assert list(rows[0])[-5:] == ["p50 ms", "p50 IQR", "p95 ms", "index s", "Pareto"]
    front = data["statistics"]["answered"]["pareto"]["configs"]
    assert [r["Pareto"] for r in rows] == [
        "1.0" if r["configuration"] in front else "0.0" for r in rows
    ]
    for row, config in zip(rows, data["configurations"], strict=True):
        view = config["views"]["answered"]
        assert float(row["MAP"]) == view["summary"]["map"]  # the value itself, not rounded
        assert float(row["p50 ms"]) == view["latency"]["p50_ms"]
        assert float(row["index s"]) == config["index_time_s"]
    quality = data["statistics"]["answered"]["quality"]["comparison"]
    for row in rows:  # the best has no difference from itself; the other its p-value
        (stats,) = [
            c for c in quality["measures"][0]["rows"] if c["system"] == row["configuration"]
        ]
        if row["configuration"] == quality["baseline"]:
            assert row["Δ best"] == "" and row["p"] == ""
        else:
            assert float(row["Δ best"]) == stats["delta"]
            assert float(row["p"]) == stats["p_adjusted"]


def test_bench_help_shows_the_out_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["bench", "--help"]) == 0
    assert "[default: rankscope-out/<suite name>]" in capsys.readouterr().out


def test_columns_sets_the_table_width_even_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tiny_suite(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["bench", str(suite), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 80
    assert "left out at 80 columns: " in printed
    monkeypatch.delenv("COLUMNS")
    assert main(["bench", str(suite), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "left out at" not in capsys.readouterr().out  # a pipe gets every column


def _store_suite(tmp_path: Path) -> Path:
    """Vector stores with sweep-length names: every vector column and the front mark."""
    words = [f"w{i}" for i in range(60)]
    docs = [{"_id": f"d{i:03d}", "text": " ".join(words[i % 60 : i % 60 + 6])} for i in range(120)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = "".join(
        f"  - {{id: q{i}, text: w{i} w{i + 1}, judgments: {{d{i:03d}: 1}}}}\n" for i in range(12)
    )
    model = "hashing:32"
    path = tmp_path / "stores.yaml"
    path.write_text(
        "name: stores\n"
        "corpus: {type: jsonl, path: docs.jsonl}\n"
        "settings: {k: [5, 10], max_k: 10, warmup: 0, repeats: 1}\n"
        "engines:\n"
        f"  - {{name: faiss-ivf_flat-nlist16-nprobe1, engine: faiss, options: {{model: '{model}', "
        "index: ivf_flat, nlist: 16, nprobe: 1}}\n"
        f"  - {{name: hnswlib-m16-ef_search40, engine: hnswlib, options: {{model: '{model}', "
        "ef_search: 40}}\n"
        "  - {name: sqlite-whole, engine: sqlite}\n"
        "queries:\n" + queries
    )
    return path


@pytest.mark.parametrize("columns", [80, 100])
def test_a_vector_store_table_fits_and_notes_only_what_it_shows(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
) -> None:
    pytest.importorskip("faiss")
    pytest.importorskip("hnswlib")
    suite = _store_suite(tmp_path)
    out = tmp_path / "out"
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["bench", str(suite), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert max(len(line) for line in lines) <= columns
    header = next(line for line in lines if line.startswith("configuration"))
    # one line per configuration (no cell wraps), right under the header's rule
    start = lines.index(header) + 2
    body = lines[start : start + 3]
    names = ["faiss-ivf_flat-nlist16-nprobe1", "hnswlib-m16-ef_search40", "sqlite-whole"]
    assert [line.split()[0] for line in body] == names
    assert lines[start + 3].startswith("left out at")
    left_out = printed.split("left out at", 1)[1].split("(--wide", 1)[0]
    assert ("Pareto" in header) != ("Pareto" in left_out)
    # a note about a column left out is left out with it
    assert ("Pareto front:" in printed) == ("Pareto" in header)
    assert ("ann R@10: ann_recall@10" in printed) == ("ann R@10" in header)
    assert ("build s: the store" in printed) == ("build s" in header or "index MB" in header)
    if columns == 100:  # what the vector-stores README promises, within 100 columns
        for promised in ("ann R@10", "index MB", "Pareto"):
            assert promised in header
    # the best quality in one line: the pick, its value and how many are within noise
    best = printed.split("Best quality: ", 1)[1].split("\nFastest: ", 1)[0].replace("\n", " ")
    assert best == "hnswlib-m16-ef_search40 (nDCG@10 lin 0.4046, 1 other within noise)"
    # --wide: every column, whatever the terminal
    assert main(["bench", str(suite), "--out", str(out), "--quiet", "--wide"]) == 0
    wide = capsys.readouterr().out
    head = next(line for line in wide.splitlines() if "configuration" in line)
    for promised in ("95% CI", "MAP", "ann R@10", "build s", "index MB", "Pareto"):
        assert promised in head
    assert "left out at" not in wide


def test_the_full_text_benchmarks_spellings_output_k_and_max_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = Path(__file__).resolve().parents[2] / "examples" / "fts-quality" / "fts_quality_v1.yaml"
    out = tmp_path / "out"
    args = ["bench", str(suite), "--output", str(out), "--k", "3", "--k", "5", "--max-k", "10",
            "--configuration", "sqlite", "--configuration", "tantivy", "--quiet",
            "--format", "fts"]  # fmt: skip
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "=== FTS Quality Benchmark ===",
        "suite: fts_quality_v1 (5 judged queries, 7 documents)",
        "measure      sqlite  tantivy",
    ]
    assert "nDCG@10 lin  0.9755   0.9755" in lines and "R@3          1.0000   1.0000" in lines
    settings = json.loads((out / "results.json").read_text())["settings"]
    assert settings["k"] == [3, 5] and settings["max_k"] == 10
    assert "max_k: 10" in (out / "suite.resolved.yaml").read_text()
    capsys.readouterr()
    assert main(["bench", str(suite), "-o", str(tmp_path / "x"), "--k", "30", "--max-k", "10"]) == 2
    err = capsys.readouterr().err
    assert "max_k (10) is smaller than the largest cut-off k (30)" in err and "Traceback" not in err


def test_suite_option_is_the_positional_suite_exactly_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tiny_suite(tmp_path)
    out = tmp_path / "out"
    args = ["bench", "--suite", str(suite), "--output", str(out), "--quiet", "--format", "json"]
    assert main([*args, "--configuration", "lite"]) == 0
    assert json.loads(capsys.readouterr().out)["suite"]["name"] == "tiny"
    assert (out / "runs" / "lite.trec").is_file()
    # both spellings, or neither: a usage error (2) naming both, no traceback
    assert main(["bench", str(suite), "--suite", str(suite), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "give the suite once" in err and "--suite" in err and "Traceback" not in err
    assert main(["bench", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "missing the suite file" in err and "Traceback" not in err
