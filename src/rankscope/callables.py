"""A user's Python function named ``module:function``: the one loader for every such option.

The python engine (``search``/``index`` options) and ``rankscope needle --pipeline`` take a
function as ``module:function`` (a dotted attribute path may follow the colon, e.g.
``pkg.mod:Class.method``). :func:`load_function` imports it and refuses, as a ConfigError naming
the option, a reference that is not ``module:function``, a module that cannot be imported, a
missing attribute, and an attribute that is not callable.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rankscope.errors import ConfigError


def load_function(
    ref: object,
    what: str,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    example: str = "my_package.search:bm25_search",
) -> Callable[..., Any]:
    """Import the function ``ref`` (``"module:function"``); ``what`` names the option in errors.

    ``base_dir`` (a suite's folder, or the working directory for a command-line option) is
    searched first for the module, so a ``retriever.py`` next to the suite or in the current
    folder is found without setting ``PYTHONPATH``.
    """
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        raise ConfigError(f"{what} must be 'module:function'", value=ref, hint=f"e.g. {example}")
    module_name, attr = ref.split(":")
    try:
        obj: Any = _import(module_name, base_dir)
    except ImportError as exc:
        raise ConfigError(
            f"{what}: cannot import module {module_name!r}: {exc}",
            value=ref,
            hint="make the module importable (install it, or add its folder to PYTHONPATH)",
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(
                f"{what}: module {module_name!r} has no {attr!r}", value=ref
            ) from None
    if not callable(obj):
        raise ConfigError(f"{what}: {ref!r} is not callable", value=ref)
    return obj  # type: ignore[no-any-return]


def _import(module_name: str, base_dir: str | os.PathLike[str] | None) -> Any:
    if base_dir is None:
        return importlib.import_module(module_name)
    folder = str(Path(base_dir).resolve())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(module_name)
    finally:
        if added:
            sys.path.remove(folder)


__all__ = ["load_function"]
