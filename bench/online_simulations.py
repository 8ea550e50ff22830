"""Simulations of the online loop on synthetic traffic with a known truth, repeated on the
library functions (seeded), written to bench/ONLINE_SIMULATIONS.md.

    PYTHONPATH=src python bench/online_simulations.py [--section NAME ...]
        [--out bench/ONLINE_SIMULATIONS.md]

Sections: clicks, ab-true, ab-clicks, ab-clicks-flat, ab-heuristic, interleaving.

Each section runs on its own (a few minutes on two shared cores) and replaces its part of the
output file (between ``<!-- section: NAME -->`` and ``<!-- end: NAME -->``), recording its
command, the machine's core count and load, CPU and wall time. Without ``--section`` every
section runs. Traffic: rankscope.testing.traffic (Zipf-distributed queries, true grades 0-3,
engines that rank by grade plus Gaussian noise, simulated users of several kinds). The tests
(tests/online/test_online_clicks.py, test_online_simulations.py) recompute figures of these
tables in the same settings.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from rankscope.online.clicks import DEFAULT_THRESHOLDS, MODELS, GradeThresholds, Model
from rankscope.stats import cohen_kappa
from rankscope.testing.click_study import (
    POPULATIONS,
    REPORT_SEED,
    TUNING_SEED,
    VALIDATION_SEED,
    Agreement,
    Setting,
    agreements,
    fit,
    rounded,
)
from rankscope.testing.online_sim import (
    ArmPool,
    Labels,
    ScoreLabels,
    arm_pool,
    click_labels,
    repeated_ab,
    repeated_ab_clicks,
    repeated_alerts,
    repeated_interleaving,
)
from rankscope.testing.traffic import Universe, rank

#: what each simulated population's users do (rankscope.testing.click_study.POPULATIONS)
DESCRIPTIONS = {
    "dbn-0.9": "cascade/DBN: scan down, click with the grade's attractiveness "
    "(0.05/0.25/0.55/0.85), stop when satisfied (same by grade), else go on with "
    "probability 0.9 (the users of `browse`)",
    "dbn-0.75": "the same, persistence 0.75",
    "dbn-0.6": "the same, persistence 0.6",
    "pbm": "position-based, no cascade: examine position p with probability "
    "1, 0.7, 0.55, 0.45, 0.38, 0.32, 0.27, 0.23, 0.2, 0.18 whatever happened above, "
    "click with the grade's attractiveness, never stop",
    "flat": "cascade, persistence 0.9, flatter attractiveness 0.1/0.2/0.3/0.4",
    "noisy": "cascade, persistence 0.9, every click and satisfaction decision a coin flip "
    "with probability 0.3 (probabilities 0.7 p + 0.15)",
    "good-engine": "the dbn-0.9 users on a better engine: relevant results higher, so "
    "fewer deep examinations and a steeper click curve",
}
FLAT = next(p.user for p in POPULATIONS if p.name == "flat")
#: the thresholds before this study, chosen on (and scored on) dbn-0.9 traffic
OLD_DEFAULTS: dict[Model, GradeThresholds] = {
    "ctr": GradeThresholds(0.02, 0.08, 0.25),
    "coec": GradeThresholds(0.4, 0.8, 1.25),
    "dbn": GradeThresholds(0.09, 0.2, 0.5),
}
CLICK_REPETITIONS = 30
TUNING_REPETITIONS = 5
EFFECT_NOISES = (1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3)
AB_REPETITIONS = 500


def kappa_cell(a: Agreement) -> str:
    ci = a.interval()
    return f"{a.mean:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def thresholds_text(t: GradeThresholds) -> str:
    return f"{t.one:.3g} / {t.two:.3g} / {t.three:.3g}"


def clicks(lines: list[str]) -> None:
    setting = Setting()
    tuning = range(TUNING_SEED, TUNING_SEED + TUNING_REPETITIONS)
    validation = range(VALIDATION_SEED, VALIDATION_SEED + CLICK_REPETITIONS)
    report = range(REPORT_SEED, REPORT_SEED + CLICK_REPETITIONS)
    names = [p.name for p in POPULATIONS]
    # candidate thresholds: the current defaults (chosen on dbn-0.9 traffic) and those fitted
    # on each population's tuning seeds
    candidates: dict[str, dict[Model, GradeThresholds]] = {"old defaults": OLD_DEFAULTS}
    fitted_kappa: dict[tuple[str, Model], float] = {}
    for population in POPULATIONS:
        candidates[population.name] = {}
        for model in MODELS:
            f = fit(population, model, setting, tuning)
            candidates[population.name][model] = f.thresholds
            fitted_kappa[(population.name, model)] = f.kappa
    checked = agreements(POPULATIONS, candidates, setting, validation)
    tuned_on = {"old defaults": "dbn-0.9", **{n: n for n in names}}
    engine_fixed = [p.name for p in POPULATIONS if p.noise == POPULATIONS[0].noise]

    def out_of_sample(
        results: dict[tuple[str, str, Model], Agreement],
        source: str,
        model: Model,
        among: list[str] = names,
    ) -> tuple[float, Agreement]:
        """Mean kappa over the populations the thresholds were not chosen on, the worst."""
        cells = [results[(source, n, model)] for n in among if n != tuned_on[source]]
        return float(np.mean([a.mean for a in cells])), min(cells, key=lambda a: a.mean)

    lines += [
        "## Click grades against the true grades, out of sample",
        "",
        f"Each log: {setting.sessions:,} sessions over {setting.queries} Zipf-distributed "
        f"queries ({setting.docs} documents each, true grades 0-3 with probabilities "
        "0.6/0.2/0.12/0.08), the top 10 of an engine that ranks by true grade plus "
        "N(0, noise) shown; a pair is graded when it has at least "
        f"{setting.min_impressions} impressions (the DBN: examinations). Agreement: "
        "linear-weighted Cohen's kappa of the click grades with the true grades over the "
        "pairs the model grades. Three disjoint sets of seeds, each repetition a fresh "
        "universe and fresh sessions (the same universes for every population): thresholds "
        "are fitted (`rankscope.online.calibration.fit_grade_thresholds`, highest linear "
        f"kappa) on the pooled pairs of {TUNING_REPETITIONS} logs of one population (seeds "
        f"{tuning.start}-{tuning.stop - 1}); candidates are compared on {CLICK_REPETITIONS} "
        f"logs of every population (seeds {validation.start}-{validation.stop - 1}); the "
        f"chosen ones are reported on {CLICK_REPETITIONS} more (seeds "
        f"{report.start}-{report.stop - 1}). A cell: mean kappa over the repetitions [95% "
        "percentile bootstrap interval of the mean, 10,000 resamples over repetitions].",
        "",
        "| population | engine noise | users |",
        "|---|---:|---|",
    ]
    lines += [f"| {p.name} | {p.noise:g} | {DESCRIPTIONS[p.name]} |" for p in POPULATIONS]
    lines += [
        "",
        "### Candidate thresholds (validation seeds)",
        "",
        "Per model: the defaults before this study (old defaults: chosen on dbn-0.9 traffic "
        "and scored on that same traffic) and the thresholds fitted on each population "
        "(in-sample kappa: on the tuning logs themselves). Out of sample: mean kappa over the "
        "validation logs of the populations the thresholds were not chosen on, and the "
        "worst of them; also the mean over the populations of other users on the same "
        f"engine (noise {POPULATIONS[0].noise:g}: all but good-engine). Rule: per model the "
        "candidate with the highest out-of-sample mean over all populations, rounded to "
        "two significant digits; the default model is the one whose choice has the "
        "highest out-of-sample mean.",
        "",
        "| model | thresholds from | grade 1 / 2 / 3 from | in-sample kappa | "
        "out-of-sample mean | worst population | mean, same engine |",
        "|---|---|---|---:|---:|---|---:|",
    ]
    best: dict[Model, tuple[float, str]] = {}
    for model in MODELS:
        for source, by_model in candidates.items():
            mean, worst = out_of_sample(checked, source, model)
            same_engine, _ = out_of_sample(checked, source, model, engine_fixed)
            ins = fitted_kappa.get((source, model))
            lines.append(
                f"| {model} | {source} | {thresholds_text(by_model[model])} | "
                f"{'-' if ins is None else f'{ins:.2f}'} | {mean:.3f} | "
                f"{worst.mean:.2f} ({worst.population}) | {same_engine:.3f} |"
            )
            if model not in best or mean > best[model][0]:
                best[model] = (mean, source)
    chosen_model = max(MODELS, key=lambda m: best[m][0])
    chosen = {
        "chosen": {m: rounded(candidates[best[m][1]][m]) for m in MODELS},
        "old defaults": OLD_DEFAULTS,
    }
    reported = agreements(POPULATIONS, chosen, setting, report)
    lines += [
        "",
        "Chosen: "
        + "; ".join(
            f"{m}: {best[m][1]} ({best[m][0]:.3f}) → {thresholds_text(chosen['chosen'][m])}"
            for m in MODELS
        )
        + f". Best model: {chosen_model}. The library's defaults "
        "(`rankscope.online.clicks.DEFAULT_THRESHOLDS`) "
        + ("are" if chosen["chosen"] == DEFAULT_THRESHOLDS else "are NOT")
        + " the chosen thresholds.",
        "",
        "### Every model on every population (report seeds)",
        "",
        "Kappa mean [95% interval]; * marks the population the thresholds were chosen on. "
        "Graded pairs: mean per log (of 1,200). The chosen thresholds, and the old "
        "defaults where they differ.",
        "",
        "| model (thresholds) | " + " | ".join(names) + " | mean of the others |",
        "|---|" + "---:|" * (len(names) + 1),
    ]
    for model in MODELS:
        rows = [("chosen", best[model][1])]
        if chosen["chosen"][model] != OLD_DEFAULTS[model]:
            rows.append(("old defaults", "old defaults"))
        for label, source in rows:
            cells = []
            for n in names:
                a = reported[(label, n, model)]
                mark = "*" if n == tuned_on[source] else ""
                cells.append(f"{kappa_cell(a)}{mark} ({a.mean_pairs:.0f})")
            others = np.mean(
                [reported[(label, n, model)].mean for n in names if n != tuned_on[source]]
            )
            lines.append(
                f"| {model} ({thresholds_text(chosen[label][model])}, {source}) | "
                + " | ".join(cells)
                + f" | {others:.3f} |"
            )
    lines += [
        "",
        "Spread of single logs (sd of kappa over the repetitions), chosen thresholds: "
        + "; ".join(
            f"{m} " + ", ".join(f"{reported[('chosen', n, m)].sd:.3f}" for n in names)
            for m in MODELS
        )
        + " (populations in the order above).",
        "",
        "### Thresholds fitted on the same population (validation seeds)",
        "",
        "What fitting the thresholds to labels of the traffic at hand recovers (the "
        "documentation's advice: check the grades against LLM or human labels and change "
        "the thresholds).",
        "",
        "| model | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for model in MODELS:
        cells = [kappa_cell(checked[(n, n, model)]) for n in names]
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    lines.append("")


def label_agreement(universe: Universe, labels: Labels, seed: int) -> str:
    """Kappa of labels with the truth over 2,000 shown rankings (relevance: grade >= 1 for
    binary labels, linear-weighted grades otherwise), and the share of shown documents with a
    positive label."""
    rng = np.random.default_rng(seed)
    label_rng = np.random.default_rng((seed, 1))
    truth: list[int] = []
    given: list[int] = []
    for _ in range(2000):
        q = universe.draw(rng)
        ranking = rank(q, 1.0, rng)
        got = labels(q, ranking, label_rng)
        truth += [q.grades[d] for d in ranking]
        given += [got[d] for d in ranking]
    if max(given) <= 1:
        kappa = cohen_kappa([int(g >= 1) for g in truth], given, None, labels=(0, 1))
        kind = "unweighted, relevant = grade >= 1"
    else:
        kappa = cohen_kappa(truth, given, "linear", labels=(0, 1, 2, 3))
        kind = "linear"
    return f"kappa with the truth {kappa:.2f} ({kind}) on the shown documents"


def label_sets(universe: Universe) -> dict[str, tuple[str, str, Labels | None]]:
    """The labels the A/B pools are scored against: title, description, labels."""
    return {
        "true": ("true grades", "The true grades (oracle).", None),
        "clicks": (
            "click grades (dbn-0.9 users)",
            "DBN click grades (default thresholds) of 30,000 sessions of dbn-0.9 users on an "
            "engine with ranking noise 1.5 (seed 5); documents without a grade count as 0.",
            click_labels(universe, 30_000, seed=5),
        ),
        "clicks-flat": (
            "click grades (flat users)",
            "The same from users with flatter attractiveness (the `flat` population, where "
            "the DBN agrees least with the truth).",
            click_labels(universe, 30_000, user=FLAT, seed=5),
        ),
        "heuristic": (
            "heuristic (score threshold)",
            "The score-threshold heuristic of records without judgments: a shown document "
            "is relevant when 0.35 + 0.15 grade + N(0, 0.1), drawn per record, reaches 0.5; "
            "binary, shown documents only (the ideal ranking knows only them).",
            ScoreLabels(0.1, 0.5),
        ),
    }


def pools_of(universe: Universe, labels: Labels | None) -> list[ArmPool]:
    """Arm a (noise 1.0, seed 1), then arm b at every noise of the grid (seeds 2, 3, ...)."""
    return [arm_pool(universe, 1.0, 5000, 1, labels=labels)] + [
        arm_pool(universe, noise, 5000, i + 2, labels=labels)
        for i, noise in enumerate(EFFECT_NOISES)
    ]


def ab_intro(lines: list[str]) -> None:
    lines += [
        "## A/B power and regression alerts over effect sizes",
        "",
        "Universe: 50 Zipf-distributed queries, 20 documents each (seed 3). Arm a: ranking "
        "noise 1.0 (5,000 records, seed 1); arm b: noise "
        + ", ".join(f"{n:g}" for n in EFFECT_NOISES)
        + " (5,000 records each, seeds 2, 3, ...; noise 1.0 is a second draw of arm a's "
        "engine: the A/A row, where the truth is no difference and the rate is the "
        "false-positive rate). Per-record nDCG@10 by `evaluate()`. "
        f"Each rate: {AB_REPETITIONS} repetitions drawing records from the pools (with "
        "replacement), [95% Wilson interval]; its standard error is at most "
        f"{0.5 / np.sqrt(AB_REPETITIONS):.3f}. A/B: `compare_arms` (Welch) or "
        "`compare_arms_paired` (paired t over queries in both arms; minimum 20 common "
        "queries), alpha 0.05; the rate is how often arm a is named the winner (A/A: any "
        "winner). Alert: `window_change`, 280 baseline records of a against 60 current "
        "records of b, min_n 30, min_delta 0.02 (paired over queries when 30 are in both "
        "windows); the rate of alerts raised. The same pools (the same rankings) are scored "
        "against each kind of labels. Δ (true grades): mean nDCG@10 of pool a minus pool b "
        "under the true grades (the A/A row's differs from 0 by sampling); Δ (labels): the "
        "same under the labels.",
        "",
    ]


def ab(kind: str, lines: list[str]) -> None:
    universe = Universe.make(50, 20, seed=3)
    title, description, labels = label_sets(universe)[kind]
    truth = pools_of(universe, None)
    pools = truth if labels is None else pools_of(universe, labels)
    if kind == "true":
        ab_intro(lines)
    lines += [f"### Labels: {title}", "", description]
    if labels is not None:
        lines += ["", label_agreement(universe, labels, 7) + "."]
    lines += [
        "",
        "| arm b noise | Δ (true grades) | Δ (labels) | Welch, 50 per arm | Welch, 100 | "
        "Welch, 200 | paired t, 200 | alert (60 vs 280) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    a = pools[0]
    wrong = 0
    for i, noise in enumerate(EFFECT_NOISES, start=1):
        b = pools[i]
        true_delta = truth[0].ndcg.mean() - truth[i].ndcg.mean()
        delta = a.ndcg.mean() - b.ndcg.mean()
        cells = []
        for paired, n in ((False, 50), (False, 100), (False, 200), (True, 200)):
            r = repeated_ab(
                a,
                b,
                records=n,
                repetitions=AB_REPETITIONS,
                seed=12,
                paired=paired,
                min_sample=20 if paired else 30,
            )
            cells.append((r.called if noise == 1.0 else r.correct).text())
            if noise != 1.0:
                wrong = max(wrong, r.called.hits - r.correct.hits)
        alert = repeated_alerts(
            a, b, n_baseline=280, n_current=60, repetitions=AB_REPETITIONS, seed=13
        )
        cells.append(alert.text())
        lines.append(
            f"| {noise:.2f} | {true_delta:+.4f} | {delta:+.4f} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "Most repetitions naming the worse arm in one A/B cell of a true difference: "
        f"{wrong} of {AB_REPETITIONS}.",
        "",
    ]
    if kind == "true":
        # the draws of repeated_ab (seed 12) on the A/A pair: queries in both arms
        rng = np.random.default_rng(12)
        common = []
        for _ in range(AB_REPETITIONS):
            ia, ib = rng.integers(0, a.ndcg.size, 200), rng.integers(0, pools[1].ndcg.size, 200)
            common.append(len(set(a.by_query(ia)) & set(pools[1].by_query(ib))))
        low, mid, high = np.percentile(common, [5, 50, 95])
        lines += [
            "Queries in both arms with 200 records per arm (the paired test's sample), A/A "
            f"draws: median {mid:.0f}, 5th-95th percentile {low:.0f}-{high:.0f}.",
            "",
        ]


def interleaving(lines: list[str]) -> None:
    universe = Universe.make(50, 20, seed=3)
    lines += [
        "## Interleaving against A/B on clicks",
        "",
        "Engines with ranking noise 1.0 and 1.3 (Δ true nDCG@10 about +0.07, the last row "
        "above), judged by simulated dbn-0.9 users' clicks only. Interleaving: team draft, "
        "exact sign test. A/B on clicks: the impressions split between the arms, each scored "
        "by the reciprocal rank of its first click, Welch. alpha 0.05. Rates [95% Wilson "
        "interval].",
        "",
        "| method | impressions (users) | repetitions | winner called | better arm named |",
        "|---|---:|---:|---:|---:|",
    ]
    aa = repeated_interleaving(universe, 1.0, 1.0, impressions=200, repetitions=500, seed=15)
    lines.append(f"| interleaving, A/A | 200 | 500 | {aa.called.text()} | - |")
    for n in (200, 400, 800):
        r = repeated_interleaving(universe, 1.0, 1.3, impressions=n, repetitions=200, seed=16)
        lines.append(f"| interleaving | {n} | 200 | {r.called.text()} | {r.correct.text()} |")
    for n in (400, 800, 1600):
        r = repeated_ab_clicks(universe, 1.0, 1.3, impressions=n, repetitions=200, seed=17)
        lines.append(f"| A/B on clicks | {n} | 200 | {r.called.text()} | {r.correct.text()} |")
    lines.append("")


SECTIONS: dict[str, Callable[[list[str]], None]] = {
    "clicks": clicks,
    "ab-true": partial(ab, "true"),
    "ab-clicks": partial(ab, "clicks"),
    "ab-clicks-flat": partial(ab, "clicks-flat"),
    "ab-heuristic": partial(ab, "heuristic"),
    "interleaving": interleaving,
}
HEADER = [
    "# Simulations of the online loop",
    "",
    "Written by `bench/online_simulations.py` (seeded: the same numbers on every run); each "
    "section states the command that wrote it and its conditions.",
    "",
]


def run_section(name: str, out: Path) -> list[str]:
    load = os.getloadavg()[0]
    wall, cpu = time.monotonic(), time.process_time()
    lines = [f"<!-- section: {name} -->"]
    SECTIONS[name](lines)
    lines += [
        f"Command: `nice -n 10 env PYTHONPATH=src python bench/online_simulations.py --section "
        f"{name} --out {out}`; `nproc` = {os.cpu_count()}, Python "
        f"{platform.python_version()}, load average {load:.2f} at the start and "
        f"{os.getloadavg()[0]:.2f} at the end (shared machine); CPU time "
        f"{time.process_time() - cpu:.0f} s, wall time {time.monotonic() - wall:.0f} s.",
        f"<!-- end: {name} -->",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench/ONLINE_SIMULATIONS.md"))
    parser.add_argument("--section", choices=sorted(SECTIONS), action="append")
    args = parser.parse_args()
    text = args.out.read_text() if args.out.exists() else ""
    if not text.startswith(HEADER[0]):
        text = "\n".join(HEADER) + "\n"
    for name in args.section or list(SECTIONS):
        block = "\n".join(run_section(name, args.out))
        print(block)
        pattern = re.compile(rf"<!-- section: {name} -->.*?<!-- end: {name} -->", flags=re.DOTALL)
        found = pattern.search(text)
        if found:
            text = text[: found.start()] + block + text[found.end() :]
        else:
            text = text.rstrip("\n") + "\n\n" + block + "\n"
    args.out.write_text(text)


if __name__ == "__main__":
    main()
