"""How rankscope's modules depend on each other, read from the source (nothing is executed), and
what its packages export.

The import graph has an edge for every ``import`` statement of src/rankscope, wherever it is
(module level, inside a function, under ``if TYPE_CHECKING``): an import moved into a function
to dodge a cycle is still a dependency. ``from package import name`` points at the module that
defines ``name`` (found through the package's ``__init__``; the package, if it defines it).
An import by name is an edge too: a string of the code that names a rankscope module
(``importlib.import_module("rankscope.x")``, ``"rankscope.x.y:Class"``; logger names and
entry-point groups aside) when it names one of another package (a package's lazy exports are
imports under ``if TYPE_CHECKING``, :mod:`rankscope.lazy`). Inside a package, names are how it
loads its own parts (the engines' registry) and are left out; a
name built at run time (``f"rankscope.{x}"``) fails the test, as the graph cannot follow it.

- Private names stay inside their package (a helper two packages need is public in one home).
- Layers: a package imports (or names) only packages of lower layers (:data:`LAYERS`), never
  one of its own layer; :data:`RULES` adds rules between modules.
- No cycle inside a package, none between packages.
- The public API is what the packages' ``__init__`` export: each says it in ``__all__``, each
  name there exists and is documented, and nothing public is left out (as httpx's
  tests/test_exported_members.py checks httpx). A module's own ``__all__`` is its business.

``python tests/test_imports.py`` prints the cycles per package and the count of function-level
imports per package.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import types
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: The layers, lowest first. A package (or top-level module; ``rankscope`` is the package's own
#: ``__init__``, which re-exports the data and the measures) may import the packages of lower
#: layers only: not a higher one, not another one of its own layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("lazy", "ids", "config", "callables", "util", "plugins"),
    ("data", "collect"),
    ("metrics", "engines"),
    ("rankscope", "measures"),
    ("stats", "suite"),
    ("online", "bench", "compare_io"),
    ("judge",),
    ("diff",),
    # demo is data: the demo's suite file (its corpus is suite's)
    ("report", "service", "check", "demo"),
    ("cli", "testing"),  # nothing imports these: the command line, test servers
    ("__main__",),
)


@dataclass(frozen=True)
class Rule:
    """No module under ``importer`` imports a module under any of ``forbidden`` (dotted
    prefixes of module names, without ``rankscope.``)."""

    importer: str
    forbidden: tuple[str, ...]
    why: str


#: The service's top-level modules above its layers (the application, what the CLI calls, the
#: pages), then with the settings and authentication, which the store does not see either. The
#: helpers every layer may use (errors, nul, server's process set-up) are not listed.
_SERVICE_TOP_HTTP = ("service.app", "service.admin", "service.dashboard")
_SERVICE_TOP = (*_SERVICE_TOP_HTTP, "service.settings", "service.auth")

#: Rules between modules, beyond the layers.
RULES: tuple[Rule, ...] = (
    Rule(
        "data.qrels",
        ("data.readers", "data.writers", "data.trec"),
        "the values sit below the code that reads and writes them",
    ),
    Rule(
        "data.run",
        ("data.readers", "data.writers", "data.trec"),
        "the values sit below the code that reads and writes them",
    ),
    Rule(
        "data._build",
        ("data.qrels", "data.run", "data.tabular", "data.trec", "data.readers", "data.writers"),
        "the builders know columns, not the values",
    ),
    Rule(
        "data.tabular",
        ("data.qrels", "data.run", "data.trec", "data.readers", "data.writers"),
        "a table's rows, not the values",
    ),
    Rule(
        "engines.base",
        ("engines",),
        "the contract imports nothing of its package (engines import it)",
    ),
    Rule("bench.runner", ("bench.ray_runner",), "Ray runs the runner's code, not the reverse"),
    Rule(
        "stats",
        ("data", "metrics.evaluate"),
        "stats takes aligned arrays and Measure values: reading files and evaluating happen in "
        "compare_io, the loader beside the CLI",
    ),
    Rule("collect", ("service",), "the client sends wire models of its own (collect/wire.py)"),
    Rule(
        "service.store",
        (*_SERVICE_TOP, "service.ingest", "service.analysis", "service.api", "service.schemas"),
        "the store knows only its database and tables: it is below what writes, analyses and "
        "serves through it",
    ),
    Rule("service.store", ("metrics",), "the store computes no measure (it is handed columns)"),
    Rule(
        "service.schemas",
        (*_SERVICE_TOP, "service.store", "service.ingest", "service.analysis", "service.api"),
        "the bodies sit below everything that fills or serves them",
    ),
    Rule(
        "service.ingest",
        (*_SERVICE_TOP_HTTP, "service.analysis", "service.api"),
        "the write path is below the analyses and the API",
    ),
    Rule(
        "service.analysis",
        (*_SERVICE_TOP_HTTP, "service.api"),
        "the analyses are below the API",
    ),
)


# --------------------------------------------------------------------------- the import graph


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name without "rankscope."; "rankscope" for the package itself
    target: str
    line: int
    in_function: bool
    by_name: bool = False  # a string naming the module, not an import statement


def _short(module: str) -> str:
    return "rankscope" if module == "rankscope" else module.removeprefix("rankscope.")


@cache
def modules() -> dict[str, Path]:
    """Every module of src/rankscope by its short name (``data.run``; packages by their name)."""
    found: dict[str, Path] = {}
    for path in sorted((SRC / "rankscope").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[_short(".".join(parts))] = path
    return found


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


def _is_package(module: str) -> bool:
    return modules()[module].name == "__init__.py"


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = ("rankscope" if importer == "rankscope" else f"rankscope.{importer}").split(".")
    base = parts if _is_package(importer) else parts[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


@cache
def _binding(package: str, name: str, depth: int = 0) -> str | None:
    """The module that defines ``name`` as ``package``'s ``__init__`` imports it, if it does."""
    if depth > 5 or package not in modules() or not _is_package(package):
        return None
    for node in ast.walk(_tree(package)):
        if isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) == name for a in node.names
        ):
            source = _short(_absolute(package, node))
            if source not in modules():
                return None
            deeper = _binding(source, name, depth + 1) if _is_package(source) else None
            return deeper or source
    return None


