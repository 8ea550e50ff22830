"""A documentation corpus built from the running interpreter's standard-library docstrings (the
``docstrings`` corpus of a suite; ``rankscope demo``'s corpus).

Nothing is copied into the repository: :func:`load_corpus` imports each listed module and walks
its public API with :mod:`inspect`, so the corpus always matches the Python that runs it (docstrings
change between releases; ids of long-lived APIs do not).

Doc ids are dotted qualified names: ``json`` (the module), ``json.dumps`` (a function or class),
``collections.OrderedDict.move_to_end`` (a method or property).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from rankscope.engines.base import Document
from rankscope.errors import ConfigError

Kind = Literal["module", "function", "class", "method", "property"]

#: Well documented, long-lived modules: about 1,300 documents, a corpus small enough for the
#: dense configurations to embed in well under a minute on two cores.
DEFAULT_MODULES: tuple[str, ...] = (
    "argparse",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "concurrent.futures",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "difflib",
    "fnmatch",
    "fractions",
    "functools",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "logging",
    "math",
    "operator",
    "os",
    "os.path",
    "pathlib",
    "pickle",
    "pprint",
    "queue",
    "random",
    "re",
    "secrets",
    "shutil",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "urllib.parse",
    "uuid",
    "zipfile",
)

# Default values such as ``<object object at 0x7f...>`` would make the text differ between runs.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True, slots=True)
class _Entry:
    """A candidate document: one public object reached under one dotted name."""

    doc_id: str
    module: str
    kind: Kind
    obj: Any
    # how well this name matches where the object is defined, lower is better: (how the module
    # or class it was found in matches, whether the attribute is defined right there)
    rank: tuple[int, int]


def load_corpus(modules: Sequence[str] = DEFAULT_MODULES) -> list[Document]:
    """Build documents from the public docstrings of ``modules`` in this interpreter.

    One document per module docstring and per public function, class, method and property that
    has a docstring of its own. ``title`` is the qualified name; ``text`` is the signature (when
    :func:`inspect.signature` can give one) followed by the cleaned docstring; ``fields`` holds
    ``module`` (the listed module the name was found in) and ``kind``. Private names are skipped.
    An object reachable under several names appears once: under the name in its defining module
    when that module is listed, else under the first name seen. The order is deterministic:
    modules as given, then names sorted.

    Raises :class:`~rankscope.errors.ConfigError` when a module cannot be imported.
    """
    imported = [(name, _import(name)) for name in dict.fromkeys(modules)]
    listed = {name for name, _ in imported}

    top = [entry for name, module in imported for entry in _walk_module(name, module, listed)]
    # Classes documented under a name of their own; a subclass leaves their attributes to them.
    documented = {id(entry.obj) for entry in top if entry.kind == "class"}
    entries: list[_Entry] = []
    for entry in top:
        entries.append(entry)
        if entry.kind == "class":
            entries.extend(_walk_class(entry, documented))

    # Pick one name per object; the key is the object's identity (all are alive during the walk).
    chosen: dict[int, _Entry] = {}
    for entry in entries:
        best = chosen.get(id(entry.obj))
        if best is None or entry.rank < best.rank:
            chosen[id(entry.obj)] = entry
    winners = {id(entry) for entry in chosen.values()}

    docs: list[Document] = []
    seen_ids: set[str] = set()
    for entry in entries:
        if id(entry) not in winners or entry.doc_id in seen_ids:
            continue
        doc = _document(entry)
        if doc is not None:
            seen_ids.add(entry.doc_id)
            docs.append(doc)
    return docs


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # any import failure is a configuration problem here
        raise ConfigError(
            f"cannot import module {name!r} listed in a python_docstrings corpus: {exc}",
            value=name,
            hint="check the spelling, or remove it from corpus.modules",
        ) from exc


def _is_public(name: str) -> bool:
    return not name.startswith("_")


def _defined_in(obj: Any) -> str | None:
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else None


def _walk_module(name: str, module: ModuleType, listed: set[str]) -> Iterator[_Entry]:
    # a module listed under two names (os.path and posixpath) is kept under its real name
    yield _Entry(name, name, "module", module, (0 if module.__name__ == name else 1, 0))
    exported = getattr(module, "__all__", None)
    if isinstance(exported, (list, tuple)):
        names = sorted({n for n in exported if isinstance(n, str) and _is_public(n)})
    else:
        names = sorted(n for n in vars(module) if _is_public(n))
    for attr in names:
        obj = getattr(module, attr, None)
        if obj is None or inspect.ismodule(obj):
            continue
        home = _defined_in(obj)
        # Built-in types and functions belong to the language, not to this module's API.
        if home == "builtins":
            continue
        is_class = inspect.isclass(obj)
        if not (is_class or inspect.isroutine(obj)):
            continue  # constants and instances carry their type's docstring, not their own
        # Without __all__, only names defined here count (skip imports such as `from x import y`,
        # but keep C accelerators like `_heapq` for `heapq`).
        if exported is None and home not in (None, name) and not _private_module(home):
            continue
        rank = (_rank(obj, attr, name, home, listed), 0)
        yield _Entry(f"{name}.{attr}", name, "class" if is_class else "function", obj, rank)


def _rank(obj: Any, attr: str, module: str, home: str | None, listed: set[str]) -> int:
    """0: found in its defining module under its own name; 1: in its defining module; 2: else."""
    if home is not None and home.startswith("_") and home[1:] in listed:
        home = home[1:]  # a C accelerator (`_heapq`, `_datetime`) stands for its public module
    if home != module:
        return 2
    return 0 if getattr(obj, "__name__", attr) == attr else 1


def _private_module(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _class_namespaces(cls: type, documented: set[int]) -> list[type]:
    """The classes whose attributes document ``cls``: itself plus undocumented bases.

    Bases documented under their own names keep their attributes (and their bases'); other bases,
    such as ``pathlib._abc.PathBase`` in newer Pythons, hold implementation methods that belong to
    ``cls``'s API and would otherwise vanish from the corpus between releases.
    """
    covered: set[type] = set()
    for base in cls.__mro__[1:]:
        if id(base) in documented or _defined_in(base) == "builtins":
            covered.update(base.__mro__)
    return [cls] + [b for b in cls.__mro__[1:] if b not in covered]


def _walk_class(entry: _Entry, documented: set[int]) -> Iterator[_Entry]:
    members: dict[str, Any] = {}
    for owner in _class_namespaces(entry.obj, documented):
        for attr, value in vars(owner).items():
            if _is_public(attr) and attr not in members:
                members[attr] = value
    class_qualname = getattr(entry.obj, "__qualname__", "")
    for attr in sorted(members):
        value = members[attr]
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        kind: Kind
        if isinstance(value, property) or inspect.isgetsetdescriptor(value):
            kind = "property"
        elif inspect.isroutine(value):
            kind = "method"
        else:
            continue  # nested classes, enum members, plain class attributes
        if _patched_in(value, entry.obj):
            continue
        # Defined right on this class, or inherited / assigned from elsewhere (a function such as
        # `time.localtime` stored as a class attribute belongs to its own module).
        here = getattr(value, "__qualname__", None) in (None, f"{class_qualname}.{attr}")
        rank = (entry.rank[0], 0 if here else 1)
        yield _Entry(f"{entry.doc_id}.{attr}", entry.module, kind, value, rank)


def _patched_in(value: Any, cls: type) -> bool:
    """Whether a class attribute was added by a third-party library at import time.

    Some libraries patch standard classes (``transformers`` adds ``logging.Logger.warning_once``);
    such members would make the corpus depend on what else the process has imported.
    """
    home = _defined_in(value)
    if home is None or home == _defined_in(cls):
        return False
    top = home.split(".")[0]
    return not (top.startswith("_") or top in sys.stdlib_module_names)


def _docstring(entry: _Entry) -> str | None:
    raw = getattr(entry.obj, "__doc__", None)
    if entry.kind == "class" and not raw:
        # Some classes (concurrent.futures.ThreadPoolExecutor) document themselves in __init__;
        # only a Python-level __init__ of their own counts, not object's generic slot text.
        init = vars(entry.obj).get("__init__")
        if inspect.isfunction(init):
            raw = init.__doc__
    return raw if isinstance(raw, str) else None


def _document(entry: _Entry) -> Document | None:
    raw = _docstring(entry)
    if not isinstance(raw, str):
        return None
    doc = inspect.cleandoc(raw).strip()
    if not doc:
        return None
    text = doc
    if entry.kind != "module":
        signature = _signature(entry.obj)
        if signature is not None:
            short = entry.doc_id.rsplit(".", 1)[-1]
            text = f"{short}{signature}\n{doc}"
    return Document(
        id=entry.doc_id,
        title=entry.doc_id,
        text=text,
        fields={"module": entry.module, "kind": entry.kind},
    )


def _signature(obj: Any) -> str | None:
    if isinstance(obj, property) or inspect.isgetsetdescriptor(obj):
        return None
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = [
        p if p.default is inspect.Parameter.empty else p.replace(default=_Shown(p.default))
        for p in signature.parameters.values()
    ]
    return str(signature.replace(parameters=params))


_LITERALS = (type(None), bool, int, float, complex, str, bytes)


class _Shown:
    """A default value as the signature shows it: stable from run to run.

    Literals (and small containers of them) show as written; functions and classes by name; any
    other object as ``...``, since its repr may hold addresses or run-time state (a mutable
    default that the module appends to, like ``logging.shutdown``'s handler list).
    """

    def __init__(self, value: object) -> None:
        if _literal(value):
            self.text = repr(value)
        elif inspect.isroutine(value) or inspect.isclass(value):
            self.text = _ADDRESS.sub("", repr(value))
        else:
            self.text = "..."

    def __repr__(self) -> str:
        return self.text


def _literal(value: object) -> bool:
    if isinstance(value, _LITERALS):
        return True
    if isinstance(value, (tuple, frozenset)):
        return len(value) <= 8 and all(isinstance(v, _LITERALS) for v in value)
    return False
