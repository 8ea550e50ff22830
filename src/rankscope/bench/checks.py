"""Judgments against the corpus and the rankings: refuse what cannot be scored, warn with counts.

A suite whose judgments name documents the corpus does not hold (ids from another collection, a
different id field) used to run to an all-zero table with a "best" configuration. Before any
engine runs, :func:`check_judgments` refuses an empty corpus and judgments that mark no corpus
document relevant, and warns about judged documents missing from the corpus; after the run,
:func:`retrieval_warnings` warns when no configuration retrieved any relevant document.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from pathlib import Path

from rankscope.bench.config_record import ConfigRecord
from rankscope.data.qrels import Qrels
from rankscope.errors import ConfigError

_ID_HINT = (
    "check that the judgments' document ids are the corpus ids (for a BEIR folder, the _id "
    "values of corpus.jsonl; for a jsonl corpus, its id_field)"
)


def check_judgments(
    num_documents: int,
    in_corpus: Container[str],
    judged: Qrels,
    given: Qrels,
    relevant_from: int,
    suite_file: Path | None = None,
) -> list[str]:
    """Refuse what cannot be scored; return warnings. ``judged`` holds the judgments of the
    suite's queries, ``given`` every judgment the suite brought; ``in_corpus`` answers whether
    a judged document is in the corpus of ``num_documents`` documents (the judged ids a scan
    found: see :func:`rankscope.bench.corpus.scan_corpus`)."""
    if num_documents == 0:
        raise ConfigError(
            "the corpus has no documents, so there is nothing to search",
            path=suite_file,
            hint="check the corpus path and type (an empty file, a glob that matches nothing)",
        )
    rows = list(judged)
    relevant = [(q, d) for q, d, grade in rows if grade >= relevant_from]
    if not relevant:
        raise ConfigError(
            f"no judgment marks a document relevant (grade >= {relevant_from}), so every "
            "measure would be 0",
            path=suite_file,
            hint="lower settings.relevance_threshold, or add judgments with higher grades",
        )
    found = [(q, d) for q, d in relevant if d in in_corpus]
    if not found:
        example = relevant[0][1]
        raise ConfigError(
            f"none of the {len(relevant)} relevant judged documents is in the corpus "
            f"({num_documents} documents; e.g. {example!r} is not), so nothing can be scored",
            path=suite_file,
            hint=_ID_HINT,
        )
    warnings: list[str] = []
    missing = [(q, d) for q, d, _ in rows if d not in in_corpus]
    if missing:
        lost = {q for q, d in relevant if d not in in_corpus}
        warnings.append(
            f"{len(missing)} of {len(rows)} judged documents are not in the corpus "
            f"({len(relevant) - len(found)} of them relevant, in {len(lost)} "
            f"{_queries(len(lost))}; e.g. {missing[0][1]!r}): no engine can retrieve them, so "
            f"recall and nDCG count them as missed. {_ID_HINT[0].upper()}{_ID_HINT[1:]}"
        )
    hopeless = {q for q, _ in relevant} - {q for q, _ in found}
    if hopeless:
        warnings.append(
            f"{len(hopeless)} judged {_queries(len(hopeless))} "
            f"{'has' if len(hopeless) == 1 else 'have'} no relevant document in the corpus "
            f"(e.g. {sorted(hopeless)[0]!r}): every configuration scores 0 on "
            f"{'it' if len(hopeless) == 1 else 'them'}"
        )
    extra = set(given.query_ids) - set(judged.query_ids)
    if extra:
        warnings.append(
            f"the judgments cover {len(extra)} {_queries(len(extra))} the suite does not run "
            f"(e.g. {sorted(extra)[0]!r}); they are left out"
        )
    return warnings


def retrieval_warnings(
    records: Sequence[ConfigRecord], judged: Qrels, relevant_from: int
) -> list[str]:
    """Warn when no successful configuration retrieved any relevant judged document."""
    ok = [r for r in records if r.ok]
    if not ok:
        return []
    relevant = {(q, d) for q, d, grade in judged if grade >= relevant_from}
    retrieved = {(q, d) for r in ok for q, ranked in r.rankings.items() for d, _ in ranked}
    if relevant & retrieved:
        return []
    returned = sum(len(ranked) for r in ok for ranked in r.rankings.values())
    return [
        f"no configuration retrieved any of the {len(relevant)} relevant judged documents "
        f"(they returned {returned} results in all): every quality measure is 0. {_ID_HINT}"
    ]


def _queries(n: int) -> str:
    return "query" if n == 1 else "queries"


def host_warnings(records: Sequence[ConfigRecord]) -> list[str]:
    """A warning when the configurations ran on more than one machine (a Ray cluster, or
    checkpoints made elsewhere): their index times and latencies are then not comparable."""
    hosts: dict[str, list[str]] = {}
    for record in records:
        if record.ok and record.host is not None:
            hosts.setdefault(record.host, []).append(record.name)
    if len(hosts) < 2:
        return []
    where = "; ".join(f"{host}: {', '.join(names)}" for host, names in sorted(hosts.items()))
    return [
        f"the configurations ran on {len(hosts)} machines ({where}): index times and "
        "latencies measured on different machines are not comparable (quality is)"
    ]
