"""Lazy package exports (rankscope.lazy): each name is written once, in the package's
``if TYPE_CHECKING:`` imports, and its module is found there on first use."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

from rankscope.lazy import lazy_exports, type_checking_imports

SRC = Path(__file__).resolve().parents[1] / "src"

SOURCE = '''"""A package."""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from rankscope.data.qrels import Qrels
    from rankscope.errors import (
        DataWarning,  # a comment, with commas (and parentheses)
        InputError as BadInput,
    )

    from .order import byte_key

__all__ = ["BadInput", "DataWarning", "Qrels", "byte_key"]

if True:
    from rankscope.data.run import Run

__getattr__, __dir__ = lazy_exports(globals())
'''


def test_the_type_checking_block_is_read_as_python_reads_it() -> None:
    assert type_checking_imports(SOURCE, "rankscope.data") == {
        "Qrels": ("rankscope.data.qrels", "Qrels"),
        "DataWarning": ("rankscope.errors", "DataWarning"),
        "BadInput": ("rankscope.errors", "InputError"),
        "byte_key": ("rankscope.data.order", "byte_key"),
    }


def _ast_imports(source: str) -> dict[str, tuple[str, str]]:
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    for alias in statement.names:
                        found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


def _lazy_packages() -> list[Path]:
    return sorted(
        p for p in (SRC / "rankscope").rglob("__init__.py") if "lazy_exports(" in p.read_text()
    )


@pytest.mark.parametrize("path", _lazy_packages(), ids=lambda p: str(p.parent.relative_to(SRC)))
def test_every_package_s_exports_are_its_type_checking_imports(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert "lazy_exports(globals()" in source  # no second list of the names beside them
    package = ".".join(path.parent.relative_to(SRC).parts)
    assert type_checking_imports(source, package) == _ast_imports(source)


def test_a_name_loads_its_module_on_first_use(tmp_path: Path) -> None:
    init = tmp_path / "lazypkg" / "__init__.py"
    init.parent.mkdir()
    init.write_text(SOURCE)
    module = types.ModuleType("rankscope.data")
    module.__file__ = str(init)
    namespace = vars(module)
    getattr_, dir_ = lazy_exports(namespace)
    with pytest.raises(AttributeError, match="has no attribute '__wrapped__'"):
        getattr_("__wrapped__")  # a dunder probe reads no source
    init.unlink()  # read on first use, not before
    with pytest.raises(ImportError, match="its source is needed"):
        getattr_("Qrels")
    init.write_text(SOURCE)
    from rankscope.errors import InputError

    assert getattr_("BadInput") is InputError
    assert namespace["BadInput"] is InputError  # later reads skip __getattr__
    assert {"BadInput", "DataWarning", "Qrels", "byte_key"} <= set(dir_())
    assert "Run" not in dir_()  # not under TYPE_CHECKING
    with pytest.raises(AttributeError, match=r"'rankscope\.data' has no attribute 'Run'"):
        getattr_("Run")
