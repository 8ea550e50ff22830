"""The scale shown to annotators is the judge prompt's own wording; query terms are marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.errors import InputError
from rankscope.judge.annotate.highlight import highlight, query_terms
from rankscope.judge.annotate.scale import template_scale
from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate


def test_default_scale_is_the_umbrela_wording_of_the_default_prompt() -> None:
    scale = template_scale()
    assert [(lv.grade, lv.description) for lv in scale.levels] == [
        (3, "the passage is dedicated to the query and contains the exact answer"),
        (2, "the passage has some answer for the query, but it may be unclear or hidden among "
            "extraneous information"),
        (1, "the passage seems related to the query but does not answer it"),
        (0, "the passage has nothing to do with the query"),
    ]  # fmt: skip
    for level in scale.levels:  # word for word from the prompt the LLM reads
        assert f"{level.grade} = {level.description}" in " ".join(DEFAULT_TEMPLATE.split())
    assert (scale.min_grade, scale.max_grade) == (0, 3) and 2 in scale and 4 not in scale


def test_a_custom_template_brings_its_own_scale(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text(
        "Grade it.\n4 = perfect.\n3 = good\n2 = fair;\n1 = poor\n0 = off topic\n"
        "Query: {query}\nPassage: {passage}\n"
    )
    scale = template_scale(PromptTemplate.from_file(path, 0, 4))
    assert [(lv.grade, lv.description) for lv in scale.levels] == [
        (4, "perfect"), (3, "good"), (2, "fair"), (1, "poor"), (0, "off topic")
    ]  # fmt: skip
    with pytest.raises(InputError, match=r"no wording for grade\(s\) \[4\]"):
        template_scale(PromptTemplate(DEFAULT_TEMPLATE, 0, 4))
    with pytest.raises(InputError, match=r"within 0\.\.9"):
        template_scale(PromptTemplate(DEFAULT_TEMPLATE, 0, 10))


def test_query_terms_are_marked_case_folded_with_plurals() -> None:
    assert query_terms("What are the Tumors of the brain?") == {"tumor", "brain"}
    segments = highlight("brain tumors", "Tumor in the BRAIN; brainy tumours. Tumors!")
    assert segments == [
        ("Tumor", True), (" in the ", False), ("BRAIN", True),
        ("; brainy tumours. ", False), ("Tumors", True), ("!", False),
    ]  # fmt: skip
    text = "x <script>alert(1)</script> y"
    assert "".join(s for s, _ in highlight("script alert", text)) == text
    assert highlight("", "abc") == [("abc", False)]
    assert highlight("the of", "the end of") == [("the end of", False)]  # function words only
    assert highlight("q", "") == []
