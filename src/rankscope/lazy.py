"""Package attributes that load on first use (PEP 562).

A package's ``__init__`` that imported every public name would make ``import rankscope.x.y``
import numpy, pyarrow or pydantic models that the caller never touches; the CLI's start-up is
the sum of such imports. The packages name their exports here instead, and the defining module
is imported when a name is first read (``from rankscope.data import Qrels`` works as before).
A name a package no longer exports can still be read for a while, with a warning
(:func:`renamed_exports`).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any],
    exports: Mapping[str, tuple[str, ...]],
    renamed: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose ``globals()`` is ``namespace``;
    ``exports`` maps each defining module to the names the package exports from it;
    ``renamed`` as for :func:`renamed_exports`."""
    package = namespace["__name__"]
    where = {name: module for module, names in exports.items() for name in names}
    old = renamed_exports(package, renamed or {})

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            return old(name)
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later reads find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


def renamed_exports(package: str, renamed: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` for a package whose old names still read, each with a
    ``DeprecationWarning`` naming what replaced it: ``renamed`` maps an old name to the
    ``module.Name`` path of its replacement. The old names are in neither ``__all__`` nor
    ``dir()``, so that nothing new starts using them."""

    def __getattr__(name: str) -> Any:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"{package}.{name} is deprecated; use {new} (a pydantic model: fields by keyword)",
            DeprecationWarning,
            stacklevel=2,
        )
        module, _, attribute = new.rpartition(".")
        return getattr(importlib.import_module(module), attribute)

    return __getattr__
