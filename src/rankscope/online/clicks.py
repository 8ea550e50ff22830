"""Implicit judgments from clicks: CTR, clicks over expected clicks, a simplified DBN click model.

Pure functions on a :class:`ClickLog` (typed numpy arrays: one row per result shown in a
session), usable without the service. A *session* is one results page: one query id of
``POST /api/events``. A *query* is the normalised query text (:mod:`rankscope.online.queries`).

Per (query, document) pair:

- **CTR** = clicks / impressions.
- **COEC** (clicks over expected clicks; Zhang and Jones 2007) = clicks / Σ prior[position] over
  the pair's impressions, where ``prior[p]`` is the click-through rate of position p over the whole
  log. A position shown fewer than ``min_position_impressions`` times borrows the prior of the
  deepest position above it that has enough (deep positions are sparse and noisy). COEC 1 means
  "clicked as often as an average result at the same positions"; it corrects CTR's position bias.
- **Simplified DBN** (Chapelle and Zhang 2009, the estimator with γ = 1): a user scans down the
  list and stops after a satisfying click, taken to be the session's last click (or, with
  ``satisfied_dwell_seconds``, a click whose dwell reaches it, when the dwell is known). Results
  at or above the last click are *examined* (every shown result when nothing was clicked).
  Attractiveness ``a = (clicks + 1) / (examined + 2)``; satisfaction
  ``s = (satisfied clicks + 1) / (clicks + 2)`` (Beta(1, 1) priors); relevance ``a · s``.

Grades 0–3 (:class:`GradeThresholds`, documented in docs/service.md): a value below the first
threshold is 0, below the second 1, below the third 2, else 3. Defaults: CTR 0.062 / 0.12 /
0.18, COEC 0.67 / 0.98 / 1.3, DBN 0.09 / 0.2 / 0.5, each the candidate (thresholds fitted on one
simulated population, or the DBN's earlier defaults) that agreed best with the true grades on
the *other* simulated populations (:mod:`rankscope.testing.click_study`: cascade users of
several persistences, position-based users, flatter attractiveness, noisy clicks, a better
engine). The DBN agrees best on average there (linear-weighted kappa 0.76 over the populations
its thresholds were not chosen on; 0.62 to 0.89 by population), the CTR 0.73, the COEC 0.67
(bench/ONLINE_SIMULATIONS.md). They depend on the page layout and users: check the grades
against LLM or human labels (``rankscope agree``) and refit them
(:func:`rankscope.online.calibration.fit_grade_thresholds`). A pair with fewer than
``min_impressions`` impressions (for the DBN: examinations, since a result shown below every
click was not seen) gets no click grade (unjudged, not 0). Explicit feedback
then overrides: more thumbs down than up gives 0, more up than down at least 2, being cited in
an answer at least 1; a pair with explicit feedback only is graded by it alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError

Model = Literal["ctr", "coec", "dbn"]
MODELS: tuple[Model, ...] = ("ctr", "coec", "dbn")


@dataclass(frozen=True, slots=True)
class Shown:
    """One result shown in a session: at ``position`` (1 = top), clicked or not, the dwell time
    of the click in seconds when known."""

    session: str
    query: str
    doc: str
    position: int
    clicked: bool = False
    dwell: float | None = None


@dataclass(frozen=True, slots=True)
class Feedback:
    """Explicit signals on one (query, document) pair."""

    thumbs_up: int = 0
    thumbs_down: int = 0
    cited: int = 0


@dataclass(frozen=True)
class ClickLog:
    """Results shown, as parallel arrays (one row per shown result; at most one row per
    session and document). ``queries``, ``docs`` and ``sessions`` hold the names the index
    arrays point into; ``feedback`` the explicit signals per (query, doc) name pair."""

    session: NDArray[np.int64]
    query: NDArray[np.int64]
    doc: NDArray[np.int64]
    position: NDArray[np.int64]
    clicked: NDArray[np.bool_]
    dwell: NDArray[np.float64]
    sessions: tuple[str, ...]
    queries: tuple[str, ...]
    docs: tuple[str, ...]
    feedback: Mapping[tuple[str, str], Feedback] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.session.size)

    @classmethod
    def from_shown(
        cls, rows: Iterable[Shown], feedback: Mapping[tuple[str, str], Feedback] | None = None
    ) -> ClickLog:
        """Build the arrays; a document shown twice in one session keeps its first (highest)
        position and counts as clicked when either row was clicked."""
        merged: dict[tuple[str, str], Shown] = {}
        for row in rows:
            if row.position < 1:
                raise InputError(
                    "a shown result's position starts at 1",
                    value=row.position,
                    hint="positions are 1-based: the top result is 1",
                )
            key = (row.session, row.doc)
            old = merged.get(key)
            if old is None:
                merged[key] = row
            else:
                dwell = old.dwell if old.dwell is not None else row.dwell
                merged[key] = Shown(
                    old.session,
                    old.query,
                    old.doc,
                    min(old.position, row.position),
                    old.clicked or row.clicked,
                    dwell,
                )
        sessions: dict[str, int] = {}
        queries: dict[str, int] = {}
        docs: dict[str, int] = {}
        n = len(merged)
        s = np.empty(n, dtype=np.int64)
        q = np.empty(n, dtype=np.int64)
        d = np.empty(n, dtype=np.int64)
        p = np.empty(n, dtype=np.int64)
        c = np.empty(n, dtype=np.bool_)
        w = np.full(n, np.nan, dtype=np.float64)
        for i, row in enumerate(merged.values()):
            s[i] = sessions.setdefault(row.session, len(sessions))
            q[i] = queries.setdefault(row.query, len(queries))
            d[i] = docs.setdefault(row.doc, len(docs))
            p[i] = row.position
            c[i] = row.clicked
            if row.dwell is not None:
                w[i] = row.dwell
        return cls(
            s, q, d, p, c, w, tuple(sessions), tuple(queries), tuple(docs), dict(feedback or {})
        )


@dataclass(frozen=True, slots=True)
class GradeThresholds:
    """Values at which a grade rises to 1, 2 and 3."""

    one: float
    two: float
    three: float

    def __post_init__(self) -> None:
        if not self.one <= self.two <= self.three:
            raise InputError(
                "grade thresholds must not decrease",
                value=(self.one, self.two, self.three),
                hint="give three values for grades 1, 2 and 3, smallest first",
            )

    def grade(self, value: float) -> int:
        return int(value >= self.one) + int(value >= self.two) + int(value >= self.three)

    def grades(self, values: NDArray[np.float64]) -> NDArray[np.int64]:
        """:meth:`grade` of every value of an array."""
        out: NDArray[np.int64] = (
            (values >= self.one).astype(np.int64)
            + (values >= self.two).astype(np.int64)
            + (values >= self.three).astype(np.int64)
        )
        return out


DEFAULT_THRESHOLDS: dict[Model, GradeThresholds] = {
    "ctr": GradeThresholds(0.062, 0.12, 0.18),
    "coec": GradeThresholds(0.67, 0.98, 1.3),
    "dbn": GradeThresholds(0.09, 0.2, 0.5),
}
DEFAULT_MIN_IMPRESSIONS = 10
DEFAULT_MIN_POSITION_IMPRESSIONS = 100


@dataclass(frozen=True, slots=True)
class PositionPrior:
    """Click-through rate per position (index 0 is position 1), as estimated and as used."""

    impressions: NDArray[np.int64]
    clicks: NDArray[np.int64]
    ctr: NDArray[np.float64]
    min_impressions: int

    def at(self, positions: NDArray[np.int64]) -> NDArray[np.float64]:
        """The prior at each position (positions past the deepest seen use the deepest)."""
        idx = np.minimum(positions, self.ctr.size) - 1
        out: NDArray[np.float64] = self.ctr[idx]
        return out


@dataclass(frozen=True, slots=True)
class ClickJudgment:
    """Everything known about one (query, document) pair, and its grade (None: unjudged)."""

    query: str
    doc: str
    impressions: int
    clicks: int
    ctr: float
    mean_position: float
    expected_clicks: float
    coec: float | None
    examined: int
    satisfied: int
    attractiveness: float
    satisfaction: float
    dbn: float
    thumbs_up: int
    thumbs_down: int
    cited: int
    model: Model
    grade: int | None


@dataclass(frozen=True)
class ClickJudgments:
    """Judgments of every pair of a log under one model, with the settings that made them."""

    judgments: tuple[ClickJudgment, ...]
    model: Model
    thresholds: GradeThresholds
    min_impressions: int
    prior: PositionPrior

    def graded(self) -> list[ClickJudgment]:
        return [j for j in self.judgments if j.grade is not None]

    def qrels_dict(self, key: Mapping[str, str] | None = None) -> dict[str, dict[str, int]]:
        """``{query: {doc: grade}}`` of the graded pairs (queries renamed through ``key``)."""
        out: dict[str, dict[str, int]] = {}
        for j in self.judgments:
            if j.grade is not None:
                name = key[j.query] if key is not None else j.query
                out.setdefault(name, {})[j.doc] = j.grade
        return out


def position_prior(
    log: ClickLog, min_impressions: int = DEFAULT_MIN_POSITION_IMPRESSIONS
) -> PositionPrior:
    """CTR per position over the whole log; a position shown fewer than ``min_impressions``
    times uses the prior of the deepest position above it that was shown often enough (the top
    position keeps its own value whatever its count)."""
    if len(log) == 0:
        empty = np.zeros(1, dtype=np.int64)
        return PositionPrior(empty, empty, np.zeros(1), min_impressions)
    depth = int(log.position.max())
    impressions = np.bincount(log.position - 1, minlength=depth).astype(np.int64)
    clicks = np.bincount(log.position - 1, weights=log.clicked, minlength=depth).astype(np.int64)
    ctr = np.zeros(depth, dtype=np.float64)
    last = 0.0
    for p in range(depth):
        if impressions[p] >= min_impressions or (p == 0 and impressions[p] > 0):
            last = clicks[p] / impressions[p]
        ctr[p] = last
    return PositionPrior(impressions, clicks, ctr, min_impressions)


def _last_clicks(log: ClickLog) -> NDArray[np.int64]:
    """Per row: the position of its session's last click (0 when the session has none)."""
    last = np.zeros(len(log.sessions), dtype=np.int64)
    np.maximum.at(last, log.session[log.clicked], log.position[log.clicked])
    return last[log.session]


