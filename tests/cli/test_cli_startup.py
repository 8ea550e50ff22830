"""What the CLI imports before a command runs: only what that command needs.

Start-up is the fixed cost of every command (``rankscope judge`` at concurrency 32 finishes its
calls in about 2.6 s, so 0.3 s of imports is a tenth of it). Each check runs a fresh interpreter
and reads its ``sys.modules``; no timing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

#: heavy libraries no command's start-up needs (numpy/pyarrow: the measures and data values;
#: pandas: only for to_pandas; the SDKs: only at a judge's first call; the service's stack)
HEAVY = ("numpy", "pyarrow", "pandas", "openai", "anthropic", "fastapi", "sqlalchemy")


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def imported_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter has imported after running ``code``."""
    return {name.split(".")[0] for name in modules_after(code)}


def test_importing_the_cli_imports_no_heavy_library() -> None:
    assert not imported_after("import rankscope.cli.app") & {*HEAVY, "pydantic"}


def test_help_of_eval_and_judge_imports_no_heavy_library() -> None:
    for command in ("eval", "judge", "bench", "serve"):
        code = (
            "import contextlib, io\nfrom rankscope.cli.app import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main([{command!r}, '--help'])"
        )
        assert not imported_after(code) & set(HEAVY), command


def test_the_judge_modules_import_neither_numpy_nor_an_sdk() -> None:
    code = (
        "import rankscope.cli.judge, rankscope.judge.judging, rankscope.judge.providers, "
        "rankscope.judge.pool, rankscope.judge.cache, rankscope.judge.io, rankscope.judge.config"
    )
    assert not imported_after(code) & set(HEAVY)


def test_the_public_names_still_load() -> None:
    code = (
        "import sys, rankscope\n"
        "assert 'numpy' not in sys.modules and 'pyarrow' not in sys.modules\n"
        "from rankscope import Measure, Qrels, RankscopeError, Results, Run, evaluate\n"
        "from rankscope.data import read_qrels, write_qrels, byte_key, DataWarning\n"
        "from rankscope.judge import judge_pool, cohen_kappa, RetrievalGrader\n"
        "from rankscope.suite import load_suite, PRESETS\n"
        "assert rankscope.evaluate is evaluate and 'evaluate' in dir(rankscope)\n"
        "try:\n    rankscope.no_such_name\nexcept AttributeError:\n    pass\n"
        "else:\n    raise SystemExit('no AttributeError')"
    )
    assert "numpy" in imported_after(code)  # the names load their modules when read


def test_eval_on_trec_files_imports_no_pandas(tmp_path: Path) -> None:
    examples = SRC.parent / "examples"
    out = tmp_path / "run.txt"
    code = (
        "import contextlib, io\nfrom rankscope.cli.app import main\n"
        "from rankscope.data import read_run, write_run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['eval', {str(examples / 'qrels.txt')!r}, {str(examples / 'bm25.run')!r},"
        " '-m', 'map', '-m', 'ndcg@10'])\n"
        f"write_run(read_run({str(examples / 'dense.run')!r}), {str(out)!r})"
    )
    imported = imported_after(code)
    assert {"numpy", "pyarrow"} <= imported  # it did evaluate and write
    assert "pandas" not in imported


def test_eval_to_a_pipe_imports_neither_rich_nor_pydantic() -> None:
    # the table to a pipe or a file is written without rich (rankscope.report.results); the
    # values are converted without pydantic (rankscope.cli.coercion)
    examples = SRC.parent / "examples"
    for extra in ([], ["-q"], ["-f", "markdown"], ["-f", "json"], ["-f", "csv"]):
        code = (
            "import contextlib, io\nfrom rankscope.cli.app import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    assert main(['eval', {str(examples / 'qrels.txt')!r},"
            f" {str(examples / 'bm25.run')!r}, *{extra!r}]) == 0\n"
            "assert 'bm25' in out.getvalue()"
        )
        assert not imported_after(code) & {"rich", "pydantic", "pandas"}, extra


