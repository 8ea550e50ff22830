"""Statistics for comparing retrieval systems: is a difference real, and how large is it?

Pure functions on per-query score arrays (numpy, float64), randomness only through an explicit
``seed``; results are frozen dataclasses. See ``docs/statistics.md`` for the formulas and
conventions.

- One query set: :class:`ScoreMatrix` (systems × queries per measure, aligned to the qrels'
  queries: missing queries score 0 and are counted, queries outside are dropped and counted),
  :func:`align_scores` (:class:`AlignedScores`); what is compared, with its direction:
  :class:`Quantity` (a measure, or another per-query value such as latency).
- The entry point: :func:`compare` (:class:`Comparison`). Nothing here reads a file or evaluates
  a run: files in, a comparison out is :func:`rankscope.compare_io.compare_runs`, the loader
  beside the command line (``stats`` never imports it: the layers point one way).
- Two systems: :func:`paired_t`, :func:`randomization_test`, :func:`bootstrap_test`,
  :func:`wilcoxon_test`, :func:`sign_test`, :func:`wins_ties_losses` (:class:`PairedTest`).
- Many systems: :func:`anova_two_way`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`,
  :func:`pairwise`, :func:`adjust_pvalues` (Holm, Bonferroni, Benjamini-Hochberg).
- A regression gate: :func:`non_inferiority` (:class:`NonInferiority`): is a candidate at
  most a margin worse than a baseline, by the one-sided paired t bound?
- One system's mean: :func:`t_interval`, :func:`bootstrap_interval` (:class:`Interval`);
  :func:`t_interval_from_summary` from a count, mean and sd. With ``bounds`` (a measure's
  range, :attr:`Quantity.bounds`, :data:`UNIT_RANGE`) the t interval is clipped to the range
  and marked ``clipped``: the one interval of a mean that bench, compare and the service use.
- Planning: :func:`queries_needed`, :func:`min_detectable_delta`, :func:`paired_t_power`,
  :func:`power_plan`.
- Agreement: :func:`cohen_kappa`, :func:`kendall_tau_b`, :func:`confusion_matrix`.
- Two independent samples (online A/B arms): :func:`welch_t`, :func:`bootstrap_difference`
  (:class:`TwoSampleTest`).
"""

from rankscope.stats._checks import StatsWarning, equal_up_to_rounding
from rankscope.stats.agreement import cohen_kappa, confusion_matrix, kendall_tau_b
from rankscope.stats.compare import TESTS, compare, pairwise
from rankscope.stats.comparison import Comparison, MeasureComparison, SystemRow
from rankscope.stats.intervals import (
    UNIT_RANGE,
    Interval,
    bootstrap_interval,
    interval_from_bootstrap,
    t_interval,
    t_interval_from_summary,
)
from rankscope.stats.matrix import AlignedScores, ScoreMatrix, align_scores
from rankscope.stats.multiple import (
    CORRECTIONS,
    Anova,
    PairResult,
    Pairwise,
    adjust_pvalues,
    anova_two_way,
    randomized_tukey_hsd,
    tukey_hsd,
)
from rankscope.stats.noninferiority import NonInferiority, non_inferiority
from rankscope.stats.paired import (
    PairedTest,
    WinsTiesLosses,
    bootstrap_test,
    paired_t,
    randomization_test,
    sign_test,
    wilcoxon_test,
    wins_ties_losses,
)
from rankscope.stats.planning import (
    PowerPlan,
    min_detectable_delta,
    paired_t_power,
    power_plan,
    queries_needed,
)
from rankscope.stats.quantity import Quantity
from rankscope.stats.unpaired import TwoSampleTest, bootstrap_difference, welch_t

__all__ = [
    "CORRECTIONS",
    "TESTS",
    "UNIT_RANGE",
    "AlignedScores",
    "Anova",
    "Comparison",
    "Interval",
    "MeasureComparison",
    "NonInferiority",
    "PairResult",
    "PairedTest",
    "Pairwise",
    "PowerPlan",
    "Quantity",
    "ScoreMatrix",
    "StatsWarning",
    "SystemRow",
    "TwoSampleTest",
    "WinsTiesLosses",
    "adjust_pvalues",
    "align_scores",
    "anova_two_way",
    "bootstrap_difference",
    "bootstrap_interval",
    "bootstrap_test",
    "cohen_kappa",
    "compare",
    "confusion_matrix",
    "equal_up_to_rounding",
    "interval_from_bootstrap",
    "kendall_tau_b",
    "min_detectable_delta",
    "non_inferiority",
    "paired_t",
    "paired_t_power",
    "pairwise",
    "power_plan",
    "queries_needed",
    "randomization_test",
    "randomized_tukey_hsd",
    "sign_test",
    "t_interval",
    "t_interval_from_summary",
    "tukey_hsd",
    "welch_t",
    "wilcoxon_test",
    "wins_ties_losses",
]

# the documented files-in shortcut: defined by the loader, which stats never imports itself
