"""The regression gate's decision as a log (the terminal) and as Markdown (a pull request's
comment or ``$GITHUB_STEP_SUMMARY``): one line per measure, the verdict, the worst-moved
queries."""

from __future__ import annotations

from rankscope.check.core import CheckResult, MeasureCheck

_MARK = {True: "pass", False: "FAIL"}


def _level(result: CheckResult) -> str:
    return f"{1 - result.alpha:.0%}"


def _p(p: float) -> str:
    return "< 0.0001" if p < 0.00005 else f"{p:.4f}"


def _why(m: MeasureCheck, result: CheckResult) -> str:
    bound = f"{_level(result)} lower bound of Δ {m.test.lower:+.4f}"
    if m.regression:
        text = f"{bound} < -{result.margin:g}: may be worse by more than the margin"
    else:
        text = f"{bound} >= -{result.margin:g}: within the margin"
    if m.floor is not None:
        relation = "<" if m.below_floor else ">="
        text += f"; candidate {m.candidate:.4f} {relation} floor {m.floor:g}"
    return text


def _headline(result: CheckResult) -> str:
    failed = [m.measure for m in result.measures if not m.passed]
    if not failed:
        return f"PASS: {result.candidate} is no worse than {result.baseline} beyond the margin"
    return f"FAIL: {result.candidate} regresses from {result.baseline} on {', '.join(failed)}"


def render_text(result: CheckResult) -> str:
    """The log: what was compared, over which queries, and each measure's decision."""
    lines = [
        f"rankscope check: candidate {result.candidate} against baseline {result.baseline}, "
        f"over {result.query_set} (n = {result.num_queries})",
        f"non-inferiority: fail when the one-sided {_level(result)} lower bound of Δ = "
        f"candidate - baseline (paired t) is below -{result.margin:g}",
        "",
    ]
    width = max(len(m.measure) for m in result.measures)
    for m in result.measures:
        lines.append(
            f"  {_MARK[m.passed]:<4}  {m.measure:<{width}}  baseline {m.baseline:.4f}  "
            f"candidate {m.candidate:.4f}  Δ {m.test.delta:+.4f}  "
            f"p {_p(m.test.p_value)}  {_why(m, result)}"
        )
    if result.worst:
        lines += ["", f"queries the candidate lost most on ({result.worst_measure}):"]
        qw = max(len(q.query_id) for q in result.worst)
        for q in result.worst:
            text = f"  {q.text[:60]}" if q.text else ""
            lines.append(
                f"  {q.query_id:<{qw}}  {q.baseline:.4f} -> {q.candidate:.4f}  "
                f"Δ {q.delta:+.4f}{text}"
            )
    lines += [*(f"note: {n}" for n in result.notes), "", _headline(result)]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: CheckResult) -> str:
    """A summary the size of a pull request's comment."""
    icon = "✅" if result.passed else "❌"
    lines = [
        f"### {icon} rankscope check: {_cell(_headline(result))}",
        "",
        f"Candidate `{_cell(result.candidate)}` against baseline `{_cell(result.baseline)}` "
        f"over {_cell(result.query_set)} (n = {result.num_queries}); a measure fails when the "
        f"one-sided {_level(result)} lower bound of Δ (paired t) is below "
        f"-{result.margin:g}, or the candidate is below its floor.",
        "",
        "| measure | baseline | candidate | Δ | lower bound | p | floor | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m in result.measures:
        floor = "" if m.floor is None else f"{m.floor:g}"
        lines.append(
            f"| {m.measure} | {m.baseline:.4f} | {m.candidate:.4f} | {m.test.delta:+.4f} | "
            f"{m.test.lower:+.4f} | {_p(m.test.p_value)} | {floor} | {m.verdict} |"
        )
    if result.worst:
        lines += [
            "",
            f"<details><summary>Queries the candidate lost most on ({result.worst_measure})"
            "</summary>",
            "",
            "| query | baseline | candidate | Δ |",
            "|---|---:|---:|---:|",
            *(
                f"| {_cell(q.query_id)} | {q.baseline:.4f} | {q.candidate:.4f} | {q.delta:+.4f} |"
                for q in result.worst
            ),
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


__all__ = ["render_markdown", "render_text"]
