"""Constructed qrels and runs for the regression gate's tests: 60 queries, a baseline that
ranks a relevant document first on every query, and candidates derived from it."""

from __future__ import annotations

from pathlib import Path

N = 60


def write_qrels(path: Path) -> Path:
    """Each query q1..q60 has two relevant documents, d{i}a and d{i}b."""
    lines = [f"q{i} 0 d{i}{s} 1" for i in range(1, N + 1) for s in "ab"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_run(
    path: Path, name: str, demoted: frozenset[int] | set[int] = frozenset(), depth: int = 5
) -> Path:
    """Relevant documents at ranks 1 and 2, unjudged ones after; on the ``demoted`` queries the
    relevant ones come after ``depth`` unjudged ones instead."""
    lines = []
    for i in range(1, N + 1):
        docs = [f"d{i}a", f"d{i}b"] + [f"x{i}-{k}" for k in range(depth)]
        if i in demoted:
            docs = docs[2:] + docs[:2]
        lines += [f"q{i} Q0 {d} {r + 1} {100 - r} {name}" for r, d in enumerate(docs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
