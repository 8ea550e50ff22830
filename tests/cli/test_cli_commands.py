"""The commands are an explicit list of modules (rankscope.cli.app.COMMAND_MODULES), not a scan
of the package: every module of rankscope.cli that defines ``register(app)`` is in it; and
rankscope.cli.app.COMMANDS says which of them make each command."""

from __future__ import annotations

import ast
from pathlib import Path

import typer

from rankscope.cli.app import COMMAND_MODULES, COMMANDS, build_app

CLI = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "cli"


def test_every_module_with_register_is_listed() -> None:
    defining = {
        f"rankscope.cli.{path.stem}"
        for path in CLI.glob("*.py")
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "register"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    listed = list(COMMAND_MODULES)
    assert sorted(listed) == sorted(defining)
    assert len(set(listed)) == len(listed)


def _names(app: typer.Typer) -> dict[str, list[str]]:
    """The top-level commands of ``app``, each with its subcommands (a group's)."""
    names: dict[str, list[str]] = {str(c.name): [] for c in app.registered_commands}
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None
        names[str(group.name)] = sorted(str(c.name) for c in sub.registered_commands)
    return names


def test_commands_name_the_modules_each_command_needs() -> None:
    # main() builds a command from COMMANDS[name] alone: it must be the same command as in the
    # whole application, subcommands included (serve's come from two modules)
    whole = _names(build_app())
    assert sorted(COMMANDS) == sorted(whole)
    for name, modules in COMMANDS.items():
        assert set(modules) <= set(COMMAND_MODULES)
        assert _names(build_app(modules))[name] == whole[name], name
