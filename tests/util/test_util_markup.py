from __future__ import annotations

import html

import pytest

from rankscope.util.markup import html_text, markdown_table, one_line, printable

MARKUP = ["<script>alert(1)</script>", '"><img src=x>', "a & b's", "&amp;", "plain"]


@pytest.mark.parametrize("text", MARKUP)
def test_html_text_escapes_as_html_escape_does(text: str) -> None:
    assert html_text(text) == html.escape(text, quote=True)


def test_html_text_writes_what_is_not_printable_as_escapes() -> None:
    assert html_text("a\x00b\u202ec\ud800") == "a\\x00b\\u202ec\\ud800"
    assert html_text("two\nlines\tand a tab") == "two\nlines\tand a tab"  # HTML shows a space
    assert html_text(3.5) == "3.5"
    long = "<" * 10_000 + "\ud800"
    assert html_text(long) == "&lt;" * 10_000 + "\\ud800"


def test_printable_and_one_line() -> None:
    assert printable("a\tb\x1b[31m") == "a\\x09b\\x1b[31m"
    assert printable("👩\u200d💻") == "👩\u200d💻"  # the joiner is kept
    assert one_line("  a\n\n b\t c ") == "a b c"


def test_markdown_table() -> None:
    assert markdown_table(["run", "a|b"], [["x|y", "0.5"]], "lr") == [
        "| run | a\\|b |",
        "|---|---:|",
        "| x\\|y | 0.5 |",
    ]
    assert markdown_table(["#", "d"], [["1", "a\\|b"]], "rl", escape=None)[2] == "| 1 | a\\|b |"
    with pytest.raises(ValueError, match="align needs l or r for each of 2 columns"):
        markdown_table(["a", "b"], [], "l")
