"""Parsing model answers into labels, and prompt templates."""

from __future__ import annotations

import pytest

from rankscope.errors import ConfigError
from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate, parse_label


@pytest.mark.parametrize(
    ("answer", "label", "method"),
    [
        ("M=2, T=2.\n##final score: 2", 2, "final-score"),
        ("##Final Score: 3", 3, "final-score"),
        ("**Final score:** 1", 1, "final-score"),
        ('Here you go: {"score": 0, "reasoning": "off topic"} hope it helps', 0, "json"),
        ('```json\n{"relevance": 3}\n```', 3, "json"),
        ("2", 2, "bare"),
        (" 1.\n", 1, "bare"),
        ("##final score: 1\nwait, actually\n##final score: 2", 2, "final-score"),
    ],
)
def test_parse_label_reads_each_form(answer: str, label: int, method: str) -> None:
    parsed = parse_label(answer)
    assert parsed.label == label
    assert parsed.method == method
    assert parsed.reason is None


@pytest.mark.parametrize(
    ("answer", "reason_part"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("eight", "no score"),
        ("The passage is clearly relevant.", "no score"),
        ("11", "outside the scale 0..3"),
        ("##final score: 4", "outside the scale"),
        ("##final score: -1", "outside the scale"),
        ("8/10", "fraction"),
        ("##final score: 2.5", "not an integer"),
        ('{"score": "high"}', "not a number"),
        ('{"score": true}', "not a number"),
    ],
)
def test_parse_label_never_guesses(answer: str, reason_part: str) -> None:
    parsed = parse_label(answer)
    assert parsed.label is None
    assert parsed.reason is not None and reason_part in parsed.reason


def test_rationale_is_the_prose_before_the_score() -> None:
    parsed = parse_label("Intent: flutter. M=3, T=2.\n##final score: 3")
    assert parsed.rationale == "Intent: flutter. M=3, T=2."


def test_custom_scale() -> None:
    assert parse_label("7", 0, 10).label == 7
    assert parse_label("7", 0, 3).label is None


def test_render_substitutes_once_and_leaves_other_braces() -> None:
    t = PromptTemplate('Q: {query}\nP: {passage}\nAnswer as {"score": N}')
    out = t.render(query="a {passage} b", passage="text")
    assert out == 'Q: a {passage} b\nP: text\nAnswer as {"score": N}'


def test_default_template_mentions_the_umbrela_steps() -> None:
    rendered = PromptTemplate(DEFAULT_TEMPLATE).render(
        query="wing flutter", passage="about flutter"
    )
    assert "wing flutter" in rendered and "about flutter" in rendered
    assert "(M)" in rendered and "(T)" in rendered and "##final score" in rendered


def test_template_needs_placeholders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "t.txt"
    bad.write_text("Only {query} here")
    with pytest.raises(ConfigError, match=r"\{passage\}"):
        PromptTemplate.from_file(bad)


def test_hash_changes_with_text_and_scale() -> None:
    a = PromptTemplate("{query} {passage}")
    assert a.hash == PromptTemplate("{query} {passage}").hash
    assert a.hash != PromptTemplate("{query}  {passage}").hash
    assert a.hash != PromptTemplate("{query} {passage}", max_label=4).hash


def test_files_that_are_not_utf8_are_refused_with_file_and_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankscope.errors import InputError
    from rankscope.judge.config import load_settings

    template = tmp_path / "t.txt"
    template.write_bytes(b"Rate {passage}\nfor {query} caf\xe9\n")
    with pytest.raises(InputError, match=r"t.txt:2: text is not valid UTF-8"):
        PromptTemplate.from_file(template)
    config = tmp_path / "judge.yaml"
    config.write_bytes(b"# r\xe9glages\ntimeout_s: 3\n")
    with pytest.raises(InputError, match=r"judge.yaml:1: text is not valid UTF-8"):
        load_settings(config)
