"""The ``rankscope`` command: a thin layer over the library.

Each command lives in its own module of this package and exposes ``register(app)``;
:data:`COMMAND_MODULES` names them, in the order they register, and :data:`COMMANDS` which of
them register each top-level command. Start-up is the fixed cost of every call (trec_eval is
called in loops over hundreds of runs), so :func:`main` imports only what the command asked for:

- ``trec_eval`` parses its own (trec_eval's) options: it runs without typer at all, and so does
  ``--version`` alone;
- another command builds the typer application from the modules that register it alone (the
  typer of today builds a pydantic adapter for every option of every command it is given);
- ``--help``, no command or an unknown one: the whole application.

Each command module imports its heavy machinery inside the command, when it runs
(tests/cli/test_cli_startup.py).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rankscope.errors import DataWarning, RankscopeError

if TYPE_CHECKING:
    import typer

#: the modules of the commands, each with ``register(app)``, in the order they register
COMMAND_MODULES: tuple[str, ...] = (
    "rankscope.cli.annotate",
    "rankscope.cli.bench",
    "rankscope.cli.check",
    "rankscope.cli.compare",
    "rankscope.cli.diff",
    "rankscope.cli.engines",
    "rankscope.cli.eval",
    "rankscope.cli.judge",
    "rankscope.cli.needle",
    "rankscope.cli.report",
    "rankscope.cli.serve",
    "rankscope.cli.serve_online",
    "rankscope.cli.trec_eval",
)

#: each top-level command and the modules that register it (or its subcommands)
COMMANDS: dict[str, tuple[str, ...]] = {
    "annotate": ("rankscope.cli.annotate",),
    "bench": ("rankscope.cli.bench",),
    "demo": ("rankscope.cli.bench",),
    "check": ("rankscope.cli.check",),
    "compare": ("rankscope.cli.compare",),
    "diff": ("rankscope.cli.diff",),
    "engines": ("rankscope.cli.engines",),
    "eval": ("rankscope.cli.eval",),
    "measures": ("rankscope.cli.eval",),
    "pool": ("rankscope.cli.judge",),
    "judge": ("rankscope.cli.judge",),
    "agree": ("rankscope.cli.judge",),
    "qrels": ("rankscope.cli.judge",),
    "needle": ("rankscope.cli.needle",),
    "report": ("rankscope.cli.report",),
    "serve": ("rankscope.cli.serve", "rankscope.cli.serve_online"),
    "trec_eval": ("rankscope.cli.trec_eval",),
}

_HELP = "Measure, compare and judge the quality of search and retrieval systems."


def build_app(modules: Sequence[str] = COMMAND_MODULES) -> typer.Typer:
    """The typer application with the commands of ``modules`` (all of them by default)."""
    import typer

    from rankscope import __version__
    from rankscope.cli import help as _help

    _help.install()  # value names, not Python types, in --help (see rankscope.cli.help)
    try:
        from rankscope.cli import coercion
    except ImportError:  # a typer without these internals (before 0.29) converts on its own
        pass
    else:
        coercion.install()  # values converted without pydantic (see rankscope.cli.coercion)
    app = typer.Typer(
        name="rankscope",
        help=_HELP,
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
            False,
            "--version",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ) -> None:
        """Measure, compare and judge the quality of search and retrieval systems."""

    for name in modules:
        importlib.import_module(name).register(app)
    return app


def __getattr__(name: str) -> Any:
    """``app``: the whole application, built on first use (for tests and tools that walk it)."""
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; a RankscopeError prints its message (no traceback) and exits non-zero; a
    reader's warning (a byte-order mark skipped...) is one line on standard error."""
    with warnings.catch_warnings():
        # shown, whatever the filters say (a test run's "error" included): they are the message
        warnings.simplefilter("always", DataWarning)
        warnings.showwarning = _show_warning(warnings.showwarning)
        return _run(argv)


def _show_warning(shown: Callable[..., None]) -> Callable[..., None]:
    def show(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if issubclass(category, DataWarning):
            print(f"rankscope: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *args, **kw)

    return show


def _run(argv: list[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args and args[0] == "trec_eval":  # its own options: no typer to build
            from rankscope.cli.trec_eval import run_trec_eval

            return run_trec_eval(args[1:], sys.stdout, sys.stderr)
        if args == ["--version"]:  # what the root option prints, without building the app
            from rankscope import __version__

            print(f"rankscope {__version__}")
            return 0
        app = build_app(COMMANDS.get(args[0], COMMAND_MODULES) if args else COMMAND_MODULES)
        result = app(args=args, standalone_mode=False)
    except RankscopeError as error:
        print(f"rankscope: error: {error}", file=sys.stderr)
        return error.exit_code
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
    typer: Any = sys.modules.get("typer")  # imported wherever one of its exceptions was raised
    if typer is not None and isinstance(error, typer.Exit):
        return int(getattr(error, "exit_code", 0))
    if typer is not None and isinstance(error, typer.Abort):
        print("rankscope: aborted", file=sys.stderr)
        return 130
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
