"""What can be known of a configuration's own code, for its checkpoint key.

A python engine runs a user's ``module:function``; its results change when that module's
source does, while the configuration stays the same. The checkpoint key therefore includes a
hash of the module's source file (of every ``.py`` file of a package), so changed code is run
again instead of resumed. Modules it imports from elsewhere are not covered (``--fresh`` after
changing those). Code given as a Python object instead of ``module:function`` cannot be
located: such a configuration is never resumed.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rankscope.suite.schema import BenchConfig

#: python engine options naming code
_CODE_OPTIONS = ("search", "index")


class Unlocatable(Exception):
    """The code of a configuration cannot be found, so it cannot be fingerprinted."""


def code_fingerprint(config: BenchConfig) -> dict[str, str]:
    """``{module: sha256 of its source}`` for every python engine in the configuration (nested
    hybrid/rerank members too); empty when it runs no user code.

    Raises :class:`Unlocatable` when code is given as an object. A module that cannot be found
    is recorded as ``"not found"`` (building the engine then fails, and failures are always
    run again).
    """
    out: dict[str, str] = {}
    for ref in _code_refs({"engine": config.engine, **config.options}):
        if not isinstance(ref, str):
            raise Unlocatable(f"python engine code given as {type(ref).__name__}")
        module = ref.partition(":")[0]
        if module and module not in out:
            out[module] = _module_hash(module)
    return out


def _code_refs(spec: Mapping[str, Any]) -> Iterator[object]:
    if spec.get("engine") == "python":
        for option in _CODE_OPTIONS:
            if spec.get(option) is not None:
                yield spec[option]
    members = spec.get("engines")
    if isinstance(members, list):
        for member in members:
            if isinstance(member, Mapping):
                yield from _code_refs(member)
    inner = spec.get("engine")
    if isinstance(inner, Mapping):
        yield from _code_refs(inner)


def _module_hash(module: str) -> str:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "not found"
    files: list[tuple[str, Path]] = []
    if spec.submodule_search_locations:  # a package: all of its Python files
        for folder in map(Path, spec.submodule_search_locations):
            files += [(f.relative_to(folder).as_posix(), f) for f in sorted(folder.rglob("*.py"))]
    elif spec.origin and Path(spec.origin).is_file():
        files.append((Path(spec.origin).name, Path(spec.origin)))
    else:  # built-in or frozen: part of Python itself
        return f"python:{spec.origin}"
    digest = hashlib.sha256()
    for name, file in files:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
