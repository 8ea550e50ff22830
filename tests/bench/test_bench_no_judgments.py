"""A suite without any judgments is refused before any engine runs, with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.bench import run_benchmark
from rankscope.cli.app import main
from rankscope.errors import ConfigError
from rankscope.suite import load_suite


def write_suite(tmp_path: Path) -> Path:
    (tmp_path / "c.jsonl").write_text('{"_id": "d1", "title": "t", "text": "hello world"}\n')
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: unjudged\n"
        "corpus: {type: jsonl, path: c.jsonl}\n"
        "queries: [{id: q1, text: hello}]\n"
        "engines: [{name: lite, engine: sqlite}]\n"
    )
    return suite


def test_runner_refuses_a_suite_without_judgments(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no judgments"):
        run_benchmark(load_suite(write_suite(tmp_path)), tmp_path / "out")
    assert not (tmp_path / "out" / "runs").exists()  # refused before running any engine


def test_cli_prints_the_message_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", str(write_suite(tmp_path)), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert "has no judgments" in err and "Traceback" not in err
