"""A retriever wrapped with rankscope's collection client.

The application searches (here: rankscope's SQLite FTS5 engine over a few documents), uses the
results, and hands each retrieval to ``MetricsClient.collect``, which returns at once: records
are sent in the background, in batches, with retries. Where the application knows the answer
(a labelled question), it passes the relevant ids; otherwise the service estimates relevance
from the score (rows marked ``heuristic``).

    python examples/collect_rag.py                         # local mode: writes metrics.sqlite
    python examples/collect_rag.py --url http://127.0.0.1:8000 --token rsk_...

then ``rankscope serve --database-url sqlite:///metrics.sqlite`` shows the local file's records.
"""

from __future__ import annotations

import argparse

from rankscope.collect import MetricsClient
from rankscope.engines import Document, Query, create_engine

DOCS = [
    Document("logging", "Rotate log files daily with logrotate; keep seven files.", "Logging"),
    Document("retries", "Retry failed requests with exponential backoff and jitter.", "Retries"),
    Document("pool", "Set pool_size in the [db] section to size the connection pool.", "Pool"),
    Document("tls", "Certificates are renewed thirty days before they expire.", "TLS"),
]
QUESTIONS = [
    ("how do I rotate log files", ["logging"]),
    ("connection pool size", ["pool"]),
    ("backoff for failed requests", None),  # no label: relevance estimated from the score
]


class Retriever:
    """The application's retriever, reporting every search to the collection service."""

    def __init__(self, metrics: MetricsClient) -> None:
        self.engine = create_engine("sqlite")
        self.engine.index(DOCS)
        self.metrics = metrics

    def search(self, text: str, k: int = 3, relevant: list[str] | None = None) -> list[str]:
        hits = self.engine.search(Query(id=text, text=text), k)
        # returns at once; never raises into the application
        self.metrics.collect(
            text,
            hits,  # rankscope Hits; mappings or (id, score) pairs work too
            relevant_document_ids=relevant,
            topic_id="docs",
            search_types=["keyword"],
        )
        return [h.doc_id for h in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="the service (default: local mode into --local)")
    parser.add_argument("--token", help="an API key or JWT for --url")
    parser.add_argument("--local", default="metrics.sqlite", help="SQLite file of local mode")
    args = parser.parse_args()
    client = (
        MetricsClient(args.url, args.token)
        if args.url
        else MetricsClient.local(args.local, user="example")
    )
    retriever = Retriever(client)
    for text, relevant in QUESTIONS:
        print(text, "->", retriever.search(text, relevant=relevant))
    print(client.close())  # flushes first; counters: sent, retried, dropped, ...


if __name__ == "__main__":
    main()