def test_trec_eval_runs_without_typer_rich_or_pydantic() -> None:
    # trec_eval parses its own options: main() calls it before any typer application is built
    examples = SRC.parent / "examples"
    code = (
        "import contextlib, io\nfrom rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main(['trec_eval', {str(examples / 'qrels.txt')!r},"
        f" {str(examples / 'bm25.run')!r}]) == 0\n"
        "assert 'P_10' in out.getvalue()"
    )
    imported = imported_after(code)
    assert {"numpy", "pyarrow"} <= imported
    assert not imported & {"typer", "click", "rich", "pydantic"}


def test_a_command_builds_only_its_own_modules() -> None:
    code = (
        "import contextlib, io, sys\nfrom rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['eval', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('rankscope.cli.')))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1].replace("'", '"')))
    assert "rankscope.cli.eval" in loaded
    assert not loaded & {"rankscope.cli.judge", "rankscope.cli.serve", "rankscope.cli.annotate"}


def test_version_alone_builds_no_application(capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope import __version__
    from rankscope.cli.app import build_app, main

    assert main(["--version"]) == 0
    fast = capsys.readouterr().out
    assert fast == f"rankscope {__version__}\n"
    assert build_app()(args=["--version"], standalone_mode=False) in (0, None)
    assert capsys.readouterr().out == fast  # the root option prints the same
    assert not imported_after(
        "import contextlib, io\nfrom rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--version'])"
    ) & {"typer", "rich", "pydantic", "numpy"}


def test_a_command_that_runs_imports_no_pydantic() -> None:
    # typer converts values with pydantic adapters; rankscope.cli.coercion does the plain ones
    examples = SRC.parent / "examples"
    code = (
        "import contextlib, io\nfrom rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['eval', {str(examples / 'qrels.txt')!r}, {str(examples / 'bm25.run')!r},"
        " '-m', 'map', '-l', '1', '-M', '100', '-f', 'csv']) == 0"
    )
    assert "pydantic" not in imported_after(code)


def test_eval_and_trec_eval_on_trec_files_import_no_pyarrow_compute() -> None:
    # pyarrow.compute wraps all of Arrow's functions at import (50 ms): rankscope.data.compute
    # calls the few the TREC path needs (an array's .take() or .filter() would import it)
    examples = SRC.parent / "examples"
    files = f"{str(examples / 'qrels.txt')!r}, {str(examples / 'bm25.run')!r}"
    for command in (
        f"['trec_eval', {files}]",
        f"['trec_eval', '-q', '-c', '-m', 'all_trec', {files}]",
        f"['eval', {files}, {str(examples / 'dense.run')!r}, '-q']",
        f"['eval', {files}, '-m', 'all_trec', '-c', '-J', '-M', '5']",
    ):
        code = (
            "import contextlib, io\nfrom rankscope.cli.app import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({command}) == 0"
        )
        modules = modules_after(code)
        assert "pyarrow" in modules
        assert not {"pyarrow.compute", "numpy.ma"} & modules, command


def test_help_imports_neither_markdown_nor_tracebacks() -> None:
    # typer's help module imports rich's Markdown and Traceback (markdown-it, pygments, rich's
    # pretty-printer) for what this help never shows (rankscope.cli.help.import_rich_utils)
    for args in ([], ["--help"], ["eval", "--help"], ["judge", "--help"]):
        code = (
            "import contextlib, io\nfrom rankscope.cli.app import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()) as out:\n    main({args!r})\n"
            "assert 'Usage' in out.getvalue()"
        )
        modules = modules_after(code)
        assert "typer.rich_utils" in modules
        deferred = {"rich.markdown", "rich.traceback", "rich.syntax", "rich.pretty"}
        assert not modules & {*deferred, "markdown_it", "pygments", "pydantic", "numpy"}, args


def test_the_deferred_names_are_the_real_ones_at_first_use() -> None:
    code = (
        "import contextlib, io, sys\nfrom rankscope.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
        "from typer import rich_utils\nimport rich.markdown, rich.traceback\n"
        "assert isinstance(rich_utils.Markdown('*a*'), rich.markdown.Markdown)\n"
        "assert rich_utils.Traceback.from_exception == rich.traceback.Traceback.from_exception\n"
        "text = rich_utils._make_rich_text(text='*a*', markup_mode='markdown')\n"
        "assert isinstance(text, rich.markdown.Markdown)\n"
    )
    assert {"rich.markdown", "markdown_it"} <= modules_after(code)
