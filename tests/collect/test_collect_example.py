"""examples/collect_rag.py runs and its records land in the SQLite file."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

EXAMPLE = Path(__file__).parents[2] / "examples" / "collect_rag.py"


def test_example_collects_into_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rankscope.service.store.db import make_engine

    db = tmp_path / "metrics.sqlite"
    monkeypatch.setattr(sys, "argv", ["collect_rag.py", "--local", str(db)])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert "sent=3" in capsys.readouterr().out
    engine = make_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT query, judgment_source, precision FROM retrieval_metrics ORDER BY query"
        ).all()
    engine.dispose()
    assert [(q, s) for q, s, _ in rows] == [
        ("backoff for failed requests", "heuristic"),
        ("connection pool size", "provided"),
        ("how do I rotate log files", "provided"),
    ]
