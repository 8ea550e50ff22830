"""Three recommendations from a comparison: best quality, fastest, best balance.

Quality is the suite's headline measure (nDCG@10 unless the suite sets ``headline``), speed the
p50 latency, both over the comparison's one query set. Only configurations that ran and score
above 0 on the headline are eligible: a failed configuration, or one that found nothing
relevant, is never recommended, not even as the fastest. When none is eligible there is no
recommendation, and :attr:`Recommendations.note` says why.

- best quality: the highest headline value;
- fastest: the lowest p50 latency;
- best balance, by the suite's ``balance`` setting:

  - ``minmax`` (default, the original design): ``quality = headline / best headline``,
    ``speed = 1 - (p50 - min p50) / (max p50 - min p50)`` (1 for all when the p50s are equal),
    ``balance = (quality + speed) / 2``. Speed is relative to the spread of the compared
    configurations, so the slowest one gets 0 however close it is;
  - ``ratio``: ``q`` as above, ``s = best p50 / p50``, ``balance = (2q + s) / 3``: quality
    weighs twice, and speed is a ratio, so a configuration 10 % slower than the fastest loses
    only a little.

Ties go to the faster configuration, then to the earlier one in the suite.

Whether a lead is larger than the noise of the measurement comes from the comparison
statistics (:mod:`rankscope.bench.statistics`): every configuration's per-query headline values
are compared with the best's, and its per-query latencies with the fastest's, by the randomised
Tukey HSD over all configurations (seeded). The best-quality and fastest picks name the
configurations within noise of them (not significantly worse, with p and the difference) and
carry a :class:`Lead` over the runner-up whose verdict follows the same rule as
:func:`lead_verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.bench.latency import LATENCY_LABEL, LATENCY_QUANTITY, fmt_ms
from rankscope.bench.results import (
    ALPHA,
    LATENCY_TEST,
    QUALITY_TEST,
    RESAMPLES,
    BenchTest,
    ConfigurationComparison,
    Contender,
    Lead,
    Recommendation,
    Recommendations,
    Verdict,
    ViewStatistics,
)
from rankscope.bench.statistics import compare_configurations
from rankscope.errors import InputError
from rankscope.stats.comparison import SystemRow
from rankscope.stats.quantity import Quantity

BalanceFormula = Literal["minmax", "ratio"]
BALANCE_FORMULAS: dict[BalanceFormula, str] = {
    "minmax": "(quality + speed) / 2, quality = headline / best headline, "
    "speed = 1 - (p50 - min p50) / (max p50 - min p50)",
    "ratio": "(2*q + s) / 3, q = headline / best headline, s = best p50 / p50",
}
#: the default balance formula (``minmax``), as results.json states it
BALANCE_FORMULA = BALANCE_FORMULAS["minmax"]


@dataclass(frozen=True)
class Candidate:
    """A successful configuration as the recommendations see it.

    ``values`` (the headline per query) and ``latencies_ms`` (per-query latency) are aligned on
    the comparison's query set; they feed :func:`lead_verdict`.
    """

    name: str
    quality: float | None
    p50_ms: float | None
    values: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    latencies_ms: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class NoiseVerdict:
    """A lead's verdict, with the runner-up's difference from the leader (runner-up minus
    leader) and its p-value when it was tested."""

    verdict: Verdict
    detail: str
    p_value: float | None = None
    difference: float | None = None


def lead_verdict(
    leader: NDArray[np.float64],
    runner_up: NDArray[np.float64],
    *,
    higher_is_better: bool,
    others: Sequence[NDArray[np.float64]] = (),
    test: BenchTest | None = None,
    seed: int = 0,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
) -> NoiseVerdict:
    """Whether ``leader`` is ahead of ``runner_up`` by more than noise, from their per-query
    values on the same queries (aligned): ``beyond_noise`` when the runner-up is significantly
    worse than the leader, else ``within_noise``; ``not_assessed`` when the values cannot be
    compared (fewer than 2 queries, lengths that differ, missing values).

    The test is the benchmark's (``test=None``): for quality (``higher_is_better``), the
    randomised Tukey HSD over ``leader``, ``runner_up`` and ``others`` (the family; with no
    others, the two alone); for latency, the paired randomization test of the runner-up against
    the leader, Holm-corrected over it and ``others``."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (leader, runner_up, *others)]
    n = arrays[0].size
    if any(a.ndim != 1 or a.size != n for a in arrays):
        return NoiseVerdict("not_assessed", "not tested: the per-query values are not aligned")
    if n < 2 or not all(np.isfinite(a).all() for a in arrays):
        return NoiseVerdict("not_assessed", "not tested: fewer than 2 queries with values")
    names = ["leader", "runner-up", *(f"other {i + 1}" for i in range(len(others)))]
    found = compare_configurations(
        names,
        np.stack(arrays),
        baseline="leader",
        quantity=Quantity("value", higher_is_better),
        baseline_reason="the leader",
        label="value",
        query_set=f"{n} queries",
        test=test or (QUALITY_TEST if higher_is_better else LATENCY_TEST),
        seed=seed,
        resamples=resamples,
        alpha=alpha,
    )
    return verdict_of(found.row("runner-up"), "" if higher_is_better else " ms")


