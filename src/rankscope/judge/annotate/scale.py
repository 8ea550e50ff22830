"""The grading scale shown to annotators, in the words of the judge's prompt template.

The wording comes from the template's own ``N = description`` lines (the default template's are
the UMBRELA scale), so a person and the LLM read the same definitions; nothing is copied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankscope.errors import InputError
from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate

# "3 = the passage is dedicated to the query and contains the exact answer;" (one line each)
_LEVEL = re.compile(r"^\s*(\d+)\s*=\s*(.+?)\s*[;.]?\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ScaleLevel:
    grade: int
    description: str


@dataclass(frozen=True, slots=True)
class Scale:
    """The grades a person picks from, with their names and descriptions (from the prompt
    template, ``source``)."""

    levels: tuple[ScaleLevel, ...]  # highest grade first, as the template lists them
    source: str

    @property
    def min_grade(self) -> int:
        return min(level.grade for level in self.levels)

    @property
    def max_grade(self) -> int:
        return max(level.grade for level in self.levels)

    def __contains__(self, grade: object) -> bool:
        return isinstance(grade, int) and any(level.grade == grade for level in self.levels)


def template_scale(template: PromptTemplate | None = None) -> Scale:
    """The levels a template defines (``N = wording`` lines within its label range).

    Raises InputError when the template defines no level for some grade of its range: an
    annotator must see a definition for every key they can press.
    """
    if template is None:
        template = PromptTemplate(DEFAULT_TEMPLATE)
    if template.min_label < 0 or template.max_label > 9:
        raise InputError(
            "an annotation scale runs within 0..9 (one key per grade)",
            value=(template.min_label, template.max_label),
        )
    found: dict[int, str] = {}
    for match in _LEVEL.finditer(template.text):
        grade = int(match.group(1))
        if template.min_label <= grade <= template.max_label:
            found.setdefault(grade, match.group(2))
    wanted = range(template.min_label, template.max_label + 1)
    missing = [g for g in wanted if g not in found]
    if missing:
        raise InputError(
            f"the prompt template defines no wording for grade(s) {missing}",
            path=None if template.source.startswith("default") else template.source,
            hint="write one line per grade, e.g. '2 = the passage answers in part;'",
        )
    levels = tuple(ScaleLevel(g, found[g]) for g in sorted(found, reverse=True))
    return Scale(levels, template.source)


__all__ = ["Scale", "ScaleLevel", "template_scale"]
