"""What the benchmark learns of its corpus in one streaming pass, before any engine runs.

The corpus is never held: each configuration reads it again from its source while the engine
indexes it. What the run needs beside the rankings comes from one pass over it here: the number
of documents, the extra field names (engines declare their columns before the first row), the
fingerprint that ties checkpoints to the corpus, whether every id fits a TREC file, and which of
the judged documents the corpus holds (for the judgment checks) — a few counters and a set the
size of the judgments, whatever the size of the corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from rankscope.bench.outputs import trec_safe
from rankscope.engines.base import Document


@dataclass(frozen=True, slots=True)
class CorpusScan:
    """The corpus as the benchmark needs to know it (see the module docstring)."""

    count: int
    fields: tuple[str, ...]
    fingerprint: str
    trec_safe_ids: bool
    found: frozenset[str]


def scan_corpus(docs: Iterable[Document], wanted: Collection[str] = ()) -> CorpusScan:
    """One pass over ``docs``; ``found`` holds the ids of ``wanted`` that the corpus has.

    The fingerprint hashes every document's id, title, text and sorted fields, so a changed
    corpus invalidates the checkpoints made with it.
    """
    digest = hashlib.sha256()
    fields: dict[str, None] = {}
    found: set[str] = set()
    safe = True
    count = 0
    for doc in docs:
        count += 1
        for part in (doc.id, doc.title, doc.text, *sorted(doc.fields.items())):
            digest.update(str(part).encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        for name in doc.fields:
            if name not in fields and name not in ("title", "text"):
                fields[name] = None
        if doc.id in wanted:
            found.add(doc.id)
        if safe and not trec_safe(doc.id):
            safe = False
    return CorpusScan(count, tuple(fields), digest.hexdigest()[:16], safe, frozenset(found))
