"""An interrupted benchmark leaves a consistent folder: no results.json from another run, no
stale files after --fresh; a damaged run file is rewritten on resume; the hint is right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_suites import Interrupting, make_suite

from rankscope.bench import run_benchmark
from rankscope.cli.app import main
from rankscope.suite import load_suite

ENGINES = """
- {name: first, engine: benchtest-overlap}
- {name: second, engine: benchtest-interrupt}
"""


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def test_interrupted_fresh_run_leaves_no_stale_results(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, ENGINES))
    out = tmp_path / "out"
    Interrupting.armed = False
    run_benchmark(suite, out)
    assert (out / "results.json").is_file() and listing(out / "runs") == {
        "first.trec",
        "second.trec",
    }

    Interrupting.armed = True
    try:
        with pytest.raises(KeyboardInterrupt):
            run_benchmark(suite, out, resume=False)
    finally:
        Interrupting.armed = False
    # results.json of the previous run is gone; only what this run finished is there
    assert not (out / "results.json").exists() and not (out / "qrels.txt").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["configs"]) == ["first"]
    assert listing(out / "runs") == {"first.trec"}
    assert listing(out / "configs") == {"first.json"}


def test_damaged_run_file_is_rewritten_on_resume(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, ENGINES))
    out = tmp_path / "out"
    Interrupting.armed = False
    run_benchmark(suite, out)
    run_file = out / "runs" / "first.trec"
    original = run_file.read_bytes()
    assert original
    run_file.write_bytes(b"")  # a 0-byte file, as after a crash mid-copy
    result = run_benchmark(suite, out)
    assert result.config("first").resumed
    assert run_file.read_bytes() == original
    run_file.write_bytes(original.replace(b" 1 ", b" 9 ", 1))  # edited
    run_benchmark(suite, out)
    assert run_file.read_bytes() == original


@pytest.mark.parametrize(
    ("fresh", "hint"),
    [(True, "run the command again without --fresh"), (False, "run the same command again")],
)
def test_interrupt_hint_never_repeats_fresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: bool, hint: str
) -> None:
    suite = make_suite(tmp_path, ENGINES)
    args = ["bench", str(suite), "-o", str(tmp_path / "out"), "--quiet"]
    Interrupting.armed = True
    try:
        assert main([*args, "--fresh"] if fresh else args) == 130
    finally:
        Interrupting.armed = False
    err = capsys.readouterr().err
    assert f"{hint} to resume from there" in err