def verdict_of(row: SystemRow, unit: str = "") -> NoiseVerdict:
    """The verdict on a lead over ``row`` (a configuration compared with the leader; its
    corrected p-value, None when not finite: the rows are normalised)."""
    p = row.p_adjusted
    text = f"p {_p(p)}, Δ = {_signed(row.delta, unit)}"
    if row.significant and row.direction == "worse":
        return NoiseVerdict("beyond_noise", f"beyond noise ({text})", p, row.delta)
    return NoiseVerdict("within_noise", f"within noise ({text})", p, row.delta)


def eligible(
    candidates: Sequence[Candidate], label: str, over: str = ""
) -> tuple[list[Candidate], dict[str, str]]:
    """The candidates that may be recommended, and why the others may not."""
    left_out: dict[str, str] = {}
    usable: list[Candidate] = []
    for c in candidates:
        if not _finite(c.quality) or not _finite(c.p50_ms):
            left_out[c.name] = f"no {label} or latency{over}"
        elif (c.quality or 0.0) <= 0.0:
            left_out[c.name] = f"{label} is 0{over}"
        else:
            usable.append(c)
    return usable, left_out


# sorted() is stable: candidates tied on both keys stay in suite order


def by_quality(candidates: Sequence[Candidate]) -> list[str]:
    """Names from the best to the worst headline (ties: faster, then earlier)."""

    def key(c: Candidate) -> tuple[float, float]:
        return -_value(c.quality, -math.inf), _value(c.p50_ms, math.inf)

    return [c.name for c in sorted(candidates, key=key)]


def by_speed(candidates: Sequence[Candidate]) -> list[str]:
    """Names from the fastest to the slowest p50 (ties: higher headline, then earlier)."""

    def key(c: Candidate) -> tuple[float, float]:
        return _value(c.p50_ms, math.inf), -_value(c.quality, -math.inf)

    return [c.name for c in sorted(candidates, key=key)]


def view_statistics(
    candidates: Sequence[Candidate],
    measure: str = "ndcg@10",
    label: str | None = None,
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
    view: str = "answered",
    query_set: str = "",
) -> ViewStatistics:
    """Compare the candidates (every successful configuration, in suite order) on the
    headline against the best and on per-query latency against the fastest (the picks of
    :func:`recommend`: among eligible candidates when there are any)."""
    label = label or measure
    usable, _ = eligible(candidates, label)
    pool = usable or list(candidates)
    notes: list[str] = []
    base = ViewStatistics(seed=seed, resamples=resamples, alpha=alpha, level=1.0 - alpha)
    if not candidates:
        return base.model_copy(update={"notes": ["no configuration ran successfully"]})
    compare = partial(
        _compare,
        candidates,
        seed=seed,
        resamples=resamples,
        alpha=alpha,
        view=view,
        query_set=query_set,
        notes=notes,
    )
    quality = compare(
        lambda c: c.values,
        best=by_quality(pool)[0],
        reason="highest mean",
        quantity=Quantity(measure),
        label=label,
        test=QUALITY_TEST,
    )
    latency = compare(
        lambda c: c.latencies_ms,
        best=by_speed(pool)[0],
        reason="lowest p50",
        quantity=LATENCY_QUANTITY,
        label=LATENCY_LABEL,
        test=LATENCY_TEST,
    )
    return base.model_copy(update={"quality": quality, "latency": latency, "notes": notes})


