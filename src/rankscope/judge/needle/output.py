"""Where a needle run writes, and how an interrupted run is resumed.

``--out DIR`` holds ``results.jsonl`` (one row per question, appended as each is graded),
``summary.json`` and ``run.json`` (the settings that decide the grades, and whether the run
finished). ``--out FILE.jsonl`` writes the results there and ``FILE.summary.json`` /
``FILE.run.json`` beside it.

Every run grades afresh, as the original design says, except that a run interrupted before it
finished is resumed: questions it graded (with the same settings and the same question) are
kept and not paid again; those the provider failed on are asked again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankscope.errors import FormatError, InputError
from rankscope.judge.needle.scoring import NeedleSummary, QuestionResult
from rankscope.suite.corpus import iter_jsonl
from rankscope.util.files import atomic_write_text


@dataclass(frozen=True, slots=True)
class NeedleOutput:
    """Where a needle run writes: its results (JSONL), summary and manifest."""

    results: Path
    summary: Path
    manifest: Path

    @classmethod
    def at(cls, out: str | os.PathLike[str]) -> NeedleOutput:
        p = Path(out)
        if p.suffix.lower() == ".jsonl":
            return cls(p, p.with_name(p.stem + ".summary.json"), p.with_name(p.stem + ".run.json"))
        return cls(p / "results.jsonl", p / "summary.json", p / "run.json")

    def earlier(self, settings: dict[str, Any], *, fresh: bool = False) -> list[QuestionResult]:
        """The results of an interrupted run with these settings, to keep; [] for a new run.

        Raises InputError when an unfinished run with other settings is there.
        """
        if fresh or not self.manifest.is_file() or not self.results.is_file():
            return []
        try:
            state = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if state.get("finished", True):
            return []  # a finished run: this one grades afresh
        if state.get("settings") != settings:
            old = state.get("settings") or {}
            changed = sorted(k for k in {*old, *settings} if old.get(k) != settings.get(k))
            raise InputError(
                f"{self.results.parent} holds an unfinished needle run with other settings "
                f"({', '.join(changed)} differ), so it cannot be resumed",
                path=self.manifest,
                hint="pass --fresh to start over there, or give another --out",
            )
        kept: list[QuestionResult] = []
        for line, row in iter_jsonl(self.results, partial_tail=True):  # a kill may cut the end
            try:
                result = QuestionResult.from_json(row)
            except TypeError:
                raise FormatError(
                    "not a needle result row (fields are missing)",
                    path=self.results,
                    line=line,
                    hint="pass --fresh to start over, or give another --out",
                ) from None
            if result.graded:
                kept.append(result)
        return kept

    def start(self, settings: dict[str, Any], kept: list[QuestionResult]) -> None:
        """Begin writing: the manifest says 'unfinished'; the results file holds ``kept``."""
        self.results.parent.mkdir(parents=True, exist_ok=True)
        runs = 1
        if kept and self.manifest.is_file():
            runs += int(json.loads(self.manifest.read_text(encoding="utf-8")).get("runs", 1))
        atomic_write_text(
            self.manifest,
            json.dumps({"settings": settings, "finished": False, "runs": runs}, indent=2) + "\n",
        )
        self.summary.unlink(missing_ok=True)  # it described results that are being replaced
        atomic_write_text(self.results, "".join(_line(r) for r in kept))

    def runs(self) -> int:
        """How many runs wrote into this output since it was last started afresh."""
        try:
            return int(json.loads(self.manifest.read_text(encoding="utf-8")).get("runs", 1))
        except (OSError, ValueError):
            return 1

    def append(self, result: QuestionResult) -> None:
        with self.results.open("a", encoding="utf-8") as f:
            f.write(_line(result))
            f.flush()

    def finish(self, summary: NeedleSummary) -> None:
        """Write the summary; the run counts as finished once every question is graded (a
        question the provider failed on leaves it unfinished, so a rerun grades just those)."""
        atomic_write_text(self.summary, json.dumps(summary.to_json(), indent=2) + "\n")
        state = json.loads(self.manifest.read_text(encoding="utf-8"))
        state["finished"] = summary.grading_failed == 0
        atomic_write_text(self.manifest, json.dumps(state, indent=2) + "\n")


def _line(result: QuestionResult) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False) + "\n"


__all__ = ["NeedleOutput"]
