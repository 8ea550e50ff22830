"""Simulations of the online loop on synthetic traffic with a known truth, repeated on the
library functions (seeded), written to bench/ONLINE_SIMULATIONS.md.

    PYTHONPATH=src python bench/online_simulations.py [--out bench/ONLINE_SIMULATIONS.md]

Traffic: rankscope.testing.traffic (Zipf-distributed queries, true grades 0-3, engines that rank
by grade plus Gaussian noise, users who browse as the DBN click model describes). The tests
(tests/online/test_online_simulations.py, test_online_clicks.py) run the rows docs/service.md
quotes in the same settings and check them against the table this writes.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from rankscope.online.clicks import ClickLog, Shown, click_judgments
from rankscope.stats import cohen_kappa
from rankscope.testing.online_sim import (
    arm_pool,
    repeated_ab,
    repeated_ab_clicks,
    repeated_alerts,
    repeated_interleaving,
)
from rankscope.testing.traffic import Universe, browse, rank


def click_agreement(lines: list[str]) -> None:
    universe = Universe.make(60, 20, seed=1)
    rng = np.random.default_rng(2)
    rows = []
    for s in range(30_000):
        q = universe.draw(rng)
        ranking = rank(q, 1.5, rng)
        clicks = {c.doc: c for c in browse(ranking, q.grades, rng)}
        for position, doc in enumerate(ranking, start=1):
            c = clicks.get(doc)
            rows.append(
                Shown(f"s{s}", q.text, doc, position, c is not None, c.dwell if c else None)
            )
    log = ClickLog.from_shown(rows)
    truth = {(q.text, d): g for q in universe.queries for d, g in q.grades.items()}
    lines += [
        "## Click grades against the true grades",
        "",
        "30,000 sessions over 60 queries (20 documents each, top 10 shown, ranking noise "
        "1.5); pairs with at least 10 impressions, default thresholds.",
        "",
        "| model | graded pairs | kappa (linear) | kappa (quadratic) |",
        "|---|---:|---:|---:|",
    ]
    for model in ("ctr", "coec", "dbn"):
        graded = click_judgments(log, model).graded()  # type: ignore[arg-type]
        a = [truth[(j.query, j.doc)] for j in graded]
        b = [j.grade for j in graded]
        lin, quad = cohen_kappa(a, b, "linear"), cohen_kappa(a, b, "quadratic")
        lines.append(f"| {model} | {len(graded)} | {lin:.3f} | {quad:.3f} |")
    lines.append("")


def ab(lines: list[str]) -> None:
    universe = Universe.make(50, 20, seed=3)
    a, same, worse = (
        arm_pool(universe, 1.0, 5000, 1),
        arm_pool(universe, 1.0, 5000, 2),
        arm_pool(universe, 1.3, 5000, 3),
    )
    delta = a.ndcg.mean() - worse.ndcg.mean()
    lines += [
        "## A/B comparison (per-record nDCG@10, judged)",
        "",
        f"Arms: noise 1.0 (mean nDCG@10 {a.ndcg.mean():.4f}) and 1.3 "
        f"({worse.ndcg.mean():.4f}): true difference {delta:+.4f}. A/A: two draws of the "
        "noise-1.0 engine. alpha 0.05, minimum sample 30.",
        "",
        "| test | records per arm | repetitions | winner called | better arm named |",
        "|---|---:|---:|---:|---:|",
    ]
    for paired in (False, True):
        name = "paired t (queries in both arms)" if paired else "Welch (unpaired)"
        r = repeated_ab(a, same, records=200, repetitions=2000, seed=11, paired=paired)
        lines.append(f"| A/A, {name} | 200 | {r.repetitions} | {r.called:.4f} | - |")
    for paired in (False, True):
        name = "paired t" if paired else "Welch"
        for n in (50, 100, 200):
            r = repeated_ab(
                a,
                worse,
                records=n,
                repetitions=500,
                seed=12,
                paired=paired,
                min_sample=20 if paired else 30,
            )
            lines.append(
                f"| A/B, {name} | {n} | {r.repetitions} | {r.called:.4f} | {r.correct:.4f} |"
            )
    lines += [
        "",
        "Paired needs queries seen in both arms (at least 20 here): with 50 records "
        "per arm over 50 Zipf-distributed queries there are rarely enough, and the "
        "verdict is `insufficient_data`.",
        "",
    ]

    lines += [
        "## Regression alerts (window against baseline)",
        "",
        "280 baseline records against 60 current ones, `window_change` with min_n 30 "
        "and min_delta 0.02 (paired over queries when 30 are in both windows).",
        "",
        "| current window | repetitions | alert raised |",
        "|---|---:|---:|",
    ]
    noise = repeated_alerts(a, same, n_baseline=280, n_current=60, repetitions=1000, seed=13)
    lines.append(f"| same engine (noise) | 1000 | {noise:.4f} |")
    drop = repeated_alerts(a, worse, n_baseline=280, n_current=60, repetitions=1000, seed=14)
    lines.append(f"| regression ({delta:+.4f} nDCG@10) | 1000 | {drop:.4f} |")
    lines.append("")


def interleaving(lines: list[str]) -> None:
    universe = Universe.make(50, 20, seed=3)
    lines += [
        "## Interleaving against A/B on clicks",
        "",
        "The same two engines (noise 1.0 and 1.3), judged by simulated users' clicks "
        "only. Interleaving: team draft, exact sign test. A/B on clicks: the impressions "
        "split between the arms, each scored by the reciprocal rank of its first click, "
        "Welch. alpha 0.05.",
        "",
        "| method | impressions (users) | repetitions | winner called | better arm named |",
        "|---|---:|---:|---:|---:|",
    ]
    aa = repeated_interleaving(universe, 1.0, 1.0, impressions=200, repetitions=500, seed=15)
    lines.append(f"| interleaving, A/A | 200 | 500 | {aa.called:.4f} | - |")
    for n in (200, 400, 800):
        r = repeated_interleaving(universe, 1.0, 1.3, impressions=n, repetitions=200, seed=16)
        lines.append(f"| interleaving | {n} | 200 | {r.called:.4f} | {r.correct:.4f} |")
    for n in (400, 800, 1600):
        r = repeated_ab_clicks(universe, 1.0, 1.3, impressions=n, repetitions=200, seed=17)
        lines.append(f"| A/B on clicks | {n} | 200 | {r.called:.4f} | {r.correct:.4f} |")
    lines.append("")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench/ONLINE_SIMULATIONS.md"))
    args = parser.parse_args()
    start = time.monotonic()
    lines = [
        "# Simulations of the online loop",
        "",
        f"Command: `PYTHONPATH=src python bench/online_simulations.py --out {args.out}` "
        f"(seeded: the same numbers on every run). Machine: `nproc` = {os.cpu_count()}, "
        f"Python {platform.python_version()}.",
        "",
    ]
    click_agreement(lines)
    ab(lines)
    interleaving(lines)
    lines.append(f"Run time: {time.monotonic() - start:.0f} s.")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
