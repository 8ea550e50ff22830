"""Text in markup: one HTML escaper, one Markdown table writer, and what makes a text inert.

Texts from files (run names, query ids, titles) are shown as text in every format: in HTML by
:func:`html_text` (the markup characters escaped, characters that are not printable written as
``\\x..`` escapes by :func:`printable`), in Markdown tables by :func:`markdown_table` (a ``|``
never splits a cell).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: format characters that join letters (emoji sequences, Indic and Arabic scripts): kept
_JOINERS = frozenset("\u200c\u200d")
#: what HTML shows as a space: kept as it is in HTML text
_WHITESPACE = frozenset("\n\r\t")
# what html.escape(text, quote=True) replaces, without importing html (and html.entities)
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})


def printable(text: str) -> str:
    """``text`` with every character that is not printable (control, format, surrogate, line
    breaks; but the zero-width joiners) written as an escape: nothing in it can move the
    cursor, colour the terminal or reverse the text around it."""
    if text.isprintable():
        return text
    return "".join(
        c
        if c.isprintable() or c in _JOINERS
        else f"\\x{ord(c):02x}"
        if ord(c) < 0x100
        else f"\\u{ord(c):04x}"
        for c in text
    )


def one_line(text: str) -> str:
    """A text (a query, a title) on one line: runs of whitespace, line breaks included, as one
    space; then :func:`printable`."""
    return printable(" ".join(text.split()))


def html_text(value: object) -> str:
    """``str(value)`` as HTML text or an attribute's value: ``& < > " '`` escaped (as
    ``html.escape(..., quote=True)`` does) and what is not printable written as an escape
    (:func:`printable`), but line breaks and tabs, which HTML shows as a space."""
    text = str(value)
    if not text.isprintable():
        text = "".join(c if c in _WHITESPACE else printable(c) for c in text)
    return text.translate(_HTML)


def pipe_escaped(text: str) -> str:
    """A Markdown table cell's text: ``|`` escaped, so it cannot end the cell."""
    return text.replace("|", "\\|")


def markdown_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    *,
    escape: Callable[[str], str] | None = pipe_escaped,
) -> list[str]:
    """A Markdown table's lines: the header, the alignment row (``align`` holds ``l`` or
    ``r`` per column) and the rows, every cell through ``escape`` (None: the cells are
    escaped already)."""
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align needs l or r for each of {len(header)} columns, got {align!r}")

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cells if escape is None else map(escape, cells)) + " |"

    rule = "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"
    return [row(header), rule, *map(row, rows)]


__all__ = ["html_text", "markdown_table", "one_line", "pipe_escaped", "printable"]