def _targets(importer: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == "rankscope" or alias.name.startswith("rankscope."):
                yield _known(_short(alias.name))
        return
    module = _absolute(importer, node)
    if module != "rankscope" and not module.startswith("rankscope."):
        return
    base = _known(_short(module))
    for alias in node.names:
        sub = f"{base}.{alias.name}" if base != "rankscope" else alias.name
        if sub in modules():
            yield sub
        else:
            yield _binding(base, alias.name) or base


def _known(module: str) -> str:
    while module not in modules() and "." in module:
        module = module.rsplit(".", 1)[0]
    return module


#: a string that names a rankscope module, alone or with an attribute (``module:name``)
_MODULE_NAME = re.compile(r"rankscope(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


def _docstring_ids(tree: ast.Module) -> set[int]:
    return {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        for body in [node.body]
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    }


def _logger_name_ids(tree: ast.Module) -> set[int]:
    """The strings given to ``getLogger``: a logger's name is not an import."""
    return {
        id(call.args[0])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and call.args
        and isinstance(call.func, ast.Attribute | ast.Name)
        and (call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id)
        == "getLogger"
    }


def _group_name_ids(tree: ast.Module) -> set[int]:
    """The strings assigned to a ``*_GROUP`` constant: an entry-point group's name (such as
    ``rankscope.engines``, where plugins register) is not an import."""
    return {
        id(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id.endswith("_GROUP")
    }


def named_modules(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for each string of ``tree``'s code that names a rankscope module
    (docstrings, logger names and entry-point group names left out); ``module`` is ``"?"`` for
    a name built at run time (an f-string that starts with ``rankscope.``)."""
    skip = _docstring_ids(tree) | _logger_name_ids(tree) | _group_name_ids(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _MODULE_NAME.fullmatch(node.value):
                yield node.lineno, node.value.partition(":")[0]
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and str(head.value).startswith("rankscope."):
                yield node.lineno, "?"


def _in_function_lines(tree: ast.Module) -> set[int]:
    return {
        line
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


@cache
def imports() -> tuple[Import, ...]:
    """Every import of one rankscope module by another, with where it is: the statements, and
    the names of modules of other packages in strings (see the module's text)."""
    found: list[Import] = []
    for module in modules():

        def visit(node: ast.AST, in_function: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Import | ast.ImportFrom):
                    for target in dict.fromkeys(_targets(module, child)):
                        if target != module:
                            found.append(Import(module, target, child.lineno, in_function))
                nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                visit(child, in_function or nested)

        tree = _tree(module)
        visit(tree, False)
        in_function = _in_function_lines(tree)
        for line, name in named_modules(tree):
            target = _known(_short(name)) if name != "?" else name
            if target in modules() and package_of(target) != package_of(module):
                found.append(Import(module, target, line, line in in_function, by_name=True))
    return tuple(found)


def package_of(module: str) -> str:
    return module.split(".")[0]


def _under(module: str, prefix: str) -> bool:
    if prefix == "":
        return True
    if prefix.endswith("."):
        return module.startswith(prefix)
    return module == prefix or module.startswith(prefix + ".")


def violations(rule: Rule) -> list[str]:
    """The imports that break ``rule``."""
    return [
        f"{i.importer}:{i.line} imports {i.target}"
        for i in imports()
        if _under(i.importer, rule.importer) and any(_under(i.target, f) for f in rule.forbidden)
    ]


def layer_rules() -> list[Rule]:
    """The rules :data:`LAYERS` stands for, one per package."""
    rules = []
    for level, layer in enumerate(LAYERS):
        above = [p for higher in LAYERS[level + 1 :] for p in higher]
        for package in layer:
            siblings = [p for p in layer if p != package]
            rules.append(Rule(package, (*above, *siblings), f"layer {level + 1} of LAYERS"))
    return rules


def cycles(nodes: Iterable[str]) -> list[list[str]]:
    """The strongly connected components (more than one module) of the graph on ``nodes``."""
    nodes = set(nodes)
    edges: dict[str, set[str]] = {n: set() for n in nodes}
    for i in imports():
        if i.importer in nodes and i.target in nodes:
            edges[i.importer].add(i.target)
    return strongly_connected(edges)


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of more than one node that reach each other, in ``edges`` (node -> targets)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return sorted(found)


def packages() -> list[str]:
    return sorted({package_of(m) for m in modules()})


def _package_cycles(package: str) -> list[list[str]]:
    return cycles(m for m in modules() if package_of(m) == package)


# --------------------------------------------------------------------------- the tests


def test_no_private_import_across_packages() -> None:
    found: list[str] = []
    for module in modules():
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.ImportFrom):
                target = _short(_absolute(module, node))
                if target == module or package_of(target) == package_of(module):
                    continue
                if not (node.module or "").startswith("rankscope"):
                    continue
                names = [a.name for a in node.names]
                if any(map(_private, target.split("."))) or any(map(_private, names)):
                    found.append(f"{module}: from {target} import {', '.join(names)}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    same = package_of(_short(alias.name)) == package_of(module)
                    if parts[0] == "rankscope" and any(map(_private, parts)) and not same:
                        found.append(f"{module}: import {alias.name}")
    assert not found, "\n".join(found)


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def test_the_graph_sees_every_module_and_import() -> None:
    """The checks below are only as good as the graph: it must know every package and resolve
    imports through lazy package exports."""
    listed = {p for layer in LAYERS for p in layer}
    assert set(packages()) == listed, "a new package needs its place in LAYERS"
    edges = {(i.importer, i.target) for i in imports()}
    assert ("data.readers", "data.run") in edges
    assert ("metrics.evaluate", "data.readers") in edges  # from rankscope.data import read_run
    assert ("bench.runner", "engines.stream") in edges
    assert any(i.in_function for i in imports() if i.importer == "cli.eval")
    # a package's lazy exports are its imports under TYPE_CHECKING (rankscope.lazy)
    assert {("rankscope", "data.qrels"), ("rankscope", "metrics.results")} <= edges
    # by name: the judge names the module of its outputs' writers
    assert ("judge.judging", "data.writers") in {
        (i.importer, i.target) for i in imports() if i.by_name
    }


def test_imports_by_name_are_seen() -> None:
    tree = ast.parse(
        '''"""Docstrings name rankscope.service freely."""
import importlib, logging
log = logging.getLogger("rankscope.service")
def load(part):
    importlib.import_module("rankscope.demo.stdlib")
    factory = "rankscope.service.ingest.local:LocalSender"
    importlib.import_module(f"rankscope.{part}")
    return "rankscope", "rankscope.", "see rankscope.data for more"
'''
    )
    assert sorted(named_modules(tree)) == [
        (5, "rankscope.demo.stdlib"),
        (6, "rankscope.service.ingest.local"),
        (7, "?"),
    ]


def test_no_module_is_named_at_run_time() -> None:
    found = [f"{m}:{line}" for m in modules() for line, n in named_modules(_tree(m)) if n == "?"]
    assert not found, "a module name built at run time: the graph cannot check it\n" + "\n".join(
        found
    )


@pytest.mark.parametrize("rule", layer_rules(), ids=lambda r: r.importer)
def test_layers(rule: Rule) -> None:
    found = [
        f"{i.importer}:{i.line} imports {i.target}"
        for i in imports()
        if _under(i.importer, rule.importer) and any(_under(i.target, f) for f in rule.forbidden)
    ]
    assert not found, f"{rule.importer} imports a higher layer or a sibling:\n" + "\n".join(found)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.importer or "everything")
def test_rules(rule: Rule) -> None:
    assert any(_under(m, rule.importer) for m in modules()), f"no module {rule.importer!r}"
    found = violations(rule)
    assert not found, f"{rule.why}:\n" + "\n".join(found)


@pytest.mark.parametrize("package", packages())
def test_no_cycle_inside_a_package(package: str) -> None:
    found = _package_cycles(package)
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_no_cycle_between_packages() -> None:
    edges = {(package_of(i.importer), package_of(i.target)) for i in imports()}
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        if a != b:
            graph[a].add(b)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
        return False

    assert not [(a, b) for a, b in edges if a != b and reaches(b, a)]


def test_the_cycle_finder_finds_cycles() -> None:
    # app -> bulk -> app was one in the service (tune_gc lived in app.py)
    graph = {"app": {"bulk", "deps"}, "bulk": {"app", "store"}, "deps": {"store"}, "store": set()}
    assert strongly_connected(graph) == [["app", "bulk"]]
    graph["store"] = {"deps"}
    assert strongly_connected(graph) == [["app", "bulk"], ["deps", "store"]]


# --------------------------------------------------------------------------- the service


def _distributions(module: str) -> set[str]:
    """The top-level names of the other distributions ``module`` imports (``fastapi``)."""
    found = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            found |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found - {"rankscope"}


def test_the_service_analyses_know_nothing_of_http() -> None:
    found = [
        f"{m} imports {d}"
        for m in modules()
        if _under(m, "service.analysis")
        for d in _distributions(m) & {"fastapi", "starlette", "uvicorn"}
    ]
    assert found == []


def _entry_points() -> dict[str, dict[str, str]]:
    """pyproject.toml's entry-point groups: group -> name -> ``module:attribute``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups: dict[str, dict[str, str]] = project.get("entry-points", {})
    return groups


def test_the_service_registers_local_mode_sender() -> None:
    # the client reads the group; only the service names its sender, in pyproject.toml
    from rankscope.collect.senders import LOCAL_SENDER_GROUP, LOCAL_SENDER_NAME

    target = _entry_points()[LOCAL_SENDER_GROUP][LOCAL_SENDER_NAME]
    module, _, name = target.partition(":")
    assert _short(module) == "service.ingest.local"
    assert any(
        isinstance(node, ast.ClassDef) and node.name == name
        for node in _tree("service.ingest.local").body
    )


def test_entry_points_name_existing_modules() -> None:
    for group, names in _entry_points().items():
        for name, target in names.items():
            assert _short(target.partition(":")[0]) in modules(), f"{group}.{name}: {target}"


# --------------------------------------------------------------------------- exports


def public_packages() -> list[str]:
    """Every package of rankscope but the command line's (its modules are not an API)."""
    return [
        "rankscope" if m == "rankscope" else f"rankscope.{m}"
        for m in modules()
        if _is_package(m) and package_of(m) != "cli"
    ]


def _documented_in_docs(name: str) -> bool:
    pattern = re.compile(rf"`[\w.]*\b{re.escape(name)}\b")
    return any(pattern.search(doc.read_text(encoding="utf-8")) for doc in DOCS)


def _own_doc(value: object) -> bool:
    doc = getattr(value, "__doc__", None)
    if not doc or not (inspect.isclass(value) or callable(value) or inspect.ismodule(value)):
        return False
    if inspect.isclass(value) and doc.startswith(f"{value.__name__}("):
        return False  # what dataclasses and NamedTuple write for a class that has no docstring
    return not (inspect.isclass(value) and doc == getattr(type(value), "__doc__", None))


def _commented(module: str, name: str) -> bool:
    """``name`` is assigned in ``module`` under a ``#:`` comment (or with one on its line)."""
    path = modules().get(_short(module))
    if path is None:
        return False
    lines = path.read_text(encoding="utf-8").splitlines()
    for node in _tree(_short(module)).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        if name in targets:
            if "#:" in lines[node.lineno - 1]:
                return True
            above = node.lineno - 2  # a "#:" comment may head a block of constants
            while above >= 0 and re.match(r"[A-Za-z_]\w* = ", lines[above]):
                above -= 1
            return above >= 0 and lines[above].lstrip().startswith("#:")
    return False


def _defining_module(package: str, name: str) -> str:
    module = _binding(_short(package), name) or _short(package)
    return module if module == "rankscope" else f"rankscope.{module}"


def _undocumented(module: types.ModuleType, names: Iterable[str]) -> list[str]:
    missing = []
    for name in names:
        value = getattr(module, name)
        where = _defining_module(module.__name__, name)
        if not (_own_doc(value) or _commented(where, name) or _documented_in_docs(name)):
            missing.append(f"{module.__name__}.{name}")
    return missing


def _public_names(module: types.ModuleType) -> set[str]:
    """The names a package or module binds that a user would take for its API."""
    short = _short(module.__name__)
    if not _is_package(short):  # a plain module: what it defines itself
        defined: set[str] = set()
        for node in _tree(short).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
        return {n for n in defined if not n.startswith("_")}
    # a package: what it defines, imports from rankscope (not the lazy-export machinery) or
    # exports lazily (its __dir__ lists those); what it takes from elsewhere is its own business
    names = set(dir(module)) - set(vars(module))
    for node in _tree(short).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("rankscope.")
            and node.module != "rankscope.lazy"
        ):
            names |= {a.asname or a.name for a in node.names}
    return {
        n
        for n in names
        if not n.startswith("_") and not isinstance(vars(module).get(n), types.ModuleType)
    }


def _export_problems(name: str) -> list[str]:
    module = importlib.import_module(name)
    public = _public_names(module)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return [f"public names but no __all__: {sorted(public)}"] if public else []
    problems = []
    if len(set(exported)) != len(exported):
        problems.append("a name twice in __all__")
    problems += [f"in __all__ but missing: {n}" for n in exported if not hasattr(module, n)]
    problems += [f"public but not in __all__: {n}" for n in sorted(public - set(exported))]
    present = [n for n in exported if hasattr(module, n)]
    problems += [f"exported but not documented: {n}" for n in _undocumented(module, present)]
    return problems


@pytest.mark.parametrize("name", public_packages())
def test_exports(name: str) -> None:
    problems = _export_problems(name)
    assert not problems, "\n".join(problems)


def exported_names() -> int:
    """How many names the package APIs export (``python tests/test_imports.py`` prints it)."""
    return sum(len(getattr(importlib.import_module(p), "__all__", ())) for p in public_packages())


# --------------------------------------------------------------------------- report


def function_level_imports() -> dict[str, int]:
    """Import statements inside functions, per package."""
    counts: dict[str, int] = defaultdict(int)
    for module in modules():

        def visit(node: ast.AST, in_function: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                    counts[package_of(module)] += 1
                nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                visit(child, in_function or nested)

        visit(_tree(module), False)
    return dict(sorted(counts.items()))


def report() -> str:
    """Cycles per package and function-level imports per package (for notes on the graph)."""
    out = []
    for package in packages():
        found = _package_cycles(package)
        out.append(f"{package}: {len(found)} cycle(s) {found if found else ''}".rstrip())
    counts = function_level_imports()
    out.append(f"function-level imports: {sum(counts.values())} {counts}")
    out.append(f"public API: {exported_names()} names in {len(public_packages())} packages")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
