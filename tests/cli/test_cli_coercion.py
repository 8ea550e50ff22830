"""Command-line values converted without pydantic (rankscope.cli.coercion): the same values and
the same errors as typer's own adapters (tests/cli/test_cli_startup.py: no pydantic imported)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
from typer.testing import CliRunner

from rankscope.cli import coercion


class Colour(StrEnum):
    red = "red"
    blue = "blue"


def echo_app() -> typer.Typer:
    """One command that prints what each of its parameters received (value and type)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.command()
    def show(
        path: Path,
        runs: Annotated[list[Path], typer.Argument()],
        number: int = 1,
        bounded: Annotated[int, typer.Option(min=0, max=5)] = 0,
        ratio: float = 1,
        name: str = "x",
        tags: Annotated[list[str] | None, typer.Option("--tag")] = None,
        kind: Literal["a", "b"] = "a",
        colour: Colour = Colour.red,
        depth: int | None = None,
        flag: bool = False,
    ) -> None:
        values: dict[str, Any] = {
            "path": path,
            "runs": runs,
            "number": number,
            "bounded": bounded,
            "ratio": ratio,
            "name": name,
            "tags": tags,
            "kind": kind,
            "colour": colour,
            "depth": depth,
            "flag": flag,
        }
        for key, value in values.items():
            typer.echo(f"{key}={value!r} {type(value).__name__}")

    @app.command()
    def other() -> None:  # two commands: ``show`` is named on the command line
        pass

    return app


CASES = [
    ["show", "q.txt", "a.run", "b.run"],
    ["show", "q.txt", "a.run", "--number", "-7", "--ratio", "2", "--name", "n m", "--depth", "3"],
    ["show", "", "x", "--number", "+5", "--ratio", ".5e1", "--tag", "a", "--tag", "b"],
    ["show", "q", "r", "--number", "1_000", "--ratio", "nan", "--kind", "b", "--colour", "blue"],
    ["show", "q", "r", "--number", " 5", "--ratio", "1e400", "--flag"],
    ["show", "q", "r", "--bounded", "3"],
    # errors: typer's own messages
    ["show", "q", "r", "--number", "abc"],
    ["show", "q", "r", "--number", "5.5"],
    ["show", "q", "r", "--ratio", "x"],
    ["show", "q", "r", "--kind", "c"],
    ["show", "q", "r", "--colour", "green"],
    ["show", "q", "r", "--bounded", "9"],
    ["show", "q", "r", "--number", "99999999999999999999999"],
]


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(echo_app(), args)
    return result.exit_code, result.output


def test_values_and_errors_are_typers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer import core

    monkeypatch.setattr(coercion, "_installed", [])
    typer_build = core.build_runtime_param  # type: ignore[attr-defined]  # typer's internal
    monkeypatch.setattr(core, "build_runtime_param", typer_build)
    expected = [run(args) for args in CASES]
    assert coercion.install()
    assert core.build_runtime_param is not typer_build  # type: ignore[attr-defined]
    got = [run(args) for args in CASES]
    assert got == expected
    assert expected[1] == (
        0,
        "path=PosixPath('q.txt') PosixPath\nruns=[PosixPath('a.run')] list\nnumber=-7 int\n"
        "bounded=0 int\nratio=2.0 float\nname='n m' str\ntags=None NoneType\nkind='a' str\n"
        "colour=<Colour.red: 'red'> Colour\ndepth=3 int\nflag=False bool\n",
    )
    assert expected[6][0] == 2 and "Invalid value for '--number'" in expected[6][1]
    assert expected[9][0] == 2 and "'c' is not one of 'a', 'b'." in expected[9][1]
    assert "number=99999999999999999999999 int" in expected[12][1]  # pydantic's, not the regex's


def test_a_typer_without_these_internals_runs_the_cli_as_it_is() -> None:
    """typer before 0.29 has no ``typer._coercion``, so the module cannot be imported: the CLI
    still builds, and typer's own adapters convert the values."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['rankscope.cli.coercion'] = None  # its import fails, as on such a typer\n"
        "from rankscope.cli.app import main\n"
        "code = main(['eval', '-m', 'P.5', 'examples/qrels.txt', 'examples/bm25.run'])\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2] == " bm25 │ 0.8000 "
