"""The comparison stack's layers, from the source alone (ast; nothing is imported or run).

- ``rankscope.stats`` computes on arrays: it imports no data reader, no evaluation, nothing
  above it (bench, report, the CLI). The files-in shortcuts (``rankscope.stats.compare_runs``,
  ``ScoreMatrix.from_runs``) are the loader's, :mod:`rankscope.compare_io`, named only where
  they are documented.
- ``rankscope.bench`` and ``rankscope.report`` have no import cycle among their modules,
  counting every import: module level, inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MODULES = {
    ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__"): p
    for p in (SRC / "rankscope").rglob("*.py")
}

#: what stats may not import: data (readers, writers, Qrels and Run), evaluation, upper layers
STATS_FORBIDDEN = (
    "rankscope.data",
    "rankscope.metrics.evaluate",
    "rankscope.bench",
    "rankscope.report",
    "rankscope.cli",
    "rankscope.suite",
    "rankscope.service",
)
#: what ``from rankscope import X`` loads
ROOT_EXPORTS = {
    "evaluate": "rankscope.metrics.evaluate",
    "Results": "rankscope.metrics.results",
    "Measure": "rankscope.metrics.names",
    "Qrels": "rankscope.data",
    "Run": "rankscope.data",
}
#: the documented shortcuts to the loader, and where they are
LOADER = "rankscope.compare_io"
LOADER_SHORTCUTS = {"rankscope.stats", "rankscope.stats.matrix"}
#: being removed on its own (the benchmark runners); no other cycle may appear
KNOWN_CYCLES: set[frozenset[str]] = {
    frozenset({"rankscope.bench.runner", "rankscope.bench.ray_runner"}),
}


def _imports(module: str) -> set[str]:
    """Every rankscope module ``module`` imports, at any level, resolved to a module file."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package
                for _ in range(node.level - 1):
                    up = up.rpartition(".")[0]
                base = f"{up}.{base}" if base else up
            # ``from package import module`` imports the module; any other name, the package
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
            if base == "rankscope":  # ``from rankscope import evaluate``
                targets += [ROOT_EXPORTS.get(a.name, "") for a in node.names]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("rankscope.") and target != module:
                found.add(target)
    return found


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_stats_reads_no_file_and_evaluates_nothing() -> None:
    bad = []
    for module in sorted(m for m in MODULES if _inside(m, "rankscope.stats")):
        for target in sorted(_imports(module)):
            if any(_inside(target, f) for f in STATS_FORBIDDEN) or target == "rankscope.metrics":
                bad.append(f"{module} imports {target}")
            elif target == LOADER and module not in LOADER_SHORTCUTS:
                bad.append(f"{module} imports the loader {target}")
    assert not bad, "\n".join(bad)


def _cycles(edges: dict[str, list[str]]) -> set[frozenset[str]]:
    """The strongly connected components (of two or more modules) of an import graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for m in edges:
        if m not in index:
            visit(m)
    return found


def _graph(package: str) -> dict[str, list[str]]:
    members = sorted(m for m in MODULES if _inside(m, package))
    return {m: sorted(t for t in _imports(m) if t in members) for m in members}


def test_bench_and_report_have_no_import_cycle() -> None:
    for package in ("rankscope.bench", "rankscope.report"):
        cycles = _cycles(_graph(package)) - KNOWN_CYCLES
        assert not cycles, f"{package}: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


def test_the_checks_find_what_they_look_for() -> None:
    """A cycle through three modules is one; the loader imports what stats may not."""
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": []}
    assert _cycles(edges) == {frozenset({"a", "b", "c"})}
    assert {"rankscope.data", "rankscope.metrics.evaluate"} <= _imports(LOADER)
    assert "rankscope.metrics.evaluate" in _imports("rankscope.metrics")  # via the package
