"""A varied set of collect requests and the raw values SQLite stores for them: the reference
that the write path's regression test (test_service_rows.py) compares against, byte for byte.

``stored_rows.json`` was written by :func:`capture` from the write path as it was before the
path was made faster; regenerate it only for an intended change of what is stored
(``python tests/service/stored_rows.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).with_name("data") / "stored_rows.json"
NOW = dt.datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=dt.UTC)
#: the thresholds of heuristic rows: per search type label, else the default
THRESHOLDS = {"semantic": 0.5, "keyword+web": 0.2}
DEFAULT_THRESHOLD = 0.7
#: a user's own thresholds, which win over the settings'
OWN = {"bob": {"semantic": 0.95}, "carol": {"*": 0.1}}


def _doc(doc_id: str, score: float, **extra: Any) -> dict[str, Any]:
    return {"documentId": doc_id, "score": score, **extra}


def bodies() -> list[tuple[str, dict[str, Any]]]:
    """(user, request body) pairs covering every stored column's kinds of value."""
    chunked = [
        _doc("a", 0.91, chunkIndex=0, documentName="Alpha"),
        _doc("b", 0.8, chunkIndex=0),
        _doc("a", 0.95, chunkIndex=3, documentName="Alpha"),
        _doc("c", 0.31, chunkIndex=1, documentName=None),
        _doc("b", 0.2, chunkIndex=None, content="ignored text"),
    ]
    odd = [
        _doc('d\t1\\"x', 0.123456789012345678, documentName="line\nbreak \u00e9 \U0001f600"),
        _doc("\u00e9-2", 1e-7, chunkIndex=2**31 - 1),
        _doc("</script>", -3.5, documentName=""),
        _doc("big", 1e20),
        _doc("int-score", 1),
        _doc("zero", 0.0, chunkIndex=0),
    ]
    plain = [_doc(f"p{i}", round(0.99 - 0.09 * i, 2)) for i in range(10)]
    kinds: list[dict[str, Any] | None] = [
        None,
        {},
        {"semantic": True},
        {"keyword": True, "web": True},
        {"hybrid": True},
        {"semantic": True, "keyword": True, "hybrid": True, "web": True},
        {"semantic": False},
    ]
    stamps = [
        None,
        "2024-03-04T05:06:07Z",
        "2024-03-04T05:06:07.000001+02:00",
        "2024-03-04T05:06:07.5",  # no zone: read as UTC
        "0999-01-02T03:04:05.5+02:00",
        "2024-12-31T23:59:59.999999-05:30",
        "2024-03-04T05:06:07",
    ]
    out: list[tuple[str, dict[str, Any]]] = []
    users = ["alice", "bob", "carol"]
    for i in range(42):
        docs = [chunked, odd, plain, []][i % 4]
        body: dict[str, Any] = {"query": f'query {i} \u00fc "quoted"', "retrievedDocuments": docs}
        truth = i % 5
        if truth == 1:
            body["relevantDocumentIds"] = [d["documentId"] for d in docs[:2]] + ["unseen"]
        elif truth == 2:
            body["judgments"] = {d["documentId"]: (i + k) % 4 for k, d in enumerate(docs[:3])}
            body["judgments"]["unseen"] = 2
        elif truth == 3:
            body["judgments"] = {"x": -1, **({docs[0]["documentId"]: 0} if docs else {})}
            body["relevantDocumentIds"] = ["ignored: judgments win"]
        elif truth == 4 and i % 3 == 0:
            body["relevantDocumentIds"] = []
        options: dict[str, Any] = {}
        kind = kinds[i % len(kinds)]
        if kind is not None:
            options["searchTypes"] = kind
        if i % 3 == 0:
            options["cutoff"] = [1, 2, 50][(i // 3) % 3]
        if i % 4 == 1:
            options["webResultsCount"] = [0, 5, 1_000_000][(i // 4) % 3]
        if i % 6 == 2:
            options.update(topicId=f"topic-{i}", arm="b", documentIds=["p1", "\u00e9-2"])
        if i % 8 != 7:
            body["options"] = options
        stamp = stamps[i % len(stamps)]
        if stamp is not None:
            body["timestamp"] = stamp
        if i % 5 == 0:
            body["queryId"] = f"qid-{i}"
        if i % 4 == 3:
            body["collectId"] = f"c-{i}"
        out.append((users[i % 3], body))
    return out


def stored(database: Path) -> list[dict[str, Any]]:
    """Every row as SQLite holds it (text, integers, floats, NULL), in insertion order."""
    with closing(sqlite3.connect(database)) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM retrieval_metrics ORDER BY rowid").fetchall()
        return [dict(r) for r in rows]


def capture(database: Path) -> None:
    """Store :func:`bodies` through the write path of the rankscope on the path and write
    the stored values (ids left out: they are random) to :data:`GOLDEN`."""
    from rankscope.collect.wire import MetricCreate
    from rankscope.service.ingest.rows import NewRecord, build_rows, with_user_thresholds
    from rankscope.service.ingest.writer import MetricsStore
    from rankscope.service.store.db import make_engine, migrate

    def lookup(_user: str, search_type: str) -> float:
        return THRESHOLDS.get(search_type, DEFAULT_THRESHOLD)

    engine = make_engine(f"sqlite:///{database}")
    migrate(engine)
    records = [NewRecord(MetricCreate.model_validate(b), u) for u, b in bodies()]
    rows = build_rows(records, with_user_thresholds(OWN, lookup), now=NOW)
    with engine.begin() as conn:
        MetricsStore(engine, lookup)._insert(conn, rows)
    engine.dispose()
    values = [{k: v for k, v in row.items() if k != "id"} for row in stored(database)]
    GOLDEN.write_text(json.dumps(values, indent=1, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    capture(Path(sys.argv[1]))
