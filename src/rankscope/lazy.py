"""Package attributes that load on first use (PEP 562).

A package's ``__init__`` that imported every public name would make ``import rankscope.x.y``
import numpy, pyarrow or pydantic models that the caller never touches; the CLI's start-up is
the sum of such imports. A package names each export once, in an import under
``if TYPE_CHECKING:`` (which type checkers and readers follow), and lists it in ``__all__``::

    from typing import TYPE_CHECKING

    from rankscope.lazy import lazy_exports

    if TYPE_CHECKING:  # pragma: no cover
        from rankscope.data.qrels import Qrels

    __all__ = ["Qrels"]

    __getattr__, __dir__ = lazy_exports(globals())

At run time those imports do not run: the first read of a name (``from rankscope.data import
Qrels`` works as before) reads the block from the package's source and imports the module it
names. The block holds ``from module import name`` lines only (``name as other`` allowed).
A name a package no longer exports can still be read for a while, with a warning
(``renamed``, :func:`renamed_exports`).
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def type_checking_imports(source: str, package: str) -> dict[str, tuple[str, str]]:
    """For each name the ``if TYPE_CHECKING:`` blocks of ``source`` import: the absolute name
    of its module and its name there (they differ for ``name as other``). ``package``: the
    package whose ``__init__`` ``source`` is, for relative imports. Read line by line (no
    ``ast``, no regular expression: they cost more than the rest of the start-up of a name)."""
    statements: list[str | None] = []  # None: an ``import x`` line, not an export
    inside = False
    for raw in source.splitlines():
        if raw.startswith("if TYPE_CHECKING:"):
            inside = True
            continue
        if raw[:1] not in ("", " ", "\t"):  # back at the module's level: the block ended
            inside = False
        line = raw.partition("#")[0].strip()  # a comment may hold commas or parentheses
        if not inside or not line:
            continue
        if line.startswith("from "):
            statements.append(line)
        elif line.startswith("import "):
            statements.append(None)
        elif statements and statements[-1] is not None:
            statements[-1] += " " + line  # the next line of ``from module import (...)``
    where: dict[str, tuple[str, str]] = {}
    for statement in statements:
        if statement is None:
            continue
        module, _, names = statement.removeprefix("from ").partition(" import ")
        absolute = importlib.util.resolve_name(module.strip(), package)
        for item in names.replace("(", " ").replace(")", " ").split(","):
            name, _, alias = (part.strip() for part in item.partition(" as "))
            if name:
                where[alias or name] = (absolute, name)
    return where


def _source(namespace: dict[str, Any]) -> str:
    """The text of the package's ``__init__``: read as a file (the loader's ``get_source``
    imports ``tokenize``, which costs more than the reading), else through its loader (a zip)."""
    try:
        with open(namespace["__file__"], encoding="utf-8") as handle:
            return handle.read()
    except (OSError, KeyError, TypeError):
        spec = namespace.get("__spec__")
        source = spec.loader.get_source(spec.name) if spec and spec.loader else None
    if source is None:
        raise ImportError(f"{namespace['__name__']}: its source is needed to load its exports")
    return str(source)


def lazy_exports(
    namespace: dict[str, Any],
    renamed: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose ``globals()`` is ``namespace``:
    its exports are the names its ``if TYPE_CHECKING:`` block imports (see the module);
    ``renamed`` as for :func:`renamed_exports`."""
    package = namespace["__name__"]
    found: dict[str, tuple[str, str]] = {}
    old = renamed_exports(package, renamed or {})

    def where() -> dict[str, tuple[str, str]]:
        # read once, on the first use of a lazy name: ``import package`` reads no source
        if not found:
            found.update(type_checking_imports(_source(namespace), package))
        return found

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # a probe for a dunder (copy, pickle, inspect) is not an export
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = where().get(name, ("", ""))
        if not module:
            return old(name)
        value = getattr(importlib.import_module(module), original)
        namespace[name] = value  # later reads find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where()})

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
