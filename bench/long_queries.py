"""Long queries on every lexical engine: seconds per query over Cranfield's 1,400 abstracts.

Indexes the Cranfield BEIR copy (``data/cranfield/beir`` or
``$RANKSCOPE_SHARED_DATA/cranfield/beir``) in sqlite, tantivy, duckdb, anserini (when its jar
and Java are found) and postgres (a throwaway PostgreSQL cluster), then times one search (top
100) of each of these queries:

- ``repeat``: "boundary layer" 667 times (10,004 characters, 2 distinct words);
- ``cranfield``: the text of Cranfield's 225 queries one after the other, cut to 10,000
  characters (1,646 words, 546 distinct);
- ``hostile-repeat``, ``hostile-varied``: ``long_repeat_10k`` and ``long_varied_10k`` of
  ``data/hostile/strings.jsonl`` (about 10,000 characters; 1 and 16 distinct words,
  none of them frequent in Cranfield).

Prints, per engine and query, the seconds and the number of hits, or the error (after one
untimed short query, so that a JVM's warm-up is not counted). With ``--save FILE`` it also
writes every engine's top 100 for Cranfield's 225 ordinary queries; ``--compare FILE`` reports,
per engine, on how many of them the ranking or the scores differ from that file's.
``--ts-rank-cd`` times, on the postgres engine's table, PostgreSQL ranking an OR of the 256,
512 and 1,024 most frequent Cranfield words (the reason for its lower limit; minutes). It uses
only the engine API, so an older tree can be measured the same way::

    git archive <commit> src | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/src python bench/long_queries.py --save /tmp/before.json
    python bench/long_queries.py --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from cranfield_data import SHARED, cranfield_beir, cranfield_documents, cranfield_queries

from rankscope.engines import Document, Query, create_engine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the ordinary queries' rankings here")
    parser.add_argument("--compare", type=Path, help="compare the rankings with this file's")
    parser.add_argument(
        "--ts-rank-cd", action="store_true", help="time ts_rank_cd against the number of terms"
    )
    args = parser.parse_args()
    beir = cranfield_beir()
    docs = cranfield_documents(beir)
    ordinary = cranfield_queries(beir)
    texts = [q.text for q in ordinary]
    with (SHARED / "hostile" / "strings.jsonl").open() as fh:
        hostile = {r["name"]: r["text"] for r in map(json.loads, fh)}
    queries = {
        "repeat": " ".join(["boundary layer"] * 667),
        "cranfield": " ".join(texts)[:10_000],
        "hostile-repeat": hostile["long_repeat_10k"],
        "hostile-varied": hostile["long_varied_10k"],
    }
    engines: list[tuple[str, dict[str, object]]] = [("sqlite", {}), ("tantivy", {}), ("duckdb", {})]
    from rankscope.engines.anserini import find_jar, find_java_home

    if find_jar() is not None and find_java_home() is not None:
        engines.append(("anserini", {}))
    else:
        print("anserini left out: no Anserini jar or no Java", file=sys.stderr)
    from rankscope.testing.pgcluster import PgCluster

    rankings: dict[str, dict[str, list[list[Any]]]] = {}
    with PgCluster.start() as cluster:
        engines.append(("postgres", {"dsn": cluster.create_database("long_queries")}))
        print(f"{'engine':<10} {'query':<15} {'seconds':>8}  result")
        for name, options in engines:
            with create_engine(name, **options) as engine:
                engine.index(docs)
                engine.search(Query("warm-up", "boundary layer"), 100)
                for label, text in queries.items():
                    started = time.perf_counter()
                    try:
                        found = f"{len(engine.search(Query(label, text), 100))} hits"
                    except Exception as exc:  # the point is to show what each engine does
                        first = str(exc).splitlines()[0]
                        found = f"{type(exc).__name__}: {first[:90]}"
                    seconds = time.perf_counter() - started
                    print(f"{name:<10} {label:<15} {seconds:8.3f}  {found}", flush=True)
                if name == "postgres" and args.ts_rank_cd:
                    ts_rank_cd_times(str(options["dsn"]), str(getattr(engine, "table", "")), docs)
                if args.save or args.compare:
                    rankings[name] = {
                        q.id: [[h.doc_id, h.score] for h in engine.search(q, 100)] for q in ordinary
                    }
    if args.save:
        args.save.write_text(json.dumps(rankings))
    if args.compare:
        compare(json.loads(args.compare.read_text()), rankings)
    return 0


def ts_rank_cd_times(dsn: str, table: str, docs: list[Document]) -> None:
    """Seconds PostgreSQL takes to rank (``ts_rank_cd``, as the engine does) the documents of
    the engine's ``table`` matching an OR of the n most frequent words of the corpus."""
    import re
    from collections import Counter

    import psycopg

    counts = Counter(w for d in docs for w in re.findall(r"[a-z]+", d.text.lower()))
    conn = psycopg.connect(dsn, autocommit=True)
    lexemes = [
        str(row[0])
        for row in conn.execute(
            "SELECT t FROM (SELECT plainto_tsquery('english', u)::text AS t, min(o) AS o FROM "
            "unnest(%s::text[]) WITH ORDINALITY AS x(u, o) GROUP BY 1) s WHERE t <> '' "
            "ORDER BY o",
            [[w for w, _ in counts.most_common(3000)]],
        )
    ]
    for n in (256, 512, 1024):
        query = " | ".join(lexemes[:n])
        started = time.perf_counter()
        conn.execute(
            f'SELECT max(ts_rank_cd(d.tsv, %s::tsquery)) FROM "{table}" AS d '
            "WHERE d.tsv @@ %s::tsquery",
            [query, query],
        ).fetchone()
        seconds = time.perf_counter() - started
        print(f"postgres   ts_rank_cd, OR of {n:>4} terms {seconds:8.3f}", flush=True)
    conn.close()


def compare(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Per engine in both: queries whose ranking (ids in order) or scores differ."""
    print(f"\n{'engine':<10} ordinary queries (top 100) that differ from the saved rankings")
    for name in after:
        if name not in before:
            continue
        old, new = before[name], after[name]
        ranks = sum(1 for q in new if [d for d, _ in new[q]] != [d for d, _ in old[q]])
        diffs = [abs(a[1] - b[1]) for q in new for a, b in zip(new[q], old[q], strict=False)]
        scores = sum(1 for q in new if [s for _, s in new[q]] != [s for _, s in old[q]])
        print(
            f"{name:<10} ranking: {ranks}/{len(new)}, scores: {scores}/{len(new)} "
            f"(largest difference {max(diffs, default=0.0):.3g})"
        )


if __name__ == "__main__":
    sys.exit(main())