def _compare(
    candidates: Sequence[Candidate],
    per_query: Callable[[Candidate], NDArray[np.float64]],
    *,
    best: str,
    reason: str,
    quantity: Quantity,
    label: str,
    test: BenchTest,
    seed: int,
    resamples: int,
    alpha: float,
    view: str,
    query_set: str,
    notes: list[str],
) -> ConfigurationComparison | None:
    arrays = [np.asarray(per_query(c), dtype=np.float64) for c in candidates]
    n = max(a.size for a in arrays)
    if n == 0:
        notes.append(f"{label}: no per-query values, nothing tested")
        return None
    if any(a.size != n for a in arrays):
        raise InputError(
            f"{label}: per-query values of different lengths", value=[len(a) for a in arrays]
        )
    x = np.stack(arrays)
    # latency exists only for the queries a configuration ran: compare over those all ran
    kept = np.isfinite(x).all(axis=0)
    where = query_set or f"{n} queries"
    if not kept.all():
        x = x[:, kept]
        where = f"the {int(kept.sum())} of these {n} queries every configuration ran"
    if x.shape[1] < 2:
        notes.append(f"{label}: fewer than 2 queries with values, nothing tested")
        return None
    return compare_configurations(
        [c.name for c in candidates],
        x,
        baseline=best,
        baseline_reason=reason,
        quantity=quantity,
        label=label,
        query_set=where,
        view=view,
        test=test,
        seed=seed,
        resamples=resamples,
        alpha=alpha,
    )


def recommend(
    candidates: Sequence[Candidate],
    measure: str = "ndcg@10",
    label: str | None = None,
    *,
    balance: BalanceFormula = "minmax",
    num_queries: int = 0,
    query_set: str = "",
    statistics: ViewStatistics | None = None,
    seed: int = 0,
) -> Recommendations:
    """Pick among successful configurations (callers leave failed ones out); ``quality`` is
    the value of ``measure`` (shown as ``label``) over ``num_queries`` queries
    (``query_set`` describes them, e.g. "the 80 queries every configuration answered").

    ``statistics`` are :func:`view_statistics` of the same candidates (computed here, with
    ``seed``, when not given); they decide which configurations are within noise."""
    label = label or measure
    over = f" over {query_set}" if query_set else ""
    usable, left_out = eligible(candidates, label, over)
    if not usable:
        if candidates:
            note = (
                f"no recommendation: no configuration scores above 0 on {label}{over}; check "
                "that the judgments' document ids match the ids the engines return"
            )
        else:
            note = "no recommendation: no configuration ran successfully"
        return Recommendations(num_queries=num_queries, note=note, left_out=left_out)
    if statistics is None:
        statistics = view_statistics(candidates, measure, label, seed=seed)

    quality = {c.name: float(c.quality or 0.0) for c in usable}
    p50 = {c.name: float(c.p50_ms or 0.0) for c in usable}
    order = {c.name: i for i, c in enumerate(usable)}
    best_q = max(quality.values())
    fast, slow = min(p50.values()), max(p50.values())

    def speed(name: str) -> float:
        if balance == "ratio":
            if p50[name] <= 0:
                return 1.0
            return fast / p50[name]
        return 1.0 if slow == fast else 1.0 - (p50[name] - fast) / (slow - fast)

    def score(name: str) -> float:
        q = quality[name] / best_q
        if balance == "ratio":
            return (2.0 * q + speed(name)) / 3.0
        return (q + speed(name)) / 2.0

    names = [c.name for c in usable]
    ranked_q, ranked_s = by_quality(usable), by_speed(usable)
    balanced = max(names, key=lambda n: (score(n), -p50[n], -order[n]))
    top, fastest = ranked_q[0], ranked_s[0]

    quality_lead, quality_noise, q_noise_text = _noise(
        ranked_q, quality, statistics.quality, statistics.notes, ""
    )
    speed_lead, speed_noise, s_noise_text = _noise(
        ranked_s, p50, statistics.latency, statistics.notes, " ms"
    )
    q_interval = ""
    if statistics.quality is not None:
        row = statistics.quality.row(top) if top in _names(statistics.quality) else None
        if row is not None and _finite(row.mean_interval.low) and _finite(row.mean_interval.high):
            interval = row.mean_interval
            q_interval = f", 95% CI [{interval.low:.4f}, {interval.high:.4f}]"
    q_text = f"highest {label} ({quality[top]:.4f}{q_interval}){over}{q_noise_text}"
    s_text = f"lowest p50 latency ({p50[fastest]:.3f} ms){s_noise_text}"
    b_text = f"balance {score(balanced):.3f} = {BALANCE_FORMULAS[balance]}"
    b_text += f"; quality {quality[balanced] / best_q:.3f}, speed {speed(balanced):.3f}"
    return Recommendations(
        best_quality=Recommendation(
            config=top,
            reason=q_text,
            value=quality[top],
            measure=measure,
            lead=quality_lead,
            within_noise=quality_noise,
        ),
        fastest=Recommendation(
            config=fastest,
            reason=s_text,
            value=p50[fastest],
            measure="p50_ms",
            lead=speed_lead,
            within_noise=speed_noise,
        ),
        best_balance=Recommendation(
            config=balanced, reason=b_text, value=score(balanced), measure="balance"
        ),
        num_queries=num_queries,
        left_out=left_out,
    )