def click_judgments(
    log: ClickLog,
    model: Model = "dbn",
    *,
    min_impressions: int = DEFAULT_MIN_IMPRESSIONS,
    thresholds: GradeThresholds | None = None,
    min_position_impressions: int = DEFAULT_MIN_POSITION_IMPRESSIONS,
    satisfied_dwell_seconds: float | None = None,
) -> ClickJudgments:
    """Every (query, document) pair's CTR, COEC and DBN values, graded 0–3 by ``model``."""
    if model not in MODELS:
        raise InputError("unknown click model", value=model, hint="use ctr, coec or dbn")
    if min_impressions < 1:
        raise InputError("min_impressions must be at least 1", value=min_impressions)
    limits = thresholds or DEFAULT_THRESHOLDS[model]
    prior = position_prior(log, min_position_impressions)
    n_docs = max(1, len(log.docs))
    pair = log.query * n_docs + log.doc
    keys, inverse = np.unique(pair, return_inverse=True)
    m = keys.size

    def total(values: NDArray[np.generic]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.bincount(
            inverse, weights=values.astype(np.float64), minlength=m
        ).astype(np.float64)
        return out

    clicked = log.clicked
    last = _last_clicks(log)
    examined = np.where(last > 0, log.position <= last, True)
    if satisfied_dwell_seconds is None:
        satisfied = clicked & (log.position == last)
    else:
        known = ~np.isnan(log.dwell)
        by_dwell = known & (np.nan_to_num(log.dwell) >= satisfied_dwell_seconds)
        satisfied = clicked & np.where(known, by_dwell, log.position == last)
    impressions = np.bincount(inverse, minlength=m)
    clicks = total(clicked)
    positions = total(log.position)
    expected = total(prior.at(log.position))
    exam = total(examined)
    sat = total(satisfied)
    attractiveness = (clicks + 1.0) / (exam + 2.0)
    satisfaction = (sat + 1.0) / (clicks + 2.0)
    seen: set[tuple[str, str]] = set()
    out: list[ClickJudgment] = []
    for i, k in enumerate(keys.tolist()):
        query, doc = log.queries[k // n_docs], log.docs[k % n_docs]
        seen.add((query, doc))
        coec = float(clicks[i] / expected[i]) if expected[i] > 0 else None
        ctr = float(clicks[i] / impressions[i])
        dbn = float(attractiveness[i] * satisfaction[i])
        value = {"ctr": ctr, "coec": coec, "dbn": dbn}[model]
        grade = None
        # the DBN learns only from examined results: a result shown below every click was
        # not seen, so its support is its examinations, not its impressions
        support = exam[i] if model == "dbn" else impressions[i]
        if support >= min_impressions and value is not None:
            grade = limits.grade(value)
        fb = log.feedback.get((query, doc), Feedback())
        out.append(
            ClickJudgment(
                query=query,
                doc=doc,
                impressions=int(impressions[i]),
                clicks=int(clicks[i]),
                ctr=ctr,
                mean_position=float(positions[i] / impressions[i]),
                expected_clicks=float(expected[i]),
                coec=coec,
                examined=int(exam[i]),
                satisfied=int(sat[i]),
                attractiveness=float(attractiveness[i]),
                satisfaction=float(satisfaction[i]),
                dbn=dbn,
                thumbs_up=fb.thumbs_up,
                thumbs_down=fb.thumbs_down,
                cited=fb.cited,
                model=model,
                grade=with_feedback(grade, fb),
            )
        )
    for (query, doc), fb in sorted(log.feedback.items()):
        if (query, doc) in seen:
            continue
        out.append(
            ClickJudgment(
                query,
                doc,
                0,
                0,
                0.0,
                0.0,
                0.0,
                None,
                0,
                0,
                0.5,
                0.5,
                0.25,
                fb.thumbs_up,
                fb.thumbs_down,
                fb.cited,
                model,
                with_feedback(None, fb),
            )
        )
    out.sort(key=lambda j: (j.query, j.doc))
    return ClickJudgments(tuple(out), model, limits, min_impressions, prior)


def with_feedback(grade: int | None, feedback: Feedback) -> int | None:
    """A click grade adjusted by explicit feedback: net thumbs down -> 0, net thumbs up -> at
    least 2, cited -> at least 1; without a click grade, feedback alone decides (or None)."""
    net = feedback.thumbs_up - feedback.thumbs_down
    if net < 0:
        return 0
    if net > 0:
        grade = max(grade or 0, 2)
    if feedback.cited > 0:
        grade = max(grade or 0, 1)
    return grade


def grade_values(values: Sequence[float], thresholds: GradeThresholds) -> list[int]:
    """Grades of several values under one set of thresholds."""
    return [thresholds.grade(v) for v in values]


__all__ = [
    "DEFAULT_MIN_IMPRESSIONS",
    "DEFAULT_MIN_POSITION_IMPRESSIONS",
    "DEFAULT_THRESHOLDS",
    "MODELS",
    "ClickJudgment",
    "ClickJudgments",
    "ClickLog",
    "Feedback",
    "GradeThresholds",
    "Model",
    "PositionPrior",
    "Shown",
    "click_judgments",
    "grade_values",
    "position_prior",
    "with_feedback",
]
