"""Generate synthetic BEIR corpora for the memory benchmark (``bench/bench_memory.py``).

Each corpus is a BEIR folder ``bench/data/corpus-<N>/`` with ``corpus.jsonl`` (``_id``, ``title``,
``text``), ``queries.jsonl`` and ``qrels/test.tsv``, plus ``suite.yaml`` running it with sqlite and
tantivy. The words are drawn from a Zipfian vocabulary (``--vocabulary`` made-up words, rank
``r`` drawn with probability proportional to ``r ** -exponent``); each document has 50-150 words
and a 3-8 word title. Each of the ``--queries`` queries is three words of middling frequency
taken from one seed document, which is judged relevant (grade 2): a known-item task, enough to
make every engine search and every measure non-trivial. Everything is seeded, so a corpus is the
same bytes on every machine. Usage::

    python bench/make_corpus.py                      # 10k, 100k and 1M documents
    python bench/make_corpus.py --docs 10000 100000  # some sizes only
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "data"
BLOCK = 10_000  # documents drawn at a time
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]

SUITE = """\
name: synthetic-{docs}
description: synthetic Zipfian corpus, {docs} documents, {queries} known-item queries
corpus: {{type: beir, path: .}}
settings: {{k: [10], max_k: 100, warmup: 0, repeats: 1}}
engines:
  - {{name: sqlite, engine: sqlite}}
  - {{name: tantivy, engine: tantivy}}
"""


def vocabulary(size: int) -> np.ndarray:
    """``size`` distinct pronounceable made-up words, the most frequent first (short ones)."""
    words: list[str] = []
    for length in itertools.count(1):
        for parts in itertools.product(_SYLLABLES, repeat=length):
            words.append("".join(parts))
            if len(words) == size:
                return np.array(words, dtype=object)
    raise AssertionError("unreachable")


def write_corpus(
    docs: int, queries: int, vocab_size: int, exponent: float, seed: int, out: Path
) -> None:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(vocab_size)
    weights = np.arange(1, vocab_size + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights / weights.sum())
    seeds = set(rng.choice(docs, size=min(queries, docs), replace=False).tolist())
    # query words: middling ranks, frequent enough to appear, rare enough to discriminate
    lo, hi = vocab_size // 100, vocab_size // 5
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    made: list[tuple[str, str]] = []
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for start in range(0, docs, BLOCK):
            n = min(BLOCK, docs - start)
            lengths = rng.integers(50, 151, size=n)
            title_lengths = rng.integers(3, 9, size=n)
            total = int(lengths.sum() + title_lengths.sum())
            ranks = np.searchsorted(cdf, rng.random(total), side="right")
            drawn = vocab[np.minimum(ranks, vocab_size - 1)]
            at = 0
            lines = []
            for i in range(n):
                title = drawn[at : at + title_lengths[i]]
                at += title_lengths[i]
                text_ranks = ranks[at : at + lengths[i]]
                words = drawn[at : at + lengths[i]]
                at += lengths[i]
                doc_id = f"d{start + i}"
                lines.append(
                    json.dumps({"_id": doc_id, "title": " ".join(title), "text": " ".join(words)})
                )
                if start + i in seeds:
                    middling = [int(r) for r in text_ranks if lo <= r < hi]
                    picked = middling[:3] if len(middling) >= 3 else sorted(text_ranks)[-3:]
                    made.append((doc_id, " ".join(vocab[r] for r in picked)))
            corpus.write("\n".join(lines) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as qfile:
        for n, (_, text) in enumerate(made):
            qfile.write(json.dumps({"_id": f"q{n}", "text": text}) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for n, (doc_id, _) in enumerate(made):
            qrels.write(f"q{n}\t{doc_id}\t2\n")
    (out / "suite.yaml").write_text(SUITE.format(docs=docs, queries=len(made)), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--vocabulary", type=int, default=50_000)
    ap.add_argument("--exponent", type=float, default=1.07)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for docs in args.docs:
        target = args.out / f"corpus-{docs}"
        started = time.perf_counter()
        write_corpus(docs, args.queries, args.vocabulary, args.exponent, args.seed, target)
        size = (target / "corpus.jsonl").stat().st_size / 1e6
        took = time.perf_counter() - started
        print(f"{target}: {docs:,} documents, {size:,.1f} MB, {took:.1f} s")


if __name__ == "__main__":
    main()