def _names(comparison: ConfigurationComparison) -> set[str]:
    return {r.system for r in comparison.rows}


def _noise(
    ranked: list[str],
    values: dict[str, float],
    comparison: ConfigurationComparison | None,
    notes: Sequence[str],
    unit: str,
) -> tuple[Lead | None, list[Contender], str]:
    """The pick's lead over the runner-up, the configurations within noise of the pick, and
    the sentence saying so (empty when the pick has no rival)."""
    pick = ranked[0]
    runner_up = ranked[1] if len(ranked) > 1 else None
    usable = (
        comparison is not None
        and comparison.baseline == pick
        and comparison.compared
        and all(name in _names(comparison) for name in ranked)
    )
    if runner_up is None:
        return None, [], ""
    difference = values[pick] - values[runner_up]
    if not usable or comparison is None:
        why = "; ".join(notes) or "no per-query values"
        detail = f"not tested for significance ({why})"
        lead = Lead(over=runner_up, difference=difference, verdict="not_assessed", detail=detail)
        ahead = (
            f"{abs(difference):.4f} ahead of"
            if not unit
            else f"{abs(difference):.3f} ms faster than"
        )
        return lead, [], f"; {ahead} {runner_up}, {detail}"
    verdict = verdict_of(comparison.row(runner_up), unit)
    lead = Lead(
        over=runner_up,
        difference=difference,
        verdict=verdict.verdict,
        detail=verdict.detail,
        p_value=verdict.p_value,
    )
    rows = [comparison.row(name) for name in ranked[1:]]
    within = [r for r in rows if not (r.significant and r.direction == "worse")]
    contenders = [
        Contender(config=r.system, difference=r.delta or 0.0, p_value=r.p_adjusted) for r in within
    ]
    quantity = "per-query latency" if unit else comparison.label
    if within:
        verb = "is" if len(within) == 1 else "are"
        listed = "; ".join(
            f"{r.system}: p {_p(r.p_adjusted)}, Δ = {_signed(r.delta, unit)}" for r in within
        )
        text = f"; {_and(r.system for r in within)} {verb} within noise ({listed})"
        faster = [r for r in within if r.significant and r.direction == "better"]
        if faster:
            text += f"; significantly lower mean {quantity}: {_and(r.system for r in faster)}"
    else:
        nxt = rows[0]
        worse = "slower" if unit else "worse"
        text = (
            f"; every other configuration is significantly {worse} (next: {nxt.system}, "
            f"p {_p(nxt.p_adjusted)}, Δ = {_signed(nxt.delta, unit)})"
        )
    test = f"{comparison.test_name}, {comparison.family}, n = {comparison.num_queries}"
    return lead, contenders, text + f"; {test}"


def _and(names: Iterable[str]) -> str:
    items = list(names)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _p(p: float | None) -> str:
    if p is None:
        return "= n/a"
    return "< 0.0001" if p < 0.00005 else f"= {p:.4f}"


def _signed(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if unit:
        return fmt_ms(value, signed=True) + unit
    digits = 4
    if round(value, digits) == 0:
        value = 0.0
    return f"{value:+.{digits}f}{unit}"


def _value(value: float | None, default: float) -> float:
    return value if value is not None and math.isfinite(value) else default


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
