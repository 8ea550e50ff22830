"""DuckDB's scores from run to run: two identical runs of Cranfield's 225 queries, compared.

Indexes the Cranfield BEIR copy (``data/cranfield/beir`` or
``$RANKSCOPE_SHARED_DATA/cranfield/beir``) in a fresh duckdb engine twice, searches every query
(top 100) each time, and prints how many scores and rankings differ between the two runs, with
DuckDB's default threads and with ``threads: 1``, and the seconds each search pass took.

    python bench/duckdb_repeat.py
"""

from __future__ import annotations

import sys
import time

from cranfield_data import cranfield_beir, cranfield_documents, cranfield_queries

from rankscope.engines import create_engine


def main() -> int:
    beir = cranfield_beir()
    docs = cranfield_documents(beir)
    queries = cranfield_queries(beir)
    for threads in (None, 1):
        runs = []
        seconds = []
        for _ in range(2):
            with create_engine("duckdb", threads=threads) as engine:
                engine.index(docs)
                started = time.perf_counter()
                runs.append([engine.search(q, 100) for q in queries])
                seconds.append(time.perf_counter() - started)
        pairs = [(a, b) for x, y in zip(*runs, strict=True) for a, b in zip(x, y, strict=True)]
        differ = [abs(a.score - b.score) for a, b in pairs if a.score != b.score]
        ranks = sum(
            1 for x, y in zip(*runs, strict=True) if [h.doc_id for h in x] != [h.doc_id for h in y]
        )
        print(
            f"threads={threads or 'default'}: {len(differ)} of {len(pairs)} scores differ "
            f"(largest {max(differ, default=0.0):.3g}), rankings differ on {ranks} of "
            f"{len(queries)} queries; search passes {seconds[0]:.1f} s and {seconds[1]:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
