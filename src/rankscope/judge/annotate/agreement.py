"""Agreement on the overlap: Cohen's kappa between annotators and between people and the
reference labels (LLM, existing qrels), and the pairs people graded differently.

Each comparison is :func:`rankscope.judge.agreement.label_agreement` (the one implementation of
kappa that ``rankscope agree`` uses) over the pairs both sides graded; a skipped pair is not a
grade and is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from rankscope.judge.annotate.store import AnnotationPair, AnnotationStore

if TYPE_CHECKING:
    from rankscope.judge.agreement import LabelAgreement

Grades = Mapping[tuple[str, str], int]


@dataclass(frozen=True, slots=True)
class RaterAgreement:
    """``a`` and ``b`` (annotator names, or a reference source: ``llm``, ``qrels``) over the
    ``shared`` pairs both graded; ``labels`` None when they share none."""

    a: str
    b: str
    shared: int
    labels: LabelAgreement | None


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A pair people graded differently, with every grade, reference label and note on it."""

    pair: AnnotationPair
    grades: dict[str, int]
    references: dict[str, int]
    notes: dict[str, str]


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """Agreement between the annotators of a store, and of each with the reference labels,
    with the pairs they disagree on."""

    threshold: int
    between_annotators: tuple[RaterAgreement, ...]
    with_references: tuple[RaterAgreement, ...]
    disagreements: tuple[Disagreement, ...]


def compare(a: str, b: str, ga: Grades, gb: Grades, *, threshold: int = 1) -> RaterAgreement:
    """Agreement of two sets of grades on the pairs both have (the result's ``only_a`` and
    ``only_b`` count those one side graded alone, in the queries both graded)."""
    from rankscope.judge.agreement import label_agreement  # numpy: when agreement is asked

    shared = len(set(ga) & set(gb))
    if not shared:  # label_agreement refuses this; here it is just "not yet"
        return RaterAgreement(a, b, 0, None)
    # every grade goes in, so the result also counts the pairs one side graded alone
    return RaterAgreement(
        a, b, shared, label_agreement(_nested(ga), _nested(gb), threshold=threshold)
    )


def _nested(grades: Grades) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), g in grades.items():
        out.setdefault(q, {})[d] = g
    return out


def agreement_report(store: AnnotationStore, *, threshold: int = 1) -> AgreementReport:
    """The :class:`AgreementReport` of ``store`` (binary kappa: grade >= ``threshold``)."""
    grades = store.grades()
    names = list(grades)
    pairs = [
        compare(a, b, grades[a], grades[b], threshold=threshold) for a, b in combinations(names, 2)
    ]
    refs = {source: store.references(source) for source in store.reference_sources()}
    with_refs = [
        compare(name, source, grades[name], labels, threshold=threshold)
        for name in names
        for source, labels in refs.items()
    ]
    by_pair: dict[tuple[str, str], dict[str, int]] = {}
    for name, given in grades.items():
        for key, grade in given.items():
            by_pair.setdefault(key, {})[name] = grade
    split = {key: who for key, who in by_pair.items() if len(set(who.values())) > 1}
    found = []
    if split:
        notes = {name: store.notes(name) for name in names}
        for pair in store.pairs():
            who = split.get((pair.query_id, pair.doc_id))
            if who is None:
                continue
            found.append(
                Disagreement(
                    pair,
                    who,
                    {
                        s: r[(pair.query_id, pair.doc_id)]
                        for s, r in refs.items()
                        if (pair.query_id, pair.doc_id) in r
                    },
                    {n: notes[n][pair.id] for n in who if pair.id in notes[n]},
                )
            )
    return AgreementReport(threshold, tuple(pairs), tuple(with_refs), tuple(found))


__all__ = ["AgreementReport", "Disagreement", "RaterAgreement", "agreement_report", "compare"]
