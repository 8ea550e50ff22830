"""Files and Python modules a suite names next to itself are found wherever the benchmark
runs from (docs/suite-format.md: paths are relative to the suite file)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rankscope.bench import run_benchmark
from rankscope.suite import load_suite


def test_run_file_and_python_module_next_to_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "suite"
    (folder / "runs").mkdir(parents=True)
    docs = [{"_id": "a", "text": "apples"}, {"_id": "b", "text": "bananas"}]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "runs" / "prior.trec").write_text("q1 Q0 a 1 2.0 prior\nq1 Q0 b 2 1.0 prior\n")
    (folder / "suite_side_retriever.py").write_text(
        "def search(text, k):\n    return [('b', 1.0), ('a', 0.5)][:k]\n"
    )
    (folder / "suite.yaml").write_text(
        textwrap.dedent(
            """
            name: beside
            corpus: {type: jsonl, path: docs.jsonl}
            settings: {k: [1], max_k: 2, warmup: 0, repeats: 1}
            queries: [{id: q1, text: apples, judgments: {a: 1}}]
            engines:
              - {name: prior, engine: run_file, options: {path: runs/prior.trec}}
              - {name: mine, engine: python, options: {search: "suite_side_retriever:search"}}
            """
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = run_benchmark(load_suite(Path("../suite/suite.yaml")), "out")
    for config in result.configurations:
        assert config.status == "ok", config.error
    assert result.config("prior").view("answered").summary["P@1"] == 1.0
    assert result.config("mine").view("answered").summary["P@1"] == 0.0
    assert str(folder.resolve()) not in __import__("sys").path  # the import path is restored
