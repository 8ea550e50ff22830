"""A python engine's module source is part of its checkpoint key: changed code runs again."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from rankscope.bench import run_benchmark
from rankscope.bench.code import Unlocatable, code_fingerprint
from rankscope.suite import BenchConfig, load_suite

MODULE = "code_hash_retriever"


def write(folder: Path, ranking: str) -> Path:
    docs = [{"_id": "a", "text": "apples"}, {"_id": "b", "text": "bananas"}]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / f"{MODULE}.py").write_text(f"def search(text, k):\n    return {ranking}[:k]\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""
            name: code
            corpus: {{type: jsonl, path: docs.jsonl}}
            settings: {{k: [1], max_k: 2, warmup: 0, repeats: 1}}
            queries: [{{id: q1, text: apples, judgments: {{a: 1}}}}]
            engines:
              - {{name: mine, engine: python, options: {{search: "{MODULE}:search"}}}}
              - name: fused
                engine: hybrid
                options:
                  engines: [{{engine: sqlite}}, {{engine: python, search: "{MODULE}:search"}}]
            """
        )
    )
    sys.modules.pop(MODULE, None)  # a new process would import the file afresh
    return suite


def test_changed_module_source_is_run_again_not_resumed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    suite = write(tmp_path, "[('b', 1.0), ('a', 0.5)]")
    first = run_benchmark(load_suite(suite), out)
    assert first.config("mine").view("answered").summary["P@1"] == 0.0
    again = run_benchmark(load_suite(write(tmp_path, "[('b', 1.0), ('a', 0.5)]")), out)
    assert again.config("mine").resumed and again.config("fused").resumed

    changed = run_benchmark(load_suite(write(tmp_path, "[('a', 1.0), ('b', 0.5)]")), out)
    mine = changed.config("mine")
    assert not mine.resumed and not changed.config("fused").resumed
    assert mine.view("answered").summary["P@1"] == 1.0
    assert mine.rerun_reason == f"python code changed since the checkpoint: {MODULE}"


def test_fingerprint_covers_packages_and_refuses_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "code_hash_package"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "helpers.py").write_text("WEIGHT = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = BenchConfig(name="p", engine="python", options={"search": "code_hash_package:search"})
    before = code_fingerprint(config)
    (package / "sub" / "helpers.py").write_text("WEIGHT = 2\n")
    assert code_fingerprint(config) != before  # a file deep in the package counts
    assert code_fingerprint(BenchConfig(name="s", engine="sqlite")) == {}
    missing = BenchConfig(name="m", engine="python", options={"search": "no_such_module_xyz:f"})
    assert code_fingerprint(missing) == {"no_such_module_xyz": "not found"}
    with pytest.raises(Unlocatable):
        code_fingerprint(
            BenchConfig(name="o", engine="python", options={"search": lambda text, k: []})
        )


def test_code_given_as_an_object_is_never_resumed(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, "[]"))

    def search(text: str, k: int) -> list[tuple[str, float]]:
        return [("a", 1.0)]

    suite.configs = [BenchConfig(name="obj", engine="python", options={"search": search})]
    run_benchmark(suite, tmp_path / "out")
    again = run_benchmark(suite, tmp_path / "out").config("obj")
    assert again.status == "ok" and not again.resumed
    assert again.rerun_reason == (
        "not resumable: python engine code given as function cannot be fingerprinted"
    )
