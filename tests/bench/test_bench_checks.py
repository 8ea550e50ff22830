"""Judgments that cannot be scored are refused before any engine runs; partly missing ones, and
rankings that find nothing judged, are warned about with counts."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest
from bench_suites import make_suite
from rich.console import Console

from prerequisites import shared_data
from rankscope.bench import run_benchmark
from rankscope.errors import ConfigError
from rankscope.report import render_table
from rankscope.suite import load_suite

ENGINES = "- {name: lex, engine: benchtest-overlap}"


def with_judgments(tmp_path: Path, old: str, new: str) -> Path:
    path = make_suite(tmp_path, ENGINES)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def test_judgments_matching_no_corpus_document_are_refused_before_running(
    tmp_path: Path,
) -> None:
    path = make_suite(tmp_path, ENGINES)
    text = path.read_text()
    for doc in ("py", "js", "sql", "pg", "long"):
        text = text.replace(f"{doc}: ", f"docs/{doc}.md: ")
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        run_benchmark(load_suite(path), tmp_path / "out")
    message = str(refused.value)
    assert "none of the 6 relevant judged documents is in the corpus (5 documents" in message
    assert "e.g. 'docs/" in message and "corpus ids" in message
    assert not (tmp_path / "out" / "runs").exists()


def test_judged_documents_missing_from_the_corpus_are_counted(tmp_path: Path) -> None:
    path = with_judgments(tmp_path, "judgments: {long: 3}", "judgments: {gone: 3, long: 0}")
    result = run_benchmark(load_suite(path), tmp_path / "out")
    missing, hopeless = result.warnings
    assert missing.startswith(
        "1 of 7 judged documents are not in the corpus (1 of them relevant, in 1 query; "
        "e.g. 'gone'): no engine can retrieve them"
    )
    assert hopeless.startswith("1 judged query has no relevant document in the corpus (e.g. 'q3')")
    console = Console(file=io.StringIO(), width=300, color_system=None)
    render_table(result, console)
    assert "warning: 1 of 7 judged documents" in console.file.getvalue()  # type: ignore[attr-defined]


def test_empty_corpus_and_no_relevant_grade_are_refused(tmp_path: Path) -> None:
    path = make_suite(tmp_path, ENGINES)
    (tmp_path / "docs.jsonl").write_text("")
    with pytest.raises(ConfigError, match=r"(no documents|empty)"):
        run_benchmark(load_suite(path), tmp_path / "out")
    path = make_suite(tmp_path, ENGINES, settings=", relevance_threshold: 4")
    with pytest.raises(ConfigError, match=r"no judgment marks a document relevant \(grade >= 4\)"):
        run_benchmark(load_suite(path), tmp_path / "out2")


def test_nothing_relevant_retrieved_is_warned(tmp_path: Path) -> None:
    # every judged document exists, but the one configuration never returns any of them
    path = with_judgments(tmp_path, "", "")
    text = path.read_text()
    for query in ("json language", "database engine", "zebra"):
        text = text.replace(f"text: {query}", "text: nothing matches this")
    path.write_text(text)
    result = run_benchmark(load_suite(path), tmp_path / "out")
    assert any("no configuration retrieved any of the 6 relevant" in w for w in result.warnings)
    assert result.recommended().items() == []


def test_readme_suite_over_the_cranfield_beir_folder_is_refused(tmp_path: Path) -> None:
    beir = shared_data("cranfield", "beir", "corpus.jsonl").parent
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""
            name: my-docs
            corpus: {{type: beir, path: {json.dumps(str(beir))}}}
            queries:
              - id: q1
                text: how do I rotate the log files
                judgments: {{docs/logging.md: 3, docs/rotation.md: 2}}
            engines: [{{name: sqlite-whole, engine: sqlite}}]
            """
        )
    )
    with pytest.raises(
        ConfigError, match="none of the 2 relevant judged documents is in the corpus"
    ):
        run_benchmark(load_suite(suite), tmp_path / "out")
