"""The online product's layers point one way (read from the source with ast; nothing is
imported): the collect client never imports the service; the store knows only its database
and tables; the analyses know nothing of HTTP; and no module of the service imports itself
back through others."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "rankscope").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str) -> set[str]:
    """Every rankscope module ``module`` imports, at any level (function bodies and
    ``TYPE_CHECKING`` blocks too; ``from a import b`` names ``a.b`` when that is a module),
    and the top-level name of each other distribution it imports (``fastapi``)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{a.name}" for a in node.names]
        for name in names:
            if not name.startswith("rankscope"):
                found.add(name.partition(".")[0])  # another distribution: its top level
                continue
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name != module:
                found.add(name)
    return found


def _inside(prefix: str) -> list[str]:
    return [m for m in MODULES if m == prefix or m.startswith(prefix + ".")]


def _offending(importers: Iterable[str], forbidden: Iterable[str]) -> list[str]:
    banned = tuple(forbidden)
    return sorted(
        f"{m} imports {t}"
        for m in importers
        for t in _imports(m)
        if any(t == b or t.startswith(b + ".") for b in banned)
    )


def test_collect_never_imports_the_service() -> None:
    collect = _inside("rankscope.collect")
    assert _offending(collect, ["rankscope.service"]) == []
    assert "rankscope.collect.wire" in collect  # the models both sides share


def _strings(path: Path) -> list[str]:
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        for body in [node.body]
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_only_way_from_collect_to_the_service_is_local_modes_named_sender() -> None:
    # local mode loads the service's sender by name (collect.senders.LOCAL_SENDER); no other
    # string in the client's code names the service
    named = sorted(
        (m, s)
        for m in _inside("rankscope.collect")
        for s in _strings(MODULES[m])
        if "rankscope.service" in s
    )
    assert named == [("rankscope.collect.senders", "rankscope.service.ingest.local:LocalSender")]
    assert "rankscope.service.ingest.local" in MODULES


def test_the_store_imports_only_the_store() -> None:
    # its db and models: never the write path (measures), bodies, analyses or routes
    store = set(_inside("rankscope.service.store"))
    service = set(_inside("rankscope.service"))
    found = sorted(f"{m} imports {t}" for m in store for t in _imports(m) & service - store)
    assert found == []
    assert _offending(store, ["rankscope.metrics"]) == []  # it computes no measure
    lower = ("ingest", "analysis", "api", "schemas")
    assert all(f"rankscope.service.{n}" in service for n in lower)


def test_the_analyses_know_nothing_of_http() -> None:
    analysis = _inside("rankscope.service.analysis")
    http = ["rankscope.service.api", "rankscope.service.app", "fastapi", "starlette"]
    assert _offending(analysis, http) == []


def test_bodies_and_the_write_path_stay_below_the_api() -> None:
    upper = ["rankscope.service.api", "rankscope.service.app", "rankscope.service.admin"]
    schemas = _inside("rankscope.service.schemas")
    assert (
        _offending(schemas, [*upper, "rankscope.service.store", "rankscope.service.ingest"]) == []
    )
    ingest = _inside("rankscope.service.ingest")
    assert _offending(ingest, [*upper, "rankscope.service.analysis"]) == []


def _graph(nodes: Iterable[str]) -> dict[str, set[str]]:
    """Who imports whom among ``nodes``."""
    inside = set(nodes)
    return {n: _imports(n) & inside for n in inside}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for n in sorted(graph):
        if n not in index:
            visit(n)
    return sorted(groups)


def test_no_import_cycle_in_the_service_the_client_or_the_online_library() -> None:
    for package in ("rankscope.service", "rankscope.collect", "rankscope.online"):
        assert _cycles(_graph(_inside(package))) == [], package


def test_the_cycle_finder_finds_cycles() -> None:
    # app -> bulk -> app was one (tune_gc lived in app.py): such a group is what it reports
    graph = {"app": {"bulk", "deps"}, "bulk": {"app", "store"}, "deps": {"store"}, "store": set()}
    assert _cycles(graph) == [["app", "bulk"]]
    graph["store"] = {"deps"}
    assert _cycles(graph) == [["app", "bulk"], ["deps", "store"]]
