"""The built-in engines are an explicit list (name -> module), not a scan of the package: every
``@register_engine`` in the package is in it, every entry registers its name, and looking one
engine up imports its module alone."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from rankscope.engines import BUILTIN_ENGINES, engine_names
from rankscope.engines.base import embedding_engine_names, engine_class

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "rankscope" / "engines"


def _registered_in_source() -> dict[str, str]:
    """Engine name -> module, for every ``@register_engine("name")`` in the package's files."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        module = f"rankscope.engines.{path.stem}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Name)
                    and deco.func.id == "register_engine"
                    and isinstance(deco.args[0], ast.Constant)
                ):
                    found[str(deco.args[0].value)] = module
    return found


def test_the_list_names_every_registered_engine_and_its_module() -> None:
    assert dict(BUILTIN_ENGINES) == _registered_in_source()
    assert list(BUILTIN_ENGINES) == sorted(BUILTIN_ENGINES)


def test_each_entry_registers_its_engine() -> None:
    for name in BUILTIN_ENGINES:
        assert engine_class(name).__module__ == BUILTIN_ENGINES[name], name
    assert set(BUILTIN_ENGINES) <= set(engine_names())
    assert {"vector", "pgvector", "hybrid", "rerank", "faiss"} <= set(embedding_engine_names())
    assert "sqlite" not in embedding_engine_names()


def _modules_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return [m for m in modules if m.startswith("rankscope.engines.")]


def test_a_lookup_imports_only_the_engine_it_names() -> None:
    names = "from rankscope.engines import engine_names\nprint(engine_names())"
    assert _modules_after(names) == ["rankscope.engines.base"]
    lookup = "from rankscope.engines.base import engine_class\nengine_class('sqlite')"
    loaded = _modules_after(lookup)
    engine_modules = set(BUILTIN_ENGINES.values())
    assert engine_modules & set(loaded) == {"rankscope.engines.sqlite"}
