"""The Cranfield BEIR copy for the benchmark scripts (the repository's ``data/cranfield/beir`` or
``$RANKSCOPE_SHARED_DATA/cranfield/beir``). It reads with the engine API's values only, so that a
script can measure an older tree (``PYTHONPATH=/tmp/before/src``) the same way."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from rankscope.engines import Document, Query

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RANKSCOPE_SHARED_DATA", REPO / "data"))


def cranfield_beir() -> Path:
    """The BEIR folder; exits with status 2 and a message when it is not there."""
    beir = SHARED / "cranfield" / "beir"
    if not (beir / "corpus.jsonl").is_file():
        print(f"Cranfield BEIR copy not found under {beir}", file=sys.stderr)
        raise SystemExit(2)
    return beir


def cranfield_documents(beir: Path) -> list[Document]:
    with (beir / "corpus.jsonl").open(encoding="utf-8") as fh:
        return [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]


def cranfield_queries(beir: Path) -> list[Query]:
    with (beir / "queries.jsonl").open(encoding="utf-8") as fh:
        return [Query(str(r["_id"]), str(r["text"])) for r in map(json.loads, fh)]
