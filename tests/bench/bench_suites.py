"""Small suites and deterministic test engines shared by the benchmark tests."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine

DOCS = [
    {"_id": "py", "title": "Python", "text": "python is a programming language with json support"},
    {"_id": "js", "title": "JavaScript", "text": "javascript runs in the browser and parses json"},
    {
        "_id": "sql",
        "title": "SQLite",
        "text": "sqlite is an embedded database engine with full text",
    },
    {
        "_id": "long",
        "title": "Long",
        "text": " ".join(["filler"] * 40) + " the rare zebra term appears only near the end",
    },
    {"_id": "pg", "title": "PostgreSQL", "text": "postgresql is a database server with tsvector"},
]


class Overlap(Engine):
    """Scores documents by how many query words they contain (deterministic, tiny)."""

    name = "benchtest-overlap"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    thread_safe = True
    index_calls: ClassVar[int] = 0

    def __init__(self, **options: object) -> None:
        self.docs: list[Document] = []

    def index(self, docs: Iterable[Document]) -> None:
        type(self).index_calls += 1
        self.docs = list(docs)

    def _search(self, query: Query, k: int) -> list[Hit]:
        words = set(query.text.lower().split())
        scored = []
        for doc in self.docs:
            overlap = len(words & set(f"{doc.title} {doc.text}".lower().split()))
            if overlap:
                scored.append(Hit(doc.id, float(overlap)))
        scored.sort(key=lambda h: (-h.score, h.doc_id))
        return scored[:k]


class Interrupting(Overlap):
    """Simulates Ctrl-C while indexing, while ``armed``."""

    name = "benchtest-interrupt"
    armed: ClassVar[bool] = True

    def index(self, docs: Iterable[Document]) -> None:
        if type(self).armed:
            raise KeyboardInterrupt
        super().index(docs)


class Broken(Overlap):
    """Raises on its second query, like a server that goes away mid-run."""

    name = "benchtest-broken"
    thread_safe = False

    def __init__(self, **options: object) -> None:
        super().__init__()
        self.calls = 0
        self.lock = threading.Lock()

    def _search(self, query: Query, k: int) -> list[Hit]:
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("connection reset by peer")
        return super()._search(query, k)


register_engine("benchtest-overlap")(Overlap)
register_engine("benchtest-interrupt")(Interrupting)
register_engine("benchtest-broken")(Broken)


def make_suite(tmp_path: Path, engines: str, extra: str = "", settings: str = "") -> Path:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    head = textwrap.dedent(
        f"""
        name: tiny-bench
        corpus: {{type: jsonl, path: docs.jsonl}}
        settings: {{k: [1, 3], max_k: 4, warmup: 1, repeats: 2{settings}}}
        queries:
          - {{id: q1, text: json language, category: lang, judgments: {{py: 3, js: 1}}}}
          - {{id: q2, text: database engine, category: db, judgments: {{sql: 2, pg: 2}}}}
          - {{id: q3, text: zebra, category: db, judgments: {{long: 3}}}}
          - {{id: q4, text: nothing matches this, judgments: {{pg: 1}}}}
          - {{id: q5, text: unjudged query about json}}
        """
    )
    body = head + extra + "\nengines:\n" + textwrap.indent(textwrap.dedent(engines).strip(), "  ")
    path = tmp_path / "suite.yaml"
    path.write_text(body + "\n")
    return path


class Nothing(Overlap):
    """Instant, and finds nothing."""

    name = "benchtest-none"

    def _search(self, query: Query, k: int) -> list[Hit]:
        return []


class EvenOnly(Overlap):
    """Finds the relevant document for even-numbered queries only (w0, w2, ...)."""

    name = "benchtest-even"

    def _search(self, query: Query, k: int) -> list[Hit]:
        word = query.text.split()[0]
        if int(word[1:]) % 2:
            return []
        return super()._search(query, k)


register_engine("benchtest-none")(Nothing)
register_engine("benchtest-even")(EvenOnly)


def make_wide_suite(tmp_path: Path, engines: str, queries: int = 12, settings: str = "") -> Path:
    """``queries`` queries ``w<i>``, each with one relevant document holding that word (the
    overlap engine finds every one, the even engine half, the none engine none)."""
    docs = [{"_id": f"d{i}", "title": f"doc {i}", "text": f"w{i} filler"} for i in range(queries)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    lines = [
        "name: wide-bench",
        "corpus: {type: jsonl, path: docs.jsonl}",
        f"settings: {{k: [1, 3], max_k: 4, warmup: 0, repeats: 2{settings}}}",
        "queries:",
        *(
            f"  - {{id: q{i:02d}, text: w{i}, category: {'even' if i % 2 == 0 else 'odd'}, "
            f"judgments: {{d{i}: 2}}}}"
            for i in range(queries)
        ),
        "engines:",
        textwrap.indent(textwrap.dedent(engines).strip(), "  "),
    ]
    path = tmp_path / "suite.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path
