"""Private names stay inside their package: no module imports another package's private module
or name (a helper two packages need is public in one home)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_private_import_across_packages() -> None:
    found: list[str] = []
    for path in sorted((SRC / "rankscope").rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        importer = _package(".".join(rel.parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rankscope."):
                module = node.module or ""
                if _package(module) == importer:
                    continue
                names = [a.name for a in node.names]
                if any(_private(p) for p in module.split(".")) or any(map(_private, names)):
                    found.append(f"{rel}: from {module} import {', '.join(names)}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    private = any(_private(p) for p in parts)
                    if parts[0] == "rankscope" and private and _package(alias.name) != importer:
                        found.append(f"{rel}: import {alias.name}")
    assert not found, "\n".join(found)
