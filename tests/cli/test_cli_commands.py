"""The commands are an explicit list of modules (rankscope.cli.app.COMMAND_MODULES), not a scan
of the package: every module of rankscope.cli that defines ``register(app)`` is in it."""

from __future__ import annotations

import ast
from pathlib import Path

from rankscope.cli.app import COMMAND_MODULES

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
    listed = [module.__name__ for module in COMMAND_MODULES]
    assert sorted(listed) == sorted(defining)
    assert len(set(listed)) == len(listed)
