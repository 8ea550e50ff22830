"""Write the vector-store suite's shipped corpus, queries and judgments from the demo suite.

The demo (``rankscope demo``) builds its corpus at run time from the docstrings of the running
interpreter's standard library. This script freezes that corpus into ``corpus.jsonl`` (so every
machine benchmarks the same 1,308 documents, whatever its Python), and keeps the demo's
free-text questions (``query_string`` queries: the only kind a vector store answers) in
``queries.jsonl`` with their graded judgments in ``qrels.txt``.

Run from the repository root: ``python examples/vector-stores/make_data.py``. The files shipped
were written by Python 3.11.7. The docstrings are the Python Software Foundation's, under the
PSF License Version 2, which allows copying them with that notice.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rankscope.demo import SUITE_PATH
from rankscope.suite import load_suite

HERE = Path(__file__).resolve().parent


def main() -> None:
    suite = load_suite(SUITE_PATH)
    docs = list(suite.corpus())
    with (HERE / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for d in docs:
            out.write(json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n")
    kept = [q for q in suite.queries if q.kind == "query_string"]
    qrels = suite.qrels().to_dict()
    with (HERE / "queries.jsonl").open("w", encoding="utf-8") as out:
        for q in kept:
            out.write(json.dumps({"_id": q.id, "text": q.text, "category": q.category}) + "\n")
    with (HERE / "qrels.txt").open("w", encoding="utf-8") as out:
        for q in kept:
            for doc, grade in sorted(qrels.get(q.id, {}).items()):
                out.write(f"{q.id} 0 {doc} {grade}\n")
    judged = sum(1 for q in kept if qrels.get(q.id))
    print(
        f"{len(docs)} documents, {len(kept)} queries ({judged} judged) from Python "
        f"{sys.version.split()[0]}"
    )


if __name__ == "__main__":
    main()
