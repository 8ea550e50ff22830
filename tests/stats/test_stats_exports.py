"""The public API of rankscope.stats: what other parts of rankscope and users import."""

from __future__ import annotations

import rankscope.stats as stats

PUBLIC = {
    # entry point and its values
    "compare", "Comparison", "MeasureComparison", "SystemRow", "TESTS",
    "ScoreMatrix", "AlignedScores", "align_scores", "Quantity", "StatsWarning",
    # two systems
    "paired_t", "randomization_test", "bootstrap_test", "wilcoxon_test", "sign_test",
    "wins_ties_losses", "PairedTest", "WinsTiesLosses", "equal_up_to_rounding",
    "non_inferiority", "NonInferiority",
    # many systems
    "anova_two_way", "tukey_hsd", "randomized_tukey_hsd", "pairwise", "adjust_pvalues",
    "Anova", "PairResult", "Pairwise", "CORRECTIONS",
    # intervals and planning
    "t_interval", "t_interval_from_summary", "bootstrap_interval", "interval_from_bootstrap",
    "Interval", "UNIT_RANGE",
    "queries_needed", "min_detectable_delta", "paired_t_power", "power_plan", "PowerPlan",
    # agreement
    "cohen_kappa", "kendall_tau_b", "confusion_matrix",
    # two independent samples
    "welch_t", "bootstrap_difference", "TwoSampleTest",
}  # fmt: skip


def test_public_names() -> None:
    assert set(stats.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(stats, name) is not None
