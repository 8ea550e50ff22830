"""Package attributes that load on first use (PEP 562).

A package's ``__init__`` that imported every public name would make ``import rankscope.x.y``
import numpy, pyarrow or pydantic models that the caller never touches; the CLI's start-up is
the sum of such imports. The packages name their exports here instead, and the defining module
is imported when a name is first read (``from rankscope.data import Qrels`` works as before).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose ``globals()`` is ``namespace``;
    ``exports`` maps each defining module to the names the package exports from it."""
    package = namespace["__name__"]
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later reads find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
