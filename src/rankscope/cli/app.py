"""The ``rankscope`` command: a thin layer over the library.

Each command lives in its own module of this package and exposes ``register(app)``;
:data:`COMMAND_MODULES` names them, in the order they register. Every command module is imported
at start-up (for ``--help``), so each imports its heavy machinery inside the command, when it runs
(tests/cli/test_cli_startup.py).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import typer

from rankscope import __version__
from rankscope.cli import (
    annotate,
    bench,
    compare,
    diff,
    eval,
    judge,
    needle,
    report,
    serve,
    serve_online,
    trec_eval,
)
from rankscope.cli import help as _help
from rankscope.errors import RankscopeError

_help.install()  # value names, not Python types, in --help (see rankscope.cli.help)

app = typer.Typer(
    name="rankscope",
    help="Measure, compare and judge the quality of search and retrieval systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rankscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Measure, compare and judge the quality of search and retrieval systems."""


#: the modules of the commands, each with ``register(app)``, in the order they register
COMMAND_MODULES = (
    annotate,
    bench,
    compare,
    diff,
    eval,
    judge,
    needle,
    report,
    serve,
    serve_online,
    trec_eval,
)


def _register_commands() -> None:
    for module in COMMAND_MODULES:
        module.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; a RankscopeError prints its message (no traceback) and exits non-zero; a
    reader's warning (a byte-order mark skipped...) is one line on standard error."""
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning(warnings.showwarning)
        return _run(argv)


def _show_warning(shown: Callable[..., None]) -> Callable[..., None]:
    def show(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if category.__name__ == "DataWarning":  # rankscope.data's: not imported at start-up
            print(f"rankscope: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *args, **kw)

    return show


def _run(argv: list[str] | None) -> int:
    try:
        result = app(args=argv, standalone_mode=False)
    except RankscopeError as error:
        print(f"rankscope: error: {error}", file=sys.stderr)
        return error.exit_code
    except typer.Exit as done:
        return int(getattr(done, "exit_code", 0))
    except typer.Abort:
        print("rankscope: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("rankscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:
        code = _usage_error(error)
        if code is None:
            raise
        return code
    return result if isinstance(result, int) else 0


def _usage_error(error: Exception) -> int | None:
    """Show a usage error of the CLI framework and return its exit status; None for any other.

    typer >= 0.20 bundles its own click, whose exceptions do not derive from click's; older
    typer raises click's own (its ``Exit`` and ``Abort`` are typer's). click is not imported
    for this (25 ms of every start-up): where no one imported it, none of its exceptions was
    raised.
    """
    click: Any = sys.modules.get("click")
    if click is not None and isinstance(error, click.exceptions.Exit):
        return int(error.exit_code)
    if click is not None and isinstance(error, click.exceptions.Abort):
        print("rankscope: aborted", file=sys.stderr)
        return 130
    kinds = tuple(
        k for k in (getattr(typer, "TyperException", None), click and click.ClickException) if k
    )
    if not isinstance(error, kinds):
        return None
    show = getattr(error, "show", None)
    if callable(show):
        show()
    else:
        print(f"rankscope: error: {error}", file=sys.stderr)
    return int(getattr(error, "exit_code", 2))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
