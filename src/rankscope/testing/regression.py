"""The regression gate inside your own test suite: ``assert_no_regression`` makes the decision
``rankscope check`` makes (:mod:`rankscope.check`) and fails the test with its log.

    from rankscope.testing.regression import assert_no_regression

    def test_the_new_ranker_is_no_worse() -> None:
        assert_no_regression("qrels.txt", "production.run", candidate_run, margin=0.01)

A relevance test then passes when the candidate scores at least as well as production, within
the margin and with confidence ``1 - alpha``, rather than on a hand-kept list of known
failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.check import CheckResult


def assert_no_regression(
    qrels: Any,
    baseline: Any,
    candidate: Any,
    measures: Sequence[str] = ("ndcg@10",),
    *,
    margin: float = 0.01,
    alpha: float = 0.05,
    floors: Mapping[str, float] | None = None,
    rel_level: int = 1,
) -> CheckResult:
    """Fail (``AssertionError``, with the check's log: each measure's decision and the queries
    the candidate lost most on) unless ``candidate`` is non-inferior to ``baseline`` within
    ``margin`` on every measure and at least every floor; runs and qrels are files or values
    (:func:`rankscope.check.check_runs`). Returns the decision when it passes."""
    from rankscope.check import check_runs, render_text

    result = check_runs(
        qrels,
        baseline,
        candidate,
        measures,
        margin=margin,
        alpha=alpha,
        floors=floors,
        rel_level=rel_level,
    )
    if not result.passed:
        raise AssertionError("\n" + render_text(result))
    return result


__all__ = ["assert_no_regression"]
